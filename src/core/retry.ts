import type { Clock } from './clock.js';

/**
 * The one retry policy toolkit of the exporter: reading `Retry-After`, the two backoff jitters, and
 * the one retry loop that the upstream client and the sinks both run with their own classifier.
 */

/** Parses Retry-After (delta seconds or HTTP-date, relative to `now`) into ms; undefined when absent/unparseable; never negative. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  // A repeated header is ambiguous; the first value is what most servers mean.
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (text === '') return undefined;
  if (/^-?\d+(\.\d+)?$/.test(text)) {
    // RFC 9110 says non-negative whole seconds; tolerate fractions and clamp negatives to "now".
    return Math.max(0, Math.ceil(Number(text) * 1000));
  }
  // Only accept things that look like an HTTP-date, not anything Date.parse happens to understand.
  if (!/[A-Za-z]{3}/.test(text) || !/\d{1,2}:\d{2}:\d{2}/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Backoff settings: the first window, its cap, and the jitter source. */
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  random: () => number;
}

/** The exponential window before retry `attempt0 + 1`: min(maxMs, baseMs * 2 ** attempt0), `attempt0` being the 0-based attempt that failed. */
function backoffWindow(attempt0: number, options: BackoffOptions): number {
  return Math.min(options.maxMs, options.baseMs * 2 ** Math.max(0, attempt0));
}

/** Exponential backoff with full jitter: random() * window, so a crowd of clients spreads over the whole window. */
export function fullJitterBackoffMs(attempt0: number, options: BackoffOptions): number {
  return Math.max(0, options.random() * backoffWindow(attempt0, options));
}

/** Exponential backoff with equal jitter: half the window fixed, half random, so a retry never comes at once yet still spreads out. */
export function equalJitterBackoffMs(attempt0: number, options: BackoffOptions): number {
  const w = backoffWindow(attempt0, options);
  return Math.max(0, Math.round(w / 2 + options.random() * (w / 2)));
}

/** What a classifier says about one failure: give up, or wait `waitMs` and try again (`reason` for logs). */
export type RetryDecision = { retry: false } | { retry: true; waitMs: number; reason: string };

/** A retry about to happen: the 0-based attempt that failed, its error, and the wait before the next. */
export interface RetryInfo {
  attempt: number;
  error: unknown;
  waitMs: number;
  reason: string;
}

/** Why the loop stopped retrying: the classifier said no, `maxRetries` were used, or the wait would pass the deadline. */
export type GiveUpCause = 'not-retryable' | 'retries-exhausted' | 'deadline';

/** The failure the loop gives up on. `waitMs` and `reason` are set when the classifier wanted a retry. */
export interface GiveUpInfo {
  cause: GiveUpCause;
  /** 0-based number of the last attempt (attempts made = attempt + 1). */
  attempt: number;
  error: unknown;
  waitMs?: number;
  reason?: string;
}

/** How `retry` runs. */
export interface RetryOptions {
  /** Decides, for the error of attempt `n` (0-based), whether to try again and after how long. */
  classify: (err: unknown, n: number) => RetryDecision;
  /** Retries after the first attempt (so at most maxRetries + 1 attempts). */
  maxRetries: number;
  /** Sleeps between attempts and reads the time for the deadline check. */
  clock: Clock;
  /** Ms on `clock.monotonic()`: no retry whose wait would end at or after it. */
  deadline?: number;
  /** Cancels the loop: no further attempt, and a pending wait ends with the signal's reason. */
  signal?: AbortSignal;
  /** Called before each wait (for logs and counters). */
  onRetry?: (info: RetryInfo) => void;
  /**
   * Called once when the loop gives up on a failure; returns what is thrown (return `info.error`
   * to keep the last error as is). @default the last error
   */
  onGiveUp?: (info: GiveUpInfo) => unknown;
}

/**
 * Runs `attempt(0)`, `attempt(1)`, … until one resolves. After a failure, `classify` decides; the
 * loop throws the last error (or what `onGiveUp` makes of it) when the classifier says no, when
 * `maxRetries` retries were made, or when the wait would reach the deadline. When `signal` aborts,
 * the loop rejects with the signal's reason, before an attempt, after a failed one, or while waiting.
 */
export async function retry<T>(attempt: (n: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const giveUp = (info: GiveUpInfo): unknown => (opts.onGiveUp ? opts.onGiveUp(info) : info.error);
  for (let n = 0; ; n++) {
    opts.signal?.throwIfAborted();
    let error: unknown;
    try {
      return await attempt(n);
    } catch (err) {
      error = err;
    }
    opts.signal?.throwIfAborted();
    const decision = opts.classify(error, n);
    if (!decision.retry) throw giveUp({ cause: 'not-retryable', attempt: n, error });
    const { waitMs, reason } = decision;
    if (n >= opts.maxRetries) throw giveUp({ cause: 'retries-exhausted', attempt: n, error, waitMs, reason });
    if (opts.deadline !== undefined && opts.clock.monotonic() + waitMs >= opts.deadline) {
      throw giveUp({ cause: 'deadline', attempt: n, error, waitMs, reason });
    }
    opts.onRetry?.({ attempt: n, error, waitMs, reason });
    await opts.clock.sleep(waitMs, opts.signal);
  }
}
