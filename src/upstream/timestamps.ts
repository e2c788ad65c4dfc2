const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const POW10 = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
/** The unset timestamp as the portal writes it (most `inactiveUntil` values). */
const MIN_TIMESTAMP = '0001-01-01T00:00:00.0000000';

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
}

/** The value of `n` ASCII digits of `s` from `at`, or -1 if one is not a digit. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let k = at; k < at + n; k++) {
    const d = s.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0b || c === 0x0c || c === 0xa0 || c === 0xfeff || (c >= 0x2000 && c <= 0x200a) || c === 0x1680 || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
}

/**
 * Parses an API timestamp (spec 2.2: `yyyy-MM-ddTHH:mm:ss.fffffff`, no zone, UTC) to Unix
 * seconds. Returns null for the minimum date (unset: any well-formed date in year 1) and undefined
 * when malformed (a malformed year-1 value too). Accepts 0–7
 * fractional digits and a trailing `Z`, as a lenient reader should. A character-level parser
 * (no regular expression, no Date object): it runs twice per alert.
 */
export function parseApiTimestamp(value: string): number | null | undefined {
  // A shortcut for the commonest value (the parse below gives null for it too).
  if (value === MIN_TIMESTAMP) return null;
  let start = 0;
  let end = value.length;
  // No bounds needed: charCodeAt outside the string is NaN, neither a space nor Z, so each trim stops
  // at the string's ends, and a value all whitespace ends with a length of 0 or less, refused below.
  while (isSpace(value.charCodeAt(start))) start++;
  while (isSpace(value.charCodeAt(end - 1))) end--;
  if (value.charCodeAt(end - 1) === 0x5a /* Z */) end--;
  const len = end - start;
  if (len < 19 || len === 20 || len > 27) return undefined;
  const s = value;
  const o = start;
  if (s.charCodeAt(o + 4) !== 0x2d || s.charCodeAt(o + 7) !== 0x2d || s.charCodeAt(o + 10) !== 0x54 || s.charCodeAt(o + 13) !== 0x3a || s.charCodeAt(o + 16) !== 0x3a) return undefined;
  const year = digits(s, o, 4);
  const month = digits(s, o + 5, 2);
  const day = digits(s, o + 8, 2);
  const hour = digits(s, o + 11, 2);
  const minute = digits(s, o + 14, 2);
  const second = digits(s, o + 17, 2);
  let frac = 0;
  if (len > 19) {
    if (s.charCodeAt(o + 19) !== 0x2e) return undefined;
    const n = len - 20;
    const f = digits(s, o + 20, n);
    if (f < 0) return undefined;
    frac = f / POW10[n]!;
  }
  // (digits gives -1 for a field that is not all digits.) Year 0 does not exist in the portal's calendar (.NET dates start at year 1).
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  const leap = month === 2 && ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0);
  if (day > DAYS_IN_MONTH[month - 1]! + (leap ? 1 : 0)) return undefined;
  // A well-formed date in year 1 is the unset value written another way (fewer fraction digits, a Z).
  if (year === 1) return null;
  // Years 2-99 are those years (proleptic Gregorian), not 1902-1999 as Date.UTC would read them.
  return daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second + frac;
}
