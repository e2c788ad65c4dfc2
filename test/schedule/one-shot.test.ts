/**
 * How long a one-shot run (`once`, Lambda) may take: one computation for the default deadline and
 * for the /alerts run that extends it page by page. Expected figures are worked out by hand from
 * docs/budget.md: a window is 60 s plus a 1 s margin, one 429 pause of up to 60 s, 30 s to read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { oneShotLeftSeconds, oneShotSeconds, portalOneShotLeastSeconds } from '../../src/schedule/one-shot.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runAlerts } from '../../src/sources/alerts/run.js';
import { runContexts } from '../support/run-context.js';

const WINDOW = 61;
const PAUSE = 60;
const READING = 30;

describe('the one-shot deadline', () => {
  it('is the docs\' 151 s for the defaults and three tags: 10 requests with retries at 5 per window span two windows', () => {
    // 4 Vitals (whole portal + 3 tags), 2 device totals, 1 /alerts page, 3 retries = 10 at 5 per window.
    expect(oneShotSeconds({ requestsPerMinute: 5, pageSize: 500, vitalsTags: ['a', 'b', 'c'] }, 3, 120)).toBe(WINDOW + PAUSE + READING);
    expect(oneShotSeconds({ requestsPerMinute: 10, pageSize: 500, vitalsTags: ['a', 'b', 'c'] }, 3, 120)).toBe(PAUSE + READING);
  });

  it.each([
    // requests, share, retries, longest Retry-After, window in use → seconds
    [1, 10, 0, 120, false, PAUSE + READING],
    [7, 10, 3, 120, false, PAUSE + READING],
    [8, 10, 3, 120, false, WINDOW + PAUSE + READING],
    [8, 10, 3, 120, true, 2 * WINDOW + PAUSE + READING],
    [1, 1, 3, 120, false, 3 * WINDOW + PAUSE + READING],
    [1, 10, 3, 20, false, 20 + READING],
    // No retries: another source's 429 still pauses every request of the portal.
    [1, 10, 0, 20, true, WINDOW + 20 + READING],
  ])('for %i request(s) at %i per window with %i retries and Retry-After up to %i s (window in use: %s) is %i s', (requests, share, maxRetries, maxRetryAfterSeconds, windowInUse, seconds) => {
    expect(oneShotLeftSeconds({ requests, share, maxRetries, maxRetryAfterSeconds, windowInUse })).toBe(seconds);
  });
});

describe('the least a one-shot run takes', () => {
  it('is the windows its requests span when nothing fails: 100 directory pages of 200 beside 4 live requests at 10 span eleven windows, 10 × 61 s', () => {
    const entry = { requestsPerMinute: 10, pageSize: 500, vitalsTags: [], pageCap: 200, slow: [{ job: 'directory', intervalSeconds: 86_400, requests: { paged: true as const, total: 20_000 } }] };
    expect(portalOneShotLeastSeconds([entry])).toBe(10 * WINDOW);
    // The same run without the directory: 4 requests, one window, no wait.
    expect(portalOneShotLeastSeconds([{ ...entry, slow: [] }])).toBe(0);
  });
});

describe('an /alerts run of a one-shot', () => {
  const setup = runContexts();
  let sim: Simulator;
  const clock = new FakeClock();
  beforeAll(async () => {
    sim = await startSimulator({ alerts: 40, rateLimit: false, moving: false, clock });
  });
  afterAll(async () => {
    await sim.close();
  });

  it.each([
    [120_000, WINDOW + PAUSE + READING],
    [20_000, WINDOW + 20 + READING],
  ])('extends the deadline after each page by the same computation, the window in use (longest Retry-After %i ms: +%i s)', async (maxRetryAfterMs, seconds) => {
    const { ctx } = setup(sim, clock, { pageSize: 10, maxRetryAfterMs, deadline: clock.monotonic() + 1_000, cap: clock.monotonic() + 86_400_000 });
    await runAlerts(ctx, () => {});
    // Several pages of 10, none waiting (the fake clock stands still): the pages left and the
    // retries fit one window, so each extension is the same, from the same instant.
    expect(ctx.requests.get('/alerts\u0000200')).toBeGreaterThan(1);
    expect(ctx.requests.get('/alerts\u0000200')! + 3).toBeLessThanOrEqual(10);
    expect(ctx.deadline.at).toBe(clock.monotonic() + seconds * 1000);
  });
});
