/**
 * The statistics of several sorted parts read by merging them (statsOfParts, the acknowledgement
 * windows of open and resolved alerts) against the nearest-rank statistics worked out here from
 * one sorted copy of all of them.
 */
import { describe, expect, it } from 'vitest';
import { DurationList, statsByWindow, statsOfParts } from '../../src/sources/resolved/windows.js';
import { mulberry32 as prng } from '../support/prng.js';

/** Count, ascending sum, ⌈q·n⌉-th smallest for q = 0.5 and 0.9, and how many exceed `sla`, from one sorted array. */
function expected(all: number[], sla: number) {
  const sorted = [...all].sort((a, b) => a - b);
  const n = sorted.length;
  const rank = (num: number, den: number) => sorted[Math.max(1, Math.ceil((num * n) / den)) - 1]!;
  return { count: n, sum: sorted.reduce((s, d) => s + d, 0), quantiles: n === 0 ? [] : [rank(1, 2), rank(9, 10)], overSla: sorted.filter((d) => d > sla).length };
}

describe('statsOfParts', () => {
  it('gives the statistics of the parts together, whatever their sizes, ties and order', () => {
    const r = prng(3);
    for (let round = 0; round < 300; round++) {
      const parts = Array.from({ length: Math.floor(r() * 5) }, () => Float64Array.from({ length: Math.floor(r() * (round % 7 === 0 ? 2000 : 12)) }, () => (r() < 0.2 ? 60 : Math.floor(r() * 1e6) / 10)));
      const all = parts.flatMap((p) => [...p]);
      const sla = r() < 0.3 ? Infinity : Math.floor(r() * 1e5);
      expect(statsOfParts(parts, sla)).toEqual(expected(all, sla));
    }
  });

  it('refuses more parts than a window has (the resolved alerts\' own and the open alerts\' three)', () => {
    const part = () => new Float64Array([1]);
    expect(statsOfParts([part(), part(), part(), part()], Infinity).count).toBe(4);
    expect(() => statsOfParts([part(), part(), part(), part(), part()], Infinity)).toThrow(new RangeError('statsOfParts: at most 4 parts, not 5'));
  });

  it('reads parts already sorted as given when told not to sort them', () => {
    expect(statsOfParts([new Float64Array([1, 5]), new Float64Array([2, 3, 4])], 3, false)).toEqual(expected([1, 2, 3, 4, 5], 3));
  });
});

describe('statsByWindow', () => {
  it('gives each window the statistics of the parts of it and of every shorter window, whatever the number of parts', () => {
    const r = prng(5);
    for (let round = 0; round < 200; round++) {
      const n = Math.floor(r() * 40);
      const parts = Array.from({ length: n }, () => Float64Array.from({ length: Math.floor(r() * (round % 9 === 0 ? 400 : 9)) }, () => (r() < 0.2 ? 60 : Math.floor(r() * 1e6) / 10)).sort());
      const windows = parts.map(() => Math.floor(r() * 3));
      const sla = r() < 0.3 ? Infinity : Math.floor(r() * 1e5);
      const got = statsByWindow(parts, windows, sla);
      for (let w = 0; w < 3; w++) expect(got[w], `round ${round}, window ${w}`).toEqual(expected(parts.filter((_, i) => windows[i]! <= w).flatMap((p) => [...p]), sla));
    }
  });
});

describe('DurationList', () => {
  it('keeps every duration pushed, in chunks, sorts each chunk, and drops what follows a length it is cut back to', () => {
    const r = prng(7);
    const list = new DurationList();
    const all: number[] = [];
    for (let i = 0; i < 40_000; i++) {
      const d = Math.floor(r() * 1e6);
      list.push(d);
      all.push(d);
    }
    expect(list.length).toBe(40_000);
    const parts = list.sorted();
    // Chunks grow with the list: 256, 256, 512, … up to 16,384; the first eight hold 32,768, the last the other 7,232.
    expect(parts.map((p) => p.length)).toEqual([256, 256, 512, 1_024, 2_048, 4_096, 8_192, 16_384, 7_232]);
    expect(parts.flatMap((p) => [...p]).sort((a, b) => a - b)).toEqual([...all].sort((a, b) => a - b));
    for (const p of parts) expect([...p]).toEqual([...p].sort((a, b) => a - b));
    for (const n of [39_999, 16_384, 16_383, 300, 256, 1, 0]) {
      list.truncate(n);
      expect(list.length).toBe(n);
      expect(list.sorted().reduce((m, p) => m + p.length, 0)).toBe(n);
    }
    // It grows again from where it was cut.
    list.push(5);
    list.push(3);
    expect(list.sorted().map((p) => [...p])).toEqual([[3, 5]]);
  });
});

