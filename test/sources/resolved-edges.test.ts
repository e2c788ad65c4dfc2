// The resolved-alerts fold at its edges (docs/metrics.md, "Response times"): records whose fields are
// of another type, durations that start and end at the same second, acknowledgements not flagged or
// before their alert, a join without open acknowledgements; and the duration lists and window
// statistics at their own edges. Every expected figure is counted by hand in the comments.
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../src/core/log.js';
import { foldResolved, withOpenAlerts } from '../../src/sources/resolved/fold.js';
import { DurationList, statsByWindow } from '../../src/sources/resolved/windows.js';
import { ago, apiTime, DAY, HOUR, NOW, UNSET } from '../support/api-time.js';

const SLAS = { red: 12 * HOUR, amber: 3 * DAY, green: 14 * DAY };

/** A valid resolved Red alert created 10 h ago, resolved 2 h ago, not acknowledged; `fields` replace its own. */
const resolvedAlert = (fields: Record<string, unknown> = {}) => ({
  state: 'Red', product: 'Okta, Identity', status: 'Incident', ownerName: '', inactiveUntil: UNSET,
  timestamp: ago(10 * HOUR), acknowledged: false, acknowledgedTime: UNSET, resolved: true, resolvedTime: ago(2 * HOUR),
  ...fields,
});

describe('records the fold refuses', () => {
  it('counts and logs as invalid a record that is no object, or one of whose six fields is missing or of another type', () => {
    const logger = memoryLogger();
    const records: unknown[] = [
      null,
      [resolvedAlert()],
      'Red',
      resolvedAlert({ state: 3 }),
      resolvedAlert({ timestamp: null }),
      resolvedAlert({ resolved: 'true' }),
      resolvedAlert({ acknowledged: 1 }),
      resolvedAlert({ acknowledgedTime: false }),
      resolvedAlert({ resolvedTime: undefined }),
      resolvedAlert(),
    ];
    // In pages of 5: a page logs its first five malformed records one by one, so every one is logged here.
    const a = foldResolved(records, NOW, { logger, slas: SLAS, pageSize: 5 });
    // Nine refused, the last record is the one resolved alert: 2 h ago, after 8 h.
    expect(a.invalid).toBe(9);
    expect(a.resolution.red![0]).toEqual({ resolved: 1, count: 1, sum: 8 * HOUR, quantiles: [8 * HOUR, 8 * HOUR], overSla: 0 });
    const reasons = logger.records().map((r) => [r.index, String(r.reason).split(':')[0]]);
    expect(reasons).toEqual([[0, '(record)'], [1, '(record)'], [2, '(record)'], [3, 'state'], [4, 'timestamp'], [5, 'resolved'], [6, 'acknowledged'], [7, 'acknowledgedTime'], [8, 'resolvedTime']]);
  });
});

describe('durations at their edges', () => {
  it('counts a resolution at its creation as a duration of 0, and one before its creation as resolved with no duration', () => {
    const a = foldResolved([resolvedAlert({ timestamp: ago(HOUR), resolvedTime: ago(HOUR) }), resolvedAlert({ timestamp: ago(HOUR), resolvedTime: ago(2 * HOUR) })], NOW, { slas: SLAS });
    // Both resolved within the day; only the first has a duration (0 s).
    expect(a.resolution.red![0]).toEqual({ resolved: 2, count: 1, sum: 0, quantiles: [0, 0], overSla: 0 });
  });

  it('counts an acknowledgement at its creation (0 s), and none that is before its creation, not flagged, or unset', () => {
    const records = [
      // Acknowledged as it was created, 10 h ago: 0 s.
      resolvedAlert({ acknowledged: true, acknowledgedTime: ago(10 * HOUR) }),
      // Acknowledged an hour before it was created.
      resolvedAlert({ acknowledged: true, acknowledgedTime: ago(11 * HOUR) }),
      // A time, but not flagged acknowledged.
      resolvedAlert({ acknowledged: false, acknowledgedTime: ago(9 * HOUR) }),
    ];
    expect(foldResolved(records, NOW).resolvedAcknowledgements).toEqual({ red: { parts: [new Float64Array([0])], windows: [0] } });
  });

  it('counts no acknowledgement for an alert flagged acknowledged whose time is unset, whenever it was created', () => {
    // A pass at 10 days after 1970-01-01 over an alert created the day before it: the unset time is
    // no time, not 1970-01-01 (which would be within 30 days).
    const now = 10 * DAY;
    const a = foldResolved([resolvedAlert({ timestamp: apiTime(-DAY), resolvedTime: apiTime(5 * DAY), acknowledged: true, acknowledgedTime: UNSET })], now, { slas: SLAS });
    expect(a.resolution.red![1]).toEqual({ resolved: 1, count: 1, sum: 6 * DAY, quantiles: [6 * DAY, 6 * DAY], overSla: 1 });
    expect(a.resolvedAcknowledgements).toEqual({});
  });

  it('joins open alerts that have no acknowledgement: the resolved alerts\' own acknowledgements alone', () => {
    // Acknowledged 1 h after creation, 9 h ago: in every window.
    const resolved = foldResolved([resolvedAlert({ acknowledged: true, acknowledgedTime: ago(9 * HOUR) })], NOW);
    const joined = withOpenAlerts(resolved, {});
    const one = { count: 1, sum: HOUR, quantiles: [HOUR, HOUR], overSla: 0 };
    const none = { count: 0, sum: 0, quantiles: [], overSla: 0 };
    expect(joined.acknowledgement).toEqual({ red: [one, one, one], amber: [none, none, none], green: [none, none, none] });
  });
});

describe('DurationList at its edges', () => {
  /** A list of `n` durations 1, 2, …, n. */
  const listOf = (n: number) => {
    const list = new DurationList();
    for (let d = 1; d <= n; d++) list.push(d);
    return list;
  };

  it('keeps every duration when cut back to more than it holds', () => {
    const list = listOf(3);
    list.truncate(5);
    expect(list.length).toBe(3);
    expect(list.sorted().map((p) => [...p])).toEqual([[1, 2, 3]]);
  });

  it('holds no chunk once cut back to none, and no empty chunk once cut back to a chunk\'s end', () => {
    // The first two chunks hold 256 each: 300 durations fill the first and start the second.
    const atEnd = listOf(300);
    atEnd.truncate(256);
    expect(atEnd.sorted().map((p) => p.length)).toEqual([256]);
    const none = listOf(300);
    none.truncate(0);
    expect(none.sorted()).toEqual([]);
  });
});

describe('statsByWindow over more parts than one merge takes', () => {
  it('counts a duration equal to the SLA as within it', () => {
    // Five parts of one duration each, all in the 1d window: 10, 20, 30 (the SLA), 40, 50.
    const parts = [10, 20, 30, 40, 50].map((d) => new Float64Array([d]));
    const stats = statsByWindow(parts, [0, 0, 0, 0, 0], 30);
    // n = 5: the 3rd smallest (⌈2.5⌉) and the 5th (⌈4.5⌉); above 30: 40 and 50.
    expect(stats).toEqual([0, 1, 2].map(() => ({ count: 5, sum: 150, quantiles: [30, 50], overSla: 2 })));
  });
});
