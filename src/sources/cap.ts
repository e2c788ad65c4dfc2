/** The series cap shared by the sources whose families grow with portal data. */

/** The reserved `integration` label value that a capped family folds its smallest integrations into. */
export const OTHER = '__other__';

/**
 * The groups to keep: the first `k` of `order` (by size, from bySize) for the largest `k` such that
 * keeping them and folding the rest keeps every family within `cap`: `kept(f, k)` series kept,
 * `other(f, k)` fold series. A real group named OTHER (last in `order`) is always folded. When even
 * folding everything does not fit (a cap below the fold series), none is kept.
 */
export function keptGroups(order: readonly string[], families: number, kept: (f: number, k: number) => number, other: (f: number, k: number) => number, cap: number): Set<string> {
  const n = order.length;
  const groups = order[n - 1] === OTHER ? n - 1 : n;
  // Stryker disable next-line EqualityOperator: k >= 0 would return at k = 0 the same empty set as below.
  for (let k = groups; k > 0; k--) {
    let fits = true;
    for (let f = 0; f < families && fits; f++) fits = kept(f, k) + other(f, k) <= cap;
    if (fits) return new Set(order.slice(0, k));
  }
  return new Set();
}

/** Orders group names by size, largest first (ties by name), with a real group named OTHER last (always folded). */
export function bySize(sizes: ReadonlyMap<string, number>): string[] {
  return [...sizes.keys()].sort((a, b) => {
    if ((a === OTHER) !== (b === OTHER)) return a === OTHER ? 1 : -1;
    const d = sizes.get(b)! - sizes.get(a)!;
    if (d !== 0) return d;
    // Stryker disable next-line EqualityOperator: map keys are distinct, so a and b are never equal.
    return a < b ? -1 : 1;
  });
}
