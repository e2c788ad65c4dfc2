/**
 * The windows and quantiles of the response-time families, and the one statistic they all take
 * from a list of durations: count, sum, nearest-rank quantiles, and how many are above an SLA.
 */

/** The `window` label values and their seconds, shortest first: a time counts in a window when it is later than `now` minus it. */
export const RESPONSE_WINDOWS = [
  ['1d', 86_400],
  ['7d', 7 * 86_400],
  ['30d', 30 * 86_400],
] as const;

/** The number of windows. */
export const WINDOW_COUNT = RESPONSE_WINDOWS.length;

/** The window seconds by index. */
export const WINDOW_SECONDS: readonly number[] = RESPONSE_WINDOWS.map(([, s]) => s);

/**
 * The `quantile` label values, each with q as a fraction (numerator, denominator), so that q·n is
 * worked out in integers: 0.9 × 10 in floating point is 9.000000000000002, whose ceiling is 10.
 */
export const QUANTILES = [
  ['0.5', 1, 2],
  ['0.9', 9, 10],
] as const;

/** What the families say of the durations of one severity in one window. */
export interface DurationStats {
  readonly count: number;
  /** Seconds, added in ascending order (the same sum whatever order the pages came in). */
  readonly sum: number;
  /** Per QUANTILES entry, the nearest-rank quantile; empty when there is no duration. */
  readonly quantiles: readonly number[];
  /** Durations strictly above the SLA given (0 without one). */
  readonly overSla: number;
}

/** The statistics of `durations` (sorted here, in place) against an SLA of `slaSeconds` (Infinity: none). */
export function statsOf(durations: Float64Array, slaSeconds: number): DurationStats {
  return statsOfParts([durations], slaSeconds);
}

/**
 * The statistics of the durations of `parts` together, each part sorted ascending (sorted here, in
 * place, when `sortParts`), against an SLA of `slaSeconds`: count, the sum added in ascending
 * order, the nearest-rank quantiles and the durations above the SLA. Several parts are merged,
 * two at a time, into one array: one window's durations at a time (a million open alerts: a few
 * MB, dropped after), in a loop that moves each number once per merge, which is cheaper than
 * sorting the copy or picking the smallest head of every part for each number (docs/performance.md,
 * "The acknowledgement statistics").
 */
export function statsOfParts(parts: readonly Float64Array[], slaSeconds: number, sortParts = true): DurationStats {
  // Stryker disable next-line ConditionalExpression: equivalent, callers pass sortParts false only for parts already sorted
  if (sortParts) for (const p of parts) p.sort();
  return statsOfSorted(parts.reduce<Float64Array>((all, p) => mergeSorted(all, p), new Float64Array(0)), slaSeconds);
}

/** `a` and `b`, each ascending, merged into one ascending array. */
function mergeSorted(a: Float64Array, b: Float64Array): Float64Array {
  if (a.length === 0) return b;
  const out = new Float64Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  // Stryker disable next-line EqualityOperator: equivalent, on a tie either number is the same value
  while (i < a.length && j < b.length) out[k++] = a[i]! <= b[j]! ? a[i++]! : b[j++]!;
  // One of the two is used up: the rest of the other follows.
  out.set(a.subarray(i), k);
  out.set(b.subarray(j), k + a.length - i);
  return out;
}

/** The statistics of `sorted`, ascending. */
function statsOfSorted(sorted: Float64Array, slaSeconds: number): DurationStats {
  const count = sorted.length;
  let sum = 0;
  for (let k = 0; k < count; k++) sum += sorted[k]!;
  // Nearest rank: the quantile q = num/den of n durations is the smallest d such that at least q·n
  // are at most d, the ⌈q·n⌉-th smallest, worked out in integers (at least the first for n ≥ 1).
  const quantiles = count === 0 ? [] : QUANTILES.map(([, num, den]) => sorted[Math.max(1, Math.floor((num * count + den - 1) / den)) - 1]!);
  // Those above the SLA are the last ones: the count after the first index past it.
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! > slaSeconds) hi = mid;
    else lo = mid + 1;
  }
  return { count, sum, quantiles, overSla: count - lo };
}
