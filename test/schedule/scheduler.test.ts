import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { LateError } from '../../src/errors.js';
import { AdaptiveShare } from '../../src/schedule/share.js';
import { continuationOf, PortalScheduler, PRIORITY } from '../../src/schedule/scheduler.js';
import { SlidingWindow } from '../../src/schedule/window.js';
import { maxInAnyWindow } from '../support/window.js';
import { mulberry32 } from '../support/prng.js';
import { expectNextWaitsFor } from '../support/slots.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const MINUTE = 60_000;

/**
 * The order in which `queued` (name, priority), queued in that order behind a first request of
 * priority `held` on a scheduler of one request at a time, start once the first is done.
 */
async function startOrder(held: number, queued: ReadonlyArray<readonly [string, number]>): Promise<string[]> {
  const sched = new PortalScheduler({ share: 1, clock: new FakeClock(T0, { autoAdvance: true }) });
  const first = await sched.acquire({ endpoint: '/first', priority: held, deadline: Infinity });
  const order: string[] = [];
  const all = Promise.all(queued.map(([name, priority]) => sched.acquire({ endpoint: name, priority, deadline: Infinity }).then((p) => (order.push(name), p.done()))));
  first.done();
  await all;
  return order;
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
    const sched = new PortalScheduler({ share: 3, clock });
    const starts: number[] = [];
    await Promise.all(
      Array.from({ length: 7 }, () => sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity }).then((p) => (starts.push(p.startedAt), p.done()))),
    );
    expect(starts).toEqual([T0, T0, T0, T0 + 61_000, T0 + 61_000, T0 + 61_000, T0 + 122_000]);
  });

  it('serves continuations before new work, then in arrival order', async () => {
    const order = await startOrder(PRIORITY.vitals, [['alerts', PRIORITY.alerts], ['devices', PRIORITY.devices], ['retry', PRIORITY.continuation], ['alerts-2', PRIORITY.alerts]]);
    expect(order).toEqual(['retry', 'devices', 'alerts', 'alerts-2']);
  });

  it('serves a slow source\'s follow-up pages after every live request, new or not, and before a new slow run', async () => {
    // Queued in the worst order for the live sources: a slow pass's next page first.
    const order = await startOrder(PRIORITY.slow, [
      ['pass-2', continuationOf(PRIORITY.slow)],
      ['other-pass', PRIORITY.slow],
      ['alerts', PRIORITY.alerts],
      ['devices-2', continuationOf(PRIORITY.devices)],
      ['pass-retry', continuationOf(PRIORITY.slowContinuation)],
      ['vitals', PRIORITY.vitals],
    ]);
    expect(order).toEqual(['devices-2', 'vitals', 'alerts', 'pass-2', 'pass-retry', 'other-pass']);
  });

  it('gives a live run\'s follow-ups the top priority, a slow one\'s its band\'s, and backfill\'s retries as before', () => {
    expect([PRIORITY.vitals, PRIORITY.devices, PRIORITY.alerts].map(continuationOf)).toEqual([0, 0, 0]);
    expect(continuationOf(PRIORITY.continuation)).toBe(0);
    expect(continuationOf(PRIORITY.slow)).toBe(PRIORITY.slowContinuation);
    expect(continuationOf(PRIORITY.slowContinuation)).toBe(PRIORITY.slowContinuation);
    expect(continuationOf(PRIORITY.backfill)).toBe(0);
    // The bands: every live priority before every slow one, and both before backfill.
    expect(Math.max(PRIORITY.vitals, PRIORITY.devices, PRIORITY.alerts)).toBeLessThan(PRIORITY.slowContinuation);
    expect(PRIORITY.slowContinuation).toBeLessThan(PRIORITY.slow);
    expect(PRIORITY.slow).toBeLessThan(PRIORITY.backfill);
  });

  it('keeps one request in flight: the next starts when the first is read', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 10, clock });
    await expectNextWaitsFor(sched, await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity }));
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

  it.each([
    ['a day ahead of', 86_400_000, '2026-11-23T12:01:01.000Z', '2026-11-23T12:00:30.000Z'],
    ['10 minutes behind', -600_000, '2026-11-22T11:51:01.000Z', '2026-11-22T11:50:30.000Z'],
  ])('names the slot and the deadline of a LateError as wall-clock times, the wall clock %s the monotonic one', async (_, step, slot, deadline) => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    clock.stepWall(step);
    const logger = memoryLogger({ clock });
    const sched = new PortalScheduler({ share: 1, clock });
    (await sched.acquire({ endpoint: '/vitals', priority: 1, deadline: Infinity })).done();
    // Deadlines and slots are monotonic readings: 30 s and 61 s from now.
    const err = (await sched.acquire({ endpoint: '/alerts', priority: 3, deadline: clock.monotonic() + 30_000 }).catch((e: unknown) => e)) as LateError;
    expect(err).toBeInstanceOf(LateError);
    expect(err.slotAt).toBe(T0 + 61_000);
    logger.warn(err.message);
    const line = logger.records()[0]!;
    // The line is stamped with the wall clock, and the times in its message read on the same clock.
    expect(line.time).toBe(new Date(T0 + step).toISOString());
    expect(err.message).toContain(`could start at ${slot}, after its deadline ${deadline} `);
    expect(slot).toBe(new Date(T0 + step + 61_000).toISOString());
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

  it('after a 429 others caused halves the share, holds every 60 s window to the cut share, then wins it back one request per clean window', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 8, clock });
    /** Each grant, with the share in effect when it was granted. */
    const grants: Array<{ at: number; share: number }> = [];
    /** Each change of the effective share, with its time. */
    const shares = [{ at: T0, share: 8 }];
    const noteShare = () => {
      if (sched.share.effective !== shares.at(-1)!.share) shares.push({ at: clock.now(), share: sched.share.effective });
    };
    let throttledAt: number | undefined;
    // A steady backlog of requests that each take 10 s to answer: 6 a minute, within the share of 8.
    while (clock.now() < T0 + 10 * MINUTE) {
      const permit = await sched.acquire({ endpoint: '/vitals', priority: PRIORITY.vitals, deadline: Infinity });
      grants.push({ at: permit.startedAt, share: sched.share.effective });
      await clock.sleep(10_000);
      if (grants.length === 6) {
        // Six of our own in the portal's window of ten: another client caused this 429.
        throttledAt = clock.now();
        sched.rateLimited(1_000, 1_000);
      } else sched.answered();
      noteShare();
      permit.done();
    }
    expect(throttledAt).toBe(T0 + 60_000);
    expect(shares[1]).toEqual({ at: throttledAt, share: 4 });

    // Every window that ends at a later grant holds at most the share in effect then (grants in
    // order: one at the same instant as another came after it).
    const firstGain = shares[2]!.at;
    const afterCut = grants.map((g, i) => ({ ...g, i })).filter((g) => g.at > throttledAt!);
    expect(afterCut.filter((g) => g.at < firstGain).length, 'grants at the cut share before the first gain').toBeGreaterThanOrEqual(2);
    const windows = afterCut.map((g) => ({ ...g, inWindow: grants.slice(0, g.i + 1).filter((o) => o.at > g.at - MINUTE).length }));
    for (const w of windows) expect(w.inWindow, `window ending at +${(w.at - T0) / 1000} s (share ${w.share})`).toBeLessThanOrEqual(w.share);
    expect(windows.filter((w) => w.at < firstGain && w.inWindow > 4).map((w) => `+${(w.at - T0) / 1000} s: ${w.inWindow}`), 'windows over the cut share before the first gain').toEqual([]);

    // Won back one request at a time, each after a whole clean window, up to the configured share.
    expect(shares.map((x) => x.share)).toEqual([8, 4, 5, 6, 7, 8]);
    for (let i = 2; i < shares.length; i++) {
      const gap = shares[i]!.at - shares[i - 1]!.at;
      expect(gap, `gain to ${shares[i]!.share}`).toBeGreaterThanOrEqual(MINUTE);
      expect(gap, `gain to ${shares[i]!.share}`).toBeLessThan(2 * MINUTE);
    }
  });

  it('keeps the share after a 429 its own requests explain (the portal window was full of them)', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 10, clock });
    // Ten requests of ours, one after the other, fill the portal's window: the 429 is ours.
    for (let i = 0; i < 10; i++) (await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity })).done();
    sched.rateLimited(2_000, 1_000);
    expect(sched.share.effective).toBe(10);
  });

  it('never lets a 60 s window hold more than the share, keeps deadlines, and sends nothing during a Retry-After, for random mixes', async () => {
    for (let seed = 1; seed <= 30; seed++) {
      const random = mulberry32(seed);
      const clock = new FakeClock(T0, { autoAdvance: true });
      const share = 1 + Math.floor(random() * 10);
      const maxRetryAfterMs = 5_000 + Math.floor(random() * 20_000);
      const sched = new PortalScheduler({ share, clock, maxRetryAfterMs });
      const n = 5 + Math.floor(random() * 40);
      const what = `seed ${seed} share ${share}`;
      const starts: number[] = [];
      /** Each 429: when it was reported and until when nothing may be sent. */
      const pauses: Array<{ at: number; until: number }> = [];
      /** Each retry after a 429: when it started and the earliest it could. */
      const retries: Array<{ at: number; notBefore: number }> = [];
      /** Each refusal, with the deadline the request had. */
      const refused: Array<{ err: unknown; deadline: number }> = [];
      /** A deadline: none, fixed from now, or one that moves (read at each look). */
      const deadlineOf = (): number | (() => number) => {
        const r = random();
        if (r < 0.4) return Infinity;
        const at = clock.now() + Math.floor(random() * 150_000);
        return r < 0.8 ? at : () => at;
      };
      const valueOf = (d: number | (() => number)) => (typeof d === 'function' ? d() : d);
      /** One request (and its retries after 429s); a slot after its deadline is LateError, nothing else. */
      const send = async (i: number, priority: number, deadline: number | (() => number), notBefore: number): Promise<void> => {
        let permit;
        try {
          permit = await sched.acquire({ endpoint: `/r${i}`, priority, deadline });
        } catch (err) {
          refused.push({ err, deadline: valueOf(deadline) });
          return;
        }
        starts.push(permit.startedAt);
        expect(permit.startedAt, `${what}: a grant keeps its deadline`).toBeLessThanOrEqual(valueOf(deadline));
        if (notBefore > 0) retries.push({ at: permit.startedAt, notBefore });
        // The answer takes a moment of (fake) time.
        await clock.sleep(1 + Math.floor(random() * 3_000));
        if (random() < 0.2) {
          const retryAfter = random() < 0.3 ? undefined : Math.floor(random() * 30_000);
          const fallback = 1_000 + Math.floor(random() * 4_000);
          const at = clock.now();
          const until = at + Math.min(retryAfter ?? fallback, maxRetryAfterMs);
          sched.rateLimited(retryAfter, fallback);
          pauses.push({ at, until });
          permit.done();
          return send(i, PRIORITY.continuation, deadline, until);
        }
        sched.answered();
        permit.done();
      };
      await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          await clock.sleep(Math.floor(random() * 200_000));
          await send(i, Math.floor(random() * 4), deadlineOf(), 0);
        }),
      );
      expect(starts.length + refused.length, what).toBeGreaterThanOrEqual(n);
      // A refusal is a LateError whose earliest slot really was after the deadline.
      for (const r of refused) expect(r.err, what).toBeInstanceOf(LateError);
      for (const r of refused) expect((r.err as LateError).slotAt, what).toBeGreaterThan(r.deadline);
      expect(maxInAnyWindow(starts.sort((a, b) => a - b), MINUTE), what).toBeLessThanOrEqual(share);
      // Nothing started inside a pause (a start at the very instant of the 429 was granted before it).
      for (const p of pauses) expect(starts.filter((t) => t > p.at && t < p.until), `${what}: starts during the pause ${p.at - T0}..${p.until - T0}`).toEqual([]);
      // A retry waits out its Retry-After (or the fallback), capped at maxRetryAfterMs.
      for (const r of retries) expect(r.at, what).toBeGreaterThanOrEqual(r.notBefore);
    }
  });
});
