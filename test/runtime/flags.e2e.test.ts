// Every flag the README's configuration table lists, run through the built CLI (`npm run build`).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBuiltCli, type Ran } from '../support/cli.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'posture-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BASE = 'http://127.0.0.1:9/public-api/v1';
const KEY = 'flags-test-key-0123456789';
const keyFile = join(dir, 'key.txt');
writeFileSync(keyFile, `${KEY}\n`);
const configFile = join(dir, 'portals.yaml');
writeFileSync(configFile, `interval_seconds: 600\nportals:\n  - base_url: ${BASE}\n    api_key_file: ${keyFile}\n    portal: from-file-a\n  - base_url: http://127.0.0.1:10/public-api/v1\n    api_key_file: ${keyFile}\n    portal: from-file-b\n`);
const webConfig = join(dir, 'web.yml');
writeFileSync(webConfig, 'http_server_config:\n  headers:\n    X-Frame-Options: deny\n');

/** Flags in the README's configuration table (its second column). */
function readmeFlags(): string[] {
  const begin = README.indexOf('<!-- BEGIN CONFIG TABLE');
  const end = README.indexOf('<!-- END CONFIG TABLE');
  expect(begin).toBeGreaterThan(-1);
  const flags = README.slice(begin, end)
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => /^\|[^|]*\|\s*`(--[a-z0-9-]+)`/.exec(l)?.[1])
    .filter((f): f is string => f !== undefined);
  return flags;
}

interface Case {
  /** The arguments after `check-config` (the flag and its value). */
  args: string[];
  /** Environment beyond the portal defaults (a value of '' removes a default). */
  env?: Record<string, string>;
  /** What `check-config` prints when the flag took effect (when it is observable there). */
  shows?: string;
}

/** The interval flags, each with seconds to give it and the line of check-config's plan that shows them. */
const INTERVAL_FLAGS: ReadonlyArray<readonly [string, string, string]> = [
  ['--interval-seconds', '900', 'devices every   900 s'],
  ['--alerts-interval-seconds', '60', 'alerts  every    60 s'],
  ['--vitals-interval-seconds', '600', 'vitals  every   600 s'],
  ['--devices-interval-seconds', '1200', 'devices every  1200 s'],
  ['--resolved-alerts-interval-seconds', '7200', 'resolved every  7200 s'],
  ['--access-interval-seconds', '7200', 'access  every  7200 s'],
  ['--directory-interval-seconds', '43200', 'directory every 43200 s'],
];

/** A valid use of each flag; `shows` when check-config's output reflects it. */
const CASES: Record<string, Case> = {
  '--config': { args: ['--config', configFile], env: { POSTURE_BASE_URL: '', POSTURE_API_KEY: '' }, shows: 'portal from-file-a (' },
  '--base-url': { args: ['--base-url', 'http://127.0.0.1:11/public-api/v1'], env: { POSTURE_BASE_URL: '' }, shows: 'http://127.0.0.1:11/public-api/v1' },
  '--cloud-id': { args: ['--cloud-id', 'acme', '--api-host', 'example.com'], env: { POSTURE_BASE_URL: '' }, shows: 'portal acme (https://acme.example.com/public-api/v1' },
  '--api-host': { args: ['--api-host', 'example.org', '--cloud-id', 'beta'], env: { POSTURE_BASE_URL: '' }, shows: 'https://beta.example.org/public-api/v1' },
  '--api-key-file': { args: ['--api-key-file', keyFile], env: { POSTURE_API_KEY: '' }, shows: 'key from file' },
  '--api-key-ssm-parameter': { args: ['--api-key-ssm-parameter', '/posture/key'], env: { POSTURE_API_KEY: '' }, shows: 'key from ssm' },
  '--api-key-secret-id': { args: ['--api-key-secret-id', 'posture-key'], env: { POSTURE_API_KEY: '' }, shows: 'key from secret' },
  '--api-key-header': { args: ['--api-key-header', 'X-Other-Key'] },
  '--portal': { args: ['--portal', 'prod-eu'], shows: 'portal prod-eu (' },
  '--requests-per-minute': { args: ['--requests-per-minute', '3'], shows: 'share 3 requests per 60 s' },
  '--max-series-per-family': { args: ['--max-series-per-family', '500'] },
  '--alert-slas': { args: ['--alert-slas', 'red=4h,green=2w'], shows: 'alert SLAs: red 4h, amber 7d, green 14d' },
  '--page-size': { args: ['--page-size', '250'] },
  '--vitals-tags': { args: ['--vitals-tags', 'linux,windows'] },
  '--directory-inactive-days': { args: ['--directory-inactive-days', '30,60'] },
  // Every interval flag: the seconds given, and the source's line check-config prints with them.
  ...Object.fromEntries(INTERVAL_FLAGS.map(([flag, seconds, shows]) => [flag, { args: [flag, seconds], shows }])),
  '--max-staleness-seconds': { args: ['--max-staleness-seconds', '1200'] },
  '--cycle-timeout-seconds': { args: ['--cycle-timeout-seconds', '45'], shows: 'capped by POSTURE_CYCLE_TIMEOUT_SECONDS at 45 s' },
  '--max-retry-after-seconds': { args: ['--max-retry-after-seconds', '30'] },
  '--connect-timeout-seconds': { args: ['--connect-timeout-seconds', '5'] },
  '--request-timeout-seconds': { args: ['--request-timeout-seconds', '20'] },
  '--max-retries': { args: ['--max-retries', '1'], shows: 'with 1 retries' },
  '--listen': { args: ['--listen', '127.0.0.1:0'] },
  '--log-level': { args: ['--log-level', 'debug'] },
  '--format': { args: ['--format', 'openmetrics'] },
  '--runbook-url': { args: ['--runbook-url', 'https://wiki.example.com/posture/{alert}'] },
  '--push': { args: ['--push', 'pushgateway', '--pushgateway-url', 'http://127.0.0.1:9091'], shows: 'push to pushgateway' },
  '--remote-write-url': { args: ['--remote-write-url', 'http://127.0.0.1:9090/api/v1/write', '--push', 'remote_write'], shows: 'push to remote_write' },
  '--remote-write-sigv4-region': { args: ['--remote-write-sigv4-region', 'eu-west-1'] },
  '--remote-write-bearer-token-ssm-parameter': { args: ['--remote-write-bearer-token-ssm-parameter', '/posture/rw-token'] },
  '--remote-write-bearer-token-secret-id': { args: ['--remote-write-bearer-token-secret-id', 'rw-token'] },
  '--remote-write-username': { args: ['--remote-write-username', '12345'], env: { POSTURE_REMOTE_WRITE_PASSWORD: 'rw-password-value' } },
  '--remote-write-password-ssm-parameter': { args: ['--remote-write-password-ssm-parameter', '/posture/rw-password', '--remote-write-username', '12345'] },
  '--remote-write-password-secret-id': { args: ['--remote-write-password-secret-id', 'rw-password', '--remote-write-username', '12345'] },
  '--pushgateway-url': { args: ['--pushgateway-url', 'http://127.0.0.1:9091', '--push', 'pushgateway'], shows: 'push to pushgateway' },
  '--pushgateway-job': { args: ['--pushgateway-job', 'posture'] },
  '--pushgateway-username': { args: ['--pushgateway-username', 'pusher', '--pushgateway-url', 'http://127.0.0.1:9091', '--push', 'pushgateway'], env: { POSTURE_PUSHGATEWAY_PASSWORD: 'pgw-password-value' } },
  '--pushgateway-password-ssm-parameter': { args: ['--pushgateway-password-ssm-parameter', '/posture/pgw', '--pushgateway-username', 'pusher', '--pushgateway-url', 'http://127.0.0.1:9091', '--push', 'pushgateway'] },
  '--pushgateway-password-secret-id': { args: ['--pushgateway-password-secret-id', 'pgw', '--pushgateway-username', 'pusher', '--pushgateway-url', 'http://127.0.0.1:9091', '--push', 'pushgateway'] },
  '--push-timeout-seconds': { args: ['--push-timeout-seconds', '20'] },
  '--push-max-retries': { args: ['--push-max-retries', '1'] },
  '--push-concurrency': { args: ['--push-concurrency', '2', '--push', 'pushgateway', '--pushgateway-url', 'http://127.0.0.1:9091'], shows: 'push to pushgateway' },
  '--state-dir': { args: ['--state-dir', join(dir, 'state')], shows: `state directory: ${join(dir, 'state')}\n` },
  '--state-table': { args: ['--state-table', 'posture-exporter-prod-ledger'], shows: 'requests recorded in the DynamoDB table posture-exporter-prod-ledger (POSTURE_STATE_TABLE)' },
  '--web-config-file': { args: ['--web-config-file', webConfig] },
  '--shard': { args: ['--shard', 'posture-exporter-1', '--total-shards', '2'], shows: 'shard 1 of 2 owns' },
  '--total-shards': { args: ['--total-shards', '2', '--shard', '0'], shows: 'shard 0 of 2 owns' },
};

/** The built CLI with the portal defaults and `env` (a state directory of its own: runBuiltCli). */
function run(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const full: Record<string, string> = { POSTURE_BASE_URL: BASE, POSTURE_API_KEY: KEY };
  for (const [k, v] of Object.entries(env)) {
    if (v === '') delete full[k];
    else full[k] = v;
  }
  return runBuiltCli(args, full);
}

describe('every flag in the README configuration table', () => {
  const flags = readmeFlags();

  it('lists the flags, and this test has a case for each', () => {
    expect(flags.length).toBeGreaterThan(20);
    expect(flags.filter((f) => !(f in CASES))).toEqual([]);
  });

  it.each(Object.entries(CASES))('check-config accepts %s', async (flag, c) => {
    expect(flags).toContain(flag);
    const r = await run(['check-config', ...c.args], c.env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^configuration is valid: /);
    expect(r.stdout).toContain(c.shows ?? 'configuration is valid: ');
  });
});

describe('--config FILE', () => {
  const env = { POSTURE_BASE_URL: '', POSTURE_API_KEY: '' };
  it.each([
    [['check-config', '--config', configFile]],
    [['check-config', `--config=${configFile}`]],
    [['--config', configFile, 'check-config']],
    [[`--config=${configFile}`, 'check-config']],
  ])('reads the file: %j', async (args) => {
    const r = await run(args, env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('configuration is valid: 2 portal(s)');
    expect(r.stdout).toContain('portal from-file-a (');
    expect(r.stdout).toContain('alerts  every   600 s');
  });

  it('names the file it cannot read', async () => {
    const r = await run(['check-config', '--config', join(dir, 'missing.yaml')], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`POSTURE_CONFIG_FILE (--config): cannot read ${join(dir, 'missing.yaml')} (ENOENT)`);
  });

  it('keeps POSTURE_CONFIG as inline JSON', async () => {
    const r = await run(['check-config'], { ...env, POSTURE_CONFIG: JSON.stringify({ base_url: BASE, api_key_file: keyFile, portal: 'inline' }) });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('portal inline (');
  });

  it('refuses --config together with POSTURE_CONFIG', async () => {
    const r = await run(['check-config', '--config', configFile], { ...env, POSTURE_CONFIG: '{}' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('POSTURE_CONFIG and POSTURE_CONFIG_FILE (--config) are both set');
  });
});
