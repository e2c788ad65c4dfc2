import type { Clock } from '../core/clock.js';

const MAX_TIMER_MS = 2_147_483_647;

/** A run's deadline: fixed in `serve` (the source's next run), extendable in one-shot runs as the plan learns the list sizes. */
export class Deadline {
  /** Cancels the pending wait for the deadline (re-armed when it moves). */
  private timer: AbortController | undefined;
  private readonly controller = new AbortController();
  private readonly unlink: () => void;

  /**
   * @param at ms on `clock.monotonic()`
   * @param cap the latest it may be extended to (undefined: fixed)
   */
  constructor(
    private atMs: number,
    private readonly clock: Clock,
    private readonly cap: number | undefined,
    outer?: AbortSignal,
  ) {
    // Once aborted, from outside or at the deadline, nothing waits for the deadline any more.
    // Stryker disable next-line ObjectLiteral: a controller's signal aborts once, so the listener runs once either way
    this.controller.signal.addEventListener('abort', () => this.timer?.abort(), { once: true });
    // Stryker disable next-line OptionalChaining: called only with an outer signal (at once when aborted, or by its abort event)
    const onOuter = () => this.controller.abort(outer?.reason);
    if (outer?.aborted) onOuter();
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: a signal aborts once, so the listener runs once either way
    outer?.addEventListener('abort', onOuter, { once: true });
    this.unlink = () => outer?.removeEventListener('abort', onOuter);
    this.arm();
  }

  get at(): number {
    return this.atMs;
  }

  /** Aborted when the deadline passes (reason: a TimeoutError DOMException) or the outer signal aborts. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Moves the deadline later, up to the cap; returns whether it moved. */
  extendTo(at: number): boolean {
    if (this.cap === undefined) return false;
    const next = Math.min(at, this.cap);
    if (next <= this.atMs) return false;
    this.atMs = next;
    this.arm();
    return true;
  }

  /** Ends the deadline's timer (the run is over). */
  close(): void {
    this.timer?.abort();
    this.unlink();
  }

  // A wait on the run's own clock (real time in production, the fake clock in tests): this cuts a
  // request still in flight when the deadline passes. Slots after the deadline are refused by the
  // scheduler on the same clock.
  private arm(): void {
    this.timer?.abort();
    this.timer = undefined;
    if (this.controller.signal.aborted) return;
    const ms = Math.max(0, this.atMs - this.clock.monotonic());
    // No deadline (backfill), or one beyond what a timer can hold (about 24.8 days): no wait.
    if (ms > MAX_TIMER_MS) return;
    const timer = (this.timer = new AbortController());
    this.clock.sleep(ms, timer.signal).then(
      () => {
        if (this.timer === timer) this.controller.abort(new DOMException('the deadline passed', 'TimeoutError'));
      },
      () => {},
    );
  }
}
