import { wallIso, type Clock } from '../core/clock.js';
import { silentLogger, type Logger } from '../core/log.js';
import { LateError } from '../errors.js';
import type { SendLedger } from './ledger.js';
import { AdaptiveShare } from './share.js';
import { placeRecorded, SlidingWindow, WINDOW_MARGIN_MS } from './window.js';

/** The portal's documented limit (spec 8): 10 requests per 60 s for all its clients together. */
const PORTAL_LIMIT = 10;
export const WINDOW_MS = 60_000;

/** Priorities of the queue: lower goes first. */
export const PRIORITY = {
  /** A retry, or the next page of a list already being read: finish what was started. */
  continuation: 0,
  vitals: 1,
  devices: 2,
  alerts: 3,
  /** Backfill of past days: only what live collection leaves. */
  backfill: 9,
} as const;

/** What a caller of `acquire` says about its request. */
export interface SlotRequest {
  /** For logs and errors, e.g. `/alerts`. */
  readonly endpoint: string;
  readonly priority: number;
  /** Ms on `clock.monotonic()`: a slot later than this is refused with LateError; a function when the deadline may move. */
  readonly deadline: number | (() => number);
  readonly signal?: AbortSignal;
}

/** A granted slot: call `done` when the response has been read (the next request waits for it). */
export interface Permit {
  readonly startedAt: number;
  /** The request reached no portal (refused, unresolvable): its slot goes back to the window. Call before `done`. */
  refund(): void;
  done(): void;
}

interface Waiter extends SlotRequest {
  resolve(permit: Permit): void;
  reject(reason: unknown): void;
  onAbort(): void;
}

export interface SchedulerOptions {
  /** Configured share: requests per window this exporter may spend. */
  share: number;
  clock: Clock;
  logger?: Logger;
  /** @default 60_000 */
  windowMs?: number;
  /** A Retry-After longer than this pauses the portal only this long, and the request that got it is deferred to its next run. @default 120_000 */
  maxRetryAfterMs?: number;
  /** Where requests are recorded for other processes and read from them (the state directory); unset: this process's only. */
  ledger?: SendLedger;
}

/**
 * One portal's budget, owned in one place. Requests ask for a slot and get one as soon as the
 * sliding window (at the effective share), a portal-wide pause after a 429, and the requests in
 * flight allow, highest priority first, then in arrival order. A request never fails because the
 * window is full; it fails only when the slot it could get comes after its deadline (LateError).
 */
export class PortalScheduler {
  readonly window: SlidingWindow;
  readonly share: AdaptiveShare;
  readonly maxRetryAfterMs: number;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly ledger: SendLedger | undefined;
  private queue: Waiter[] = [];
  private inFlight = 0;
  private pausedUntil = 0;
  private pumping = false;
  private wakePump: (() => void) | undefined;
  /** Times of the 429s received in the last hour (for the metric). */
  // Stryker disable next-line ArrayDeclaration: a stray entry is no number, so the first count (every 429 counts) filters it out
  private throttled: number[] = [];
  /** 429s received since this scheduler was created. */
  private throttledTotal = 0;
  /** Whether the first request was granted, or its wait for other processes' requests was logged: that line comes once. */
  private firstSettled = false;

  constructor(options: SchedulerOptions) {
    const windowMs = options.windowMs ?? WINDOW_MS;
    this.window = new SlidingWindow(windowMs, WINDOW_MARGIN_MS);
    this.share = new AdaptiveShare(options.share, windowMs);
    this.clock = options.clock;
    this.logger = options.logger ?? silentLogger;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 120_000;
    this.ledger = options.ledger;
  }

  /**
   * Reads the requests other processes recorded for the portal into the window (the scheduler
   * does so before every grant); returns the monotonic time at which the window holds no request.
   */
  refresh(): number {
    const now = this.clock.monotonic();
    if (this.ledger) {
      const wall = this.clock.now();
      this.window.observe(placeRecorded(this.ledger.others(wall), wall, now, this.window.windowMs));
    }
    return this.window.clearAt(now);
  }

  /** Waits for a slot for one request. Rejects with LateError when the earliest slot is after the deadline, or with the signal's reason when aborted. */
  acquire(request: SlotRequest): Promise<Permit> {
    if (request.signal?.aborted) return Promise.reject(request.signal.reason);
    return new Promise<Permit>((resolve, reject) => {
      const waiter: Waiter = {
        ...request,
        // Settled once: a waiter leaves the queue as it is granted or refused, and an abort finds it gone.
        resolve: (permit) => {
          request.signal?.removeEventListener('abort', waiter.onAbort);
          resolve(permit);
        },
        reject: (reason) => {
          request.signal?.removeEventListener('abort', waiter.onAbort);
          reject(reason);
        },
        onAbort: () => {
          this.remove(waiter);
          // Stryker disable next-line OptionalChaining: only the signal's own abort event calls this, so the signal is there
          waiter.reject(request.signal?.reason);
          this.wake();
        },
      };
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: the listener is removed as the waiter settles, and the abort settles it
      request.signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.queue.push(waiter);
      this.wake();
      void this.pump();
    });
  }

  /**
   * A 429 arrived. Every request to the portal waits until its Retry-After (at most
   * `maxRetryAfterMs`); without one, for `fallbackMs`. Unless the exporter's own requests filled
   * the portal's window, other clients are spending it: the effective share is halved.
   * Returns how long the portal is paused from now.
   */
  rateLimited(retryAfterMs: number | undefined, fallbackMs: number): number {
    const now = this.clock.monotonic();
    this.throttled.push(now);
    this.throttledTotal++;
    this.rateLimitedInLastHour(now);
    const wait = Math.min(retryAfterMs ?? fallbackMs, this.maxRetryAfterMs);
    this.pausedUntil = Math.max(this.pausedUntil, now + wait);
    const own = this.window.countAt(now);
    const before = this.share.effective;
    if (this.share.rateLimited(now, own >= PORTAL_LIMIT)) {
      // `own` counts every entry of this portal and the requests other processes recorded in the state directory.
      this.logger.warn('the portal answered 429 although this exporter (every entry of the portal, and its other processes that share the state directory) stayed within its share: other clients are using the budget, so the share is lowered', {
        share: this.share.effective,
        was: before,
        configured: this.share.configured,
        ownInWindow: own,
      });
    }
    this.wake();
    return this.pausedUntil - now;
  }

  /** A request got an answer other than 429 (the share may grow back). */
  answered(): void {
    if (this.share.succeeded(this.clock.monotonic())) {
      this.logger.info('a clean window: the share grows back by one request', { share: this.share.effective, configured: this.share.configured });
      this.wake();
    }
  }

  /** Monotonic ms until which every request waits (0 when not paused). */
  get pausedUntilMs(): number {
    return this.pausedUntil;
  }

  /** 429s received since this scheduler was created. */
  get rateLimitedTotal(): number {
    return this.throttledTotal;
  }

  /** 429s received in the hour before `now`. */
  rateLimitedInLastHour(now = this.clock.monotonic()): number {
    this.throttled = this.throttled.filter((t) => t > now - 3_600_000);
    return this.throttled.length;
  }

  private wake(): void {
    const w = this.wakePump;
    this.wakePump = undefined;
    w?.();
  }

  private remove(waiter: Waiter): void {
    this.queue = this.queue.filter((w) => w !== waiter);
  }

  private head(): Waiter | undefined {
    let best: Waiter | undefined;
    // The queue is in arrival order: the first of the lowest priority value is the oldest of it (FIFO).
    for (const w of this.queue) if (!best || w.priority < best.priority) best = w;
    return best;
  }

  /** The earliest time the next request may start, ignoring requests in flight. */
  private nextSlot(now: number): number {
    return Math.max(this.window.nextSlot(now, this.share.effective), this.pausedUntil, now);
  }

  private grant(waiter: Waiter, now: number): void {
    this.remove(waiter);
    this.window.record(now);
    // Recorded before it is sent: a process killed while the request is in flight still leaves it counted.
    const wallAt = this.clock.now();
    this.ledger?.record(wallAt);
    this.inFlight++;
    let released = false;
    let refunded = false;
    waiter.resolve({
      startedAt: now,
      refund: () => {
        if (refunded || released) return;
        refunded = true;
        this.window.release(now);
        this.ledger?.release(wallAt);
      },
      done: () => {
        if (released) return;
        released = true;
        this.inFlight--;
        // After the caller's own follow-up (the next page, the next tag) has queued: it goes first.
        // The queue has work now: a clock that advances by itself must not jump before it looks.
        const release = this.clock.hold?.();
        setImmediate(() => {
          release?.();
          this.wake();
          void this.pump();
        });
      },
    });
  }

  /**
   * The process's first request must wait for the window: before it, only requests other
   * processes (or an earlier run) recorded can fill it. One info line says so, with the wall time
   * the request can go, or a run that waits up to a window prints nothing and looks hung.
   */
  private announceFirstWait(now: number, slot: number): void {
    this.firstSettled = true;
    this.logger.info('the share of this window was already spent by requests other processes (or an earlier run) recorded in the state directory: the first request waits for its slot', {
      spentInWindow: this.window.countAt(now),
      share: this.share.effective,
      firstRequestAt: wallIso(this.clock, slot),
    });
  }

  /** Serves the queue; sleeps on the clock until the next slot, or until something changes. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (;;) {
        const head = this.head();
        if (!head) return;
        const now = this.clock.monotonic();
        // Before every decision: another process may have sent since (reading costs a few small files).
        if (this.inFlight === 0) this.refresh();
        const slot = this.nextSlot(now);
        const deadline = typeof head.deadline === 'function' ? head.deadline() : head.deadline;
        if (slot > deadline) {
          this.remove(head);
          head.reject(new LateError(head.endpoint, slot, deadline, this.clock, this.share.effective, this.window.windowMs));
          continue;
        }
        if (this.inFlight > 0) {
          // A request is being read: wait for it (its `done`), then look again.
          await new Promise<void>((resolve) => (this.wakePump = resolve));
          continue;
        }
        if (slot <= now) {
          this.firstSettled = true;
          this.grant(head, now);
          continue;
        }
        if (!this.firstSettled && this.window.nextSlot(now, this.share.effective) > now) this.announceFirstWait(now, slot);
        const stop = new AbortController();
        this.wakePump = () => stop.abort();
        try {
          await this.clock.sleep(slot - now, stop.signal);
        } catch {
          // Woken early: a pause, an abort, a new arrival or a grown share; look again.
        }
        this.wakePump = undefined;
      }
    } finally {
      this.pumping = false;
    }
  }
}
