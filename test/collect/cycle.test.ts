import { describe, expect, it } from 'vitest';
import { cycleOf, type SourceRun } from '../../src/collect/cycle.js';
import type { Source } from '../../src/domain.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

/** A (failed) run of `source` from `start` to `end` (wall ms after T0); the monotonic clock reads 500 000 ms more than the offset, and the run took `durationMs` on it. */
function run(source: Source, start: number, end: number, durationMs: number, requests: Array<[string, number]>, alertsPageSize?: number): SourceRun {
  return {
    source,
    result: { ok: false, error: new Error(`${source} failed`) },
    startedAt: T0 + start,
    finishedAt: T0 + end,
    finishedMonotonic: 500_000 + end,
    durationMs,
    requests: new Map(requests),
    ...(alertsPageSize === undefined ? {} : { alertsPageSize }),
  } as SourceRun;
}

describe('cycleOf', () => {
  // Started together (devices a little late); alerts ran longest, devices ended first.
  const runs = [
    run('vitals', 0, 2_000, 1_950, [['/vitals\u0000200', 3]]),
    run('alerts', 10, 9_000, 8_990, [['/alerts\u0000200', 4], ['/alerts\u0000429', 1]], 500),
    run('devices', 400, 1_500, 1_100, [['/devices\u0000200', 2], ['/alerts\u0000200', 1]]),
  ];

  it('spans from the first run\'s start to the last run\'s end, in wall and monotonic time', () => {
    for (const order of [runs, [...runs].reverse(), [runs[1]!, runs[0]!, runs[2]!]]) {
      const c = cycleOf('acme', order);
      expect(c.startedAt).toBe(T0);
      expect(c.finishedAt).toBe(T0 + 9_000);
      expect(c.finishedMonotonic).toBe(509_000);
      // The runs start together: the longest one is the cycle's duration.
      expect(c.durationMs).toBe(8_990);
    }
  });

  it('adds up the requests of every run and keeps each source\'s outcome, the page size and the budget', () => {
    const budget = { configuredShare: 5, effectiveShare: 4, rateLimitedLastHour: 1, rateLimitedTotal: 1 };
    const c = cycleOf('acme', runs, budget);
    expect(c.portal).toBe('acme');
    expect(new Map(c.requests)).toEqual(new Map([['/vitals\u0000200', 3], ['/alerts\u0000200', 5], ['/alerts\u0000429', 1], ['/devices\u0000200', 2]]));
    expect(c.vitals).toBe(runs[0]!.result);
    expect(c.alerts).toBe(runs[1]!.result);
    expect(c.devices).toBe(runs[2]!.result);
    expect(c.alertsPageSize).toBe(500);
    expect(c.budget).toBe(budget);
    const bare = cycleOf('acme', [runs[0]!, runs[2]!]);
    expect('alertsPageSize' in bare).toBe(false);
    expect('budget' in bare).toBe(false);
  });
});
