/**
 * The push settings, from the environment to real receivers: the Pushgateway behind basic auth
 * (its own `--web.config.file`, a bcrypt hash), and remote write through a loopback proxy that
 * insists on a tenant header, with the push timeout and retry count the settings give.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { systemClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { sinksOf } from '../../src/sinks/configured.js';
import { pushAll } from '../../src/sinks/index.js';
import { queryPrometheusApi, startPrometheus, startPushgateway, peerForAll, type Peer } from '../support/peers.js';
import { batchFor } from './fixtures.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-secret-value-123' };
const USER = 'pusher';
const PASSWORD = 'pg-e2e-password-31415';

function ctx(logger = memoryLogger()) {
  return { clock: systemClock, logger, deadline: Date.now() + 20_000 };
}

const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');

describe('Pushgateway basic auth from the settings (Debian prometheus-pushgateway --web.config.file)', () => {
  let pgw: Peer;
  beforeAll(async () => {
    // htpasswd writes the bcrypt hash the Pushgateway's web config wants.
    const hash = execFileSync('htpasswd', ['-nbBC', '10', USER, PASSWORD], { encoding: 'utf8' }).trim().split(':')[1]!;
    pgw = await startPushgateway({ webConfig: `basic_auth_users:\n  ${USER}: '${hash}'\n` });
  });
  afterAll(async () => {
    await pgw?.stop();
  });

  const env = (password: string) => ({
    ...base,
    POSTURE_PUSH: 'pushgateway',
    POSTURE_PUSHGATEWAY_URL: pgw.url,
    POSTURE_PUSHGATEWAY_USERNAME: USER,
    POSTURE_PUSHGATEWAY_PASSWORD: password,
  });

  it('pushes every group with the configured user and password', async () => {
    const config = loadConfig({ env: env(PASSWORD) });
    const [outcome] = await pushAll(sinksOf(config), [batchFor('acme', Date.now())], ctx());
    expect(outcome).toMatchObject({ sink: 'pushgateway', ok: true });

    expect((await fetch(`${pgw.url}/api/v1/metrics`)).status).toBe(401);
    const res = await fetch(`${pgw.url}/api/v1/metrics`, { headers: { authorization: basic(USER, PASSWORD) } });
    const body = (await res.json()) as { data: Array<{ labels: Record<string, string> }> };
    expect(body.data.map((g) => g.labels.source ?? '(exporter)').sort()).toEqual(['(exporter)', 'alerts', 'devices', 'vitals']);
  });

  it('fails with the 401 at once on a wrong password, and never shows it', async () => {
    const wrong = 'pg-wrong-password-27182';
    const logger = memoryLogger();
    const config = loadConfig({ env: { ...env(wrong), POSTURE_PUSH_MAX_RETRIES: '3' } });
    const [outcome] = await pushAll(sinksOf(config), [batchFor('acme', Date.now())], ctx(logger));
    expect(outcome!.ok).toBe(false);
    expect(outcome!.error!.status).toBe(401);
    expect(logger.records().filter((r) => r.msg === 'push attempt failed; retrying')).toEqual([]);
    const shown = [outcome!.error!.message, ...logger.lines].join('\n');
    expect(shown).not.toContain(wrong);
    expect(shown).not.toContain(Buffer.from(`${USER}:${wrong}`).toString('base64'));
  });
});

/** A loopback proxy in front of the remote-write receiver: records each request's headers, and answers itself when `reply` says so. */
async function startProxy(target: string, reply: (req: IncomingMessage, index: number) => number | 'hang' | 'forward') {
  const seen: IncomingMessage['headers'][] = [];
  const server: Server = createServer((req, res) => {
    const index = seen.push(req.headers) - 1;
    const decision = reply(req, index);
    if (decision === 'hang') return;
    if (decision !== 'forward') {
      res.writeHead(decision).end('proxy says no');
      return;
    }
    const upstream = httpRequest(target + req.url, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('remote write headers, timeout and retries from the settings (Debian prometheus behind a loopback proxy)', () => {
  const prom = peerForAll(() => startPrometheus({ config: 'global:\n  scrape_interval: 1h\n', extraArgs: ['--web.enable-remote-write-receiver'] }));

  const env = (proxy: string, extra: Record<string, string> = {}) => ({
    ...base,
    POSTURE_PUSH: 'remote_write',
    POSTURE_REMOTE_WRITE_URL: `${proxy}/api/v1/write`,
    POSTURE_REMOTE_WRITE_HEADERS: 'X-Scope-OrgID=tenant-e2e,X-Proxy-Key=px-secret%2C42',
    ...extra,
  });

  it('sends the configured headers, so a proxy that insists on them lets the samples through', async () => {
    const proxy = await startProxy(prom().url, (req) => (req.headers['x-scope-orgid'] === 'tenant-e2e' && req.headers['x-proxy-key'] === 'px-secret,42' ? 'forward' : 403));
    try {
      const collectedAt = Date.now() - 2_000;
      const [outcome] = await pushAll(sinksOf(loadConfig({ env: env(proxy.url) })), [batchFor('tenant', collectedAt)], ctx());
      expect(outcome).toMatchObject({ sink: 'remote_write', ok: true });
      expect(proxy.seen).toHaveLength(1);
      const [devices] = await queryPrometheusApi(prom().url, 'posture_devices{portal="tenant",activity="active"}', collectedAt / 1000);
      expect(Number(devices!.value[1])).toBe(1234);
    } finally {
      await proxy.close();
    }
  });

  it('retries as often as POSTURE_PUSH_MAX_RETRIES says, and keeps the header values out of the error', async () => {
    const proxy = await startProxy(prom().url, () => 503);
    try {
      const logger = memoryLogger();
      const [outcome] = await pushAll(sinksOf(loadConfig({ env: env(proxy.url, { POSTURE_PUSH_MAX_RETRIES: '1' }) })), [batchFor('acme', Date.now())], ctx(logger));
      expect(outcome!.ok).toBe(false);
      expect(outcome!.error!.message).toMatch(/HTTP 503.*\(gave up after 2 attempts\)$/);
      expect(proxy.seen).toHaveLength(2);
      expect([outcome!.error!.message, ...logger.lines].join('\n')).not.toContain('px-secret,42');
    } finally {
      await proxy.close();
    }
  });

  it('gives up on a receiver that does not answer after POSTURE_PUSH_TIMEOUT_SECONDS', async () => {
    const proxy = await startProxy(prom().url, () => 'hang');
    try {
      const started = Date.now();
      const [outcome] = await pushAll(sinksOf(loadConfig({ env: env(proxy.url, { POSTURE_PUSH_TIMEOUT_SECONDS: '1', POSTURE_PUSH_MAX_RETRIES: '0' }) })), [batchFor('acme', Date.now())], ctx());
      const took = Date.now() - started;
      expect(outcome!.ok).toBe(false);
      expect(proxy.seen).toHaveLength(1);
      expect(took).toBeGreaterThanOrEqual(900);
      expect(took).toBeLessThan(5_000);
    } finally {
      await proxy.close();
    }
  });
});
