/**
 * OpenMetrics text with a timestamp on every sample, for history (backfill): the input of
 * `promtool tsdb create-blocks-from openmetrics`. Live output never carries timestamps (the
 * scraper stamps it); only history needs them.
 */
import type { MetricDef } from './definition.js';
import { escapeText, formatValue, labelString } from './render.js';
import type { Sample } from './sample.js';
import { renderedSeries } from './series.js';

/** A sample with the time it describes. */
export interface TimestampedSample extends Sample {
  /** Unix ms. */
  readonly timestampMs: number;
}

/** Unix ms as OpenMetrics seconds (fractional only when the ms are not whole seconds). */
function formatTimestamp(ms: number): string {
  return String(ms / 1000);
}

/**
 * Renders every sample with its timestamp. Layout as promtool's parser requires: one block per
 * family (in the order of `catalogue`, `# HELP` and `# TYPE` once), inside it every series
 * contiguous (first-seen order, labels in catalogue order), each series' points in ascending
 * time, and `# EOF` at the end. Every family is typed gauge, named as its samples are (history
 * holds the sources' gauges; a counter would keep its `_total`, which a gauge may carry). Samples
 * written as one series at one time are one point (renderedSeries); a sample of a family not in
 * `catalogue` is left out, as renderText leaves it out.
 */
export function renderTimestampedOpenMetrics(samples: readonly TimestampedSample[], catalogue: readonly MetricDef[]): string {
  // Family name → series (labels, as written) → points.
  const families = new Map<string, Map<string, Map<number, number>>>();
  for (const s of renderedSeries(samples, catalogue, (x) => x.timestampMs)) {
    let family = families.get(s.name);
    if (!family) families.set(s.name, (family = new Map()));
    const series = `${s.name}${labelString(s.labels)}`;
    let points = family.get(series);
    if (!points) family.set(series, (points = new Map()));
    points.set(s.timestampMs, s.value);
  }
  const out: string[] = [];
  for (const def of catalogue) {
    const family = families.get(def.name);
    if (!family) continue;
    out.push(`# HELP ${def.name} ${escapeText(def.help)}`, `# TYPE ${def.name} gauge`);
    for (const [series, points] of family) {
      for (const t of [...points.keys()].sort((a, b) => a - b)) out.push(`${series} ${formatValue(points.get(t)!)} ${formatTimestamp(t)}`);
    }
  }
  out.push('# EOF');
  return out.join('\n') + '\n';
}
