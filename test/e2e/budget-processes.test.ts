/**
 * The share held by construction, on real time through the built CLI with real processes: five
 * `once` started together behind a full window, and `once` runs whose wall clock is stepped (via
 * libfaketime, the monotonic clock untouched). The simulated portal's request log is the oracle:
 * no 60 s window holds more than the share.
 */
import { describe, expect, it } from 'vitest';
import { BUILT_CLI, failedOnlyAsLate, runBuiltCli, runProcess } from '../support/cli.js';
import { simulatorWithStateDir } from '../support/sim-state.js';
import { maxInAnyWindow } from '../support/window.js';

const KEY = 'sim-processes-key-0123456789abcdef';

const portal = simulatorWithStateDir(KEY, 'budget-processes-', 'each');

const env = (share: number, extra: Record<string, string> = {}) => ({
  POSTURE_BASE_URL: portal.sim.baseUrl,
  POSTURE_API_KEY: KEY,
  POSTURE_REQUESTS_PER_MINUTE: String(share),
  POSTURE_STATE_DIR: portal.stateDir,
  POSTURE_LOG_LEVEL: 'warn',
  ...extra,
});

describe('real processes on one state directory', () => {
  it('five once started together behind a full window: each succeeds or is late, and no 60 s window holds more than the share of 5', async () => {
    const first = await runBuiltCli(['once'], env(5));
    expect(first.code, first.stderr).toBe(0);
    // Four for the sources and one for the resolved-alerts pass (a first run makes it): the window is full.
    expect(portal.sim.requests).toHaveLength(5);
    // The pass is claimed for its interval (an hour), so the five runs skip it and need 20 requests:
    // none is left now, five slots come 61 s later; the rest are late at 75 s.
    const runs = await Promise.all(Array.from({ length: 5 }, () => runBuiltCli(['once'], env(5, { POSTURE_CYCLE_TIMEOUT_SECONDS: '75' }))));
    expect(runs.filter((r) => r.code !== 0 && !failedOnlyAsLate(r.stderr)).map((r) => r.stderr.slice(-3000))).toEqual([]);
    const times = portal.sim.requests.map((q) => q.time).sort((a, b) => a - b);
    expect(maxInAnyWindow(times)).toBeLessThanOrEqual(5);
    // The window did fill: the share was used, not starved.
    expect(maxInAnyWindow(times)).toBe(5);
    expect(portal.sim.requests.every((q) => q.status === 200)).toBe(true);
  });

  it.each([
    ['90 s behind', '-90s'],
    ['45 s ahead', '+45s'],
  ])('a once whose wall clock runs %s waits for the window like any other: nothing is sent before it clears', async (_what, offset) => {
    // A share of 5: the first run's four source requests and its resolved-alerts pass (a first run
    // makes it) fill one window exactly, as the four requests filled a share of 4 before.
    const first = await runBuiltCli(['once'], env(5));
    expect(first.code, first.stderr).toBe(0);
    expect(portal.sim.requests).toHaveLength(5);
    // Its run may take 20 s: the window stays full for 61 s, so it is late and sends nothing.
    const stepped = await runProcess('faketime', ['-f', offset, process.execPath, BUILT_CLI, 'once'], {
      env: { PATH: process.env.PATH, DONT_FAKE_MONOTONIC: '1', ...env(5, { POSTURE_CYCLE_TIMEOUT_SECONDS: '20' }) },
    });
    expect(stepped.code).not.toBe(0);
    expect(failedOnlyAsLate(stepped.stderr), stepped.stderr.slice(-3000)).toBe(true);
    expect(portal.sim.requests).toHaveLength(5);
  });
});
