/**
 * A slow source's request yields to the live runs it would make late (src/schedule/yield.ts): the
 * grids of the live runs, the decision worked by hand on a share of 2, and the scheduler on the
 * injected clock, with and without the live runs it expects.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { continuationOf, PortalScheduler, PRIORITY } from '../../src/schedule/scheduler.js';
import { LiveGrid, makesLiveLate, type Due, type LiveDemand } from '../../src/schedule/yield.js';

const T0 = Date.UTC(2026, 11, 4, 12, 0, 0);
/** A share of 2 in the portal's 60 s and the exporter's 1 s margin; one request holds the next back 1 s. */
const W = { share: 2, windowMs: 60_000, marginMs: 1_000, requestMs: 1_000 };

describe('LiveGrid', () => {
  const grid = new LiveGrid([
    { startMs: 1_000, everyMs: 30_000, priority: PRIORITY.alerts, requests: () => 2 },
    { startMs: 5_000, everyMs: 60_000, priority: PRIORITY.vitals, requests: () => 1 },
  ]);

  it('lists the runs that start after `from` and at or before `to`, by start, each with its latest start (its interval less 10 s)', () => {
    expect(grid.dueIn(1_000, 61_000)).toEqual([
      { at: 5_000, by: 55_000, priority: PRIORITY.vitals, requests: 1 },
      { at: 31_000, by: 51_000, priority: PRIORITY.alerts, requests: 2 },
      { at: 61_000, by: 81_000, priority: PRIORITY.alerts, requests: 2 },
    ]);
    expect(grid.dueIn(0, 999)).toEqual([]);
  });

  it('names the next start after a time, of any source', () => {
    expect(grid.nextAfter(0)).toBe(1_000);
    expect(grid.nextAfter(1_000)).toBe(5_000);
    expect(grid.nextAfter(5_000)).toBe(31_000);
    expect(grid.nextAfter(61_000)).toBe(65_000);
  });
});

describe('makesLiveLate', () => {
  /** A live run of 2 requests due at 30 s whose last request must start by `by`. */
  const run = (by: number): Due[] => [{ at: 30_000, by, priority: PRIORITY.alerts, requests: 2 }];

  it('a slow request that counts from 5 s pushes the run\'s second request from 31 s to 66 s (5 + 61): late when it must start by 60 s', () => {
    expect(makesLiveLate([], 5_000, 1_000, run(60_000), W)).toBe(true);
  });

  it('is no reason to wait when the run may still start its last request at 66 s', () => {
    expect(makesLiveLate([], 5_000, 1_000, run(66_000), W)).toBe(false);
    expect(makesLiveLate([], 5_000, 1_000, run(65_999), W)).toBe(true);
  });

  it('leaves alone a run that is late anyway: it does not wait for what it cannot save', () => {
    // Two requests in the window from 0 s and 1 s: the run's requests go at 61 s and 62 s without the slow one, past 50 s.
    expect(makesLiveLate([0, 1_000], 5_000, 1_000, run(50_000), W)).toBe(false);
  });

  it('serves the live runs as the scheduler does: the higher priority first', () => {
    // /alerts (priority 3) and Vitals (1) due at 30 s, 1 request each, beside a slow request from 5 s: the first to go
    // starts at 30 s, the other at 66 s. Vitals goes first: in time by 40 s, and /alerts at 66 s is in time by 80 s
    // (listed first, /alerts first would leave Vitals to 66 s, late); late by 60 s.
    const due = (alertsBy: number): Due[] => [
      { at: 30_000, by: alertsBy, priority: PRIORITY.alerts, requests: 1 },
      { at: 30_000, by: 40_000, priority: PRIORITY.vitals, requests: 1 },
    ];
    expect(makesLiveLate([], 5_000, 1_000, due(80_000), W)).toBe(false);
    expect(makesLiveLate([], 5_000, 1_000, due(60_000), W)).toBe(true);
  });

  it('with no live run due, never', () => {
    expect(makesLiveLate([0, 1_000], 5_000, 1_000, [], W)).toBe(false);
  });
});

describe('PortalScheduler with the live runs it expects', () => {
  /** One live run of 2 requests due 30 s after the start, its last request by 60 s (every 40 s, less 10 s). */
  const oneRun = (start: number): LiveDemand => ({
    dueIn: (from, to) => (from < start + 30_000 && start + 30_000 <= to ? [{ at: start + 30_000, by: start + 60_000, priority: PRIORITY.alerts, requests: 2 }] : []),
    nextAfter: (at) => (at < start + 30_000 ? start + 30_000 : Infinity),
  });

  /** When each request starts (ms after the start): a slow request asked for at once, the live run's two at 30 s. */
  async function grants(expecting: boolean): Promise<Record<string, number>> {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 2, clock });
    const start = clock.monotonic();
    if (expecting) sched.expectLive(oneRun(start));
    const at: Record<string, number> = {};
    const take = async (name: string, priority: number) => {
      const permit = await sched.acquire({ endpoint: name, priority, deadline: Infinity });
      at[name] = clock.monotonic() - start;
      permit.done();
    };
    const live = (async () => {
      await clock.sleep(30_000);
      await take('live-1', PRIORITY.alerts);
      await take('live-2', continuationOf(PRIORITY.alerts));
    })();
    await Promise.all([take('slow', PRIORITY.slow), live]);
    return at;
  }

  it('without them, the slow request goes at once and the live run\'s second request waits until 61 s', async () => {
    expect(await grants(false)).toEqual({ slow: 0, 'live-1': 30_000, 'live-2': 61_000 });
  });

  it('with them, the slow request waits: the live run sends both at 30 s, and the slow one goes when the window has room, at 91 s', async () => {
    expect(await grants(true)).toEqual({ slow: 91_000, 'live-1': 30_000, 'live-2': 30_000 });
  });
});
