// Spec 2.2: "An unset timestamp is the minimum date value 0001-01-01T00:00:00.0000000". An
// unresolved alert whose creation time is unset is a legal, open alert: it counts in every alert
// family and is only left out of the oldest-creation-time gauge, which has no time to take from it.
import { describe, expect, it } from 'vitest';
import { foldAlerts } from '../../src/sources/alerts/fold.js';
import { toSamples, type PortalView } from '../../src/collect/samples.js';
import type { Sample } from '../../src/metrics/sample.js';
import type { AlertRecord as Alert } from '../../src/upstream/schemas.js';

const NOW = Date.UTC(2026, 10, 22) / 1000;
const UNSET = '0001-01-01T00:00:00.0000000';

const alert = (over: Partial<Alert>): Alert => ({
  state: 'Red',
  product: 'Okta, Identity',
  status: 'Incident',
  ownerName: '',
  timestamp: '2026-11-20T10:00:00.0000000',
  resolved: false,
  acknowledged: false,
  inactiveUntil: UNSET,
  ...over,
});

const records: Alert[] = [
  alert({ timestamp: UNSET }),
  alert({ timestamp: UNSET, acknowledged: true, ownerName: 'ann@example.com' }),
  alert({ timestamp: UNSET, inactiveUntil: '2026-12-01T00:00:00.0000000' }),
  // The same unset value written with fewer fraction digits and a zone: still the minimum date.
  alert({ timestamp: '0001-01-01T00:00:00Z', product: 'Jamf, MDM', state: 'Amber', status: 'Warning' }),
  alert({ timestamp: '2026-11-20T10:00:00.0000000' }),
  alert({ timestamp: '2026-11-21T08:30:00.0000000', state: 'Amber', product: 'Jamf, MDM', status: 'Warning' }),
  // Only unset creation times among the green ones: green has no oldest time at all.
  alert({ timestamp: UNSET, state: 'Green', status: 'Info', ownerName: 'bob@example.com', acknowledged: true }),
];

function render(rs: readonly unknown[]): Sample[] {
  const agg = foldAlerts(rs, NOW);
  const view: PortalView = { portal: 'acme', vitals: { success: false }, alerts: { value: agg, success: true }, devices: { success: false } };
  return toSamples([view], { version: '0.0.0-test', runtime: 'once' });
}

const value = (s: readonly Sample[], name: string, labels: Record<string, string>) =>
  s.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v)).map((x) => x.value);

describe('an unresolved alert with an unset creation time', () => {
  const s = render(records);

  it('counts as open, unacknowledged, unassigned and snoozed like any other', () => {
    // Counted by hand from the records above.
    expect(value(s, 'posture_alerts_open', { severity: 'red' })).toEqual([4]);
    expect(value(s, 'posture_alerts_open', { severity: 'amber' })).toEqual([2]);
    expect(value(s, 'posture_alerts_open', { severity: 'green' })).toEqual([1]);
    expect(value(s, 'posture_alerts_unacknowledged', { severity: 'red' })).toEqual([3]);
    expect(value(s, 'posture_alerts_unacknowledged', { severity: 'green' })).toEqual([0]);
    expect(value(s, 'posture_alerts_unassigned', { severity: 'red' })).toEqual([3]);
    expect(value(s, 'posture_alerts_unassigned', { severity: 'amber' })).toEqual([2]);
    expect(value(s, 'posture_alerts_snoozed', { severity: 'red' })).toEqual([1]);
  });

  it('counts in posture_alerts_open_by_integration', () => {
    expect(value(s, 'posture_alerts_open_by_integration', { integration: 'Okta', severity: 'red', type: 'incident' })).toEqual([4]);
    expect(value(s, 'posture_alerts_open_by_integration', { integration: 'Jamf', severity: 'amber', type: 'warning' })).toEqual([2]);
    expect(value(s, 'posture_alerts_open_by_integration', { integration: 'Okta', severity: 'green', type: 'info' })).toEqual([1]);
  });

  it('is not an invalid record', () => {
    expect(foldAlerts(records, NOW).invalid).toBe(0);
  });

  it('is left out of posture_alerts_oldest_open_timestamp_seconds only', () => {
    expect(value(s, 'posture_alerts_oldest_open_timestamp_seconds', { severity: 'red' })).toEqual([Date.UTC(2026, 10, 20, 10) / 1000]);
    expect(value(s, 'posture_alerts_oldest_open_timestamp_seconds', { severity: 'amber' })).toEqual([Date.UTC(2026, 10, 21, 8, 30) / 1000]);
    expect(value(s, 'posture_alerts_oldest_open_timestamp_seconds', { severity: 'green' })).toEqual([]);
  });

  it('still makes a malformed creation time an invalid record', () => {
    const agg = foldAlerts([alert({ timestamp: '0001-13-01T00:00:00.0000000' }), alert({ timestamp: 'yesterday' })], NOW);
    expect(agg.invalid).toBe(2);
    expect(agg.open.red).toBe(0);
  });
});
