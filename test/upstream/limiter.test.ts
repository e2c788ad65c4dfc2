import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { BudgetExhaustedError } from '../../src/errors.js';
import { RateLimiter } from '../../src/upstream/limiter.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const MINUTE = 60_000;

/** Lets pending promise callbacks (and FakeClock's setImmediate auto-advance) run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

/** Tracks a promise's outcome without awaiting it. */
function track(p: Promise<void>) {
  const state: { done: boolean; error: unknown } = { done: false, error: undefined };
  p.then(
    () => (state.done = true),
    (e: unknown) => (state.error = e ?? new Error('rejected without reason')),
  );
  return state;
}

/** Brute force over integer ms: how many starts fit by `by`, adding one whenever the window has room. */
function bruteForceAvailable(history: number[], now: number, by: number, limit: number, windowMs: number): number {
  const starts = [...history];
  let added = 0;
  for (let t = now; t <= by; t++) {
    while (starts.filter((s) => s > t - windowMs && s <= t).length < limit) {
      starts.push(t);
      added++;
    }
  }
  return added;
}

/** A tiny deterministic PRNG so the property test is reproducible. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('RateLimiter', () => {
  it('never lets more than `limit` requests start in any window', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const limiter = new RateLimiter({ limit: 3, windowMs: MINUTE, clock });
    const starts: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, () => limiter.acquire('/alerts', Infinity).then(() => starts.push(clock.now()))),
    );
    expect(starts).toHaveLength(10);
    for (let i = 0; i + 3 < starts.length; i++) expect(starts[i + 3]! - starts[i]!).toBeGreaterThanOrEqual(MINUTE);
    // Greedy: each start is as early as the window allows.
    expect(starts.map((t) => (t - T0) / MINUTE)).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2, 3]);
    expect(limiter.inWindow()).toBe(1);
  });

  it('waits until the oldest start in the window ages out', async () => {
    const clock = new FakeClock(T0);
    const limiter = new RateLimiter({ limit: 2, windowMs: 10_000, clock });
    await limiter.acquire('/vitals', Infinity);
    clock.advance(4_000);
    await limiter.acquire('/vitals', Infinity);
    expect(limiter.nextSlotAt()).toBe(T0 + 10_000);

    const third = track(limiter.acquire('/vitals', Infinity));
    await settle();
    expect(clock.pending).toBe(1);
    clock.advance(5_999); // T0 + 9_999
    await settle();
    expect(third.done).toBe(false);
    clock.advance(1); // T0 + 10_000: the first start leaves the window
    await settle();
    expect(third.done).toBe(true);
    expect(limiter.nextSlotAt()).toBe(T0 + 14_000);
    expect(limiter.inWindow()).toBe(2);
  });

  it('serves concurrent callers in arrival order', async () => {
    const clock = new FakeClock(T0);
    const limiter = new RateLimiter({ limit: 1, windowMs: 1_000, clock });
    const order: string[] = [];
    const names = ['a', 'b', 'c', 'd', 'e'];
    // Different deadlines must not reorder the queue.
    const all = names.map((name, i) => limiter.acquire('/x', T0 + 10_000 - i, undefined).then(() => order.push(name)));
    for (let i = 0; i < names.length; i++) {
      await settle();
      clock.advance(1_000);
    }
    await Promise.all(all);
    expect(order).toEqual(names);
  });

  it('rejects at once with BudgetExhaustedError when the earliest slot is after the deadline', async () => {
    const clock = new FakeClock(T0);
    const limiter = new RateLimiter({ limit: 1, windowMs: MINUTE, clock });
    await limiter.acquire('/devices', T0);
    const err = await limiter.acquire('/devices', T0 + 30_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetExhaustedError);
    expect((err as BudgetExhaustedError).endpoint).toBe('/devices');
    expect((err as Error).message).toContain('/devices');
    expect(clock.pending).toBe(0);
    expect(limiter.inWindow()).toBe(1);
  });

  it('counts callers already queued when checking a deadline', async () => {
    const clock = new FakeClock(T0);
    const limiter = new RateLimiter({ limit: 1, windowMs: MINUTE, clock });
    await limiter.acquire('/a', Infinity);
    const second = track(limiter.acquire('/a', Infinity)); // slot T0 + 60 s
    // The next caller would start at T0 + 120 s.
    await expect(limiter.acquire('/a', T0 + 100_000)).rejects.toBeInstanceOf(BudgetExhaustedError);
    expect(limiter.nextSlotAt()).toBe(T0 + 2 * MINUTE);
    const third = track(limiter.acquire('/a', T0 + 2 * MINUTE)); // exactly at the deadline is allowed
    clock.advance(MINUTE);
    await settle();
    expect(second.done).toBe(true);
    expect(third.done).toBe(false);
    clock.advance(MINUTE);
    await settle();
    expect(third.done).toBe(true);
    expect(third.error).toBeUndefined();
  });

  it('rejects with the signal reason when aborted, before or while waiting, without using a slot', async () => {
    const clock = new FakeClock(T0);
    const limiter = new RateLimiter({ limit: 1, windowMs: MINUTE, clock });
    const before = new AbortController();
    before.abort(new Error('stopped before'));
    await expect(limiter.acquire('/a', Infinity, before.signal)).rejects.toThrow('stopped before');
    expect(limiter.inWindow()).toBe(0);

    await limiter.acquire('/a', Infinity);
    const head = new AbortController();
    const middle = new AbortController();
    const waitingHead = track(limiter.acquire('/a', Infinity, head.signal));
    const waitingMiddle = track(limiter.acquire('/a', Infinity, middle.signal));
    const last = track(limiter.acquire('/a', Infinity));
    await settle();
    middle.abort(new Error('middle gone'));
    head.abort(new Error('head gone'));
    await settle();
    expect((waitingHead.error as Error).message).toBe('head gone');
    expect((waitingMiddle.error as Error).message).toBe('middle gone');
    // The aborted callers gave their slots up: the last one gets the first free slot.
    clock.advance(MINUTE);
    await settle();
    expect(last.done).toBe(true);
    expect(limiter.inWindow()).toBe(1);
  });

  it('computes availableBy for a fresh limiter, across several windows and with a reserve', () => {
    const clock = new FakeClock(T0);
    const limiter = new RateLimiter({ limit: 10, clock });
    expect(limiter.availableBy(T0)).toBe(10);
    expect(limiter.availableBy(T0 + 59_999)).toBe(10);
    expect(limiter.availableBy(T0 + 60_000)).toBe(20);
    expect(limiter.availableBy(T0 + 150_000)).toBe(30);
    expect(limiter.availableBy(T0 + 150_000, 30_001)).toBe(20);
    expect(limiter.availableBy(T0 - 1)).toBe(0);
    expect(limiter.availableBy(T0 + 10, 20)).toBe(0);
  });

  it('computes availableBy from the recorded history', async () => {
    const clock = new FakeClock(T0);
    const limiter = new RateLimiter({ limit: 10, windowMs: MINUTE, clock });
    for (let i = 0; i < 4; i++) await limiter.acquire('/a', Infinity);
    clock.advance(30_000);
    for (let i = 0; i < 3; i++) await limiter.acquire('/a', Infinity);
    expect(limiter.inWindow()).toBe(7);
    expect(limiter.availableBy(clock.now())).toBe(3);
    expect(limiter.availableBy(T0 + MINUTE)).toBe(7); // the first 4 age out
    // At T0+90 s the 3 old and the 3 new starts of T0+30 s age out, at T0+120 s the 4 of T0+60 s.
    expect(limiter.availableBy(T0 + 90_000)).toBe(3 + 4 + 6);
    expect(limiter.availableBy(T0 + 120_000)).toBe(3 + 4 + 6 + 4);
    expect(limiter.availableBy(T0 + 200_000, 20_000)).toBe(27);
    // Pure: nothing was recorded.
    expect(limiter.inWindow()).toBe(7);
  });

  it('agrees with a brute-force simulation of the window', async () => {
    const random = prng(42);
    for (let round = 0; round < 60; round++) {
      const limit = 1 + Math.floor(random() * 4);
      const windowMs = 5 + Math.floor(random() * 15);
      const clock = new FakeClock(1_000);
      const limiter = new RateLimiter({ limit, windowMs, clock });
      const history: number[] = [];
      for (let step = 0; step < 8; step++) {
        clock.advance(Math.floor(random() * 6));
        if (random() < 0.6 && limiter.nextSlotAt() <= clock.now()) {
          await limiter.acquire('/a', Infinity);
          history.push(clock.now());
        }
      }
      const now = clock.now();
      for (const ahead of [0, 1, windowMs - 1, windowMs, 2 * windowMs + 3, 5 * windowMs]) {
        const expected = bruteForceAvailable(history, now, now + ahead, limit, windowMs);
        expect(limiter.availableBy(now + ahead), `limit ${limit} window ${windowMs} ahead ${ahead}`).toBe(expected);
      }
    }
  });

  it('rejects a limit that is not a positive integer', () => {
    const clock = new FakeClock(T0);
    expect(() => new RateLimiter({ limit: 0, clock })).toThrow(RangeError);
    expect(() => new RateLimiter({ limit: 2.5, clock })).toThrow(RangeError);
    expect(() => new RateLimiter({ limit: 1, windowMs: 0, clock })).toThrow(RangeError);
  });
});
