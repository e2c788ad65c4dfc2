/**
 * The claim protocol's decision, on plain records worked by hand (src/state/claims.ts): a request
 * counts from its claim until a window and the margin (61 s) after it could last have reached the
 * portal, in flight until its claim and its flight; a pass for its interval less the early margin;
 * what is pruned and when a chain is idle.
 */
import { describe, expect, it } from 'vitest';
import { decide, idle, latestArrival, prunable, type Rec } from '../../src/state/claims.js';

const SPAN = 61_000;
const T = 10_000_000;

/** A request record: claimed at `claimed`, arrived at `arrived` (undefined: in flight), its flight 45 s. */
const req = (n: number, claimed: number, arrived: number | undefined, more: Partial<Rec> = {}): Rec => ({ n, writer: 'other', released: false, claimed, arrived, flightMs: 45_000, keepMs: SPAN, ...more });

describe('latestArrival', () => {
  it('is the recorded arrival, else the claim and its flight', () => {
    expect(latestArrival(req(1, T, T + 4_000))).toBe(T + 4_000);
    expect(latestArrival(req(1, T, undefined))).toBe(T + 45_000);
  });
});

describe('decide', () => {
  it('grants while fewer than the share count, and waits for the one the share places back to stop counting', () => {
    const records = [req(1, T, T + 1_000), req(2, T, T + 2_000), req(3, T, T + 30_000)];
    expect(decide(records, 4, SPAN, T + 40_000, 'me').waitMs).toBe(0);
    // Share 3: the first stops counting at T + 1 s + 61 s.
    expect(decide(records, 3, SPAN, T + 40_000, 'me').waitMs).toBe(T + 62_000 - (T + 40_000));
    // Share 1: the third, at T + 30 s + 61 s.
    expect(decide(records, 1, SPAN, T + 40_000, 'me').waitMs).toBe(T + 91_000 - (T + 40_000));
  });

  it('no longer counts a record at the end of its span, nor one given back', () => {
    const records = [req(1, T, T + 1_000), req(2, T, T + 2_000, { released: true })];
    expect(decide(records, 1, SPAN, T + 61_999, 'me').waitMs).toBe(1);
    expect(decide(records, 1, SPAN, T + 62_000, 'me').waitMs).toBe(0);
  });

  it('counts a request in flight until the end of its flight and a window after, looking again within a second meanwhile, and gives it to the scheduler once its flight has passed', () => {
    const records = [req(1, T, undefined)];
    // It may be given back, or arrive, at any moment: look again in a second; the scheduler does not hold it in its window.
    expect(decide(records, 1, SPAN, T + 10_000, 'me')).toEqual({ waitMs: 1_000, others: [] });
    expect(decide(records, 2, SPAN, T + 10_000, 'me')).toEqual({ waitMs: 0, others: [] });
    // 50 s on, its flight ended 5 s ago: it stops counting at T + 45 s + 61 s.
    expect(decide(records, 1, SPAN, T + 50_000, 'me')).toEqual({ waitMs: T + 106_000 - (T + 50_000), others: [5_000] });
    expect(decide(records, 1, SPAN, T + 106_000, 'me')).toEqual({ waitMs: 0, others: [] });
  });

  it('gives the scheduler the other writers\' records only, aged so that its 61 s window counts them as long as the span does', () => {
    const records = [req(1, T, T + 1_000), req(2, T, T + 3_000, { writer: 'me' })];
    expect(decide(records, 5, SPAN, T + 11_000, 'me').others).toEqual([10_000]);
    // A span 1 s longer (the table's): read a second late.
    expect(decide(records, 5, SPAN + 1_000, T + 11_000, 'me').others).toEqual([9_000]);
  });

  it('decides a pass by its interval: due once the last one counts no more', () => {
    // An hourly pass is due 59 minutes after the last.
    const pass = (n: number, at: number, released = false): Rec => ({ n, writer: 'w', released, claimed: at, arrived: at, flightMs: 0, keepMs: 3_600_000 });
    expect(decide([pass(1, T)], 1, 3_540_000, T + 3_539_999, 'me').waitMs).toBe(1);
    expect(decide([pass(1, T)], 1, 3_540_000, T + 3_540_000, 'me').waitMs).toBe(0);
    expect(decide([pass(1, T), pass(2, T + 1_000, true)], 1, 3_540_000, T + 3_540_000, 'me').waitMs).toBe(0);
  });
});

describe('prunable and idle', () => {
  it('prunes a record a window after it stopped counting, released or not, but never the newest', () => {
    // Arrived at T + 1 s: stops counting at T + 62 s, pruned after T + 123 s.
    expect(prunable(req(1, T, T + 1_000), 9, T + 123_000)).toBe(false);
    expect(prunable(req(1, T, T + 1_000), 9, T + 123_001)).toBe(true);
    expect(prunable(req(1, T, T + 1_000, { released: true }), 9, T + 123_000)).toBe(false);
    expect(prunable(req(9, T, T + 1_000), 9, T + 10_000_000)).toBe(false);
    // In flight: from the end of its flight.
    expect(prunable(req(1, T, undefined), 9, T + 45_000 + 2 * SPAN)).toBe(false);
    expect(prunable(req(1, T, undefined), 9, T + 45_000 + 2 * SPAN + 1)).toBe(true);
  });

  it('calls a chain idle once all its records stopped counting an hour ago, each by its own span', () => {
    const hourlyPass: Rec = { n: 1, writer: 'w', released: false, claimed: T, arrived: T, flightMs: 0, keepMs: 3_600_000 };
    const records = [req(1, T, T + 1_000), hourlyPass];
    expect(idle(records, T + 7_200_000)).toBe(false);
    expect(idle(records, T + 7_200_001)).toBe(true);
    expect(idle([req(1, T, T + 1_000)], T + 1_000 + SPAN + 3_600_001)).toBe(true);
    expect(idle([], T)).toBe(true);
  });
});
