// TEMPORARY (replaced by the health branch's version on merge): the agreed API only.
import type { Clock } from './clock.js';

/** Parses Retry-After (delta seconds or HTTP-date, relative to `now`) into ms; undefined when absent/unparseable; never negative. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (text === '') return undefined;
  if (/^-?\d+(\.\d+)?$/.test(text)) return Math.max(0, Math.ceil(Number(text) * 1000));
  if (!/[A-Za-z]{3}/.test(text) || !/\d{1,2}:\d{2}:\d{2}/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Exponential backoff with full jitter (attempt is 0-based): random() * min(maxMs, baseMs * 2 ** attempt). */
export function fullJitterBackoffMs(attempt: number, options: { baseMs: number; maxMs: number; random: () => number }): number {
  const cap = Math.min(options.maxMs, options.baseMs * 2 ** Math.max(0, attempt));
  return Math.max(0, options.random() * cap);
}

export type RetryDecision = { retry: false } | { retry: true; waitMs: number; reason: string };

/** Runs `attempt` until it succeeds, the classifier says stop, retries run out, or the wait would pass the deadline; then throws the last error. */
export async function retry<T>(
  attempt: (n: number) => Promise<T>,
  opts: { classify: (err: unknown, n: number) => RetryDecision; maxRetries: number; clock: Clock; deadline?: number; signal?: AbortSignal },
): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      const d = opts.classify(err, n);
      if (!d.retry || n >= opts.maxRetries) throw err;
      if (opts.deadline !== undefined && opts.clock.now() + d.waitMs > opts.deadline) throw err;
      await opts.clock.sleep(d.waitMs, opts.signal);
    }
  }
}
