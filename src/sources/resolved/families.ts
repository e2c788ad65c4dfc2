/**
 * The families of the resolved-alerts pass. Every figure is a gauge: each is recomputed over a
 * window that slides with the pass, so it goes down as alerts age out of the window (a summary's
 * `_count`, or a counter, never may). The time to resolve and the time to acknowledge each have the
 * same three families (percentiles, mean, and how many durations they are over), declared from one
 * table below, so they differ only where the table says.
 */
import type { MetricDef } from '../../metrics/definition.js';
import { CACHED } from '../source.js';

/** Said of every response family: the windows it is counted over. */
const WINDOWS = ' window = 1d, 7d, 30d before the pass.';
/** The pass's own note: read hourly, not on the open alerts' interval. */
const PASS = ' Read by the resolved-alerts pass (POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS).';

/** A family of the pass. */
type ResolvedFamily = MetricDef & { readonly origin: 'resolved' };

/** What sets the families of one response time apart: its name, its end and the alerts it is taken over. */
interface ResponseTime<A extends string> {
  /** `resolve` or `acknowledge`, as in `posture_alerts_time_to_<action>_seconds`. */
  readonly action: A;
  /** HELP: the duration measured. */
  readonly duration: string;
  /** HELP: whose durations, by window. */
  readonly over: string;
  /** README: the duration and the alerts it is taken over, in Markdown. */
  readonly docOver: string;
  /** README: what else a reader should know (when the families are written). */
  readonly docNote: string;
}

/**
 * The three families of one response time: nearest-rank percentiles (`percentile` 50 and 90),
 * the mean, and the number of durations both are over (`…_alerts`), so that means of several
 * portals or severities add up as `sum(mean * alerts) / sum(alerts)`. Percentiles and mean are
 * absent while `…_alerts` is 0.
 */
function responseFamilies<A extends string>(r: ResponseTime<A>) {
  const alerts = `posture_alerts_time_to_${r.action}_alerts` as const;
  return [
    {
      name: `posture_alerts_time_to_${r.action}_seconds` as const,
      help: `Nearest-rank percentile (percentile = 50, 90) of the seconds from ${r.duration} of ${r.over}, by severity: the smallest duration d with at least p % of the durations at most d; absent when there is none (${alerts} 0);` + WINDOWS + PASS + CACHED,
      type: 'gauge', unit: 's', labels: ['severity', 'window', 'percentile'], origin: 'resolved', combine: 'max',
      doc: `Nearest-rank percentile \`percentile\` ∈ \`50\`, \`90\` of ${r.docOver}: the smallest duration d with at least p % of the durations ≤ d; absent when \`${alerts}\` is 0.${r.docNote} See [docs/metrics.md](docs/metrics.md#response-times).`,
    },
    {
      name: `posture_alerts_time_to_${r.action}_mean_seconds` as const,
      help: `Mean of the seconds from ${r.duration} of ${r.over}, by severity; absent when there is none (${alerts} 0); several portals or severities average as sum(mean * alerts) / sum(alerts);` + WINDOWS + PASS + CACHED,
      type: 'gauge', unit: 's', labels: ['severity', 'window'], origin: 'resolved', combine: 'max',
      doc: `Mean of ${r.docOver}; absent when \`${alerts}\` is 0. Means of several portals or severities: \`sum(mean * alerts) / sum(alerts)\`.`,
    },
    {
      name: alerts,
      help: `How many durations from ${r.duration} the percentiles and mean of ${r.over} are over, by severity; 0 when none;` + WINDOWS + PASS + CACHED,
      type: 'gauge', unit: '{alert}', labels: ['severity', 'window'], origin: 'resolved',
      doc: `How many durations the percentiles and the mean of \`posture_alerts_time_to_${r.action}_*\` are over (0 when none): the weight of a mean when means are added up.`,
    },
  ] as const satisfies readonly ResolvedFamily[];
}

/** The families fed by the resolved-alerts pass, in catalogue order. */
export const RESOLVED_FAMILIES = [
  {
    name: 'posture_alerts_resolved',
    help: 'Alerts resolved in the last window (resolvedTime later than the pass minus 1d, 7d or 30d), by severity (state).' + PASS + CACHED,
    type: 'gauge', unit: '{alert}', labels: ['severity', 'window'], origin: 'resolved',
    doc: 'Alerts of `/alerts?filter=resolved` whose `resolvedTime` lies in the last `window` (`1d`, `7d`, `30d`) before the pass, those with an unset creation time included; red, amber, green always (0 when none), `unknown` when it has one. A resolved alert with an unset `resolvedTime` is an invalid record.',
  },
  ...responseFamilies({
    action: 'resolve',
    duration: 'creation (timestamp) to resolution (resolvedTime)',
    over: 'the alerts resolved in the window',
    docOver: '`resolvedTime` − `timestamp` over the alerts counted in `posture_alerts_resolved` that have a creation time at or before their resolution',
    docNote: '',
  }),
  {
    name: 'posture_alerts_resolved_over_sla',
    help: 'Alerts resolved in the window that took longer than their severity\'s SLA (POSTURE_ALERT_SLAS) to resolve, by severity;' + WINDOWS + PASS + CACHED,
    type: 'gauge', unit: '{alert}', labels: ['severity', 'window'], origin: 'resolved',
    doc: 'Of the `posture_alerts_time_to_resolve_alerts` durations, those strictly above the severity\'s SLA (`POSTURE_ALERT_SLAS`); red, amber, green only (`unknown` has no SLA).',
  },
  ...responseFamilies({
    action: 'acknowledge',
    duration: 'creation (timestamp) to acknowledgement (acknowledgedTime)',
    over: 'the open and resolved alerts acknowledged in the window',
    docOver: '`acknowledgedTime` − `timestamp` over open and resolved alerts that are acknowledged, whose `acknowledgedTime` lies in the last `window` and is at or after their creation',
    docNote: ' Written only when both the open and the resolved alerts of the pass were read.',
  }),
] as const satisfies readonly ResolvedFamily[];

/** The names of the pass's families. */
export type ResolvedFamilyName = (typeof RESOLVED_FAMILIES)[number]['name'];
