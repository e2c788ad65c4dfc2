import type { MetricDef } from './definition.js';
import type { Sample } from './sample.js';
import { renderedSeries } from './series.js';

/** Text formats the pull endpoint and `once` can produce. */
export type TextFormat = 'prometheus' | 'openmetrics';

/** The Content-Type header for a text format. */
export function contentType(format: TextFormat): string {
  return format === 'openmetrics' ? 'application/openmetrics-text; version=1.0.0; charset=utf-8' : 'text/plain; version=0.0.4; charset=utf-8';
}

/** Escapes HELP text as both text formats do: backslash and line feed. */
export function escapeText(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/**
 * A number as both text formats spell it: `+Inf`, `-Inf`, and otherwise JavaScript's shortest
 * round-trip form, which Go's ParseFloat reads back exactly (`NaN` is already spelled so).
 */
export function formatValue(v: number): string {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** `{name="value",...}` in the order of `labels` (renderedSeries gives catalogue order), each value escaped (backslash, double quote, line feed); '' when none. */
export function labelString(labels: Readonly<Record<string, string>>): string {
  let out = '';
  for (const name in labels) out += `${out ? ',' : ''}${name}="${escapeText(labels[name]!).replace(/"/g, '\\"')}"`;
  return out ? `{${out}}` : '';
}

/**
 * Renders samples as Prometheus text or OpenMetrics, from `catalogue` (the families, in output
 * order) and the samples alone (no registry, no metric objects): a series that is not in
 * `samples` is not in the output. Families appear in catalogue order and only when they have
 * samples. A series is its label set as written, so no label value can merge two series (a
 * registry keyed by `name:value,` joined strings could); samples written as the same series are
 * one line (renderedSeries).
 */
export async function renderText(samples: readonly Sample[], format: TextFormat, catalogue: readonly MetricDef[]): Promise<string> {
  const openMetrics = format === 'openmetrics';
  const byName = groupByFamily(renderedSeries(samples, catalogue));
  const families: string[] = [];
  for (const def of catalogue) {
    const list = byName.get(def.name);
    if (!list) continue;
    // OpenMetrics names a counter family without its `_total`; its samples keep it.
    const family = openMetrics && def.type === 'counter' ? def.name.replace(/_total$/, '') : def.name;
    const lines = [`# HELP ${family} ${escapeText(def.help)}`, `# TYPE ${family} ${def.type}`];
    for (const s of list) lines.push(`${s.name}${labelString(s.labels)} ${formatValue(s.value)}`);
    families.push(lines.join('\n'));
  }
  return openMetrics ? `${families.join('\n')}\n# EOF\n` : `${families.join('\n\n')}\n`;
}

/** Groups samples by family (each sample carries its family's name), keeping their order. */
function groupByFamily(samples: readonly Sample[]): Map<string, Sample[]> {
  const byName = new Map<string, Sample[]>();
  for (const s of samples) {
    let list = byName.get(s.name);
    if (!list) byName.set(s.name, (list = []));
    list.push(s);
  }
  return byName;
}

/** Renders samples as JSON: `{ collectedAt, samples: [{ name, labels, value }] }` in the order of `catalogue`. */
export function renderJson(samples: readonly Sample[], collectedAt: number, catalogue: readonly MetricDef[]): string {
  const byName = groupByFamily(renderedSeries(samples, catalogue));
  const ordered: Sample[] = [];
  for (const def of catalogue) {
    for (const s of byName.get(def.name) ?? []) ordered.push({ name: s.name, labels: s.labels, value: s.value });
  }
  return JSON.stringify({ collectedAt: new Date(collectedAt).toISOString(), samples: ordered }, null, 2) + '\n';
}
