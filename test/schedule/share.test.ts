/**
 * The adaptive share's arithmetic (docs/budget.md, "When the portal answers 429"): halved, rounded
 * down, on a 429 others caused, at most once per 60 s window, never below 1; one request back per
 * clean 60 s, never above the configured share.
 */
import { describe, expect, it } from 'vitest';
import { AdaptiveShare } from '../../src/schedule/share.js';

const MINUTE = 60_000;
const T = 1_000_000;

describe('AdaptiveShare arithmetic', () => {
  it.each([
    [10, 5],
    [9, 4],
    [3, 1],
    [2, 1],
  ])('halves a share of %i to %i', (configured, halved) => {
    const s = new AdaptiveShare(configured, MINUTE);
    expect(s.rateLimited(T, false)).toBe(true);
    expect(s.effective).toBe(halved);
    expect(s.configured).toBe(configured);
  });

  it('cannot cut a share of 1: the 429 is not a cut', () => {
    const s = new AdaptiveShare(1, MINUTE);
    expect(s.rateLimited(T, false)).toBe(false);
    expect(s.effective).toBe(1);
  });

  it('cuts again only a whole window after the last cut', () => {
    const s = new AdaptiveShare(8, MINUTE);
    expect(s.rateLimited(T, false)).toBe(true);
    expect(s.rateLimited(T + MINUTE - 1, false)).toBe(false);
    expect(s.effective).toBe(4);
    expect(s.rateLimited(T + MINUTE, false)).toBe(true);
    expect(s.effective).toBe(2);
    // A 429 that was not a cut does not move the window of the next cut.
    expect(s.rateLimited(T + MINUTE + 30_000, false)).toBe(false);
    expect(s.rateLimited(T + 2 * MINUTE, false)).toBe(true);
    expect(s.effective).toBe(1);
  });

  it('holds the configured share: a clean window at the top gains nothing', () => {
    const s = new AdaptiveShare(2, MINUTE);
    expect(s.succeeded(T)).toBe(false);
    expect(s.succeeded(T + MINUTE)).toBe(false);
    expect(s.succeeded(T + 5 * MINUTE)).toBe(false);
    expect(s.effective).toBe(2);
  });

  it('counts the clean window from the last 429, explained or not', () => {
    const s = new AdaptiveShare(4, MINUTE);
    s.rateLimited(T, false);
    expect(s.effective).toBe(2);
    // Our own requests explain this 429: no cut, but the window is not clean.
    expect(s.rateLimited(T + 40_000, true)).toBe(false);
    expect(s.effective).toBe(2);
    expect(s.succeeded(T + MINUTE)).toBe(false);
    expect(s.succeeded(T + 40_000 + MINUTE - 1)).toBe(false);
    expect(s.succeeded(T + 40_000 + MINUTE)).toBe(true);
    expect(s.effective).toBe(3);
    // The next gain needs another whole window from this one.
    expect(s.succeeded(T + 40_000 + 2 * MINUTE - 1)).toBe(false);
    expect(s.succeeded(T + 40_000 + 2 * MINUTE)).toBe(true);
    expect(s.effective).toBe(4);
    expect(s.succeeded(T + 40_000 + 3 * MINUTE)).toBe(false);
    expect(s.effective).toBe(4);
  });

  it('uses its own window length', () => {
    const s = new AdaptiveShare(4, 10_000);
    s.rateLimited(T, false);
    expect(s.rateLimited(T + 9_999, false)).toBe(false);
    // That 429 (not a cut) starts the clean stretch again.
    expect(s.succeeded(T + 19_998)).toBe(false);
    expect(s.succeeded(T + 19_999)).toBe(true);
    expect(s.effective).toBe(3);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses a configured share of %s', (configured) => {
    expect(() => new AdaptiveShare(configured, MINUTE)).toThrow(new RangeError(`share must be a positive integer, got ${String(configured)}`));
  });
});
