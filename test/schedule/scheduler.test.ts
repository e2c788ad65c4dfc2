import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { LateError } from '../../src/errors.js';
import { AdaptiveShare } from '../../src/schedule/share.js';
import { PortalScheduler, PRIORITY } from '../../src/schedule/scheduler.js';
import { SlidingWindow } from '../../src/schedule/window.js';
import { maxInAnyWindow } from '../support/window.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const MINUTE = 60_000;

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('SlidingWindow', () => {
  it('allows `share` starts at once, then the next a full window (plus margin) after the start it pushes out', () => {
    const w = new SlidingWindow(MINUTE, 1_000);
    for (let i = 0; i < 3; i++) {
      expect(w.nextSlot(T0 + i, 3)).toBe(T0 + i);
      w.record(T0 + i);
    }
    expect(w.nextSlot(T0 + 10, 3)).toBe(T0 + MINUTE + 1_000);
    expect(w.nextSlot(T0 + 10, 1)).toBe(T0 + 2 + MINUTE + 1_000);
    expect(w.countAt(T0 + MINUTE + 1_000)).toBe(2);
  });

});

describe('AdaptiveShare', () => {
  it('halves on a 429 others caused, never below 1, and wins back one request per clean window', () => {
    const s = new AdaptiveShare(5, MINUTE);
    expect(s.rateLimited(T0, false)).toBe(true);
    expect(s.effective).toBe(2);
    // A second 429 in the same window is the same congestion: no second cut.
    expect(s.rateLimited(T0 + 1, false)).toBe(false);
    expect(s.effective).toBe(2);
    expect(s.rateLimited(T0 + MINUTE, false)).toBe(true);
    expect(s.effective).toBe(1);
    expect(s.rateLimited(T0 + 2 * MINUTE, false)).toBe(false);
    expect(s.effective).toBe(1);
    const last = T0 + 2 * MINUTE;
    expect(s.succeeded(last + 30_000)).toBe(false);
    expect(s.succeeded(last + MINUTE)).toBe(true);
    expect(s.effective).toBe(2);
    expect(s.succeeded(last + MINUTE + 10)).toBe(false);
    for (let k = 2; k <= 6; k++) s.succeeded(last + k * MINUTE);
    expect(s.effective).toBe(5);
  });

  it('keeps the share when its own requests explain the 429', () => {
    const s = new AdaptiveShare(10, MINUTE);
    expect(s.rateLimited(T0, true)).toBe(false);
    expect(s.effective).toBe(10);
  });
});

describe('PortalScheduler', () => {
  it('grants at most the share per window and never fails a request because the window is full', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 3, clock, concurrency: 10 });
    const starts: number[] = [];
    await Promise.all(
      Array.from({ length: 7 }, () => sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity }).then((p) => (starts.push(p.startedAt), p.done()))),
    );
    expect(starts).toEqual([T0, T0, T0, T0 + 61_000, T0 + 61_000, T0 + 61_000, T0 + 122_000]);
  });

  it('serves continuations before new work, then in arrival order', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 1, clock });
    const first = await sched.acquire({ endpoint: '/first', priority: PRIORITY.vitals, deadline: Infinity });
    const order: string[] = [];
    const wait = (name: string, priority: number) => sched.acquire({ endpoint: name, priority, deadline: Infinity }).then((p) => (order.push(name), p.done()));
    const all = Promise.all([wait('alerts', PRIORITY.alerts), wait('devices', PRIORITY.devices), wait('retry', PRIORITY.continuation), wait('alerts-2', PRIORITY.alerts)]);
    first.done();
    await all;
    expect(order).toEqual(['retry', 'devices', 'alerts', 'alerts-2']);
  });

  it('keeps one request in flight: the next starts when the first is read', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 10, clock });
    const a = await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    let started = false;
    const b = sched.acquire({ endpoint: '/b', priority: 1, deadline: Infinity }).then((p) => ((started = true), p));
    await new Promise((r) => setImmediate(r));
    expect(started).toBe(false);
    a.done();
    (await b).done();
    expect(started).toBe(true);
  });

  it('refuses a slot after the deadline with LateError naming the endpoint', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 1, clock });
    (await sched.acquire({ endpoint: '/vitals', priority: 1, deadline: Infinity })).done();
    const err = await sched.acquire({ endpoint: '/alerts', priority: 3, deadline: T0 + 30_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LateError);
    expect((err as LateError).endpoint).toBe('/alerts');
    expect((err as LateError).slotAt).toBe(T0 + 61_000);
    expect(clock.now()).toBe(T0);
  });

  it('pauses every request after a 429 until its Retry-After, capped, and halves the share when others caused it', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const logger = memoryLogger();
    const sched = new PortalScheduler({ share: 4, clock, logger, maxRetryAfterMs: 20_000 });
    (await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity })).done();
    expect(sched.rateLimited(7_000, 1_000)).toBe(7_000);
    expect(sched.share.effective).toBe(2);
    const p = await sched.acquire({ endpoint: '/b', priority: 1, deadline: Infinity });
    expect(p.startedAt).toBe(T0 + 7_000);
    p.done();
    expect(sched.rateLimited(3_600_000, 1_000)).toBe(20_000);
    expect(sched.rateLimitedInLastHour()).toBe(2);
    // Both 429s came within one window: one cut.
    expect(logger.records().filter((r) => String(r.msg).includes('share is lowered'))).toHaveLength(1);
  });

  it('never lets a 60 s window hold more than the share, for random mixes of requests, priorities and 429s', async () => {
    for (let seed = 1; seed <= 25; seed++) {
      const random = seeded(seed);
      const clock = new FakeClock(T0, { autoAdvance: true });
      const share = 1 + Math.floor(random() * 10);
      const sched = new PortalScheduler({ share, clock, concurrency: 1 + Math.floor(random() * 3) });
      const n = 5 + Math.floor(random() * 40);
      const starts: number[] = [];
      await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          await clock.sleep(Math.floor(random() * 200_000));
          const permit = await sched.acquire({ endpoint: `/r${i}`, priority: Math.floor(random() * 4), deadline: Infinity });
          starts.push(permit.startedAt);
          if (random() < 0.15) sched.rateLimited(random() < 0.5 ? undefined : Math.floor(random() * 5_000), 1_000);
          else sched.answered();
          permit.done();
        }),
      );
      expect(starts.length, `seed ${seed}`).toBe(n);
      expect(maxInAnyWindow(starts.sort((a, b) => a - b), MINUTE), `seed ${seed} share ${share}`).toBeLessThanOrEqual(share);
    }
  });
});
