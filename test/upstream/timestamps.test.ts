import { describe, expect, it } from 'vitest';
import { parseApiTimestamp } from '../../src/upstream/timestamps.js';
import { casesOr } from '../support/mutation.js';

/** Unix seconds of a proleptic Gregorian UTC date, independently of Date.UTC's 1900 offset for years 0-99. */
function utc(year: number, month: number, day: number, h = 0, m = 0, s = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(h, m, s, 0);
  return d.getTime() / 1000;
}

describe('parseApiTimestamp', () => {
  it.each([
    ['2026-11-22T12:00:00.0000000', utc(2026, 11, 22, 12)],
    ['2026-11-22T12:00:00.5', utc(2026, 11, 22, 12) + 0.5],
    ['2026-11-22T12:00:00Z', utc(2026, 11, 22, 12)],
    [' 2024-02-29T23:59:59.1234567 ', utc(2024, 2, 29, 23, 59, 59) + 0.1234567],
    // Years 2-99 are those years, not 1902-1999 (Date.UTC's reading).
    ['0002-01-01T00:00:00.0000000', utc(2, 1, 1)],
    ['0099-12-31T23:59:59.0000000', utc(99, 12, 31, 23, 59, 59)],
    ['0100-03-01T00:00:00', utc(100, 3, 1)],
  ])('reads %j as its Unix time', (text, seconds) => {
    expect(parseApiTimestamp(text)).toBeCloseTo(seconds, 6);
  });

  it.each(['0001-01-01T00:00:00.0000000', '0001-01-01T00:00:00', '0001-01-01T00:00:00Z', '0001-06-15T10:00:00.000'])('reads the well-formed year-1 value %j as unset (null)', (text) => {
    expect(parseApiTimestamp(text)).toBeNull();
  });

  it.each([
    '0001-13-01T00:00:00.0000000', // month 13, year 1: malformed, not "unset"
    '0001-01-32T00:00:00.0000000',
    '0001-01-01T25:00:00.0000000',
    '0001-02-29T00:00:00', // year 1 is not a leap year
    '0000-01-01T00:00:00.0000000', // there is no year 0
    '2025-02-29T00:00:00',
    '2026-11-22 12:00:00',
    '2026-11-22T12:00',
    '2026-11-22T12:00:00.12345678',
    '2026-11-22T12:00:00.',
    'not a timestamp',
    '',
    ' ',
    ' \t\r\n\u3000 ',
    'Z',
    ' Z ',
  ])('reads the malformed %j as invalid (undefined)', (text) => {
    expect(parseApiTimestamp(text)).toBeUndefined();
  });

  it('agrees with Date.parse on every day of a leap and a common year from 1970 on', () => {
    for (const year of [1970, 2000, 2023, 2024, 2100]) {
      for (let t = Date.UTC(year, 0, 1); t < Date.UTC(year + 1, 0, 1); t += 86_400_000 + 3_661_000) {
        const iso = new Date(t).toISOString().replace('Z', '0000');
        expect(parseApiTimestamp(iso)).toBe(t / 1000);
      }
    }
  });
});

describe('parseApiTimestamp, field by field', () => {
  const VALID = '2026-11-22T12:34:56.1234567';
  const SECONDS = utc(2026, 11, 22, 12, 34, 56) + 0.1234567;

  it('trims exactly the whitespace JavaScript trims, on either side', () => {
    // The oracle is String.prototype.trim: every BMP code unit it treats as whitespace, and no other.
    for (let c = 0; c <= 0xffff; c += casesOr(1, 7)) {
      const ch = String.fromCharCode(c);
      const space = ch.trim() === '';
      // Z after the value is the zone suffix.
      const want = space ? SECONDS : undefined;
      expect(parseApiTimestamp(`${ch}${VALID}`), `U+${c.toString(16)} before`).toBe(want);
      expect(parseApiTimestamp(`${VALID}${ch}`), `U+${c.toString(16)} after`).toBe(c === 0x5a ? SECONDS : want);
    }
    const spaces = Array.from({ length: 0x10000 }, (_, c) => String.fromCharCode(c)).filter((ch) => ch.trim() === '');
    expect(spaces.length).toBeGreaterThan(20);
    for (const ch of spaces) {
      const hex = `U+${ch.charCodeAt(0).toString(16)}`;
      expect(parseApiTimestamp(`${ch}${VALID}`), `${hex} before`).toBeCloseTo(SECONDS, 6);
      expect(parseApiTimestamp(`${VALID}${ch}${ch}`), `${hex} after`).toBeCloseTo(SECONDS, 6);
      expect(parseApiTimestamp(`${ch}${VALID}Z${ch}`), `${hex} around, with Z`).toBeCloseTo(SECONDS, 6);
    }
  });

  it('trims no code unit next to a whitespace one that JavaScript does not trim', () => {
    // The neighbours of every whitespace code unit (the edges of each range), checked whatever the sampling above.
    const spaces = Array.from({ length: 0x10000 }, (_, c) => c).filter((c) => String.fromCharCode(c).trim() === '');
    const neighbours = [...new Set(spaces.flatMap((c) => [c - 1, c + 1]))].filter((c) => c >= 0 && c <= 0xffff && c !== 0x5a);
    expect(neighbours.length).toBeGreaterThan(20);
    for (const c of neighbours) {
      const ch = String.fromCharCode(c);
      const want = ch.trim() === '' ? SECONDS : undefined;
      const hex = `U+${c.toString(16)}`;
      expect(parseApiTimestamp(`${ch}${VALID}`), `${hex} before`).toBe(want);
      expect(parseApiTimestamp(`${VALID}${ch}`), `${hex} after`).toBe(want);
    }
  });

  it.each([4, 7, 10, 13, 16, 19])('rejects another character where the separator at %i belongs', (at) => {
    const others = ['0', '/', ' ', 'x', '.', ':', '-', 'T'].filter((c) => c !== VALID[at]);
    for (const other of others) {
      const text = VALID.slice(0, at) + other + VALID.slice(at + 1);
      expect(parseApiTimestamp(text), text).toBeUndefined();
    }
  });

  it('rejects a character that is not a digit in any digit position, just below 0 or above 9', () => {
    const positions = [...VALID].flatMap((ch, i) => (/\d/.test(ch) ? [i] : []));
    expect(positions).toHaveLength(21);
    for (const i of positions) {
      // (A space is whitespace, trimmed at either end: the trimming test covers it.)
      for (const bad of ['/', ':', 'a', '+', '-']) {
        const text = VALID.slice(0, i) + bad + VALID.slice(i + 1);
        expect(parseApiTimestamp(text), text).toBeUndefined();
      }
    }
  });

  it.each([
    ['2026-11-22T12:34:5', 'a second of one digit'],
    ['2026-11-22T12:34', 'no seconds'],
    ['2026-11-22', 'a date alone'],
    ['2026-11-22T12:34:56.', 'a point without digits'],
    ['2026-11-22T12:34:56.12345678', 'eight fraction digits'],
    ['2026-11-22T12:34:56,1234567', 'a comma for the point'],
    ['2026-11-22T12:34:56Z.1', 'the zone before the fraction'],
    ['2026-11-22T12:34:56ZZ', 'two zones'],
    ['2026-11-22T12:34:56+00:00', 'an offset'],
    ['0000-01-01T00:00:00', 'year 0'],
    ['2026-00-22T12:34:56', 'month 0'],
    ['2026-13-22T12:34:56', 'month 13'],
    ['2026-11-00T12:34:56', 'day 0'],
    ['2026-11-31T12:34:56', 'November 31'],
    ['2026-12-32T12:34:56', 'December 32'],
    ['2026-11-22T24:00:00', 'hour 24'],
    ['2026-11-22T12:60:56', 'minute 60'],
    ['2026-11-22T12:34:60', 'second 60'],
    ['1900-02-29T00:00:00', 'February 29 of a century that is not a leap year'],
    ['2023-02-29T00:00:00', 'February 29 of a common year'],
    ['2024-04-31T00:00:00', 'April 31 in a leap year'],
  ])('rejects %j (%s)', (text) => {
    expect(parseApiTimestamp(text)).toBeUndefined();
  });

  it.each([
    ['2000-02-29T00:00:00', utc(2000, 2, 29)],
    ['2400-02-29T23:59:59', utc(2400, 2, 29, 23, 59, 59)],
    ['2024-02-29T00:00:00', utc(2024, 2, 29)],
    ['2026-12-31T23:59:59', utc(2026, 12, 31, 23, 59, 59)],
    ['2026-01-31T00:00:00', utc(2026, 1, 31)],
    ['9999-12-31T23:59:59.9999999', utc(9999, 12, 31, 23, 59, 59) + 0.9999999],
    ['0004-02-29T00:00:00', utc(4, 2, 29)],
    ['2026-11-22T12:34:56.1', utc(2026, 11, 22, 12, 34, 56) + 0.1],
    ['2026-11-22T12:34:56.12', utc(2026, 11, 22, 12, 34, 56) + 0.12],
    ['2026-11-22T12:34:56.123', utc(2026, 11, 22, 12, 34, 56) + 0.123],
    ['2026-11-22T12:34:56.000001Z', utc(2026, 11, 22, 12, 34, 56) + 0.000001],
  ])('reads the edge value %j', (text, seconds) => {
    expect(parseApiTimestamp(text)).toBeCloseTo(seconds, 6);
  });

  it('reads every fraction length from 0 to 7 digits as that many decimals', () => {
    for (let n = 0; n <= 7; n++) {
      const digits = '9876543'.slice(0, n);
      const text = `2026-11-22T12:34:56${n ? `.${digits}` : ''}`;
      expect(parseApiTimestamp(text), text).toBeCloseTo(utc(2026, 11, 22, 12, 34, 56) + (n ? Number(`0.${digits}`) : 0), 7);
    }
  });

  it('reads every part of the portal\'s own 27-character form, a year of days and hours with each fraction digit, to the exact number', () => {
    // A walk through a leap year and a common one, every day, a changing time and fraction: the
    // expected value from Date (seconds) plus the fraction digits read as a decimal.
    const pad = (n: number, w: number) => String(n).padStart(w, '0');
    let checked = 0;
    for (const year of [2023, 2024]) {
      for (let day = 0; day < 366; day++) {
        const date = new Date(Date.UTC(year, 0, 1 + day, day % 24, (day * 7) % 60, (day * 13) % 60));
        if (date.getUTCFullYear() !== year) continue;
        const fraction = pad((day * 7_654_321) % 10_000_000, 7);
        const text = `${year}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}T${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}.${fraction}`;
        expect(parseApiTimestamp(text), text).toBe(date.getTime() / 1000 + Number(fraction) / 1e7);
        checked++;
      }
    }
    expect(checked).toBe(365 + 366);
  });

  it.each([
    ['2023-02-29T00:00:00.0000000'],
    ['2026-13-01T00:00:00.0000000'],
    ['2026-04-31T00:00:00.0000000'],
    ['2026-11-22T24:00:00.0000000'],
    ['2026-11-22T12:60:00.0000000'],
    ['2026-11-22T12:00:60.0000000'],
    ['2026-11-22T12:00:00.000000x'],
    ['2026-11-22T12:00:00,0000000'],
    ['2026/11-22T12:00:00.0000000'],
    ['0000-01-01T00:00:00.0000000'],
  ])('refuses %s, 27 characters but not a date and time', (text) => {
    expect(parseApiTimestamp(text)).toBeUndefined();
  });

  it('reads 29 February of a leap year and the unset value in the 27-character form', () => {
    expect(parseApiTimestamp('2024-02-29T06:00:00.5000000')).toBe(utc(2024, 2, 29, 6) + 0.5);
    expect(parseApiTimestamp('0001-01-01T00:00:00.0000000')).toBeNull();
    expect(parseApiTimestamp('0001-12-31T23:59:59.9999999')).toBeNull();
  });
});
