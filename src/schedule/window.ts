/**
 * The portal's sliding window as this exporter sees it: when its requests could last have reached
 * the portal (this process's, and those other processes recorded in the ledger), and when the next
 * one may start under a share of N requests per window. A request is entered when it is granted and
 * moved to the moment it could last have arrived once that is known (its response began, or it
 * failed), as the ledger records it (src/schedule/ledger.ts). Pure bookkeeping on numbers; the
 * scheduler owns the clock.
 */
import { nextStart } from './ledger.js';
import { makesLiveLate, YIELD_FLIGHT_MS, YIELD_REQUEST_MS, type Due } from './yield.js';

/**
 * Spacing a start keeps beyond the window from the start it pushes out of it, so network latency
 * and clock skew never make the portal count one request too many (the plan counts it too).
 */
export const WINDOW_MARGIN_MS = 1_000;

export class SlidingWindow {
  /** When this process's requests still inside the window could last have reached the portal, oldest first. */
  private starts: number[] = [];
  /** The same times of the requests other processes recorded (see `observe`), in any order: `inWindow` sorts them in with this process's. */
  private others: number[] = [];

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

  /** The request recorded at `from` could last have reached the portal at `to` (later): it counts from then. */
  arrived(from: number, to: number): void {
    const i = this.starts.lastIndexOf(from);
    if (i < 0) return;
    this.starts.splice(i, 1);
    let at = this.starts.length;
    while (at > 0 && this.starts[at - 1]! > to) at--;
    this.starts.splice(at, 0, to);
  }

  /** Forgets a start recorded at `at` (a request that reached no portal spent none of its budget). */
  release(at: number): void {
    const i = this.starts.lastIndexOf(at);
    if (i >= 0) this.starts.splice(i, 1);
  }

  /** Replaces the starts other processes recorded (monotonic ms, any order): they count as this process's own do. */
  observe(starts: readonly number[]): void {
    this.others = [...starts];
  }

  /** Starts (this process's and the others' recorded) in the window that ends at `now`. */
  countAt(now: number): number {
    return this.inWindow(now).length;
  }

  /**
   * Earliest time, not before `now`, at which a request may start with at most `share` starts in
   * any window: it must come a full window after the start `share` places before it.
   */
  nextSlot(now: number, share: number): number {
    return nextStart(this.inWindow(now), share, now, this.windowMs, this.marginMs);
  }

  /** As `nextSlot`, counting this process's own requests only: whether they alone fill the share. */
  nextOwnSlot(now: number, share: number): number {
    this.inWindow(now);
    return nextStart(this.starts, share, now, this.windowMs, this.marginMs);
  }

  /** When the next of the starts in the window ending at `now` leaves it (Infinity when it holds none). */
  leavesAt(now: number): number {
    const starts = this.inWindow(now);
    return starts.length ? starts[0]! + this.windowMs + this.marginMs : Infinity;
  }

  /** Whether one more request started at `now` would make a live run due at `due` late: makesLiveLate on this window. */
  makesLiveLate(now: number, due: readonly Due[], share: number): boolean {
    return makesLiveLate(this.inWindow(now), now + YIELD_FLIGHT_MS, now + YIELD_REQUEST_MS, due, { share, windowMs: this.windowMs, marginMs: this.marginMs, requestMs: YIELD_REQUEST_MS });
  }

  /** When the window ending at `now` holds no start any more (`now` when it holds none). */
  clearAt(now: number): number {
    const starts = this.inWindow(now);
    return starts.length ? Math.max(now, starts[starts.length - 1]! + this.windowMs + this.marginMs) : now;
  }

  /** Every start in the window ending at `now`, oldest first (this process's older ones forgotten). */
  private inWindow(now: number): number[] {
    const cutoff = now - this.windowMs - this.marginMs;
    let drop = 0;
    // Past the end the entry is undefined, which compares false: the loop stops there.
    while (this.starts[drop]! <= cutoff) drop++;
    this.starts.splice(0, drop);
    if (this.others.length === 0) return this.starts;
    const others = this.others.filter((t) => t > cutoff);
    return [...this.starts, ...others].sort((a, b) => a - b);
  }
}
