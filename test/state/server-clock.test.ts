/**
 * DynamoDB's clock read from the Date headers of its answers (src/state/server-clock.ts): the
 * header is whole seconds read between send and answer, so the clock reads the latest time every
 * answer proves, the bounds narrowing answer by answer; answers that contradict the bounds (the
 * server's clock stepped) start them again. Worked by hand, on a monotonic clock of this process
 * far from wall time.
 */
import { describe, expect, it } from 'vitest';
import { ServerClock } from '../../src/state/server-clock.js';

const S = Date.UTC(2026, 10, 22, 12, 0, 0);
const date = (t: number) => new Date(t).toUTCString();

describe('ServerClock', () => {
  it('knows nothing before an answer, and ignores one without a Date header or with an unreadable one', () => {
    const c = new ServerClock();
    expect(c.known).toBe(false);
    c.observe(undefined, 0, 10);
    c.observe('yesterday', 0, 10);
    expect(c.known).toBe(false);
  });

  it('reads the Date header as the earliest the server time can be at the answer, and runs on with the monotonic clock', () => {
    const c = new ServerClock();
    // Sent at 1000, answered at 1040 (monotonic ms), the header 12:00:00.
    c.observe(date(S), 1_000, 1_040);
    expect(c.known).toBe(true);
    expect(c.now(1_040)).toBe(S);
    expect(c.now(61_040)).toBe(S + 60_000);
  });

  it('narrows to the latest of the answers\' lower bounds: a header that just turned its second pins the time', () => {
    const c = new ServerClock();
    c.observe(date(S), 1_000, 1_040);
    // 700 ms later the header already reads 12:00:01: the server's second turned within 700 ms of the first answer.
    c.observe(date(S + 1_000), 1_700, 1_740);
    expect(c.now(1_740)).toBe(S + 1_000);
    expect(c.now(1_040)).toBe(S + 300);
    // A later answer within the bounds changes nothing it does not prove.
    c.observe(date(S + 1_000), 2_000, 2_010);
    expect(c.now(1_740)).toBe(S + 1_000);
  });

  it('starts again from an answer that contradicts what the others proved (the server clock stepped)', () => {
    const c = new ServerClock();
    c.observe(date(S), 1_000, 1_040);
    // The server's clock went back a minute.
    c.observe(date(S - 60_000), 2_000, 2_040);
    expect(c.now(2_040)).toBe(S - 60_000);
  });

  it('keeps the bounds when an answer proves exactly the one moment they leave (the bounds meet), and starts again only past it', () => {
    const c = new ServerClock();
    // At 1040 the server's time was 12:00:00 or later.
    c.observe(date(S), 1_000, 1_040);
    // A second later, sent at 2040, the header still reads 12:00:00: the server's time at 2040 was before 12:00:01, so at 1040 exactly 12:00:00.
    c.observe(date(S), 2_040, 2_050);
    expect(c.now(2_050)).toBe(S + 1_010);
    // Sent a millisecond later still reading 12:00:00 contradicts it: the bounds start again from that answer alone.
    const d = new ServerClock();
    d.observe(date(S), 1_000, 1_040);
    d.observe(date(S), 2_041, 2_050);
    expect(d.now(2_050)).toBe(S);
  });
});
