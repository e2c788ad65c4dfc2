/**
 * Every outward call through a real proxy, Debian's tinyproxy, started here on a loopback port and
 * its log read back: `once`, `serve` and the Lambda bundle reach the simulated portal over HTTPS
 * (its front's certificate signed by a private CA) with one CONNECT per TLS connection the portal
 * accepted; the pushes (OTLP, remote write, the Pushgateway) and the AWS calls (SSM, DynamoDB) go
 * through HTTP_PROXY, each request a line of the proxy's log; NO_PROXY naming the host sends them
 * direct, and the proxy sees none. Without the CA trusted, the run is refused as a configuration
 * error at once (exit 2), through the proxy as without it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { BUILT_CLI, runBuiltCli, runProcess, withOwnState } from '../support/cli.js';
import { startDynalite, type Dynalite } from '../support/dynalite.js';
import { portalOverHttps, startTinyproxy, type PortalOverHttps, type Tinyproxy } from '../support/https-front.js';
import { freePort, startPushgateway, type Peer } from '../support/peers.js';
import { startAwsFake, type AwsFake } from '../lambda/aws-fake.js';
import { valueIn, type ReadSample } from '../lambda/support.js';
import { startReceiver, type Receiver } from '../sinks/receiver.js';

const KEY = 'sim-proxy-key-0a1b2c3d4e5f6a7b8c9d';
const ROOT = new URL('../..', import.meta.url).pathname;
const LAMBDA = join(ROOT, 'dist/lambda/index.mjs');
const RUNNER = join(ROOT, 'test/lambda/invoke-bundle.mjs');
/** A ledger table of its own for each run that records its requests: a shared one would hold the share other runs spent. */
let tables = 0;
async function freshTable(): Promise<string> {
  const name = `posture-proxy-ledger-${++tables}`;
  await dynamo.createTable(name);
  return name;
}

let sim: Simulator;
let tls: PortalOverHttps;
let proxy: Tinyproxy;
let pgw: Peer;
let receiver: Receiver;
let aws: AwsFake;
let dynamo: Dynalite;

beforeAll(async () => {
  sim = await startSimulator({ keys: [{ key: KEY }], rateLimit: false, moving: false, seed: 11, alerts: 900, devices: 300 });
  [tls, proxy, pgw, receiver, aws, dynamo] = await Promise.all([
    portalOverHttps(sim.baseUrl),
    startTinyproxy(),
    startPushgateway(),
    startReceiver(),
    startAwsFake({ parameters: { '/posture/api-key': KEY }, secrets: { 'posture/remote-write-token': 'rw-token-5b6c7d8e9f0a1b2c' } }),
    startDynalite(),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([tls?.close(), proxy?.stop(), pgw?.stop(), receiver?.close(), aws?.close(), dynamo?.close(), sim?.close()]);
});

/** What the proxy relays from now on, and the front's counts from zero. */
function fresh(): () => string[] {
  tls.front.paths = [];
  tls.front.connections = 0;
  tls.front.refused = 0;
  const before = proxy.requests().length;
  return () => proxy.requests().slice(before);
}

const frontHost = () => new URL(tls.front.origin).host;
const tunnels = (lines: string[]) => lines.filter((l) => l === `CONNECT ${frontHost()}`);
const json = (stdout: string) => (JSON.parse(stdout) as { samples: ReadSample[] }).samples;
const openAlerts = (severity: string) => [...sim.data().alerts()].filter((a) => !a.resolved && a.state.toLowerCase() === severity).length;

describe('once through tinyproxy', () => {
  it('reads the portal over HTTPS through the proxy: one CONNECT per TLS connection, every value exact', async () => {
    const relayed = fresh();
    const r = await runBuiltCli(['once', '--format', 'json', '--log-level', 'warn'], { POSTURE_BASE_URL: tls.base, POSTURE_API_KEY: KEY, HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: tls.ca.caFile });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const lines = relayed();
    expect(tls.front.connections).toBeGreaterThanOrEqual(1);
    // Every connection the portal accepted came through a tunnel, and nothing else went through the proxy.
    expect(tunnels(lines)).toHaveLength(tls.front.connections);
    expect(lines).toHaveLength(tls.front.connections);
    expect(tls.front.paths.filter((p) => p.includes('/vitals'))).toHaveLength(1);
    for (const severity of ['red', 'amber', 'green']) expect(valueIn(json(r.stdout), 'posture_alerts_open', { severity }), severity).toBe(openAlerts(severity));
    expect(openAlerts('red') + openAlerts('amber') + openAlerts('green')).toBeGreaterThan(100);
    expect(r.stderr + r.stdout).not.toContain(KEY);
  });

  it('goes direct when NO_PROXY names the host (lower-case variables too): the proxy sees nothing', async () => {
    const relayed = fresh();
    const r = await runBuiltCli(['once', '--format', 'json', '--log-level', 'warn'], { POSTURE_BASE_URL: tls.base, POSTURE_API_KEY: KEY, https_proxy: proxy.url, no_proxy: 'localhost,127.0.0.1', NODE_EXTRA_CA_CERTS: tls.ca.caFile });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(tls.front.connections).toBeGreaterThanOrEqual(1);
    expect(relayed()).toEqual([]);
    expect(valueIn(json(r.stdout), 'posture_alerts_open', { severity: 'red' })).toBe(openAlerts('red'));
  });

  it('refuses a certificate from a CA it does not trust, through the proxy as without: exit 2 within 5 s, one handshake, nothing sent', async () => {
    const relayed = fresh();
    const started = Date.now();
    const r = await runBuiltCli(['once', '--format', 'json', '--log-level', 'warn'], { POSTURE_BASE_URL: tls.base, POSTURE_API_KEY: KEY, HTTPS_PROXY: proxy.url });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r.code, r.stderr.slice(-2000)).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`config error: The TLS connection to the portal at ${frontHost().replace('.', '\\.')} .*UNABLE_TO_VERIFY_LEAF_SIGNATURE.*NODE_EXTRA_CA_CERTS`));
    expect(tls.front.refused).toBe(1);
    expect(tls.front.paths).toEqual([]);
    expect(tunnels(relayed())).toHaveLength(1);
  });

  it('sends every push (OTLP, remote write, Pushgateway) and every AWS call (Secrets Manager, DynamoDB) through HTTP_PROXY, one log line per request', async () => {
    const relayed = fresh();
    const received = receiver.requests.length;
    const calls = aws.calls.length;
    const r = await runBuiltCli(['once', '--format', 'json', '--log-level', 'warn'], {
      POSTURE_BASE_URL: tls.base,
      POSTURE_API_KEY: KEY,
      NODE_EXTRA_CA_CERTS: tls.ca.caFile,
      HTTPS_PROXY: proxy.url,
      HTTP_PROXY: proxy.url,
      POSTURE_PUSH: 'otlp,remote_write,pushgateway',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      POSTURE_REMOTE_WRITE_URL: `${receiver.url}/api/v1/write`,
      POSTURE_REMOTE_WRITE_BEARER_TOKEN_SECRET_ID: 'posture/remote-write-token',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: aws.endpoint,
      POSTURE_PUSHGATEWAY_URL: pgw.url,
      POSTURE_STATE_TABLE: await freshTable(),
      ...dynamo.env,
    });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const lines = relayed();
    const receiverHost = new URL(receiver.url).host;
    const otlp = receiver.requests.slice(received).filter((q) => q.url === '/v1/metrics');
    const writes = receiver.requests.slice(received).filter((q) => q.url === '/api/v1/write');
    expect(otlp.length).toBeGreaterThanOrEqual(1);
    expect(writes.length).toBeGreaterThanOrEqual(1);
    expect(lines.filter((l) => l === `POST http://${receiverHost}/v1/metrics`)).toHaveLength(otlp.length);
    expect(lines.filter((l) => l === `POST http://${receiverHost}/api/v1/write`)).toHaveLength(writes.length);
    // One PUT per group: each source's and the portal's own, and the shard's.
    const puts = lines.filter((l) => l.startsWith(`PUT http://${new URL(pgw.url).host}/metrics/job/posture-exporter/`));
    expect(puts.length).toBeGreaterThanOrEqual(4);
    const groups = (await (await fetch(`${pgw.url}/api/v1/metrics`)).json()) as { data: unknown[] };
    expect(groups.data.length).toBeGreaterThanOrEqual(puts.length);
    expect(lines.filter((l) => l === `POST http://${new URL(dynamo.endpoint).host}/`).length).toBeGreaterThanOrEqual(2);
    // The remote-write token, read from Secrets Manager, and sent with every write.
    expect(aws.calls.slice(calls).map((c) => c.target)).toEqual(['secretsmanager.GetSecretValue']);
    expect(lines.filter((l) => l === `POST http://${new URL(aws.endpoint).host}/`)).toHaveLength(1);
    for (const w of writes) expect(w.headers.authorization).toBe('Bearer rw-token-5b6c7d8e9f0a1b2c');
    expect(tunnels(lines)).toHaveLength(tls.front.connections);
  });
});

describe('serve through tinyproxy', () => {
  /** `serve` on a free port with `env`; resolves with its exit, or with its /metrics text once `ready` says so. */
  async function serve(env: Record<string, string>, ready: (metrics: string) => boolean): Promise<{ metrics?: string; code: number | null; stderr: string }> {
    const port = await freePort();
    const child = spawn(process.execPath, [BUILT_CLI, 'serve', '--listen', `127.0.0.1:${port}`, '--log-level', 'warn'], { env: withOwnState({ PATH: process.env.PATH, ...env }), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const until = Date.now() + 20_000;
    try {
      while (Date.now() < until) {
        const code = await Promise.race([exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 200))]);
        if (code !== 'running') return { code, stderr };
        const metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then((res) => res.text(), () => '');
        if (ready(metrics)) return { metrics, code: null, stderr };
      }
      throw new Error(`serve neither exited nor collected: ${stderr.slice(-1000)}`);
    } finally {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    }
  }

  it('collects every source over HTTPS through the proxy, one CONNECT per TLS connection', async () => {
    const relayed = fresh();
    const done = (m: string) => ['vitals', 'alerts', 'devices'].every((s) => new RegExp(`posture_collection_success\\{[^}]*source="${s}"[^}]*\\} 1`).test(m));
    const r = await serve({ POSTURE_BASE_URL: tls.base, POSTURE_API_KEY: KEY, HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: tls.ca.caFile }, done);
    expect(r.metrics, r.stderr).toBeDefined();
    expect(r.metrics).toMatch(new RegExp(`posture_alerts_open\\{[^}]*severity="red"[^}]*\\} ${openAlerts('red')}\\n`));
    const lines = relayed();
    expect(tls.front.connections).toBeGreaterThanOrEqual(1);
    expect(tunnels(lines)).toHaveLength(tls.front.connections);
    expect(lines).toHaveLength(tls.front.connections);
  });

  it('stops with exit 2 and the one line when the portal\'s certificate is not trusted at its first contact', async () => {
    fresh();
    const started = Date.now();
    const r = await serve({ POSTURE_BASE_URL: tls.base, POSTURE_API_KEY: KEY, HTTPS_PROXY: proxy.url }, () => false);
    expect(r.code, r.stderr.slice(-2000)).toBe(2);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.stderr).toMatch(/config error: The TLS connection to the portal at .*UNABLE_TO_VERIFY_LEAF_SIGNATURE.*NODE_EXTRA_CA_CERTS/);
    expect(tls.front.paths).toEqual([]);
  });
});

describe('the Lambda bundle through tinyproxy', () => {
  /** The built handler, invoked once in a fresh process whose whole environment is `env`. */
  async function invoke(env: Record<string, string>) {
    const r = await runProcess(process.execPath, [RUNNER, LAMBDA, '60000'], { env: { PATH: process.env.PATH ?? '', ...env } });
    const last = r.stdout.trim().split('\n').at(-1) ?? '';
    return { ...r, result: JSON.parse(last.replace(/^INVOCATION_RESULT /, '')) as { ok: boolean; summary?: { sinks: Array<{ ok: boolean }> }; error?: { message: string } } };
  }

  const lambdaEnv = async (extra: Record<string, string>) => ({
    POSTURE_BASE_URL: tls.base,
    POSTURE_API_KEY_SSM_PARAMETER: '/posture/api-key',
    AWS_ENDPOINT_URL_SSM: aws.endpoint,
    POSTURE_PUSH: 'pushgateway',
    POSTURE_PUSHGATEWAY_URL: pgw.url,
    POSTURE_STATE_TABLE: await freshTable(),
    ...dynamo.env,
    ...extra,
  });

  it('reads its key from SSM, the portal over HTTPS, its ledger in DynamoDB and pushes, every call through the proxy', async () => {
    const relayed = fresh();
    const calls = aws.calls.length;
    const r = await invoke(await lambdaEnv({ HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: tls.ca.caFile }));
    expect(r.result.ok, r.stdout.slice(-2000)).toBe(true);
    const lines = relayed();
    const ssm = aws.calls.length - calls;
    expect(ssm).toBe(1);
    expect(lines.filter((l) => l === `POST http://${new URL(aws.endpoint).host}/`)).toHaveLength(ssm);
    expect(lines.filter((l) => l === `POST http://${new URL(dynamo.endpoint).host}/`).length).toBeGreaterThanOrEqual(2);
    expect(lines.filter((l) => l.startsWith(`PUT http://${new URL(pgw.url).host}/metrics/job/`)).length).toBeGreaterThanOrEqual(4);
    expect(tls.front.connections).toBeGreaterThanOrEqual(1);
    expect(tunnels(lines)).toHaveLength(tls.front.connections);
    expect(r.stdout).not.toContain(KEY);
  });

  it('sends nothing through the proxy when NO_PROXY names the hosts', async () => {
    const relayed = fresh();
    const r = await invoke(await lambdaEnv({ HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1', NODE_EXTRA_CA_CERTS: tls.ca.caFile }));
    expect(r.result.ok, r.stdout.slice(-2000)).toBe(true);
    expect(tls.front.connections).toBeGreaterThanOrEqual(1);
    expect(relayed()).toEqual([]);
  });

  it('fails the invocation with the one line when the CA is not trusted, sending nothing to the portal', async () => {
    fresh();
    const r = await invoke(await lambdaEnv({ HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url }));
    expect(r.result.ok).toBe(false);
    expect(r.result.error?.message).toMatch(/^invalid settings: The TLS connection to the portal at .*UNABLE_TO_VERIFY_LEAF_SIGNATURE.*NODE_EXTRA_CA_CERTS/);
    expect(tls.front.refused).toBe(1);
    expect(tls.front.paths).toEqual([]);
  });
});
