// What the open-alerts fold keeps for the response-time families: per severity and shortest response
// window (1d, 7d, 30d) the acknowledged open alert was acknowledged in, how long after its creation;
// nothing else of the fold changes (the hand-worked aggregates of alerts-fold.test.ts hold as they were).
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../src/core/log.js';
import { AlertsSink, foldAlerts, mergeAlerts } from '../../src/sources/alerts/fold.js';
import { ago, DAY, HOUR, NOW, UNSET } from '../support/api-time.js';

const open = (state: string, created: string, acknowledgedTime: unknown, acknowledged = true) => ({
  state, product: 'Okta, Identity', status: 'Incident', ownerName: '', inactiveUntil: UNSET, resolved: false, timestamp: created, acknowledged, acknowledgedTime,
});

describe('acknowledgements of open alerts', () => {
  const records = [
    open('Red', ago(3 * HOUR), ago(2 * HOUR)), // kept: 1h after creation
    open('Amber', ago(40 * DAY), ago(31 * DAY)), // acknowledged before every window: not kept
    open('Amber', ago(40 * DAY), ago(29 * DAY)), // kept: 11 d after creation, 29 d ago (30d only)
    open('Green', ago(10 * DAY), ago(6 * DAY)), // kept: 4 d after creation, 6 d ago (7d)
    open('Green', ago(HOUR), ago(2 * HOUR)), // acknowledged before creation: not kept
    open('Green', UNSET, ago(2 * HOUR)), // no creation time: not kept
    open('Red', ago(HOUR), UNSET), // acknowledged, time unset: not kept
    open('Red', ago(HOUR), 'soon'), // not a timestamp: not kept, and still a valid open alert
    open('Red', ago(HOUR), ago(HOUR / 2), false), // not acknowledged: not kept
    open('Purple', ago(2 * HOUR), ago(HOUR)), // unknown: kept
  ];

  it('keeps the duration of each acknowledgement in the shortest window it is in, by severity', () => {
    const a = foldAlerts(records, NOW);
    const none = new Float64Array([]);
    expect(a.acknowledgements).toEqual({
      // 2 h ago: in 1d; 29 d ago: in 30d only; 6 d ago: in 7d; 1 h ago: in 1d.
      red: [new Float64Array([HOUR]), none, none],
      amber: [none, none, new Float64Array([11 * DAY])],
      green: [none, new Float64Array([4 * DAY]), none],
      unknown: [new Float64Array([HOUR]), none, none],
    });
    // The open counts are untouched: ten open alerts, none invalid.
    expect(a.open).toEqual({ red: 4, amber: 2, green: 3, unknown: 1 });
    expect(a.invalid).toBe(0);
  });

  it('puts an acknowledgement made exactly a window ago in the next window, as the resolved alerts are (a window is the time after its start)', () => {
    const day = foldAlerts([open('Red', ago(2 * DAY), ago(DAY)), open('Red', ago(2 * DAY), ago(DAY - 1))], NOW);
    expect(day.acknowledgements?.red).toEqual([new Float64Array([DAY + 1]), new Float64Array([DAY]), new Float64Array([])]);
    const month = foldAlerts([open('Red', ago(31 * DAY), ago(30 * DAY)), open('Red', ago(31 * DAY), ago(30 * DAY - 1))], NOW);
    expect(month.acknowledgements?.red).toEqual([new Float64Array([]), new Float64Array([]), new Float64Array([DAY + 1])]);
  });

  it('has none when no alert is acknowledged with a time, so the aggregate keeps its old shape', () => {
    expect('acknowledgements' in foldAlerts([open('Red', ago(HOUR), UNSET), open('Red', ago(HOUR), UNSET, false)], NOW)).toBe(false);
  });

  it('merges the acknowledgements of pages, in page order', () => {
    const page = (from: number, to: number) => {
      const sink = new AlertsSink(NOW, memoryLogger(), from);
      for (const r of records.slice(from, to)) sink.record(r);
      return sink.finish();
    };
    const merged = mergeAlerts(mergeAlerts(page(0, 2), page(2, 5)), page(5, 10));
    expect(merged.acknowledgements).toEqual(foldAlerts(records, NOW).acknowledgements);
    const twoReds = mergeAlerts(foldAlerts([records[0]], NOW), foldAlerts([open('Red', ago(5 * HOUR), ago(4 * HOUR + 1800))], NOW));
    expect(twoReds.acknowledgements).toEqual({ red: [new Float64Array([HOUR, 1800]), new Float64Array([]), new Float64Array([])] });
  });
});
