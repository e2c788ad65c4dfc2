/**
 * Parses an API timestamp (spec 2.2: `yyyy-MM-ddTHH:mm:ss.fffffff`, no zone, UTC) to Unix
 * seconds. Returns null for the minimum date (unset) and undefined when malformed. Accepts 0–7
 * fractional digits and a trailing `Z`, as a lenient reader should.
 */
export function parseApiTimestamp(value: string): number | null | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?Z?$/.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac] = m;
  const year = Number(y);
  if (year <= 1) return null;
  const ms = Date.UTC(year, Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const check = new Date(ms);
  if (Number.isNaN(ms) || check.getUTCDate() !== Number(d) || check.getUTCMonth() !== Number(mo) - 1 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) {
    return undefined;
  }
  return ms / 1000 + (frac ? Number('0.' + frac) : 0);
}
