import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import {
  equalJitterBackoffMs,
  fullJitterBackoffMs,
  parseRetryAfter,
  retry,
  type GiveUpInfo,
  type RetryDecision,
  type RetryInfo,
} from '../../src/core/retry.js';

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

describe('fullJitterBackoffMs', () => {
  const opts = (random: number) => ({ baseMs: 1_000, maxMs: 30_000, random: () => random });

  it('grows exponentially up to the cap with random() = 1', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((a) => fullJitterBackoffMs(a, opts(1)))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });

  it('scales the window by random() (full jitter)', () => {
    expect(fullJitterBackoffMs(3, opts(0))).toBe(0);
    expect(fullJitterBackoffMs(3, opts(0.5))).toBe(4_000);
    expect(fullJitterBackoffMs(10, opts(0.25))).toBe(7_500);
  });

  it('stays within [0, cap] for any random value', () => {
    for (let attempt = 0; attempt < 8; attempt++) {
      for (const r of [0, 0.1, 0.5, 0.999]) {
        const ms = fullJitterBackoffMs(attempt, opts(r));
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThanOrEqual(Math.min(30_000, 1_000 * 2 ** attempt));
      }
    }
  });
});

describe('equalJitterBackoffMs', () => {
  const opts = (random: number) => ({ baseMs: 500, maxMs: 10_000, random: () => random });

  it('waits half the window plus a random share of the other half', () => {
    expect(equalJitterBackoffMs(0, opts(0))).toBe(250);
    expect(equalJitterBackoffMs(0, opts(1))).toBe(500);
    expect(equalJitterBackoffMs(2, opts(0.5))).toBe(1_500);
  });

  it('caps the window at maxMs', () => {
    expect(equalJitterBackoffMs(19, opts(1))).toBe(10_000);
    expect(equalJitterBackoffMs(19, opts(0))).toBe(5_000);
  });
});

class Numbered extends Error {
  constructor(readonly n: number) {
    super(`failure ${n}`);
  }
}

const retryAfter = (waitMs: number) => (): RetryDecision => ({ retry: true, waitMs, reason: 'test' });

describe('retry', () => {
  it('returns the first success without classifying anything', async () => {
    const classify = vi.fn(retryAfter(10));
    const attempt = vi.fn(async (n: number) => `ok ${n}`);
    await expect(retry(attempt, { classify, maxRetries: 3, clock: new FakeClock() })).resolves.toBe('ok 0');
    expect(attempt).toHaveBeenCalledTimes(1);
    expect(classify).not.toHaveBeenCalled();
  });

  it('waits what the classifier says between attempts and resolves with the first success', async () => {
    const clock = new FakeClock(0, { autoAdvance: true });
    const seen: Array<[number, number]> = [];
    const retries: RetryInfo[] = [];
    const result = await retry(
      async (n) => {
        seen.push([n, clock.now()]);
        if (n < 2) throw new Numbered(n);
        return 'done';
      },
      {
        classify: (err, n) => ({ retry: true, waitMs: 1_000 * (n + 1), reason: `${(err as Numbered).message} at ${n}` }),
        maxRetries: 5,
        clock,
        onRetry: (info) => retries.push(info),
      },
    );
    expect(result).toBe('done');
    expect(seen).toEqual([
      [0, 0],
      [1, 1_000],
      [2, 3_000],
    ]);
    expect(retries.map(({ attempt, waitMs, reason }) => ({ attempt, waitMs, reason }))).toEqual([
      { attempt: 0, waitMs: 1_000, reason: 'failure 0 at 0' },
      { attempt: 1, waitMs: 2_000, reason: 'failure 1 at 1' },
    ]);
  });

  it('throws the error itself at once when the classifier says no', async () => {
    const attempt = vi.fn(async (n: number): Promise<never> => {
      throw new Numbered(n);
    });
    const giveUps: GiveUpInfo[] = [];
    const failure = await retry(attempt, {
      classify: () => ({ retry: false }),
      maxRetries: 3,
      clock: new FakeClock(),
      onGiveUp: (info) => {
        giveUps.push(info);
        return info.error;
      },
    }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Numbered);
    expect((failure as Numbered).n).toBe(0);
    expect(attempt).toHaveBeenCalledTimes(1);
    expect(giveUps.map((g) => g.cause)).toEqual(['not-retryable']);
  });

  it('makes maxRetries + 1 attempts, then throws the last error', async () => {
    const clock = new FakeClock(0, { autoAdvance: true });
    const attempt = vi.fn(async (n: number): Promise<never> => {
      throw new Numbered(n);
    });
    const failure = await retry(attempt, { classify: retryAfter(100), maxRetries: 2, clock }).catch((err: unknown) => err);
    expect((failure as Numbered).n).toBe(2);
    expect(attempt.mock.calls.map(([n]) => n)).toEqual([0, 1, 2]);
    expect(clock.now()).toBe(200);
  });

  it('throws what onGiveUp returns, told why it gave up', async () => {
    const giveUps: GiveUpInfo[] = [];
    const failure = await retry(
      async (n): Promise<never> => {
        throw new Numbered(n);
      },
      {
        classify: retryAfter(0),
        maxRetries: 1,
        clock: new FakeClock(),
        onGiveUp: (info) => {
          giveUps.push(info);
          return new Error(`wrapped after ${info.attempt + 1} attempts`);
        },
      },
    ).catch((err: unknown) => err);
    expect((failure as Error).message).toBe('wrapped after 2 attempts');
    expect(giveUps).toEqual([{ cause: 'retries-exhausted', attempt: 1, error: new Numbered(1), waitMs: 0, reason: 'test' }]);
  });

  it('does not retry when the wait would end at the deadline, and does when it ends just before', async () => {
    const failing = async (n: number): Promise<never> => {
      throw new Numbered(n);
    };
    const atDeadline = vi.fn(failing);
    const giveUps: GiveUpInfo[] = [];
    const clock = new FakeClock(1_000, { autoAdvance: true });
    const failure = await retry(atDeadline, {
      classify: retryAfter(500),
      maxRetries: 5,
      clock,
      deadline: 1_500,
      onGiveUp: (info) => {
        giveUps.push(info);
        return info.error;
      },
    }).catch((err: unknown) => err);
    expect((failure as Numbered).n).toBe(0);
    expect(atDeadline).toHaveBeenCalledTimes(1);
    expect(clock.now()).toBe(1_000);
    expect(giveUps.map((g) => [g.cause, g.waitMs])).toEqual([['deadline', 500]]);

    const justBefore = vi.fn(failing);
    await retry(justBefore, { classify: retryAfter(499), maxRetries: 5, clock: new FakeClock(1_000, { autoAdvance: true }), deadline: 1_500 }).catch(() => undefined);
    expect(justBefore).toHaveBeenCalledTimes(2);
  });

  it('rejects with the signal reason when aborted while waiting, and makes no further attempt', async () => {
    const clock = new FakeClock(0);
    const controller = new AbortController();
    const attempt = vi.fn(async (n: number): Promise<never> => {
      throw new Numbered(n);
    });
    const running = retry(attempt, { classify: retryAfter(60_000), maxRetries: 3, clock, signal: controller.signal }).catch((err: unknown) => err);
    await vi.waitFor(() => expect(clock.pending).toBe(1));
    const reason = new Error('cancelled');
    controller.abort(reason);
    expect(await running).toBe(reason);
    clock.advance(60_000);
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('makes no attempt when already aborted, and does not classify a failure caused by the abort', async () => {
    const reason = new Error('cancelled');
    const attempt = vi.fn(async () => 'never');
    await expect(retry(attempt, { classify: retryAfter(0), maxRetries: 3, clock: new FakeClock(), signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(attempt).not.toHaveBeenCalled();

    const controller = new AbortController();
    const classify = vi.fn(retryAfter(0));
    const failing = retry(
      async (): Promise<never> => {
        controller.abort(reason);
        throw new Error('socket closed');
      },
      { classify, maxRetries: 3, clock: new FakeClock(), signal: controller.signal },
    );
    await expect(failing).rejects.toBe(reason);
    expect(classify).not.toHaveBeenCalled();
  });
});
