// A `POSTURE_*` variable that is not a setting is named, with the nearest setting, by every command and the Lambda handler.
import { describe, expect, it } from 'vitest';
import { portalForAll } from '../support/closing.js';
import { FakeClock } from '../../src/core/clock.js';
import { main } from '../../src/runtime/cli.js';
import { createHandler, InvocationFailedError } from '../../src/runtime/lambda.js';

const KEY = 'sim-typo-key-0123456789abcdef';
const TYPO = 'POSTURE_INTERVAL_SECOND is not a setting and is ignored: did you mean POSTURE_INTERVAL_SECONDS?';
const sim = portalForAll({ keys: [{ key: KEY }], rateLimit: false, moving: false });

async function cli(argv: string[], env: Record<string, string>, stopSignal?: Promise<void>) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    env: { POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY, ...env },
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    stopSignal,
  });
  return { code, stdout, stderr };
}

describe('unknown POSTURE_* variables', () => {
  it('check-config warns once per typo on stderr, still prints the plan, and exits 2 (the setting meant is not in effect)', async () => {
    const r = await cli(['check-config'], { POSTURE_INTERVAL_SECOND: '120', POSTURE_PAGESIZE: '10' });
    expect(r.code).toBe(2);
    expect(r.stdout).not.toContain('configuration is valid');
    expect(r.stderr).toBe(`warning: ${TYPO}\nwarning: POSTURE_PAGESIZE is not a setting and is ignored: did you mean POSTURE_PAGE_SIZE?\n`);
    expect(r.stdout).toContain('alerts  every   300 s');
  });

  it('check-config names the typo before the problem it causes', async () => {
    const r = await cli(['check-config'], { POSTURE_BASE_URL: '', POSTURE_BASE_ULR: sim().baseUrl });
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines[0]).toBe('warning: POSTURE_BASE_ULR is not a setting and is ignored: did you mean POSTURE_BASE_URL?');
    expect(lines[1]).toMatch(/^config error: no portal is configured/);
  });

  it('demo with a key file but a mistyped address names the typo and what is missing, not two key sources', async () => {
    const r = await cli(['demo'], { POSTURE_BASE_URL: '', POSTURE_API_KEY: '', POSTURE_BASEURL: sim().baseUrl, POSTURE_API_KEY_FILE: '/run/secrets/posture-key' });
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'warn', msg: 'POSTURE_BASEURL is not a setting and is ignored: did you mean POSTURE_BASE_URL?' });
    expect(lines.slice(1)).toEqual([
      'config error: POSTURE_API_KEY_FILE is set but no portal address is: set POSTURE_BASE_URL (or POSTURE_CLOUD_ID and POSTURE_API_HOST) for the real portal, or unset POSTURE_API_KEY_FILE for the simulated portal, which uses its own key.',
    ]);
  });

  it('once logs one warning line naming the typo and the setting', async () => {
    const r = await cli(['once'], { POSTURE_INTERVAL_SECOND: '120' });
    expect(r.code).toBe(0);
    const warnings = r.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.level === 'warn');
    expect(warnings).toEqual([expect.objectContaining({ msg: TYPO, variable: 'POSTURE_INTERVAL_SECOND', nearest: 'POSTURE_INTERVAL_SECONDS' })]);
  });

  it('serve logs the warning at start', async () => {
    let stop!: () => void;
    const stopped = new Promise<void>((r) => (stop = r));
    const running = cli(['serve'], { POSTURE_INTERVAL_SECOND: '120', POSTURE_LISTEN: '127.0.0.1:0' }, stopped);
    stop();
    const r = await running;
    expect(r.code).toBe(0);
    expect(r.stderr.split('\n')[0]).toContain(`"msg":"${TYPO}"`);
  });

  it('names the setting that begins with what was typed, not a shorter one nearer in letters', async () => {
    const r = await cli(['check-config'], { POSTURE_INTERVL: '600' });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('warning: POSTURE_INTERVL is not a setting and is ignored: did you mean POSTURE_INTERVAL_SECONDS?\n');
  });

  it('says nothing when every variable is a setting', async () => {
    const r = await cli(['check-config'], { POSTURE_INTERVAL_SECONDS: '600' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('the Lambda handler logs the typo, and names it in the invalid-settings error', async () => {
    const lines: string[] = [];
    const clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0), { autoAdvance: true });
    const handler = createHandler({ env: { POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY, POSTURE_PUSH_: 'otlp' }, clock, write: (l) => lines.push(l) });
    const err = await handler({}, { awsRequestId: 'req-1', getRemainingTimeInMillis: () => 60_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InvocationFailedError);
    expect((err as Error).message).toContain('POSTURE_PUSH_ is not a setting and is ignored: did you mean POSTURE_PUSH?');
    expect(lines.join('\n')).not.toContain(KEY);

    const ok: string[] = [];
    const valid = createHandler({
      env: { POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: 'http://127.0.0.1:9/', POSTURE_LOG_LEVL: 'debug' },
      clock,
      write: (l) => ok.push(l),
    });
    await valid({}, { awsRequestId: 'req-2', getRemainingTimeInMillis: () => 60_000 }).catch(() => undefined);
    const warnings = ok.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.level === 'WARN' && l.variable === 'POSTURE_LOG_LEVL');
    expect(warnings).toEqual([expect.objectContaining({ message: 'POSTURE_LOG_LEVL is not a setting and is ignored: did you mean POSTURE_LOG_LEVEL?', nearest: 'POSTURE_LOG_LEVEL' })]);
  });
});
