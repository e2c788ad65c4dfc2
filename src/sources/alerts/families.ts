import { CACHED, type SourceFamily } from '../source.js';

/** A count of unresolved alerts by severity: red, amber and green always, any other state as unknown. */
const countBySeverity = <N extends string>(name: N, help: string, doc: string) =>
  ({ name, help: help + CACHED, type: 'gauge', unit: '{alert}', labels: ['severity'], origin: 'alerts', doc }) as const;

/** The families fed by alerts, in catalogue order. */
export const ALERTS_FAMILIES = [
  countBySeverity(
    'posture_alerts_open',
    'Unresolved alerts by severity (state); unrecognised states count as unknown.',
    'Unresolved alerts by `state`: red, amber, green always present (0 when none); any other state as `unknown`.',
  ),
  {
    name: 'posture_alerts_open_by_integration',
    help: 'Unresolved alerts by integration (product before its first comma), severity and type (status); only non-zero series.' + CACHED,
    type: 'gauge', unit: '{alert}', labels: ['integration', 'severity', 'type'], origin: 'alerts',
    doc: 'integration = `product` before its first comma, trimmed, as UTF-8 writes it (`unknown` when empty or whitespace only); type = `status` lower-cased (incident, warning, info, else unknown); only non-zero series.',
  },
  countBySeverity('posture_alerts_unacknowledged', 'Unresolved alerts that are not acknowledged, by severity.', 'Unresolved and not acknowledged (red, amber, green always present).'),
  countBySeverity('posture_alerts_unassigned', 'Unresolved alerts with no owner (empty ownerName), by severity.', 'Unresolved with empty `ownerName` (red, amber, green always present).'),
  countBySeverity('posture_alerts_snoozed', 'Unresolved alerts snoozed (inactiveUntil later than the collection time), by severity.', 'Unresolved with `inactiveUntil` later than the collection time (red, amber, green always present).'),
  {
    name: 'posture_alerts_oldest_open_timestamp_seconds',
    help: 'Unix time of the oldest unresolved alert\'s creation timestamp, by severity; absent when none.' + CACHED,
    type: 'gauge', unit: 's', labels: ['severity'], origin: 'alerts', combine: 'min',
    doc: 'Unix time of the oldest unresolved alert\'s `timestamp` (API timestamps are UTC); absent when none. An alert with an unset `timestamp` (the minimum date) counts in every other alert family but not here.',
  },
  {
    name: 'posture_alerts_open_older_than',
    help: 'Unresolved alerts created more than age (1h, 1d, 7d, 30d, 90d) before the collection, snoozed ones included, by severity.' + CACHED,
    type: 'gauge', unit: '{alert}', labels: ['severity', 'age'], origin: 'alerts',
    doc: 'Unresolved alerts whose `timestamp` is more than `age` before the collection time, snoozed ones included; age = `1h`, `1d`, `7d`, `30d`, `90d` (each bucket holds the longer ones too). Every age for red, amber, green (0 when none) and for `unknown` when it has open alerts. An unset `timestamp` has no age: in no bucket.',
  },
  {
    name: 'posture_alerts_over_sla',
    help: 'Unresolved, unsnoozed alerts open longer than their severity\'s SLA (POSTURE_ALERT_SLAS), by severity.' + CACHED,
    type: 'gauge', unit: '{alert}', labels: ['severity'], origin: 'alerts',
    doc: 'Unresolved alerts, not snoozed (`inactiveUntil` not later than the collection time), whose `timestamp` is more than their severity\'s SLA (`POSTURE_ALERT_SLAS`, default red 1d, amber 7d, green 30d) before the collection time. Red, amber, green always present; `unknown` has no SLA and no series. An unset `timestamp` is never over.',
  },
  {
    name: 'posture_alerts_oldest_unacknowledged_timestamp_seconds',
    help: 'Unix time of the oldest unacknowledged unresolved alert\'s creation timestamp, by severity; absent when none.' + CACHED,
    type: 'gauge', unit: 's', labels: ['severity'], origin: 'alerts', combine: 'min',
    doc: 'Unix time of the oldest unresolved, unacknowledged alert\'s `timestamp`, snoozed ones included; absent when none (an unset `timestamp` does not count).',
  },
] as const satisfies readonly SourceFamily<'alerts'>[];

/** The name of an alert family. */
export type AlertsFamily = (typeof ALERTS_FAMILIES)[number]['name'];
