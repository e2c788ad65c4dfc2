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
  // The form the portal writes, checked and read in one pass; anything else takes the general path.
  if (value.length === 27) {
    const t = canonical(value);
    if (t !== undefined) return t;
  }
  return general(value);
}

/** The digit at `at`, or a negative number or one over 9 when it is not one. */
function d(s: string, at: number): number {
  return s.charCodeAt(at) - 48;
}

/**
 * `yyyy-MM-ddTHH:mm:ss.fffffff` exactly (27 characters, no zone, no whitespace) in a year after 1,
 * read with the same arithmetic as the general path (so the same number); undefined for anything
 * else, which the general path then reads or refuses.
 */
function canonical(s: string): number | undefined {
  if (s.charCodeAt(4) !== 0x2d || s.charCodeAt(7) !== 0x2d || s.charCodeAt(10) !== 0x54 || s.charCodeAt(13) !== 0x3a || s.charCodeAt(16) !== 0x3a || s.charCodeAt(19) !== 0x2e) return undefined;
  const y0 = d(s, 0), y1 = d(s, 1), y2 = d(s, 2), y3 = d(s, 3);
  const mo0 = d(s, 5), mo1 = d(s, 6), d0 = d(s, 8), d1 = d(s, 9);
  const h0 = d(s, 11), h1 = d(s, 12), mi0 = d(s, 14), mi1 = d(s, 15), s0 = d(s, 17), s1 = d(s, 18);
  const f0 = d(s, 20), f1 = d(s, 21), f2 = d(s, 22), f3 = d(s, 23), f4 = d(s, 24), f5 = d(s, 25), f6 = d(s, 26);
  // Each x | (9 - x) is negative exactly when x is not a digit (every index is within the 27 characters).
  const all =
    (y0 | (9 - y0)) | (y1 | (9 - y1)) | (y2 | (9 - y2)) | (y3 | (9 - y3)) | (mo0 | (9 - mo0)) | (mo1 | (9 - mo1)) | (d0 | (9 - d0)) | (d1 | (9 - d1)) |
    (h0 | (9 - h0)) | (h1 | (9 - h1)) | (mi0 | (9 - mi0)) | (mi1 | (9 - mi1)) | (s0 | (9 - s0)) | (s1 | (9 - s1)) |
    (f0 | (9 - f0)) | (f1 | (9 - f1)) | (f2 | (9 - f2)) | (f3 | (9 - f3)) | (f4 | (9 - f4)) | (f5 | (9 - f5)) | (f6 | (9 - f6));
  if (all < 0) return undefined;
  const year = ((y0 * 10 + y1) * 10 + y2) * 10 + y3;
  const month = mo0 * 10 + mo1;
  const day = d0 * 10 + d1;
  const hour = h0 * 10 + h1;
  const minute = mi0 * 10 + mi1;
  const second = s0 * 10 + s1;
  // Year 1 (the unset value, or a malformed one), 29 February and anything out of range: the general path.
  if (year < 2 || month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month - 1]! || hour > 23 || minute > 59 || second > 59) return undefined;
  const frac = ((((((f0 * 10 + f1) * 10 + f2) * 10 + f3) * 10 + f4) * 10 + f5) * 10 + f6) / POW10[7]!;
  return daysFromCivil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second + frac;
}

/** The general parse: whitespace, a Z, 0 to 7 fraction digits, year 1, every range check. */
function general(value: string): number | null | undefined {
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
