import { describe, expect, it } from 'vitest';
import { parseApiTimestamp } from '../../src/upstream/timestamps.js';

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
