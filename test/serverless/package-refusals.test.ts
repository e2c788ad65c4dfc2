/**
 * `osls package` of serverless.yml refuses, before writing a package, a function that would fail
 * every invocation: each line is the built CLI's `check-config --lambda`, led by the parameters that
 * set what it names.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtService, oslsArgs, oslsEnv, OSLS_TIMEOUT_MS, PORTAL, PUSH, run, work } from './support.js';

/** Parameters the function refuses on every invocation, each with the environment serverless.yml makes of them (for check-config --lambda). */
const REFUSED = {
  baseUrlPath: [{ ...PORTAL, baseUrl: 'https://acme.example.com/api' }, { POSTURE_BASE_URL: 'https://acme.example.com/api', POSTURE_API_KEY_SSM_PARAMETER: '/posture-exporter/api-key', POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: PUSH.pushgatewayUrl }],
  noPush: [{ baseUrl: PORTAL.baseUrl, apiKeySsmParameter: '/posture-exporter/api-key' }, { POSTURE_BASE_URL: PORTAL.baseUrl, POSTURE_API_KEY_SSM_PARAMETER: '/posture-exporter/api-key' }],
  remoteWriteNoUrl: [{ baseUrl: PORTAL.baseUrl, apiKeySsmParameter: '/posture-exporter/api-key', push: 'remote_write' }, { POSTURE_BASE_URL: PORTAL.baseUrl, POSTURE_API_KEY_SSM_PARAMETER: '/posture-exporter/api-key', POSTURE_PUSH: 'remote_write' }],
  noKey: [{ baseUrl: PORTAL.baseUrl, ...PUSH }, { POSTURE_BASE_URL: PORTAL.baseUrl, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: PUSH.pushgatewayUrl }],
  configFileMissing: [{ ...PUSH, configFile: '/var/task/posture-config/portals.yml' }, {}],
  // A packaged config file whose portal's base URL lacks the API root (BAD_FLEET).
  configFileInvalid: [{ ...PUSH, configFile: '/var/task/posture-config/bad.yml' }, {}],
} as const satisfies Record<string, readonly [Record<string, string>, Record<string, string>]>;
type RefusalCase = keyof typeof REFUSED;
/** The config file of configFileInvalid. */
const BAD_FLEET = 'portals:\n  - portal: a\n    base_url: https://a.example.com/api\n    api_key_ssm_parameter: /posture/a\n';

/** What `osls package` said when it refused, by case (refused before writing a package). */
const refusals: Record<RefusalCase, { code: number; output: string; packaged: boolean }> = {} as never;

/** `osls package` that is expected to fail: its exit code, what it printed, and whether it wrote a package. */
async function oslsRefusal(name: keyof typeof refusals, params: Record<string, string>): Promise<void> {
  const dir = join(work, `refused-${name}`);
  const ran = await run(process.execPath, oslsArgs(dir, params), { cwd: work, env: oslsEnv(work), timeout: OSLS_TIMEOUT_MS }).then(
    (r) => ({ code: 0, output: r.stdout + r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
  );
  refusals[name] = { ...ran, packaged: existsSync(join(dir, 'posture-exporter.zip')) };
}

builtService('sls-refusals-', async () => {
  mkdirSync(join(work, 'posture-config'));
  writeFileSync(join(work, 'posture-config/bad.yml'), BAD_FLEET);
  for (const [name, [params]] of Object.entries(REFUSED)) await oslsRefusal(name as RefusalCase, params);
});

describe('osls package refuses a function that would fail every invocation', () => {
  /** What `check-config --lambda` of the built CLI says about `env`, the function's environment: its problem lines. */
  async function checkConfigLines(env: Record<string, string>): Promise<string[]> {
    const ran = await run(process.execPath, [join(work, 'dist/cli.js'), 'check-config', '--lambda'], { env: { ...env, POSTURE_STATE_TABLE: 'posture-exporter-test-ledger' }, timeout: 30_000 }).then(
      () => ({ stderr: '' }),
      (e: { stderr: string }) => e,
    );
    return ran.stderr.split('\n').filter((l) => l.startsWith('config error: ')).map((l) => l.slice('config error: '.length));
  }

  it.each([
    // The four: each was packaged ("Service packaged") and failed every invocation.
    ['baseUrlPath', 'parameter baseUrl', 'does not end in /public-api/v1'],
    ['noPush', 'parameter push', 'POSTURE_PUSH is empty'],
    ['remoteWriteNoUrl', 'parameters push, remoteWriteUrl', 'POSTURE_REMOTE_WRITE_URL is not set'],
    ['noKey', 'parameters apiKeySsmParameter, apiKeySecretId', 'no API key'],
  ] as const)('%s: the line check-config --lambda prints for its environment, led by the parameters; nothing packaged', async (name, params, says) => {
    const r = refusals[name];
    expect(r.code).not.toBe(0);
    expect(r.packaged).toBe(false);
    const lines = await checkConfigLines(REFUSED[name][1]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(says);
    expect(r.output).toContain(`posture-exporter: the function would fail every invocation:\n  ${params}: ${lines[0]}\n`);
  });

  it('a packaged config file the function refuses: check-config\'s line, naming the file where the function reads it, led by configFile', async () => {
    const r = refusals.configFileInvalid;
    expect(r).toMatchObject({ packaged: false });
    const local = join(work, 'local-bad.yml');
    writeFileSync(local, BAD_FLEET);
    const lines = await checkConfigLines({ POSTURE_CONFIG_FILE: local, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: PUSH.pushgatewayUrl });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('does not end in /public-api/v1');
    expect(r.output).toContain(`posture-exporter: the function would fail every invocation:\n  parameter configFile: ${lines[0]!.replace(local, '/var/task/posture-config/bad.yml')}\n`);
  });

  it('with a configFile that is not beside serverless.yml: says it would not be packaged', () => {
    expect(refusals.configFileMissing).toMatchObject({ packaged: false });
    expect(refusals.configFileMissing.code).not.toBe(0);
    expect(refusals.configFileMissing.output).toContain('posture-exporter: the function would fail every invocation:\n  configFile=/var/task/posture-config/portals.yml: posture-config/portals.yml does not exist beside serverless.yml, so it would not be packaged.');
  });
});
