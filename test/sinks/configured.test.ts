/**
 * Push wiring: the configured sinks in order, remote write's credential resolved from the config or
 * a key store (the loopback fake of the AWS JSON protocol), and a store that never answers bounded
 * by the push's deadline.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { systemClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { ConfigError } from '../../src/errors.js';
import { SinkError } from '../../src/sinks/errors.js';
import { pushSettingsOf, sinksOf } from '../../src/sinks/configured.js';
import { startAwsFake, type AwsFake } from '../lambda/aws-fake.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-secret-value-123' };
const open: Array<AwsFake | { close(): Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((x) => x.close()));
});

/** A TCP server that accepts and never answers: a key store that hangs. */
async function silentServer(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('sinksOf', () => {
  it('builds the configured sinks in the configured order, remote write included', () => {
    const config = loadConfig({ env: { ...base, POSTURE_PUSH: 'remote_write,pushgateway,otlp', POSTURE_REMOTE_WRITE_URL: 'http://127.0.0.1:9/api/v1/write', POSTURE_PUSHGATEWAY_URL: 'http://127.0.0.1:9' } });
    expect(sinksOf(config).map((s) => s.name)).toEqual(['remote_write', 'pushgateway', 'otlp']);
  });

  it('fails remote write at the push deadline when its key store never answers, instead of hanging the push', async () => {
    const store = await silentServer();
    open.push(store);
    const config = loadConfig({
      env: { ...base, POSTURE_PUSH: 'remote_write', POSTURE_REMOTE_WRITE_URL: 'http://127.0.0.1:9/api/v1/write', POSTURE_REMOTE_WRITE_BEARER_TOKEN_SSM_PARAMETER: '/posture/push-test/hanging' },
    });
    const clientConfig = { endpoint: store.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' }, maxAttempts: 1 };
    const [sink] = sinksOf(config, { keyStore: { clientConfig } });
    const logger = memoryLogger();
    const started = performance.now();
    const err = await sink!.push([], { clock: systemClock, logger, deadline: Date.now() + 300 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).sink).toBe('remote_write');
    expect((err as SinkError).message).toBe('the push deadline passed while its credential was read');
  });
});

describe('pushSettingsOf', () => {
  it('resolves a plain bearer token at once and reports it as a secret', async () => {
    const config = loadConfig({ env: { ...base, POSTURE_PUSH: 'remote_write', POSTURE_REMOTE_WRITE_URL: 'https://mimir.example.com/api/v1/push', POSTURE_REMOTE_WRITE_BEARER_TOKEN: 'tok-plain-123456' } });
    const secrets: string[] = [];
    const settings = await pushSettingsOf(config, { onSecret: (s) => secrets.push(s) });
    expect(settings.remoteWrite).toEqual({ url: 'https://mimir.example.com/api/v1/push', auth: { kind: 'bearer', token: 'tok-plain-123456' }, headers: {}, maxRetries: 3, concurrency: 8 });
    expect(secrets).toEqual(['tok-plain-123456']);
  });

  it('reads the password from Secrets Manager, trimmed, and reports it as a secret', async () => {
    const aws = await startAwsFake({ secrets: { 'posture/push-test/password': '  glc_push-test-password-42\n' } });
    open.push(aws);
    const config = loadConfig({
      env: { ...base, POSTURE_PUSH: 'remote_write', POSTURE_REMOTE_WRITE_URL: 'https://prometheus.grafana.net/api/prom/push', POSTURE_REMOTE_WRITE_USERNAME: '1234567', POSTURE_REMOTE_WRITE_PASSWORD_SECRET_ID: 'posture/push-test/password' },
    });
    const secrets: string[] = [];
    const settings = await pushSettingsOf(config, { keyStore: { clientConfig: aws.clientConfig }, onSecret: (s) => secrets.push(s) });
    expect(settings.remoteWrite!.auth).toEqual({ kind: 'basic', username: '1234567', password: 'glc_push-test-password-42' });
    expect(secrets).toEqual(['glc_push-test-password-42']);
    expect(aws.calls.map((c) => c.target)).toEqual(['secretsmanager.GetSecretValue']);
  });

  it('rejects with a ConfigError naming the setting when the parameter is empty', async () => {
    const aws = await startAwsFake({ parameters: { '/posture/push-test/empty': '  ' } });
    open.push(aws);
    const config = loadConfig({
      env: { ...base, POSTURE_PUSH: 'remote_write', POSTURE_REMOTE_WRITE_URL: 'https://prometheus.grafana.net/api/prom/push', POSTURE_REMOTE_WRITE_USERNAME: '1234567', POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER: '/posture/push-test/empty' },
    });
    const err = await pushSettingsOf(config, { keyStore: { clientConfig: aws.clientConfig } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).setting).toBe('POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER');
    expect((err as ConfigError).message).toBe('SSM parameter /posture/push-test/empty is empty: store the remote-write password there.');
  });

  it('hands every push setting to its sink: headers, timeout, retries, concurrency, and the Pushgateway basic auth from its store', async () => {
    const aws = await startAwsFake({ parameters: { '/posture/push-test/pushgateway': 'pg-password-from-ssm' } });
    open.push(aws);
    const config = loadConfig({
      env: {
        ...base,
        POSTURE_PUSH: 'remote_write,pushgateway,otlp',
        POSTURE_REMOTE_WRITE_URL: 'https://mimir.example.com/api/v1/push',
        POSTURE_REMOTE_WRITE_HEADERS: 'X-Scope-OrgID=tenant-1, X-Proxy-Token=a%2Cb',
        POSTURE_PUSHGATEWAY_URL: 'https://pushgateway.example.com',
        POSTURE_PUSHGATEWAY_USERNAME: 'pusher',
        POSTURE_PUSHGATEWAY_PASSWORD_SSM_PARAMETER: '/posture/push-test/pushgateway',
        POSTURE_PUSH_TIMEOUT_SECONDS: '4',
        POSTURE_PUSH_MAX_RETRIES: '1',
        POSTURE_PUSH_CONCURRENCY: '3',
      },
    });
    const secrets: string[] = [];
    const settings = await pushSettingsOf(config, { keyStore: { clientConfig: aws.clientConfig }, onSecret: (s) => secrets.push(s) });
    expect(settings).toEqual({
      sinks: ['remote_write', 'pushgateway', 'otlp'],
      remoteWrite: { url: 'https://mimir.example.com/api/v1/push', auth: { kind: 'none' }, headers: { 'X-Scope-OrgID': 'tenant-1', 'X-Proxy-Token': 'a,b' }, timeoutMs: 4_000, maxRetries: 1, concurrency: 3 },
      pushgateway: { url: 'https://pushgateway.example.com', job: 'posture-exporter', auth: { kind: 'basic', username: 'pusher', password: 'pg-password-from-ssm' }, timeoutMs: 4_000, maxRetries: 1, concurrency: 3 },
      otlp: { timeoutMs: 4_000, concurrency: 3 },
    });
    expect(secrets).toEqual(['pg-password-from-ssm']);
    expect(config.secrets).toEqual(expect.arrayContaining(['tenant-1', 'a,b']));
  });

  it('leaves the OTLP timeout to OTEL_* and the sinks their defaults when the push settings are unset', async () => {
    const config = loadConfig({ env: { ...base, POSTURE_PUSH: 'pushgateway,otlp', POSTURE_PUSHGATEWAY_URL: 'https://pushgateway.example.com' } });
    const settings = await pushSettingsOf(config);
    expect(settings.pushgateway).toEqual({ url: 'https://pushgateway.example.com', job: 'posture-exporter', auth: { kind: 'none' }, maxRetries: 3, concurrency: 8 });
    expect(settings.otlp).toEqual({ concurrency: 8 });
  });

  it('reads nothing when remote write is not one of the sinks', async () => {
    const aws = await startAwsFake({ parameters: { '/posture/push-test/unused': 'tok-unused-000000' } });
    open.push(aws);
    const config = loadConfig({
      env: { ...base, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: 'http://127.0.0.1:9', POSTURE_REMOTE_WRITE_URL: 'https://mimir.example.com/api/v1/push', POSTURE_REMOTE_WRITE_BEARER_TOKEN_SSM_PARAMETER: '/posture/push-test/unused' },
    });
    const settings = await pushSettingsOf(config, { keyStore: { clientConfig: aws.clientConfig } });
    expect(settings.remoteWrite).toBeUndefined();
    expect(aws.calls).toEqual([]);
  });
});
