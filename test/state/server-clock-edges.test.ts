/**
 * DynamoDB's clock (src/state/server-clock.ts) once it is known: an answer without a Date header,
 * or with one that is no date, changes nothing. Worked by hand.
 */
import { expect, it } from 'vitest';
import { ServerClock } from '../../src/state/server-clock.js';

const S = Date.UTC(2026, 10, 22, 12, 0, 0);

it('keeps what the answers so far proved when a later answer has no date, or one that is no date', () => {
  const c = new ServerClock();
  // Sent at 1,000 and answered at 1,200 (monotonic ms), dated S: DynamoDB's time was at least S at 1,200.
  c.observe(new Date(S).toUTCString(), 1_000, 1_200);
  expect(c.now(1_200)).toBe(S);
  c.observe(undefined, 2_000, 2_100);
  c.observe('not a date', 2_000, 2_100);
  expect(c.now(2_200)).toBe(S + 1_000);
  expect(c.known).toBe(true);
});
