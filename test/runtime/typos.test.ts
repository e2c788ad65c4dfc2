// A `POSTURE_*` variable that is not a setting is refused, with the nearest setting, by every command (each reads settings from the environment) and by the Lambda handler.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { portalForAll } from '../support/closing.js';
import { FakeClock } from '../../src/core/clock.js';
import { main } from '../../src/runtime/cli.js';
import { withOwnState } from '../support/cli.js';
import { createHandler, InvocationFailedError } from '../../src/runtime/lambda.js';

const KEY = 'sim-typo-key-0123456789abcdef';
const TYPO = 'POSTURE_INTERVAL_SECOND is not a setting: did you mean POSTURE_INTERVAL_SECONDS? Rename it, or unset it.';
const sim = portalForAll({ keys: [{ key: KEY }], rateLimit: false, moving: false });

async function cli(argv: string[], env: Record<string, string>, stopSignal?: Promise<void>) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    env: withOwnState({ POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY, ...env }),
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    stopSignal,
  });
  return { code, stdout, stderr };
}

describe('unknown POSTURE_* variables', () => {
  it('check-config names each typo on stderr, still prints the plan, and exits 2 (the setting meant is not in effect)', async () => {
    const r = await cli(['check-config'], { POSTURE_INTERVAL_SECOND: '120', POSTURE_PAGESIZE: '10' });
    expect(r.code).toBe(2);
    expect(r.stdout).not.toContain('configuration is valid');
    expect(r.stderr).toBe(`config error: ${TYPO}\nconfig error: POSTURE_PAGESIZE is not a setting: did you mean POSTURE_PAGE_SIZE? Rename it, or unset it.\n`);
    expect(r.stdout).toContain('alerts  every   300 s');
  });

  it('check-config names the typo before the problem it causes', async () => {
    const r = await cli(['check-config'], { POSTURE_BASE_URL: '', POSTURE_BASE_ULR: sim().baseUrl });
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe('config error: POSTURE_BASE_ULR is not a setting: did you mean POSTURE_BASE_URL? Rename it, or unset it.');
    expect(lines[1]).toMatch(/^config error: no portal is configured/);
    expect(lines).toHaveLength(2);
  });

  it('once names the typo before the problem it causes, with the lines check-config prints', async () => {
    const env = { POSTURE_BASE_URL: '', POSTURE_BASE_ULR: sim().baseUrl };
    const once = await cli(['once'], env);
    expect(once.code).toBe(2);
    expect(once.stderr).toBe((await cli(['check-config'], env)).stderr);
  });

  it('demo with a key file but a mistyped address names the typo and what is missing, not two key sources', async () => {
    const r = await cli(['demo'], { POSTURE_BASE_URL: '', POSTURE_API_KEY: '', POSTURE_BASEURL: sim().baseUrl, POSTURE_API_KEY_FILE: '/run/secrets/posture-key' });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'config error: POSTURE_BASEURL is not a setting: did you mean POSTURE_BASE_URL? Rename it, or unset it.',
      'config error: POSTURE_API_KEY_FILE is set but no portal address is: set POSTURE_BASE_URL (or POSTURE_CLOUD_ID and POSTURE_API_HOST) for the real portal, or unset POSTURE_API_KEY_FILE for the simulated portal, which uses its own key.',
    ]);
  });

  it('demo against its simulated portal refuses a typo before it starts anything', async () => {
    const r = await cli(['demo'], { POSTURE_BASE_URL: '', POSTURE_API_KEY: '', POSTURE_LISTEN: '127.0.0.1:0', POSTURE_LOG_LEVL: 'debug' }, Promise.resolve());
    expect(r).toEqual({ code: 2, stdout: '', stderr: 'config error: POSTURE_LOG_LEVL is not a setting: did you mean POSTURE_LOG_LEVEL? Rename it, or unset it.\n' });
  });

  it('once refuses to start: the one line, exit 2, nothing on stdout, no request', async () => {
    const sent = sim().requests.length;
    const r = await cli(['once'], { POSTURE_INTERVAL_SECOND: '120' });
    expect(r).toEqual({ code: 2, stdout: '', stderr: `config error: ${TYPO}\n` });
    expect(sim().requests.length).toBe(sent);
  });

  it('serve refuses to start: the one line, exit 2, before it listens', async () => {
    const sent = sim().requests.length;
    let ready = false;
    let stderr = '';
    const r = await main(['serve'], {
      env: withOwnState({ POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY, POSTURE_INTERVAL_SECOND: '120', POSTURE_LISTEN: '127.0.0.1:0' }),
      stdout: () => undefined,
      stderr: (t) => (stderr += t),
      onReady: () => (ready = true),
    });
    expect({ code: r, stderr, ready }).toEqual({ code: 2, stderr: `config error: ${TYPO}\n`, ready: false });
    expect(sim().requests.length).toBe(sent);
  });

  it('backfill refuses to start: the one line, exit 2, nothing on stdout, no request, nothing written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'posture-typo-backfill-'));
    try {
      const sent = sim().requests.length;
      const output = join(dir, 'history.om');
      const state = join(dir, 'state');
      const r = await cli(['backfill', '--days', '2', '--output', output], { POSTURE_INTERVAL_SECOND: '120', POSTURE_STATE_DIR: state });
      expect(r).toEqual({ code: 2, stdout: '', stderr: `config error: ${TYPO}\n` });
      expect(sim().requests.length).toBe(sent);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('backfill names the typo before the problem it causes, with the lines check-config prints', async () => {
    const env = { POSTURE_BASE_URL: '', POSTURE_BASE_ULR: sim().baseUrl };
    const backfill = await cli(['backfill', '--days', '1', '--output', join(tmpdir(), 'posture-typo-never-written.om')], env);
    expect(backfill.code).toBe(2);
    expect(backfill.stderr.trim().split('\n')).toHaveLength(2);
    expect(backfill.stderr).toBe((await cli(['check-config'], env)).stderr);
  });

  it('backfill names the typo before a problem of its own flags', async () => {
    const r = await cli(['backfill', '--days', '1'], { POSTURE_PAGESIZE: '10' });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'config error: POSTURE_PAGESIZE is not a setting: did you mean POSTURE_PAGE_SIZE? Rename it, or unset it.',
      'config error: backfill needs somewhere to write: --output FILE (OpenMetrics for promtool) and/or --push remote_write.',
    ]);
  });

  it('rules refuses a mistyped POSTURE_CONFIG_FILE instead of writing the rules of no file', async () => {
    const r = await cli(['rules'], { POSTURE_CONFIG_FIEL: '/etc/posture-exporter/config.yaml' });
    expect(r).toEqual({ code: 2, stdout: '', stderr: 'config error: POSTURE_CONFIG_FIEL is not a setting: did you mean POSTURE_CONFIG_FILE? Rename it, or unset it.\n' });
  });

  it('simulate refuses a mistyped POSTURE_LISTEN before it starts a portal', async () => {
    let ready = false;
    let stdout = '';
    let stderr = '';
    const code = await main(['simulate'], { env: { POSTURE_LISTN: '127.0.0.1:0' }, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), onReady: () => (ready = true), stopSignal: Promise.resolve() });
    expect({ code, stdout, stderr, ready }).toEqual({ code: 2, stdout: '', stderr: 'config error: POSTURE_LISTN is not a setting: did you mean POSTURE_LISTEN? Rename it, or unset it.\n', ready: false });
  });

  it('names the setting that begins with what was typed, not a shorter one nearer in letters', async () => {
    const r = await cli(['check-config'], { POSTURE_INTERVL: '600' });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('config error: POSTURE_INTERVL is not a setting: did you mean POSTURE_INTERVAL_SECONDS? Rename it, or unset it.\n');
  });

  it('says nothing when every variable is a setting', async () => {
    const r = await cli(['check-config'], { POSTURE_INTERVAL_SECONDS: '600' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('the Lambda handler refuses the typo before any request, alone or beside another problem, the typo first', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0), { autoAdvance: true });
    const invoke = async (env: Record<string, string>) => {
      const lines: string[] = [];
      const handler = createHandler({ env: { POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY, ...env }, clock, write: (l) => lines.push(l) });
      const err = await handler({}, { awsRequestId: 'req-1', getRemainingTimeInMillis: () => 60_000 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      return { err, lines };
    };
    const sent = sim().requests.length;

    const alone = await invoke({ POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: 'http://127.0.0.1:9/', POSTURE_LOG_LEVL: 'debug' });
    expect(alone.err).toBeInstanceOf(InvocationFailedError);
    expect((alone.err as Error).message).toBe('invalid settings: POSTURE_LOG_LEVL is not a setting: did you mean POSTURE_LOG_LEVEL? Rename it, or unset it.');
    expect(alone.lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([expect.objectContaining({ level: 'ERROR', message: 'invalid settings', settings: ['POSTURE_LOG_LEVL'] })]);

    // The typo is why POSTURE_PUSH is empty.
    const beside = await invoke({ POSTURE_PUSH_: 'otlp' });
    expect((beside.err as Error).message).toBe(
      'invalid settings: POSTURE_PUSH_ is not a setting: did you mean POSTURE_PUSH? Rename it, or unset it. | POSTURE_PUSH is empty: the Lambda pushes its metrics, set it to any of otlp, remote_write, pushgateway.',
    );
    expect(beside.lines.join('\n')).not.toContain(KEY);
    expect(sim().requests.length).toBe(sent);
  });
});
