import { request } from 'undici';
import { parseRetryAfter } from '../upstream/retry.js';
import { redact } from '../core/log.js';
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

const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 10_000;
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

/** One reading of `Retry-After` for the whole exporter (seconds or an HTTP date). */
export { parseRetryAfter };

/** Exponential backoff with equal jitter: half fixed, half random, so retries of many cold starts spread out. */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.max(0, retry - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Sends one request; resolves with the answer whatever its status, rejects on transport errors. */
async function attempt(opts: DeliveryOptions, timeoutMs: number): Promise<HttpResult> {
  const timeout = AbortSignal.timeout(Math.max(1, timeoutMs));
  const signal = opts.ctx.signal ? AbortSignal.any([opts.ctx.signal, timeout]) : timeout;
  const res = await request(opts.url, {
    method: opts.method,
    headers: await opts.headers(),
    body: opts.body,
    signal,
    ...(opts.ctx.dispatcher ? { dispatcher: opts.ctx.dispatcher } : {}),
  });
  const body = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body };
}

/**
 * Delivers one request: 2xx (or `alreadyDelivered`) resolves; 429, 5xx and transport errors are
 * retried with backoff (`Retry-After` honoured) while the deadline allows; any other status
 * fails at once. Throws SinkError.
 */
export async function deliver(opts: DeliveryOptions): Promise<HttpResult> {
  const { ctx, sink } = opts;
  const where = `${opts.method} ${safeUrl(opts.url)}`;
  const scrub = (text: string) => redact(text, opts.secrets);
  for (let retry = 0; ; retry++) {
    const remaining = ctx.deadline - ctx.clock.now();
    if (remaining <= 0) throw new SinkError(sink, `${where}: the push deadline passed before attempt ${retry + 1}`);
    let failure: SinkError;
    let waitHint: number | undefined;
    try {
      const res = await attempt(opts, Math.min(opts.timeoutMs, remaining));
      if (res.status >= 200 && res.status < 300) return res;
      const snippet = scrub(res.body.slice(0, MAX_BODY_IN_MESSAGE)).trim();
      if (opts.alreadyDelivered?.(res)) {
        ctx.logger.info('receiver already has these samples; counting the push as delivered', { sink, status: res.status, detail: snippet });
        return res;
      }
      failure = new SinkError(sink, `${where}: HTTP ${res.status}${snippet ? `: ${snippet}` : ''}`, { status: res.status });
      if (!isRetryableStatus(res.status)) throw failure;
      waitHint = parseRetryAfter(res.headers['retry-after'], ctx.clock.now());
    } catch (err) {
      if (err instanceof SinkError) throw err;
      if (ctx.signal?.aborted) throw new SinkError(sink, `${where}: aborted`, { cause: ctx.signal.reason });
      const message = err instanceof Error ? err.message : String(err);
      failure = new SinkError(sink, `${where}: ${scrub(message)}`, { cause: err });
    }
    if (retry >= opts.maxRetries) throw new SinkError(sink, `${failure.message} (gave up after ${retry + 1} attempts)`, { status: failure.status, cause: failure });
    const wait = waitHint ?? backoffMs(retry + 1);
    if (ctx.clock.now() + wait >= ctx.deadline) {
      throw new SinkError(sink, `${failure.message} (no retry: waiting ${wait} ms would pass the push deadline)`, { status: failure.status, cause: failure });
    }
    ctx.logger.warn('push attempt failed; retrying', { sink, attempt: retry + 1, status: failure.status, retryInMs: wait, error: failure.message });
    try {
      await ctx.clock.sleep(wait, ctx.signal);
    } catch (reason) {
      throw new SinkError(sink, `${where}: aborted while waiting to retry`, { cause: reason });
    }
  }
}

/** `Authorization` for HTTP basic auth. */
export function basicAuth(username: string, password: string): string {
  return 'Basic ' + Buffer.from(`${username}:${password}`, 'utf8').toString('base64');
}
