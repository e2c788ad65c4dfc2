import { SEVERITIES } from '../../domain.js';
import type { Add } from '../source.js';
import type { ResolvedSampleName } from './families.js';
import type { ResolvedAggregate } from './fold.js';
import { QUANTILES, RESPONSE_WINDOWS, type DurationStats } from './windows.js';

/** Red, amber and green, then any other severity present (unknown). */
function severitiesOf(bySeverity: Readonly<Record<string, unknown>>): string[] {
  return [...SEVERITIES, ...Object.keys(bySeverity).filter((k) => !(SEVERITIES as readonly string[]).includes(k)).sort()];
}

/** One summary's samples per window: quantiles (when there is a duration), then `_sum` and `_count`, one label set after another. */
function summary(add: Add<ResolvedSampleName>, name: 'posture_alerts_time_to_resolve_seconds' | 'posture_alerts_time_to_acknowledge_seconds', severity: string, window: string, stats: DurationStats): void {
  QUANTILES.forEach(([quantile], i) => {
    const v = stats.quantiles[i];
    if (v !== undefined) add(name, { severity, window, quantile }, v);
  });
  add(`${name}_sum`, { severity, window }, stats.sum);
  add(`${name}_count`, { severity, window }, stats.count);
}

/** The samples of one pass: resolution always, acknowledgement once the open alerts were added (withOpenAlerts). */
export function resolvedSamples(a: ResolvedAggregate, add: Add<ResolvedSampleName>): void {
  const severities = severitiesOf(a.resolution);
  for (const severity of severities) {
    RESPONSE_WINDOWS.forEach(([window], w) => add('posture_alerts_resolved', { severity, window }, a.resolution[severity]?.[w]?.resolved ?? 0));
  }
  for (const severity of severities) {
    RESPONSE_WINDOWS.forEach(([window], w) => summary(add, 'posture_alerts_time_to_resolve_seconds', severity, window, a.resolution[severity]?.[w] ?? EMPTY));
  }
  // Only the severities that have an SLA.
  for (const severity of SEVERITIES) {
    RESPONSE_WINDOWS.forEach(([window], w) => add('posture_alerts_resolved_over_sla', { severity, window }, a.resolution[severity]?.[w]?.overSla ?? 0));
  }
  const acknowledgement = a.acknowledgement;
  if (!acknowledgement) return;
  for (const severity of severitiesOf(acknowledgement)) {
    RESPONSE_WINDOWS.forEach(([window], w) => summary(add, 'posture_alerts_time_to_acknowledge_seconds', severity, window, acknowledgement[severity]?.[w] ?? EMPTY));
  }
}

const EMPTY: DurationStats = { count: 0, sum: 0, quantiles: [], overSla: 0 };
