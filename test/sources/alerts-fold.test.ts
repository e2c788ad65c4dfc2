// The /alerts fold's aggregate (the AlertsAggregate contract: counts by severity with red, amber and
// green always and unknown only when non-zero; oldest times and age buckets only where there is one;
// open alerts by integration, severity and type, only non-zero), for seven alerts built by hand,
// folded whole and as two pages merged. Every expected value is counted in the comments.
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../src/core/log.js';
import { AlertsSink, foldAlerts, mergeAlerts, type AlertsAggregate } from '../../src/sources/alerts/fold.js';

const NOW = Date.UTC(2026, 10, 22, 12) / 1000;
const HOUR = 3600;
const DAY = 86_400;
const UNSET = '0001-01-01T00:00:00.0000000';
const apiTime = (s: number) => `${new Date(s * 1000).toISOString().slice(0, 23)}0000`;

const alert = (state: string, product: string, status: string, ownerName: string, created: string, acknowledged: boolean, inactiveUntil = UNSET) => ({
  state, product, status, ownerName, timestamp: created, resolved: false, acknowledged, inactiveUntil,
});
const ago = (s: number) => apiTime(NOW - s);

const pageA = [
  alert('Red', 'Okta, Identity', 'Incident', '', ago(2 * DAY), false), // a0
  alert('Red', 'Okta, MFA', 'Warning', 'ann@example.com', ago(5 * HOUR), true, apiTime(NOW + HOUR)), // a1: snoozed
  alert(' Green ', 'Jamf', ' info ', '', UNSET, true), // a2: labels trimmed; no creation time
  alert('Amber', 'Jamf, MDM', 'Incident', '', ago(DAY), true), // a3: exactly 1 d
];
const pageB = [
  alert('Red', 'Okta', 'Incident', '', ago(DAY), false), // b0: exactly 1 d, later than a0
  alert('AMBER', 'Jamf, MDM', 'Warning', 'bob@example.com', ago(8 * DAY), false, apiTime(NOW + 2 * DAY)), // b1: snoozed, earlier than a3
  alert('Purple', ' , x', 'Alarm', '', ago(2 * HOUR), false), // b2: unknown severity, integration and type
  { state: 'Red', status: 'Incident' }, // b3: malformed
];

const WANT: AlertsAggregate = {
  open: { red: 3, amber: 2, green: 1, unknown: 1 },
  unacknowledged: { red: 2, amber: 1, green: 0, unknown: 1 }, // a0, b0; b1; b2
  unassigned: { red: 2, amber: 1, green: 1, unknown: 1 }, // a0, b0; a3; a2; b2
  snoozed: { red: 1, amber: 1, green: 0 }, // a1; b1
  oldest: { red: NOW - 2 * DAY, amber: NOW - 8 * DAY, unknown: NOW - 2 * HOUR }, // green's only alert has no time
  // Strictly more than 1h, 1d, 7d, 30d, 90d: red a0 (2 d), a1 (5 h), b0 (1 d); amber a3 (1 d), b1 (8 d); unknown b2 (2 h).
  olderThan: { red: [3, 1, 0, 0, 0], amber: [2, 1, 1, 0, 0], unknown: [1, 0, 0, 0, 0] },
  // Red 1 d: a0 (a1 snoozed, b0 not more than 1 d); amber 7 d: b1 is snoozed.
  overSla: { red: 1, amber: 0, green: 0 },
  oldestUnacknowledged: { red: NOW - 2 * DAY, amber: NOW - 8 * DAY, unknown: NOW - 2 * HOUR },
  byIntegration: new Map([
    ['Okta', new Map([['red', new Map([['incident', 2], ['warning', 1]])]])],
    ['Jamf', new Map([['green', new Map([['info', 1]])], ['amber', new Map([['incident', 1], ['warning', 1]])]])],
    ['unknown', new Map([['unknown', new Map([['unknown', 1]])]])],
  ]),
  invalid: 1,
};

function pages(): AlertsAggregate {
  const a = new AlertsSink(NOW, undefined, 0);
  for (const r of pageA) a.record(r);
  const b = new AlertsSink(NOW, undefined, pageA.length);
  for (const r of pageB) b.record(r);
  return mergeAlerts(a.finish(), b.finish());
}

describe('the /alerts aggregate, by hand', () => {
  it('folds the whole list into exactly the counts worked out by hand', () => {
    expect(foldAlerts([...pageA, ...pageB], NOW)).toEqual(WANT);
  });

  it('merges two pages into the same aggregate', () => {
    expect(pages()).toEqual(WANT);
  });

  it('merges in either order', () => {
    const a = foldAlerts(pageA, NOW);
    const b = foldAlerts(pageB, NOW);
    expect(mergeAlerts(b, a)).toEqual(WANT);
  });

  it('gives one page its own counts, without entries for what it lacks', () => {
    expect(foldAlerts(pageA, NOW)).toEqual({
      open: { red: 2, amber: 1, green: 1 },
      unacknowledged: { red: 1, amber: 0, green: 0 },
      unassigned: { red: 1, amber: 1, green: 1 },
      snoozed: { red: 1, amber: 0, green: 0 },
      oldest: { red: NOW - 2 * DAY, amber: NOW - DAY },
      olderThan: { red: [2, 1, 0, 0, 0], amber: [1, 0, 0, 0, 0] },
      overSla: { red: 1, amber: 0, green: 0 },
      oldestUnacknowledged: { red: NOW - 2 * DAY },
      byIntegration: new Map([
        ['Okta', new Map([['red', new Map([['incident', 1], ['warning', 1]])]])],
        ['Jamf', new Map([['green', new Map([['info', 1]])], ['amber', new Map([['incident', 1]])]])],
      ]),
      invalid: 0,
    });
  });

  it('numbers a malformed record by its place in the whole list', () => {
    const logger = memoryLogger();
    const b = new AlertsSink(NOW, logger, 4);
    for (const r of pageB) b.record(r);
    expect(logger.records().map((r) => [r.source, r.index])).toEqual([['alerts', 7]]);
  });

  it('skips an alert whose timestamp or snooze is not an API timestamp, quoting at most 40 characters of it', () => {
    const logger = memoryLogger();
    const long = `2026-11-20T10:00:00.0000000${'9'.repeat(60)}`;
    const agg = foldAlerts([alert('Red', 'Okta', 'Incident', '', long, false), alert('Red', 'Okta', 'Incident', '', ago(HOUR), false, `next tuesday${' or so'.repeat(10)}`), alert('Red', 'Okta', 'Incident', '', ago(HOUR), false)], NOW, logger);
    expect(agg.invalid).toBe(2);
    expect(agg.open.red).toBe(1);
    expect(logger.records().map((r) => [r.index, r.reason])).toEqual([
      [0, `timestamp: not an API timestamp (${JSON.stringify(long.slice(0, 40))})`],
      [1, 'inactiveUntil: not an API timestamp ("next tuesday or so or so or so or so or ")'],
    ]);
  });
});
