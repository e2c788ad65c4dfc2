// Through the built CLI (`npm run build`): a misspelt flag gets one line naming the flag meant, check-config
// exits 2 on a mistyped variable and on an overspending interval, and each way out it names applied alone passes.
import { describe, expect, it } from 'vitest';
import { runBuiltCli, type Ran } from '../support/cli.js';

const ENV = { POSTURE_BASE_URL: 'http://127.0.0.1:9/public-api/v1', POSTURE_API_KEY: 'misspelt-e2e-key-0123456789' };

/** The built CLI with ENV and `env` (and a state directory of its own). */
function run(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  return runBuiltCli(args, { ...ENV, ...env });
}

describe('the built CLI', () => {
  it('a misspelt flag: one line with the flag meant, exit 2', async () => {
    const r = await run(['check-config', '--intervl-seconds', '400']);
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'usage error: unknown flag --intervl-seconds: did you mean --interval-seconds?\n' });
  });

  it('a flag typed with a letter too many, or cut short and mistyped, gets the flag it begins', async () => {
    expect(await run(['check-config', '--intervall', '400'])).toMatchObject({ code: 2, stdout: '', stderr: 'usage error: unknown flag --intervall: did you mean --interval-seconds?\n' });
    expect(await run(['once', '--totl-shards', '3'])).toMatchObject({ code: 2, stdout: '', stderr: 'usage error: unknown flag --totl-shards: did you mean --total-shards?\n' });
  });

  it('a bad --shard says what a shard is, in check-config, once and serve alike', async () => {
    for (const command of ['check-config', 'once', 'serve']) {
      const r = await run([command, '--shard', '-1', '--total-shards', '3', '--listen', '127.0.0.1:0']);
      expect(r.code, command).toBe(2);
      expect(r.stderr, command).toBe("config error: POSTURE_SHARD (--shard): '-1' is not a shard number: a shard is a whole number from 0 to 2 (below the total of 3 shards) or a StatefulSet pod name ending in -N (e.g. posture-exporter-2)\n");
    }
    expect(await run(['once', '--shard', '--total-shards', '3'])).toMatchObject({ code: 2, stderr: 'usage error: --shard needs a value: give --shard VALUE or --shard=VALUE.\n' });
  });

  it('check-config: a mistyped variable exits 2; without it, 0', async () => {
    const bad = await run(['check-config'], { POSTURE_INTERVAL_SECOND: '600' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('config error: POSTURE_INTERVAL_SECOND is not a setting: did you mean POSTURE_INTERVAL_SECONDS? Rename it, or unset it.\n');
    expect((await run(['check-config'], { POSTURE_INTERVAL_SECONDS: '600' })).code).toBe(0);
  });

  it('check-config: an overspending /alerts interval exits 2, and each way out applied alone exits 0', async () => {
    const bad = await run(['check-config', '--alerts-interval-seconds', '10']);
    expect(bad.code).toBe(2);
    const ways = /: set (\S+), or raise (POSTURE_REQUESTS_PER_MINUTE) to (\d+)\.$/m.exec(bad.stderr);
    // Every 20 s would fit the hour, but not minute by minute beside Vitals and devices (docs/budget.md): 30 s.
    expect(ways?.[1]).toBe('--alerts-interval-seconds=30');
    // Every 10 s, an /alerts run whose deadline is its next run 10 s later may not wait at all (its last request at least
    // 10 s before it, docs/budget.md): a window (R per 62 s) holds up to 7 of them, and at the 300 s mark Vitals' 1 and the
    // devices' 2 besides: 10, the portal's whole share (the slow sources wait for a gap, below every live source).
    expect(ways?.[3]).toBe('10');
    expect((await run(['check-config', '--alerts-interval-seconds', '10', ways![1]!])).code).toBe(0);
    expect((await run(['check-config', '--alerts-interval-seconds', '10'], { [ways![2]!]: ways![3]! })).code).toBe(0);
    const smallest = /smallest intervals that fit: (.*)$/m.exec(bad.stdout)![1]!.split(' ');
    // The smallest intervals, each set as named (flags as flags, variables in the environment).
    const flags = smallest.filter((s) => s.startsWith('--'));
    const env = Object.fromEntries(smallest.filter((s) => !s.startsWith('--')).map((s) => s.split('=') as [string, string]));
    const applied = await run(['check-config', '--alerts-interval-seconds', '10', ...flags], env);
    expect(applied.stdout).toMatch(/^configuration is valid/);
    expect(applied.code).toBe(0);
  });

  it('a base URL not ending in /public-api/v1: check-config, once and serve exit 2 with the same line', async () => {
    for (const command of ['check-config', 'once', 'serve']) {
      const r = await run([command, '--listen', '127.0.0.1:0'], { POSTURE_BASE_URL: 'http://127.0.0.1:9/api' });
      expect(r.code, command).toBe(2);
      expect(r.stderr, command).toBe('config error: POSTURE_BASE_URL="http://127.0.0.1:9/api" does not end in /public-api/v1: give https://<cloud_id>.<host>/public-api/v1 (the portal answers 404 elsewhere).\n');
    }
  });
});
