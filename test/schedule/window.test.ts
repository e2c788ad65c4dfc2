/**
 * The sliding window's exact edges, worked by hand: a start at `t` counts in every window that
 * ends before `t + window + margin` and in none that ends at or after it (the portal's 60 s, plus
 * the 1 s the exporter keeps beyond it).
 */
import { describe, expect, it } from 'vitest';
import { SlidingWindow, WINDOW_MARGIN_MS } from '../../src/schedule/window.js';

const MINUTE = 60_000;
const T = 1_000_000;

describe('SlidingWindow edges', () => {
  it('with no margin, a start at t counts until t + 60 s and not at t + 60 s', () => {
    const w = new SlidingWindow(MINUTE);
    w.record(T);
    expect(w.countAt(T)).toBe(1);
    expect(w.countAt(T + MINUTE - 1)).toBe(1);
    expect(w.nextSlot(T + 1, 1)).toBe(T + MINUTE);
    expect(w.clearAt(T + 1)).toBe(T + MINUTE);
    expect(w.countAt(T + MINUTE)).toBe(0);
    expect(w.nextSlot(T + MINUTE, 1)).toBe(T + MINUTE);
  });

  it('with the 1 s margin, a start at t counts until t + 61 s and not at t + 61 s', () => {
    expect(WINDOW_MARGIN_MS).toBe(1_000);
    const w = new SlidingWindow(MINUTE, WINDOW_MARGIN_MS);
    w.record(T);
    expect(w.countAt(T + MINUTE)).toBe(1);
    expect(w.countAt(T + MINUTE + 999)).toBe(1);
    expect(w.nextSlot(T + MINUTE, 1)).toBe(T + MINUTE + 1_000);
    expect(w.countAt(T + MINUTE + 1_000)).toBe(0);
    expect(w.nextSlot(T + MINUTE + 1_000, 1)).toBe(T + MINUTE + 1_000);
    expect(w.clearAt(T + MINUTE + 1_000)).toBe(T + MINUTE + 1_000);
  });

  it('lets the share-th start go at once and spaces the next from the oldest start it pushes out', () => {
    const w = new SlidingWindow(MINUTE, 1_000);
    w.record(T);
    w.record(T + 10_000);
    w.record(T + 20_000);
    // Three in the window: a share of 4 has room now; 3 waits for the first, 2 for the second, 1 for the third.
    expect(w.nextSlot(T + 30_000, 4)).toBe(T + 30_000);
    expect(w.nextSlot(T + 30_000, 3)).toBe(T + 61_000);
    expect(w.nextSlot(T + 30_000, 2)).toBe(T + 71_000);
    expect(w.nextSlot(T + 30_000, 1)).toBe(T + 81_000);
    // The window clears when the last start leaves it.
    expect(w.clearAt(T + 30_000)).toBe(T + 81_000);
    // Once the first has left, a share of 3 has room again, and the others still count.
    expect(w.countAt(T + 61_000)).toBe(2);
    expect(w.nextSlot(T + 61_000, 3)).toBe(T + 61_000);
    expect(w.nextSlot(T + 61_000, 2)).toBe(T + 71_000);
  });

  it('forgets a released start, the latest of equal ones, and ignores a release of a start it never had', () => {
    const w = new SlidingWindow(MINUTE, 1_000);
    w.record(T);
    w.record(T + 5_000);
    w.record(T + 5_000);
    w.release(T + 7_000);
    expect(w.countAt(T + 10_000)).toBe(3);
    w.release(T + 5_000);
    expect(w.countAt(T + 10_000)).toBe(2);
    // The one left at +5 s still holds its slot: share 2 waits for T's start to leave, share 1 for +5 s's.
    expect(w.nextSlot(T + 10_000, 2)).toBe(T + 61_000);
    expect(w.nextSlot(T + 10_000, 1)).toBe(T + 66_000);
    w.release(T + 5_000);
    w.release(T + 5_000);
    expect(w.countAt(T + 10_000)).toBe(1);
    expect(w.clearAt(T + 10_000)).toBe(T + 61_000);
    // The oldest, and then the only one, goes too.
    w.release(T);
    expect(w.countAt(T + 10_000)).toBe(0);
    expect(w.nextSlot(T + 10_000, 1)).toBe(T + 10_000);
  });

  it('orders recorded starts of other processes given in any order among its own', () => {
    const w = new SlidingWindow(MINUTE, 1_000);
    w.record(T + 10_000);
    w.observe([T + 30_000, T, T + 20_000]);
    expect(w.countAt(T + 40_000)).toBe(4);
    // Oldest first: T, +10 s (own), +20 s, +30 s.
    expect(w.nextSlot(T + 40_000, 4)).toBe(T + 61_000);
    expect(w.nextSlot(T + 40_000, 3)).toBe(T + 71_000);
    expect(w.nextSlot(T + 40_000, 2)).toBe(T + 81_000);
    expect(w.nextSlot(T + 40_000, 1)).toBe(T + 91_000);
    expect(w.clearAt(T + 40_000)).toBe(T + 91_000);
  });

  it('counts an other process\'s start until it leaves the window, as its own', () => {
    const w = new SlidingWindow(MINUTE, 1_000);
    w.observe([T]);
    expect(w.countAt(T + 60_999)).toBe(1);
    expect(w.countAt(T + 61_000)).toBe(0);
    expect(w.nextSlot(T + 61_000, 1)).toBe(T + 61_000);
    // A new reading replaces the old one.
    w.observe([]);
    expect(w.countAt(T + 1)).toBe(0);
  });

  it.each([
    [0, 0],
    [-1, 0],
    [Number.NaN, 0],
    [Number.POSITIVE_INFINITY, 0],
  ])('refuses a window of %s ms', (windowMs, marginMs) => {
    expect(() => new SlidingWindow(windowMs, marginMs)).toThrow(new RangeError(`SlidingWindow windowMs must be a positive number, got ${String(windowMs)}`));
  });

  it.each([-1, Number.NaN, Number.POSITIVE_INFINITY])('refuses a margin of %s ms', (marginMs) => {
    expect(() => new SlidingWindow(MINUTE, marginMs)).toThrow(new RangeError(`SlidingWindow marginMs must be a non-negative number, got ${String(marginMs)}`));
  });

  it('takes a window of 1 ms and a margin of 0', () => {
    const w = new SlidingWindow(1, 0);
    w.record(T);
    expect(w.nextSlot(T, 1)).toBe(T + 1);
  });
});
