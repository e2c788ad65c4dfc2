import { wallIso, type Clock } from '../core/clock.js';
import { silentLogger, type Logger } from '../core/log.js';
import { LateError } from '../errors.js';
import type { ClaimResult, SendLedger } from './ledger.js';
import { AdaptiveShare } from './share.js';
import { SlidingWindow, WINDOW_MARGIN_MS } from './window.js';
import { YIELD_LOOKAHEAD_MS, type LiveDemand } from './yield.js';

/** The portal's documented limit (spec 8): 10 requests per 60 s for all its clients together. */
const PORTAL_LIMIT = 10;
export const WINDOW_MS = 60_000;

/**
 * Priorities of the queue: lower goes first. Three bands: the live sources (their runs due every
 * few minutes), the slow sources (their own interval, hourly or daily, e.g. the resolved-alerts
 * pass: what the live sources leave), and backfill. Within the live and the slow band a run's
 * follow-up request (the next page, the next tag, a retry) goes before new runs of the band, to
 * finish what was started; a slow follow-up never goes before a live request (continuationOf).
 */
export const PRIORITY = {
  /** A retry, or the next page of a list already being read, of a live source: finish what was started. */
  continuation: 0,
  vitals: 1,
  devices: 2,
  alerts: 3,
  /** A retry or the next page of a slow source: after every live request, before a new slow run. */
  slowContinuation: 4,
  /** The first request of a slow source's run (the resolved-alerts pass, and every source of its own interval below the live ones). */
  slow: 5,
  /** Backfill of past days: only what live collection leaves. */
  backfill: 9,
} as const;

/** Whether a request of `priority` is a slow source's (its own interval, below every live source). */
function isSlow(priority: number): boolean {
  return priority >= PRIORITY.slowContinuation && priority <= PRIORITY.slow;
}

/**
 * The priority of the follow-up requests (next page, next tag, retry) of a run whose first request
 * had `priority`: a slow source's go after every live request, any other's before every new run.
 */
export function continuationOf(priority: number): number {
  return isSlow(priority) ? PRIORITY.slowContinuation : PRIORITY.continuation;
}

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
  /**
   * The request could last have reached the portal now: its response began, or it failed. It
   * counts in the window until a window and the margin after this (the first call counts; `done`
   * says it when nothing did).
   */
  arrived(): void;
  /** The request reached no portal (refused, unresolvable): its slot goes back to the window. Call before `done`. */
  refund(): void;
  done(): void;
}

/** Why a request waits for the budget: this process's own requests, other processes' (in the ledger), or a 429's pause. */
type WaitReason = 'share' | 'others' | 'pause';

/** A wait for the budget longer than this is said in the log (info). */
const SAID_WAIT_MS = 5_000;
/**
 * The longest a request stays in flight before its response begins, when the scheduler is not told
 * (the reader's default timeouts: 10 s to connect, 30 s for the headers, and 5 s more).
 */
const DEFAULT_FLIGHT_MS = 45_000;

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
  /** Where every process claims its requests' slots (the state directory, a DynamoDB table); unset: this process's only. */
  ledger?: SendLedger;
  /**
   * The longest a request may stay in flight before its response begins (the reader's connect and
   * headers timeouts, and a little more): the ledger counts a request whose arrival is never
   * recorded (its process killed) as arriving then. @default 45_000
   */
  flightMs?: number;
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
  private readonly flightMs: number;
  /** The last wait said in the log (see `sayWait`). */
  private said: { reason: WaitReason; until: number } | undefined;
  /** Arrivals and releases being recorded in the ledger (see `flush`). */
  private readonly marks = new Set<Promise<void>>();
  /** The live runs due (serve's grids): a slow request makes none of them late (./yield.ts). */
  private live: LiveDemand | undefined;

  constructor(options: SchedulerOptions) {
    const windowMs = options.windowMs ?? WINDOW_MS;
    this.window = new SlidingWindow(windowMs, WINDOW_MARGIN_MS);
    this.share = new AdaptiveShare(options.share, windowMs);
    this.clock = options.clock;
    this.logger = options.logger ?? silentLogger;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 120_000;
    this.ledger = options.ledger;
    this.flightMs = options.flightMs ?? DEFAULT_FLIGHT_MS;
  }

  /** Tells the scheduler which live runs to expect: from now on a slow source's request goes only when it makes none of them late. */
  expectLive(live: LiveDemand | undefined): void {
    this.live = live;
    this.wake();
  }

  /**
   * Whether `head`, a slow source's request, must leave the slot to live runs due before it would
   * leave the window (a run due now that has not asked yet included): when it would make one late.
   */
  private yieldsToLive(head: Waiter, now: number): boolean {
    if (!this.live || !isSlow(head.priority)) return false;
    const due = this.live.dueIn(now - 1, now + YIELD_LOOKAHEAD_MS);
    return this.window.makesLiveLate(now, due, this.share.effective);
  }

  /** Resolves once every arrival and release said so far is recorded in the ledger (a one-shot run awaits it before it ends). */
  async flush(): Promise<void> {
    await Promise.all([...this.marks]);
  }

  /** Records a change of a claim in the ledger in the background; `flush` waits for it. */
  private mark(change: Promise<void> | undefined): void {
    if (!change) return;
    const p = change.finally(() => this.marks.delete(p));
    this.marks.add(p);
  }

  /**
   * Reads the requests other processes recorded for the portal into the window (the scheduler
   * does so before every grant); returns the monotonic time at which the window holds no request.
   * Throws LedgerError when the ledger cannot be read.
   */
  async refresh(): Promise<number> {
    if (this.ledger) this.observe(await this.ledger.others());
    return this.window.clearAt(this.clock.monotonic());
  }

  /** Places the other writers' requests (ages in ms) on this process's monotonic clock. */
  private observe(ages: readonly number[]): void {
    const now = this.clock.monotonic();
    this.window.observe(ages.map((age) => now - age));
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
      // `own` counts every entry of this portal and the requests other processes recorded in the ledger.
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

  /** Where other processes' requests are recorded (the ledger's `where`), or undefined without a ledger. */
  get ledgerWhere(): string | undefined {
    return this.ledger?.where;
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

  private grant(waiter: Waiter, now: number, claim: ClaimResult | undefined): void {
    this.remove(waiter);
    this.window.record(now);
    this.inFlight++;
    let released = false;
    let refunded = false;
    /** The request's entry in the window: its start, then when it could last have arrived. */
    let entry = now;
    let arrived = false;
    const arrive = () => {
      if (arrived || refunded) return;
      arrived = true;
      const at = this.clock.monotonic();
      this.window.arrived(entry, at);
      entry = at;
      this.mark(claim?.arrived?.());
    };
    waiter.resolve({
      startedAt: now,
      arrived: arrive,
      refund: () => {
        if (refunded || released) return;
        refunded = true;
        this.window.release(entry);
        this.mark(claim?.release?.());
      },
      done: () => {
        if (released) return;
        arrive();
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
   * Claims the slot in the shared ledger: one atomic step across every process (recorded before
   * the request is sent, so a process killed while it is in flight still leaves it counted).
   * Returns the claim, or the ms to wait when another process took the slot; a ledger that cannot
   * be read fails the request at the head of the queue (nothing is sent on a share it cannot see).
   */
  private async claim(head: Waiter): Promise<{ claim?: ClaimResult; waitMs: number } | undefined> {
    const ledger = this.ledger!;
    // Held: the claim is real I/O (a clock that advances by itself must not jump past it).
    const release = this.clock.hold?.();
    try {
      const result = await ledger.claim(this.share.effective, this.flightMs);
      this.observe(result.others);
      return result.granted ? { claim: result, waitMs: 0 } : { waitMs: Math.max(1, result.waitMs) };
    } catch (err) {
      this.remove(head);
      head.reject(err);
      return undefined;
    } finally {
      release?.();
    }
  }

  /**
   * Says in one info line a wait for the budget longer than SAID_WAIT_MS, from `now` until `until`
   * (monotonic): until when on the wall clock, and why. A wait looked at again (a new arrival, a
   * claim another process won) is said again only when its reason changes or it ends more than a
   * second later than said, so a run that waits a minute says so, and says every further wait.
   */
  private sayWait(now: number, until: number): void {
    if (until - now <= SAID_WAIT_MS) return;
    const reason = this.whyWait(now, until);
    const said = this.said;
    if (said !== undefined && said.reason === reason && until <= said.until + 1_000) return;
    this.said = { reason, until };
    const share = this.share.effective;
    const why =
      reason === 'pause'
        ? 'the portal answered 429, and every request to it waits for the pause it asked for'
        : reason === 'share'
          ? `this process's own requests spent the share of ${share} per 60 s`
          : `requests other processes (or an earlier run) recorded in ${this.ledger!.where} fill the share of ${share} per 60 s`;
    this.logger.info(`waiting for the portal's budget until ${wallIso(this.clock, until)}: ${why}`, {
      reason,
      until: wallIso(this.clock, until),
      spentInWindow: this.window.countAt(now),
      share,
      ...(this.ledger ? { ledger: this.ledger.where } : {}),
    });
  }

  /** What holds a request until `until`: a 429's pause, else this process's own requests when they alone fill the share, else other processes'. */
  private whyWait(now: number, until: number): WaitReason {
    if (this.pausedUntil >= until) return 'pause';
    return this.window.nextOwnSlot(now, this.share.effective) >= until ? 'share' : 'others';
  }

  /** Refuses `waiter` with LateError when `slot` is past its deadline; returns whether it did. */
  private refusedLate(waiter: Waiter, slot: number): boolean {
    const deadline = typeof waiter.deadline === 'function' ? waiter.deadline() : waiter.deadline;
    if (slot <= deadline) return false;
    this.remove(waiter);
    waiter.reject(new LateError(waiter.endpoint, slot, deadline, this.clock, this.share.effective, this.window.windowMs));
    return true;
  }

  /** Sleeps until `at`, or until something changes (a pause, an abort, a new arrival, a grown share). */
  private async sleepUntil(at: number, now: number): Promise<void> {
    const stop = new AbortController();
    this.wakePump = () => stop.abort();
    try {
      await this.clock.sleep(at - now, stop.signal);
    } catch {
      // Woken early: look again.
    }
    this.wakePump = undefined;
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
        const slot = this.nextSlot(now);
        if (this.refusedLate(head, slot)) continue;
        if (this.inFlight > 0) {
          // A request is being read: wait for it (its `done`), then look again.
          await new Promise<void>((resolve) => (this.wakePump = resolve));
          continue;
        }
        if (slot <= now) {
          if (this.yieldsToLive(head, now)) {
            // Looked at again when a request leaves the window or a live run is due (or anything changes), within a window.
            await this.sleepUntil(Math.min(this.window.leavesAt(now), this.live!.nextAfter(now), now + this.window.windowMs), now);
            continue;
          }
          if (!this.ledger) {
            this.grant(head, now, undefined);
            continue;
          }
          // The ledger decides, atomically across processes, with every other writer's requests.
          const claimed = await this.claim(head);
          if (!claimed) continue;
          const at = this.clock.monotonic();
          const current = this.head();
          if (claimed.claim) {
            // Granted to whoever heads the queue now (an abort or a higher priority may have come meanwhile).
            if (current) this.grant(current, at, claimed.claim);
            else this.mark(claimed.claim.release?.());
            continue;
          }
          if (!current) continue;
          const retryAt = Math.max(this.nextSlot(at), at + claimed.waitMs);
          if (this.refusedLate(current, retryAt)) continue;
          this.sayWait(at, retryAt);
          await this.sleepUntil(retryAt, at);
          continue;
        }
        this.sayWait(now, slot);
        await this.sleepUntil(slot, now);
      }
    } finally {
      this.pumping = false;
    }
  }
}
