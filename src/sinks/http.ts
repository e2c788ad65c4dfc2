import { equalJitterBackoffMs, parseRetryAfter, retry, type RetryDecision } from '../core/retry.js';
import { redact } from '../core/log.js';
import { UntrustedCertificateError } from '../errors.js';
import { exchange } from '../net/exchange.js';
import { untrustedCode, untrustedReason } from '../net/trust.js';
import { SinkError } from './errors.js';
import type { PushContext, SinkName } from './types.js';

/** A receiver's answer, body read as text. */
export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP delivery with retries, as remote write and the Pushgateway need it. */
export interface DeliveryOptions {
  sink: SinkName;
  ctx: PushContext;
  method: 'POST' | 'PUT';
  url: string;
  body: Uint8Array | string;
  /** Headers for one attempt; called before each attempt so a signature carries a fresh date. */
  headers: () => Promise<Record<string, string>> | Record<string, string>;
  /** Per attempt; also capped by the time left before `ctx.deadline`. */
  timeoutMs: number;
  /** Retries after the first attempt, on 5xx, 429 and network errors. */
  maxRetries: number;
  /** A non-2xx answer that still counts as delivered (a resend the receiver already has). */
  alreadyDelivered?: (res: HttpResult) => boolean;
  /** Values scrubbed from error messages (tokens, passwords). */
  secrets: readonly string[];
}

/** Equal jitter from 250-500 ms up to 5-10 s, so retries of many cold starts spread out. */
const BACKOFF = { baseMs: 500, maxMs: 10_000, random: () => Math.random() };
const MAX_BODY_IN_MESSAGE = 300;

/** The URL without credentials or query, safe for logs and error messages. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return u.origin + u.pathname;
  } catch {
    return '(invalid URL)';
  }
}

function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** A failed attempt worth repeating (429, 5xx, no answer), with the receiver's `Retry-After` when it sent one. */
class RetryableFailure extends SinkError {
  readonly retryAfterMs: number | undefined;
  constructor(sink: SinkName, message: string, options: { status?: number; cause?: unknown; retryAfterMs?: number }) {
    super(sink, message, options);
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Sends one request through the one HTTP client (src/net/); resolves with the answer whatever its status, rejects on transport errors. */
async function send(opts: DeliveryOptions, timeoutMs: number): Promise<HttpResult> {
  // Whole milliseconds: AbortSignal.timeout refuses a fraction, and the time left before a deadline on the monotonic clock has one.
  const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(timeoutMs)));
  const signal = opts.ctx.signal ? AbortSignal.any([opts.ctx.signal, timeout]) : timeout;
  return exchange(opts.url, { method: opts.method, headers: await opts.headers(), body: opts.body, signal }, opts.ctx.dispatcher);
}

/**
 * A receiver whose certificate this process does not trust: sending again meets the same one, so
 * the push fails at once, its cause an UntrustedCertificateError (a configuration error).
 */
export function untrustedReceiver(sink: SinkName, url: string, err: unknown): SinkError | undefined {
  const code = untrustedCode(err);
  if (code === undefined) return undefined;
  const u = new URL(url);
  const at = `${u.hostname}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`;
  const message = `the TLS connection to ${at} (${sink}) failed: ${untrustedReason(code)}; not sent again`;
  return new SinkError(sink, message, { cause: new UntrustedCertificateError(at, code, message, { cause: err }) });
}

/**
 * Delivers one request: 2xx (or `alreadyDelivered`) resolves; 429, 5xx and transport errors are
 * retried with equal-jitter backoff (`Retry-After` honoured) while the deadline allows; any other
 * status fails at once. Throws SinkError.
 */
export async function deliver(opts: DeliveryOptions): Promise<HttpResult> {
  const { ctx, sink } = opts;
  const where = `${opts.method} ${safeUrl(opts.url)}`;
  const scrub = (text: string) => redact(text, opts.secrets);

  const attempt = async (n: number): Promise<HttpResult> => {
    const remaining = ctx.deadline - ctx.clock.monotonic();
    if (remaining <= 0) throw new SinkError(sink, `${where}: the push deadline passed before attempt ${n + 1}`);
    let res: HttpResult;
    try {
      res = await send(opts, Math.min(opts.timeoutMs, remaining));
    } catch (err) {
      const untrusted = untrustedReceiver(sink, opts.url, err);
      if (untrusted) throw untrusted;
      const message = err instanceof Error ? err.message : String(err);
      throw new RetryableFailure(sink, `${where}: ${scrub(message)}`, { cause: err });
    }
    if (res.status >= 200 && res.status < 300) return res;
    const snippet = scrub(res.body.slice(0, MAX_BODY_IN_MESSAGE)).trim();
    if (opts.alreadyDelivered?.(res)) {
      ctx.logger.info('receiver already has these samples; counting the push as delivered', { sink, status: res.status, detail: snippet });
      return res;
    }
    const message = `${where}: HTTP ${res.status}${snippet ? `: ${snippet}` : ''}`;
    if (!isRetryableStatus(res.status)) throw new SinkError(sink, message, { status: res.status });
    throw new RetryableFailure(sink, message, { status: res.status, retryAfterMs: parseRetryAfter(res.headers['retry-after'], ctx.clock.now()) });
  };

  let waiting = false;
  try {
    return await retry(
      (n) => {
        waiting = false;
        return attempt(n);
      },
      {
        classify: (err, n): RetryDecision => {
          if (!(err instanceof RetryableFailure)) return { retry: false };
          if (err.retryAfterMs !== undefined) return { retry: true, waitMs: err.retryAfterMs, reason: 'Retry-After' };
          return { retry: true, waitMs: equalJitterBackoffMs(n, BACKOFF), reason: 'backoff' };
        },
        maxRetries: opts.maxRetries,
        clock: ctx.clock,
        deadline: ctx.deadline,
        signal: ctx.signal,
        onRetry: ({ attempt: n, error, waitMs }) => {
          const failure = error as SinkError;
          ctx.logger.warn('push attempt failed; retrying', { sink, attempt: n + 1, status: failure.status, retryInMs: waitMs, error: failure.message });
          waiting = true;
        },
        onGiveUp: ({ cause, attempt: n, error, waitMs }) => {
          const failure = error as SinkError;
          if (cause === 'retries-exhausted') return new SinkError(sink, `${failure.message} (gave up after ${n + 1} attempts)`, { status: failure.status, cause: failure });
          if (cause === 'deadline') {
            return new SinkError(sink, `${failure.message} (no retry: waiting ${waitMs} ms would pass the push deadline)`, { status: failure.status, cause: failure });
          }
          return failure;
        },
      },
    );
  } catch (err) {
    if (err instanceof SinkError) throw err;
    // Only the abort signal ends the loop with anything but a SinkError.
    throw new SinkError(sink, waiting ? `${where}: aborted while waiting to retry` : `${where}: aborted`, { cause: err });
  }
}

/** `Authorization` for HTTP basic auth. */
export function basicAuth(username: string, password: string): string {
  return 'Basic ' + Buffer.from(`${username}:${password}`, 'utf8').toString('base64');
}
