/** Timestamp forms of spec 2.2. */

/** The unset timestamp. */
export const MIN_TIMESTAMP = '0001-01-01T00:00:00.0000000';

/** Matches a 2.2 timestamp: seven fractional digits, no zone. */
const TIMESTAMP_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}$/;

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

const dayPrefixes = new Map<number, string>();

function two(n: number): string {
  return n < 10 ? '0' + n : String(n);
}

/** `yyyy-MM-dd` of a day number (days since the epoch), cached: streaming formats millions of timestamps. */
function dayPrefix(day: number): string {
  let p = dayPrefixes.get(day);
  if (p === undefined) {
    p = new Date(day * DAY).toISOString().slice(0, 10);
    if (dayPrefixes.size > 4096) dayPrefixes.clear();
    dayPrefixes.set(day, p);
  }
  return p;
}

/**
 * Formats epoch ms as `yyyy-MM-ddTHH:mm:ss.fffffff` (UTC). `ticks` (0–9999) fills the four
 * sub-millisecond digits, so clients meet real seven-digit fractions.
 */
export function formatTimestamp(ms: number, ticks = 0): string {
  ms = Math.floor(ms);
  const day = Math.floor(ms / DAY);
  let r = ms - day * DAY;
  const h = Math.floor(r / HOUR);
  r -= h * HOUR;
  const m = Math.floor(r / MINUTE);
  r -= m * MINUTE;
  const sec = Math.floor(r / 1000);
  const frac = (r - sec * 1000) * 10000 + (ticks % 10000);
  return `${dayPrefix(day)}T${two(h)}:${two(m)}:${two(sec)}.${String(frac).padStart(7, '0')}`;
}

/** Parses a 2.2 timestamp into epoch ms (sub-millisecond digits dropped); NaN when malformed. */
export function parseTimestamp(s: string): number {
  if (!TIMESTAMP_RE.test(s)) return NaN;
  const ms = Date.parse(s.slice(0, 23) + 'Z');
  return Number.isNaN(ms) ? NaN : ms;
}

/** Formats epoch ms as `yyyy-MM-dd HH:mm:ss` (UTC), the `warranty_expiry` form. */
export function formatWarranty(ms: number): string {
  const ts = formatTimestamp(ms);
  return ts.slice(0, 10) + ' ' + ts.slice(11, 19);
}

/** Parses a `yyyyMMdd` parameter into the epoch ms of that UTC day's start; undefined when malformed or not a real date. */
export function parseDay(s: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})$/.exec(s);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || y < 1) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(0, 0, 0, 0);
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return undefined;
  return date.getTime();
}
