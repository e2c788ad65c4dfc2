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
 * order, the nearest-rank quantiles and the durations above the SLA, read by merging the parts
 * instead of copying them into one array.
 */
export function statsOfParts(parts: readonly Float64Array[], slaSeconds: number, sortParts = true): DurationStats {
  // Stryker disable next-line ConditionalExpression: equivalent, callers pass sortParts false only for parts already sorted
  if (sortParts) for (const p of parts) p.sort();
  const count = parts.reduce((n, p) => n + p.length, 0);
  // Nearest rank: the quantile q = num/den of n durations is the smallest d such that at least q·n
  // are at most d, the ⌈q·n⌉-th smallest, worked out in integers (at least the first for n ≥ 1).
  const ranks = QUANTILES.map(([, num, den]) => Math.max(1, Math.floor((num * count + den - 1) / den)));
  // Every rank is within 1..count, so the loop sets each (and none with no duration).
  const quantiles: number[] = [];
  const next = parts.map(() => 0);
  let sum = 0;
  let overSla = 0;
  for (let k = 1; k <= count; k++) {
    // The smallest head among the parts (the first part on a tie: any gives the same value).
    let from = -1;
    let d = 0;
    for (let i = 0; i < parts.length; i++) {
      const at = next[i]!;
      // Stryker disable next-line EqualityOperator: equivalent, on a tie either head is the same value
      if (at < parts[i]!.length && (from < 0 || parts[i]![at]! < d)) {
        from = i;
        d = parts[i]![at]!;
      }
    }
    next[from]!++;
    sum += d;
    if (d > slaSeconds) overSla++;
    // Stryker disable next-line EqualityOperator: equivalent, ranks[ranks.length] is undefined, never k
    for (let q = 0; q < ranks.length; q++) if (ranks[q] === k) quantiles[q] = d;
  }
  return { count, sum, quantiles, overSla };
}
