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

/** Exponential backoff with full jitter: random() * min(maxMs, baseMs * 2 ** attempt). */
export function backoffMs(attempt: number, options: { baseMs: number; maxMs: number; random: () => number }): number {
  const cap = Math.min(options.maxMs, options.baseMs * 2 ** Math.max(0, attempt));
  return Math.max(0, options.random() * cap);
}
