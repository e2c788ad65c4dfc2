/**
 * The statistics of several sorted parts read by merging them (statsOfParts, the acknowledgement
 * windows of open and resolved alerts) against the nearest-rank statistics worked out here from
 * one sorted copy of all of them.
 */
import { describe, expect, it } from 'vitest';
import { statsOfParts } from '../../src/sources/resolved/windows.js';
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
