/**
 * The exporter's effective share of the portal's budget, adapted to what the portal says:
 * multiplicative decrease on a 429 that the exporter's own requests do not explain (other clients
 * are spending the budget), additive increase of one request per clean window, never below one
 * request per window nor above the configured share (TCP's AIMD, applied to a request budget).
 */
export class AdaptiveShare {
  private current: number;
  /**
   * Start of the current clean stretch: the last 429 or gain. Read only below the configured
   * share, which only a 429 reaches, and a 429 sets it.
   */
  private cleanSince = 0;
  /** The last cut: 429s within a window of it are the same congestion, and cut nothing more (none yet: -Infinity, never within a window). */
  private lastCutAt = -Infinity;

  constructor(
    readonly configured: number,
    private readonly windowMs: number,
  ) {
    if (!Number.isInteger(configured) || configured < 1) throw new RangeError(`share must be a positive integer, got ${String(configured)}`);
    this.current = configured;
  }

  /** Requests per window the scheduler allows itself now. */
  get effective(): number {
    return this.current;
  }

  /**
   * A 429 arrived at `now`; `explained` when the exporter's own requests filled the portal's window.
   * At most one cut per window, as TCP cuts once per round trip. Returns whether the share was cut.
   */
  rateLimited(now: number, explained: boolean): boolean {
    this.cleanSince = now;
    if (explained) return false;
    if (now - this.lastCutAt < this.windowMs) return false;
    const next = Math.max(1, Math.floor(this.current / 2));
    // A share of 1 cannot be cut: nothing changes, and the next cut's window does not move.
    if (next === this.current) return false;
    this.current = next;
    this.lastCutAt = now;
    return true;
  }

  /** A request succeeded at `now`: after a whole window without a 429, win back one request. Returns whether the share grew. */
  succeeded(now: number): boolean {
    if (this.current >= this.configured || now - this.cleanSince < this.windowMs) return false;
    this.current++;
    this.cleanSince = now;
    return true;
  }
}
