/**
 * The portal's sliding window as this exporter sees it: when its own requests started, and when
 * the next one may start under a share of N requests per window. Pure bookkeeping on numbers; the
 * scheduler owns the clock.
 */

/**
 * Spacing a start keeps beyond the window from the start it pushes out of it, so network latency
 * and clock skew never make the portal count one request too many (the plan counts it too).
 */
export const WINDOW_MARGIN_MS = 1_000;

export class SlidingWindow {
  /** Start times still inside the window, oldest first. */
  private starts: number[] = [];

  /**
   * @param windowMs the portal's window.
   * @param marginMs extra spacing a start keeps from the start it pushes out of the window, so
   *   network latency and clock skew never make the portal count one request too many.
   */
  constructor(
    readonly windowMs: number,
    readonly marginMs = 0,
  ) {
    if (!Number.isFinite(windowMs) || windowMs <= 0) throw new RangeError(`SlidingWindow windowMs must be a positive number, got ${String(windowMs)}`);
    if (!Number.isFinite(marginMs) || marginMs < 0) throw new RangeError(`SlidingWindow marginMs must be a non-negative number, got ${String(marginMs)}`);
  }

  /** Records a request that started at `at` (never earlier than the last one). */
  record(at: number): void {
    this.starts.push(at);
  }

  /** Forgets a start recorded at `at` (a request that reached no portal spent none of its budget). */
  release(at: number): void {
    const i = this.starts.lastIndexOf(at);
    if (i >= 0) this.starts.splice(i, 1);
  }

  /** Starts in the window that ends at `now`. */
  countAt(now: number): number {
    this.prune(now);
    return this.starts.length;
  }

  /**
   * Earliest time, not before `now`, at which a request may start with at most `share` starts in
   * any window: it must come a full window after the start `share` places before it.
   */
  nextSlot(now: number, share: number): number {
    this.prune(now);
    const n = this.starts.length;
    if (n < share) return now;
    return Math.max(now, this.starts[n - share]! + this.windowMs + this.marginMs);
  }

  private prune(now: number): void {
    const cutoff = now - this.windowMs - this.marginMs;
    let drop = 0;
    while (drop < this.starts.length && this.starts[drop]! <= cutoff) drop++;
    if (drop > 0) this.starts.splice(0, drop);
  }
}
