// The series cap's two choices, on plain numbers: the order groups are kept in (largest first, ties
// by name, a real group named __other__ last) and how many of them fit. Expected sets are worked
// out by hand from the stated rule: keep the largest k whose kept series plus fold series fit the
// cap in every family.
import { describe, expect, it } from 'vitest';
import { bySize, keptGroups, OTHER } from '../../src/sources/cap.js';

describe('bySize', () => {
  it('orders largest first and breaks ties by name', () => {
    expect(bySize(new Map([['b', 2], ['c', 5], ['a', 2], ['d', 1], ['aa', 2]]))).toEqual(['c', 'a', 'aa', 'b', 'd']);
  });

  it('puts a real group named __other__ last, however large', () => {
    expect(bySize(new Map([[OTHER, 100], ['x', 1], ['y', 3]]))).toEqual(['y', 'x', OTHER]);
    expect(bySize(new Map([['x', 1], [OTHER, 0], ['y', 3]]))).toEqual(['y', 'x', OTHER]);
  });

  it('orders one group, or none', () => {
    expect(bySize(new Map([['only', 1]]))).toEqual(['only']);
    expect(bySize(new Map())).toEqual([]);
  });
});

describe('keptGroups', () => {
  // Three groups of 2 series each in family 0 and 1 in family 1; one fold series per family when anything is folded.
  const order = ['a', 'b', 'c'];
  const kept = (f: number, k: number) => (f === 0 ? 2 : 1) * k;
  const other = (_f: number, k: number) => (k < order.length ? 1 : 0);

  it.each([
    [6, ['a', 'b', 'c']], // 6 + 0 and 3 + 0
    [5, ['a', 'b']], // all three: 6 > 5; two: 4 + 1
    [4, ['a']], // two: 4 + 1 > 4; one: 2 + 1
    [3, ['a']], // one: 2 + 1 = 3, exactly the cap
    [2, []], // one: 2 + 1 > 2: none kept, all folded
    [0, []],
  ])('keeps the largest number of groups that fits every family in a cap of %i', (cap, want) => {
    expect([...keptGroups(order, 2, kept, other, cap)]).toEqual(want);
  });

  it('is held back by the family that fits least', () => {
    // Family 1 has 3 series per group: with a cap of 7, three groups fit family 0 (6 + 0) but not family 1 (9 + 0); two fit both (4 + 1, 6 + 1).
    const wide = (f: number, k: number) => (f === 0 ? 2 : 3) * k;
    expect([...keptGroups(order, 2, wide, other, 7)]).toEqual(['a', 'b']);
    expect([...keptGroups(order, 2, wide, other, 6)]).toEqual(['a']);
    // With one family considered, family 1 is never looked at.
    expect([...keptGroups(order, 1, wide, other, 6)]).toEqual(['a', 'b', 'c']);
  });

  it('always folds a real group named __other__', () => {
    const withOther = ['a', 'b', OTHER];
    const one = (_f: number, k: number) => k;
    const fold = (_f: number, k: number) => (k < 3 ? 1 : 0);
    expect([...keptGroups(withOther, 1, one, fold, 100)]).toEqual(['a', 'b']);
    expect([...keptGroups([OTHER], 1, one, fold, 100)]).toEqual([]);
  });

  it('keeps nothing of no groups', () => {
    expect(keptGroups([], 1, () => 0, () => 0, 10).size).toBe(0);
  });
});
