import { SEVERITIES } from '../../domain.js';
import type { Add } from '../source.js';
import type { ResolvedFamilyName } from './families.js';
import type { ResolvedAggregate } from './fold.js';
import { QUANTILES, RESPONSE_WINDOWS, type DurationStats } from './windows.js';

/** Red, amber and green, then any other severity present (unknown). */
function severitiesOf(bySeverity: Readonly<Record<string, unknown>>): string[] {
  return [...SEVERITIES, ...Object.keys(bySeverity).filter((k) => !(SEVERITIES as readonly string[]).includes(k)).sort()];
}

/** The `percentile` label of each QUANTILES entry, in its order: q as a percentage (`50`, `90`). */
const PERCENTILES = QUANTILES.map(([, num, den]) => String((num * 100) / den));

/** What one response time's statistics are read as: per severity, one entry per window (absent: no duration). */
type Statistics = Readonly<Record<string, readonly DurationStats[] | undefined>>;

/**
 * The three families of one response time (`resolve`, `acknowledge`), each over every severity and
 * window: the percentiles and the mean where there is a duration, and always how many there are.
 */
function responseTime(add: Add<ResolvedFamilyName>, action: 'resolve' | 'acknowledge', severities: readonly string[], stats: Statistics): void {
  const of = (severity: string, w: number) => stats[severity]?.[w] ?? EMPTY;
  for (const severity of severities) {
    RESPONSE_WINDOWS.forEach(([window], w) => {
      const { quantiles } = of(severity, w);
      PERCENTILES.forEach((percentile, i) => {
        const v = quantiles[i];
        if (v !== undefined) add(`posture_alerts_time_to_${action}_seconds`, { severity, window, percentile }, v);
      });
    });
  }
  for (const severity of severities) {
    RESPONSE_WINDOWS.forEach(([window], w) => {
      const { count, sum } = of(severity, w);
      if (count > 0) add(`posture_alerts_time_to_${action}_mean_seconds`, { severity, window }, sum / count);
    });
  }
  for (const severity of severities) {
    RESPONSE_WINDOWS.forEach(([window], w) => add(`posture_alerts_time_to_${action}_alerts`, { severity, window }, of(severity, w).count));
  }
}

/** The samples of one pass: resolution always, acknowledgement once the open alerts were added (withOpenAlerts). */
export function resolvedSamples(a: ResolvedAggregate, add: Add<ResolvedFamilyName>): void {
  const severities = severitiesOf(a.resolution);
  for (const severity of severities) {
    RESPONSE_WINDOWS.forEach(([window], w) => add('posture_alerts_resolved', { severity, window }, a.resolution[severity]?.[w]?.resolved ?? 0));
  }
  responseTime(add, 'resolve', severities, a.resolution);
  // Only the severities that have an SLA.
  for (const severity of SEVERITIES) {
    RESPONSE_WINDOWS.forEach(([window], w) => add('posture_alerts_resolved_over_sla', { severity, window }, a.resolution[severity]?.[w]?.overSla ?? 0));
  }
  const acknowledgement = a.acknowledgement;
  if (acknowledgement) responseTime(add, 'acknowledge', severitiesOf(acknowledgement), acknowledgement);
}

const EMPTY: DurationStats = { count: 0, sum: 0, quantiles: [], overSla: 0 };
