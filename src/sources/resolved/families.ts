import type { MetricDef } from '../../metrics/definition.js';
import { CACHED, type SampleNameOf } from '../source.js';

/** Said of every response family: the windows it is counted over. */
const WINDOWS = ' window = 1d, 7d, 30d before the pass.';
/** Said of every summary: what its quantiles are. */
const NEAREST_RANK = ' quantile 0.5 and 0.9 are nearest-rank: the smallest duration d with at least q*n of the n durations at most d; absent when n is 0.';
/** The pass's own note: read hourly, not on the open alerts' interval. */
const PASS = ' Read by the resolved-alerts pass (POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS).';

/** The families fed by the resolved-alerts pass, in catalogue order. */
export const RESOLVED_FAMILIES = [
  {
    name: 'posture_alerts_resolved',
    help: 'Alerts resolved in the last window (resolvedTime later than the pass minus 1d, 7d or 30d), by severity (state).' + PASS + CACHED,
    type: 'gauge', unit: '{alert}', labels: ['severity', 'window'], origin: 'resolved',
    doc: 'Alerts of `/alerts?filter=resolved` whose `resolvedTime` lies in the last `window` (`1d`, `7d`, `30d`) before the pass, those with an unset creation time included; red, amber, green always (0 when none), `unknown` when it has one. A resolved alert with an unset `resolvedTime` is an invalid record.',
  },
  {
    name: 'posture_alerts_time_to_resolve_seconds',
    help: 'Seconds from creation (timestamp) to resolution (resolvedTime) of the alerts resolved in the window, by severity;' + WINDOWS + NEAREST_RANK + PASS + CACHED,
    type: 'summary', unit: 's', labels: ['severity', 'window'], optionalLabels: ['quantile'], origin: 'resolved',
    doc: 'Summary of `resolvedTime` − `timestamp` over the alerts counted in `posture_alerts_resolved` that have a creation time at or before their resolution: `_count`, `_sum`, and `quantile` `0.5`, `0.9` (nearest-rank: the smallest d with at least q·n durations ≤ d; absent when `_count` is 0). See [docs/metrics.md](docs/metrics.md#response-times).',
  },
  {
    name: 'posture_alerts_resolved_over_sla',
    help: 'Alerts resolved in the window that took longer than their severity\'s SLA (POSTURE_ALERT_SLAS) to resolve, by severity;' + WINDOWS + PASS + CACHED,
    type: 'gauge', unit: '{alert}', labels: ['severity', 'window'], origin: 'resolved',
    doc: 'Of the durations in `posture_alerts_time_to_resolve_seconds`, those strictly above the severity\'s SLA (`POSTURE_ALERT_SLAS`); red, amber, green only (`unknown` has no SLA).',
  },
  {
    name: 'posture_alerts_time_to_acknowledge_seconds',
    help: 'Seconds from creation (timestamp) to acknowledgement (acknowledgedTime) of open and resolved alerts acknowledged in the window, by severity;' + WINDOWS + NEAREST_RANK + PASS + CACHED,
    type: 'summary', unit: 's', labels: ['severity', 'window'], optionalLabels: ['quantile'], origin: 'resolved',
    doc: 'Summary of `acknowledgedTime` − `timestamp` over open and resolved alerts that are acknowledged, whose `acknowledgedTime` lies in the last `window` and is at or after their creation: `_count`, `_sum`, `quantile` `0.5`, `0.9` (as above). Written only when both the open and the resolved alerts of the pass were read.',
  },
] as const satisfies readonly (MetricDef & { readonly origin: 'resolved' })[];

/** The sample names of the response families: each name, and a summary's `_sum` and `_count`. */
export type ResolvedSampleName = SampleNameOf<(typeof RESOLVED_FAMILIES)[number]>;
