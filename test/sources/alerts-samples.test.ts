// Every alert family's exact series for a handful of alerts built by hand (spec 2.6: state is the
// severity, status the type, product `<integration>, <category>`, ownerName empty when unassigned,
// inactiveUntil the snooze expiry; the README's metrics table for the families). Each expected value
// is counted in the comments from the records, not from the fold.
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../src/core/log.js';
import { foldAlerts, type AlertsAggregate } from '../../src/sources/alerts/fold.js';
import { alerts } from '../../src/sources/alerts/index.js';

const NOW = Date.UTC(2026, 10, 22, 12) / 1000;
const HOUR = 3600;
const DAY = 86_400;
const UNSET = '0001-01-01T00:00:00.0000000';
const apiTime = (s: number) => `${new Date(s * 1000).toISOString().slice(0, 23)}0000`;

const alert = (state: string, product: string, status: string, ownerName: string, createdAgo: number, acknowledged: boolean, inactiveUntil = UNSET, resolved = false) => ({
  state, product, status, ownerName, timestamp: apiTime(NOW - createdAgo), resolved, acknowledged, inactiveUntil,
  item: 'host-1', issue: 'issue', details: 'details', itemEntityType: 'device',
});

const records = [
  alert('Red', 'Okta, Identity', 'Incident', '', 2 * HOUR, false), // r1
  alert('Red', 'Okta, MFA', 'Warning', 'ann@example.com', 3 * DAY, true, apiTime(NOW + DAY)), // r2: snoozed
  alert('Red', 'Okta, Audit', 'Info', 'cy@example.com', 30 * 60, true), // r3: 30 minutes, in no age bucket
  alert('amber', 'Jamf, MDM', 'warning', '', 10 * DAY, false), // a1
  alert('Green', 'Jamf', 'Info', 'bob@example.com', 40 * DAY, true, apiTime(NOW - DAY)), // g1: snooze over
  alert('Critical', 'CrowdStrike, EDR', 'Alarm', '', 100 * DAY, false), // u1: unknown severity and type
  alert('Red', 'Okta, Identity', 'Incident', '', 200 * DAY, false, UNSET, true), // resolved: not open
  { state: 'Red', status: 'Incident' }, // malformed: no product and more
];

type Row = readonly [string, Record<string, string>, number];

function samplesOf(agg: AlertsAggregate, cap = 1000): { rows: Row[]; folded: Map<string, number> } {
  const rows: Row[] = [];
  const folded = new Map<string, number>();
  alerts.samples(agg, (name, labels, value) => rows.push([name, labels, value]), cap, folded);
  return { rows, folded };
}

const family = (rows: readonly Row[], name: string) => rows.filter(([n]) => n === name).map(([, labels, value]) => [labels, value]);
const ages = (severity: string, counts: readonly number[]) => ['1h', '1d', '7d', '30d', '90d'].map((age, i) => [{ severity, age }, counts[i]]);

describe('alert samples of alerts built by hand', () => {
  const logger = memoryLogger();
  const agg = foldAlerts(records, NOW, logger);
  const { rows, folded } = samplesOf(agg);

  it('counts open, unacknowledged, unassigned and snoozed alerts by severity: red, amber, green always, unknown when it has any', () => {
    expect(family(rows, 'posture_alerts_open')).toEqual([[{ severity: 'red' }, 3], [{ severity: 'amber' }, 1], [{ severity: 'green' }, 1], [{ severity: 'unknown' }, 1]]);
    // r1, a1, u1 are not acknowledged; the same three have no owner.
    expect(family(rows, 'posture_alerts_unacknowledged')).toEqual([[{ severity: 'red' }, 1], [{ severity: 'amber' }, 1], [{ severity: 'green' }, 0], [{ severity: 'unknown' }, 1]]);
    expect(family(rows, 'posture_alerts_unassigned')).toEqual([[{ severity: 'red' }, 1], [{ severity: 'amber' }, 1], [{ severity: 'green' }, 0], [{ severity: 'unknown' }, 1]]);
    // Only r2 is snoozed: no unknown series at 0.
    expect(family(rows, 'posture_alerts_snoozed')).toEqual([[{ severity: 'red' }, 1], [{ severity: 'amber' }, 0], [{ severity: 'green' }, 0]]);
  });

  it('counts open alerts by integration, severity and type, sorted, only non-zero', () => {
    expect(family(rows, 'posture_alerts_open_by_integration')).toEqual([
      [{ integration: 'CrowdStrike', severity: 'unknown', type: 'unknown' }, 1],
      [{ integration: 'Jamf', severity: 'amber', type: 'warning' }, 1],
      [{ integration: 'Jamf', severity: 'green', type: 'info' }, 1],
      [{ integration: 'Okta', severity: 'red', type: 'incident' }, 1],
      [{ integration: 'Okta', severity: 'red', type: 'info' }, 1],
      [{ integration: 'Okta', severity: 'red', type: 'warning' }, 1],
    ]);
    expect(Object.fromEntries(folded)).toEqual({ posture_alerts_open_by_integration: 0 });
  });

  it('gives the oldest creation time per severity, of any open alert and of an unacknowledged one', () => {
    expect(family(rows, 'posture_alerts_oldest_open_timestamp_seconds')).toEqual([
      [{ severity: 'red' }, NOW - 3 * DAY],
      [{ severity: 'amber' }, NOW - 10 * DAY],
      [{ severity: 'green' }, NOW - 40 * DAY],
      [{ severity: 'unknown' }, NOW - 100 * DAY],
    ]);
    // Green's only alert is acknowledged: no series.
    expect(family(rows, 'posture_alerts_oldest_unacknowledged_timestamp_seconds')).toEqual([
      [{ severity: 'red' }, NOW - 2 * HOUR],
      [{ severity: 'amber' }, NOW - 10 * DAY],
      [{ severity: 'unknown' }, NOW - 100 * DAY],
    ]);
  });

  it('counts open alerts older than each age, and those over their SLA unless snoozed', () => {
    expect(family(rows, 'posture_alerts_open_older_than')).toEqual([
      ...ages('red', [2, 1, 0, 0, 0]), // 2 h and 3 d
      ...ages('amber', [1, 1, 1, 0, 0]), // 10 d
      ...ages('green', [1, 1, 1, 1, 0]), // 40 d
      ...ages('unknown', [1, 1, 1, 1, 1]), // 100 d
    ]);
    // Default SLAs red 1d, amber 7d, green 30d: r2 (3 d) is snoozed; a1 (10 d) and g1 (40 d) are over; unknown has none.
    expect(family(rows, 'posture_alerts_over_sla')).toEqual([[{ severity: 'red' }, 0], [{ severity: 'amber' }, 1], [{ severity: 'green' }, 1]]);
  });

  it('emits no other family', () => {
    expect(new Set(rows.map(([name]) => name))).toEqual(new Set(alerts.families.map((f) => f.name)));
  });

  it('counts the malformed record as invalid, and logs it with its index', () => {
    expect(agg.invalid).toBe(1);
    expect(alerts.invalidOf(agg)).toBe(1);
    expect(logger.records().map((r) => [r.level, r.msg, r.source, r.index])).toEqual([['warn', 'skipped a malformed record', 'alerts', 7]]);
  });

  it('serves zeros for red, amber and green and no time series when nothing is open', () => {
    const { rows: none } = samplesOf(foldAlerts([], NOW));
    expect(none.filter(([name]) => name.includes('timestamp') || name === 'posture_alerts_open_by_integration')).toEqual([]);
    for (const name of ['posture_alerts_open', 'posture_alerts_unacknowledged', 'posture_alerts_unassigned', 'posture_alerts_snoozed', 'posture_alerts_over_sla']) {
      expect(family(none, name), name).toEqual([[{ severity: 'red' }, 0], [{ severity: 'amber' }, 0], [{ severity: 'green' }, 0]]);
    }
    expect(family(none, 'posture_alerts_open_older_than')).toEqual([...ages('red', [0, 0, 0, 0, 0]), ...ages('amber', [0, 0, 0, 0, 0]), ...ages('green', [0, 0, 0, 0, 0])]);
  });

  it('leaves out an unknown severity and a by-integration series whose count is 0 (plain data: the fold gives none)', () => {
    const zero = { red: 1, amber: 0, green: 0, zeta: 2, unknown: 0, purple: 1 };
    const plain: AlertsAggregate = {
      ...foldAlerts([], NOW),
      open: zero,
      unacknowledged: zero,
      byIntegration: new Map([['Okta', new Map([['red', new Map([['incident', 1], ['info', 0]])], ['unknown', new Map([['unknown', 0]])]])]]),
    };
    const { rows: got } = samplesOf(plain);
    // Other severities after red, amber and green, by name.
    expect(family(got, 'posture_alerts_open')).toEqual([[{ severity: 'red' }, 1], [{ severity: 'amber' }, 0], [{ severity: 'green' }, 0], [{ severity: 'purple' }, 1], [{ severity: 'zeta' }, 2]]);
    expect(family(got, 'posture_alerts_unacknowledged')).toEqual(family(got, 'posture_alerts_open'));
    expect(family(got, 'posture_alerts_open_older_than').map(([labels]) => (labels as Record<string, string>).severity)).not.toContain('unknown');
    expect(family(got, 'posture_alerts_open_by_integration')).toEqual([[{ integration: 'Okta', severity: 'red', type: 'incident' }, 1]]);
  });

  it('sorts one integration\'s series by severity, then type, when the fold gave them in that order already', () => {
    // Label order: amber/incident, red/incident, red/warning; given in that order, it must stay so.
    const plain: AlertsAggregate = {
      ...foldAlerts([], NOW),
      open: { red: 3, amber: 1, green: 0 },
      byIntegration: new Map([['X', new Map([['amber', new Map([['incident', 1]])], ['red', new Map([['incident', 2], ['warning', 1]])]])]]),
    };
    expect(family(samplesOf(plain).rows, 'posture_alerts_open_by_integration')).toEqual([
      [{ integration: 'X', severity: 'amber', type: 'incident' }, 1],
      [{ integration: 'X', severity: 'red', type: 'incident' }, 2],
      [{ integration: 'X', severity: 'red', type: 'warning' }, 1],
    ]);
  });

  it('writes the __other__ series sorted by severity, then type, whatever order the folded integrations gave them', () => {
    // 3 series for a cap of 2: keeping A (1 series) leaves 2 fold series, 3 in all; so everything is folded.
    // In label order the rows are A red/warning, b1 red/incident, b2 amber/incident.
    const plain: AlertsAggregate = {
      ...foldAlerts([], NOW),
      open: { red: 51, amber: 1, green: 0 },
      byIntegration: new Map([
        ['A', new Map([['red', new Map([['warning', 50]])]])],
        ['b1', new Map([['red', new Map([['incident', 1]])]])],
        ['b2', new Map([['amber', new Map([['incident', 1]])]])],
      ]),
    };
    const { rows: got, folded: f } = samplesOf(plain, 2);
    expect(family(got, 'posture_alerts_open_by_integration')).toEqual([
      [{ integration: '__other__', severity: 'amber', type: 'incident' }, 1],
      [{ integration: '__other__', severity: 'red', type: 'incident' }, 1],
      [{ integration: '__other__', severity: 'red', type: 'warning' }, 50],
    ]);
    expect(f.get('posture_alerts_open_by_integration')).toBe(3);
  });
});
