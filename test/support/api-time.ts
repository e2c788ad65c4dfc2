/**
 * Times as the portal writes them (spec 2.2), for the tests of the alert folds: their collection
 * time, the unset timestamp and Unix seconds written as API timestamps.
 */

/** The folds' collection time in these tests: 2026-11-22 12:00 UTC, Unix seconds. */
export const NOW = Date.UTC(2026, 10, 22, 12) / 1000;
export const MINUTE = 60;
export const HOUR = 3600;
export const DAY = 86_400;

/** The unset timestamp: the minimum date. */
export const UNSET = '0001-01-01T00:00:00.0000000';

/** Unix seconds as an API timestamp, to the 10^-7 s as the spec writes it. */
export function apiTime(s: number): string {
  const whole = Math.floor(s);
  const frac = Math.round((s - whole) * 1e7);
  return `${new Date(whole * 1000).toISOString().slice(0, 19)}.${String(frac).padStart(7, '0')}`;
}

/** `s` seconds before NOW, as an API timestamp. */
export const ago = (s: number): string => apiTime(NOW - s);
