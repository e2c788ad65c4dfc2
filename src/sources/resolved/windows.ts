/**
 * The windows and quantiles of the response-time families, the one statistic they all take from a
 * list of durations (count, sum, nearest-rank quantiles, and how many are above an SLA), and the
 * lists that hold the durations: each duration once, in the shortest window that holds it, in
 * chunks that never copy as they grow (DurationList).
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

/** The nearest rank of a QUANTILES entry among `count` durations: ⌈q·count⌉ in integers, at least 1. */
function rankOf([, num, den]: (typeof QUANTILES)[number], count: number): number {
  return Math.max(1, Math.floor((num * count + den - 1) / den));
}

/** The most parts statsOfParts merges: the resolved alerts' own and the open alerts' by shortest window. */
const MAX_PARTS = 1 + WINDOW_COUNT;

const NO_DURATIONS = new Float64Array(0);

// Stryker disable next-line all: equivalent, speed only (whether the merge is primed)
let primed = false;

/**
 * Runs the merge below once over four small interleaved parts, before its first real use, so that
 * each of its comparisons and reads has run, with type feedback, before V8 optimizes it. Otherwise
 * the first calls (one or two parts: the third and fourth parts' comparisons never run) could get
 * it optimized without that feedback, and the first call with three parts threw the optimized code
 * away ("Insufficient type feedback for compare operation", in about half the runs of `once`).
 */
// Stryker disable next-line all: equivalent, speed only (the priming)
function prime(): void {
  primed = true;
  // 4 × 128 durations taken in turn from each part: enough bytecode run for V8 to allocate the merge's feedback early in the call.
  // Stryker disable next-line all: equivalent, speed only (the statistics of made-up durations, not kept)
  statsOfParts([0, 1, 2, 3].map((k) => Float64Array.from({ length: 128 }, (_, i) => 4 * i + k)), 256, false);
}

/**
 * The statistics of the durations of `parts` together (at most MAX_PARTS), each part sorted
 * ascending (sorted here, in place, when `sortParts`), against an SLA of `slaSeconds`: count, the
 * sum added in ascending order, the nearest-rank quantiles and the durations above the SLA, read by
 * merging the parts instead of copying them into one array. The merge keeps each part's next
 * duration in a local of its own: it runs once per window, mostly before V8 optimizes it, where
 * every array read counts.
 */
export function statsOfParts(parts: readonly Float64Array[], slaSeconds: number, sortParts = true): DurationStats {
  if (parts.length > MAX_PARTS) throw new RangeError(`statsOfParts: at most ${MAX_PARTS} parts, not ${parts.length}`);
  // Stryker disable next-line all: equivalent, speed only (when V8 has feedback for the merge)
  if (!primed) prime();
  // Stryker disable next-line ConditionalExpression: equivalent, callers pass sortParts false only for parts already sorted
  if (sortParts) for (const p of parts) p.sort();
  const a = parts[0] ?? NO_DURATIONS;
  const b = parts[1] ?? NO_DURATIONS;
  const c = parts[2] ?? NO_DURATIONS;
  const e = parts[3] ?? NO_DURATIONS;
  const count = a.length + b.length + c.length + e.length;
  // Nearest rank: the quantile q = num/den of n durations is the smallest d such that at least q·n
  // are at most d, the ⌈q·n⌉-th smallest (rankOf).
  const median = rankOf(QUANTILES[0], count);
  const ninetieth = rankOf(QUANTILES[1], count);
  let ia = 0;
  let ib = 0;
  let ic = 0;
  let ie = 0;
  // Each part's next duration: past its end a typed array reads undefined, so Infinity once the
  // part is read (durations are finite, and the loop stops at count).
  let ha = a[0] ?? Infinity;
  let hb = b[0] ?? Infinity;
  let hc = c[0] ?? Infinity;
  let he = e[0] ?? Infinity;
  let sum = 0;
  let overSla = 0;
  let q50 = 0;
  let q90 = 0;
  for (let k = 1; k <= count; k++) {
    // The smallest next duration (on a tie, any: the same value).
    let d: number;
    // Stryker disable next-line EqualityOperator: equivalent, on a tie either head is the same value
    if (ha <= hb && ha <= hc && ha <= he) {
      d = ha;
      ha = a[++ia] ?? Infinity;
    } else {
      // Stryker disable next-line EqualityOperator: equivalent, as above
      if (hb <= hc && hb <= he) {
        d = hb;
        hb = b[++ib] ?? Infinity;
      } else {
        // Stryker disable next-line EqualityOperator: equivalent, as above
        if (hc <= he) {
          d = hc;
          hc = c[++ic] ?? Infinity;
        } else {
          d = he;
          he = e[++ie] ?? Infinity;
        }
      }
    }
    sum += d;
    overSla += d > slaSeconds ? 1 : 0;
    if (k === median) q50 = d;
    if (k === ninetieth) q90 = d;
  }
  return { count, sum, quantiles: count > 0 ? [q50, q90] : [], overSla };
}

/** The first chunk of a DurationList: 256 durations (2 KB). */
const CHUNK_MIN = 256;
/** The largest chunk of a DurationList: 16,384 durations (128 KB), the most a list holds unused. */
const CHUNK_MAX = 16_384;

/**
 * Durations in chunks of Float64Array (8 bytes each): growing never copies (an array that doubles
 * copies its durations, and briefly holds three times them), a list holds at most one chunk unused,
 * and each chunk is sorted on its own for statsByWindow. Chunks grow with the list, 256 to 16,384.
 */
export class DurationList {
  private readonly chunks: Float64Array[] = [];
  /** Durations in the last chunk. */
  private fill = 0;
  length = 0;

  push(d: number): void {
    let last = this.chunks[this.chunks.length - 1];
    if (last === undefined || this.fill === last.length) {
      last = new Float64Array(Math.min(CHUNK_MAX, Math.max(CHUNK_MIN, this.length)));
      this.chunks.push(last);
      this.fill = 0;
    }
    last[this.fill++] = d;
    this.length++;
  }

  /** Keeps the first `n` durations only (what an attempt that failed added goes). */
  truncate(n: number): void {
    if (n >= this.length) return;
    let kept = 0;
    let i = 0;
    // n is below the length (above): a chunk holds the n-th duration before the chunks run out.
    while (kept + this.chunks[i]!.length < n) kept += this.chunks[i++]!.length;
    // Chunk i holds the n-th duration (or n is 0: no chunk is kept).
    this.chunks.length = n === 0 ? 0 : i + 1;
    this.fill = n - kept;
    this.length = n;
  }

  /** The durations as views of the chunks (no copy), each sorted ascending in place. */
  sorted(): Float64Array[] {
    return this.chunks.map((c, i) => (i === this.chunks.length - 1 ? c.subarray(0, this.fill) : c).sort());
  }
}

/**
 * The statistics of each window (RESPONSE_WINDOWS) of the durations of `parts`, each sorted
 * ascending, part i in the window `windows[i]` (the shortest that holds it) and every longer one:
 * count, the sum added in ascending order, nearest-rank quantiles and the durations above
 * `slaSeconds`, read by merging the parts once for every window, never copied. At most MAX_PARTS
 * parts merge window by window (statsOfParts); more (a long list's chunks) through a heap.
 */
export function statsByWindow(parts: readonly Float64Array[], windows: readonly number[], slaSeconds: number): DurationStats[] {
  // Stryker disable next-line BooleanLiteral: equivalent, the parts are sorted already: sorting them again changes nothing
  if (parts.length <= MAX_PARTS) return WINDOW_SECONDS.map((_, w) => statsOfParts(parts.filter((_, i) => windows[i]! <= w), slaSeconds, false));
  const counts = WINDOW_SECONDS.map((_, w) => parts.reduce((n, p, i) => n + (windows[i]! <= w ? p.length : 0), 0));
  const medians = counts.map((n) => rankOf(QUANTILES[0], n));
  const ninetieths = counts.map((n) => rankOf(QUANTILES[1], n));
  const seen = new Float64Array(WINDOW_COUNT);
  const sums = new Float64Array(WINDOW_COUNT);
  const over = new Float64Array(WINDOW_COUNT);
  const q50 = new Float64Array(WINDOW_COUNT);
  const q90 = new Float64Array(WINDOW_COUNT);
  const at = new Int32Array(parts.length);
  // A binary heap of the parts not yet read, by their next duration.
  const heap = parts.map((_, i) => i).filter((i) => parts[i]!.length > 0);
  const head = (i: number) => parts[i]![at[i]!]!;
  const down = (from: number) => {
    for (let k = from; ; ) {
      const l = 2 * k + 1;
      if (l >= heap.length) return;
      const c = l + 1 < heap.length && head(heap[l + 1]!) < head(heap[l]!) ? l + 1 : l;
      if (head(heap[c]!) >= head(heap[k]!)) return;
      [heap[c], heap[k]] = [heap[k]!, heap[c]!];
      k = c;
    }
  };
  // Stryker disable next-line ArithmeticOperator: equivalent, a heap slot past the middle has no child: down() there does nothing
  for (let k = (heap.length >> 1) - 1; k >= 0; k--) down(k);
  while (heap.length > 0) {
    const i = heap[0]!;
    const d = head(i);
    for (let w = windows[i]!; w < WINDOW_COUNT; w++) {
      const k = ++seen[w]!;
      sums[w]! += d;
      if (d > slaSeconds) over[w]!++;
      if (k === medians[w]) q50[w] = d;
      if (k === ninetieths[w]) q90[w] = d;
    }
    if (++at[i]! === parts[i]!.length) {
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
    }
    down(0);
  }
  return counts.map((count, w) => ({ count, sum: sums[w]!, quantiles: count > 0 ? [q50[w]!, q90[w]!] : [], overSla: over[w]! }));
}
