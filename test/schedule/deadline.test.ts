/**
 * A run's deadline on a FakeClock: its signal aborts at the deadline (a TimeoutError) or when the
 * outer signal aborts, a one-shot run's deadline moves later up to its cap, and a closed deadline
 * leaves nothing waiting on the clock.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { Deadline } from '../../src/schedule/deadline.js';

const T = Date.UTC(2026, 10, 22, 12, 0, 0);
/** Lets the clock's resolved sleeps run their callbacks. */
const settle = () => new Promise((r) => setImmediate(r));

/** Moves the clock to a millisecond before `at`, where `d` still holds, then to `at`, where it has aborted. */
async function expectAbortedFrom(clock: FakeClock, d: Deadline, at: number) {
  clock.advance(at - 1 - clock.now());
  await settle();
  expect(d.signal.aborted).toBe(false);
  clock.advance(1);
  await settle();
  expect(d.signal.aborted).toBe(true);
}

describe('Deadline', () => {
  it('aborts its signal with a TimeoutError at the deadline, not a millisecond before', async () => {
    const clock = new FakeClock(T);
    const d = new Deadline(T + 5_000, clock, undefined);
    expect(d.at).toBe(T + 5_000);
    expect(clock.nextWakeAt).toBe(T + 5_000);
    await expectAbortedFrom(clock, d, T + 5_000);
    const reason = d.signal.reason as DOMException;
    expect(reason).toBeInstanceOf(DOMException);
    expect(reason.name).toBe('TimeoutError');
    expect(reason.message).toBe('the deadline passed');
    d.close();
  });

  it('aborts at once when the deadline has already passed', async () => {
    const clock = new FakeClock(T);
    const d = new Deadline(T - 1_000, clock, undefined);
    await settle();
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('is fixed without a cap', () => {
    const clock = new FakeClock(T);
    const d = new Deadline(T + 5_000, clock, undefined);
    expect(d.extendTo(T + 60_000)).toBe(false);
    expect(d.at).toBe(T + 5_000);
    expect(clock.nextWakeAt).toBe(T + 5_000);
    d.close();
  });

  it('moves later up to its cap, never earlier, and waits for the new time only', async () => {
    const clock = new FakeClock(T);
    const d = new Deadline(T + 5_000, clock, T + 30_000);
    expect(d.extendTo(T + 5_000)).toBe(false);
    expect(d.extendTo(T + 4_000)).toBe(false);
    expect(d.at).toBe(T + 5_000);
    expect(d.extendTo(T + 20_000)).toBe(true);
    expect(d.at).toBe(T + 20_000);
    // One wait on the clock, for the new deadline.
    expect(clock.pending).toBe(1);
    expect(clock.nextWakeAt).toBe(T + 20_000);
    expect(d.extendTo(T + 90_000)).toBe(true);
    expect(d.at).toBe(T + 30_000);
    expect(d.extendTo(T + 90_000)).toBe(false);
    expect(clock.pending).toBe(1);
    await expectAbortedFrom(clock, d, T + 30_000);
    expect(clock.pending).toBe(0);
  });

  it('is not cut by the wait for its old time when it moved in the same instant that wait ended', async () => {
    const clock = new FakeClock(T);
    const d = new Deadline(T + 5_000, clock, T + 30_000);
    // The clock reaches the old deadline and, before that wait's callback runs, the run extends it.
    clock.advance(5_000);
    expect(d.extendTo(T + 20_000)).toBe(true);
    await settle();
    expect(d.signal.aborted).toBe(false);
    expect(clock.nextWakeAt).toBe(T + 20_000);
    d.close();
  });

  it('aborts with the outer signal\'s reason, already aborted or later, and then stops waiting for the deadline', async () => {
    const clock = new FakeClock(T);
    const before = new AbortController();
    before.abort(new Error('stopped before'));
    const d1 = new Deadline(T + 5_000, clock, T + 10_000);
    const d0 = new Deadline(T + 5_000, clock, undefined, before.signal);
    expect(d0.signal.aborted).toBe(true);
    expect((d0.signal.reason as Error).message).toBe('stopped before');
    // Only d1 waits on the clock.
    expect(clock.pending).toBe(1);
    d1.close();
    await settle();
    expect(clock.pending).toBe(0);

    const outer = new AbortController();
    const d = new Deadline(T + 5_000, clock, T + 10_000, outer.signal);
    expect(clock.pending).toBe(1);
    outer.abort(new Error('shutting down'));
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as Error).message).toBe('shutting down');
    await settle();
    expect(clock.pending).toBe(0);
    // Nothing is armed again once aborted.
    expect(d.extendTo(T + 8_000)).toBe(true);
    expect(clock.pending).toBe(0);
  });

  it('after close, neither the deadline nor the outer signal aborts it', async () => {
    const clock = new FakeClock(T);
    const outer = new AbortController();
    const d = new Deadline(T + 5_000, clock, undefined, outer.signal);
    d.close();
    await settle();
    expect(clock.pending).toBe(0);
    clock.advance(10_000);
    outer.abort(new Error('late stop'));
    await settle();
    expect(d.signal.aborted).toBe(false);
  });

  it('waits on the clock for a deadline up to the longest timer (about 24.8 days), and not for one beyond it', async () => {
    const clock = new FakeClock(T);
    const longest = 2_147_483_647;
    const d = new Deadline(T + longest, clock, T + 2 * longest);
    expect(clock.nextWakeAt).toBe(T + longest);
    expect(d.extendTo(T + longest + 1)).toBe(true);
    await settle();
    expect(clock.pending).toBe(0);
    const none = new Deadline(Infinity, clock, undefined);
    expect(clock.pending).toBe(0);
    expect(none.signal.aborted).toBe(false);
    d.close();
    none.close();
  });
});
