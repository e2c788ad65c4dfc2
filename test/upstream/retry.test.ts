import { describe, expect, it } from 'vitest';
import { backoffMs, parseRetryAfter } from '../../src/upstream/retry.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const httpDate = (ms: number) => new Date(ms).toUTCString();

describe('parseRetryAfter', () => {
  it.each([
    ['whole seconds', '120', 120_000],
    ['zero', '0', 0],
    ['surrounding spaces', ' 5 ', 5_000],
    ['fractional seconds (lenient)', '1.5', 1_500],
    ['negative seconds clamp to zero', '-5', 0],
    ['an HTTP-date 90 s ahead', httpDate(NOW + 90_000), 90_000],
    ['an HTTP-date in the past clamps to zero', httpDate(NOW - 10_000), 0],
    ['an obsolete RFC 850 date', 'Sunday, 22-Nov-26 12:01:00 GMT', 60_000],
    ['the first of repeated headers', ['7', '9'], 7_000],
  ] as const)('parses %s', (_name, value, expected) => {
    expect(parseRetryAfter(value as string | string[], NOW)).toBe(expected);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['a word', 'soon'],
    ['digits with junk', '12abc'],
    ['a date without a time', '2026-11-22'],
    ['an impossible date', 'Sun, 99 Foo 2026 99:99:99 GMT'],
    ['an empty list', []],
  ] as const)('returns undefined for %s', (_name, value) => {
    expect(parseRetryAfter(value as string | string[] | undefined, NOW)).toBeUndefined();
  });
});

describe('backoffMs', () => {
  const opts = (random: number) => ({ baseMs: 1_000, maxMs: 30_000, random: () => random });

  it('grows exponentially up to the cap with random() = 1', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((a) => backoffMs(a, opts(1)))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });

  it('scales the window by random() (full jitter)', () => {
    expect(backoffMs(3, opts(0))).toBe(0);
    expect(backoffMs(3, opts(0.5))).toBe(4_000);
    expect(backoffMs(10, opts(0.25))).toBe(7_500);
  });

  it('stays within [0, cap] for any random value', () => {
    for (let attempt = 0; attempt < 8; attempt++) {
      for (const r of [0, 0.1, 0.5, 0.999]) {
        const ms = backoffMs(attempt, opts(r));
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(Math.min(30_000, 1_000 * 2 ** attempt));
      }
    }
  });
});
