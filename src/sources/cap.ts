/** The series cap shared by the sources whose families grow with portal data. */

/** The reserved `integration` label value that a capped family folds its smallest integrations into. */
export const OTHER = '__other__';

/**
 * The largest `k` such that keeping the first `k` groups (in size order) and folding the rest
 * keeps every family within `cap`: `kept[f][k]` series kept, `other[f][k]` fold series. When even
 * folding everything does not fit (a cap below the fold series), `k` is 0.
 */
export function largestFit(n: number, families: number, kept: (f: number, k: number) => number, other: (f: number, k: number) => number, cap: number, limit = n): number {
  for (let k = limit; k > 0; k--) {
    let fits = true;
    for (let f = 0; f < families && fits; f++) fits = kept(f, k) + other(f, k) <= cap;
    if (fits) return k;
  }
  return 0;
}

/** Orders group names by size, largest first (ties by name), with a real group named OTHER last (always folded). */
export function bySize(sizes: ReadonlyMap<string, number>): string[] {
  return [...sizes.keys()].sort((a, b) => {
    if ((a === OTHER) !== (b === OTHER)) return a === OTHER ? 1 : -1;
    const d = sizes.get(b)! - sizes.get(a)!;
    return d !== 0 ? d : a < b ? -1 : a > b ? 1 : 0;
  });
}
