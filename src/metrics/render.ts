import { PORTAL_LABEL, type MetricDef } from './definition.js';
import type { Sample } from './sample.js';

/** Text formats the pull endpoint and `once` can produce. */
export type TextFormat = 'prometheus' | 'openmetrics';

/** The Content-Type header for a text format. */
export function contentType(format: TextFormat): string {
  return format === 'openmetrics' ? 'application/openmetrics-text; version=1.0.0; charset=utf-8' : 'text/plain; version=0.0.4; charset=utf-8';
}

const labelNames = new WeakMap<MetricDef, readonly string[]>();

/** Every label a family may carry, in output order: `portal`, its own labels, then optional ones (worked out once per family). */
function labelNamesOf(def: MetricDef): readonly string[] {
  let names = labelNames.get(def);
  if (!names) labelNames.set(def, (names = [PORTAL_LABEL, ...def.labels, ...(def.optionalLabels ?? [])]));
  return names;
}

/** Orders a sample's labels as the catalogue does, so output is stable whatever order they were built in. */
function orderedLabels(def: MetricDef, labels: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of labelNamesOf(def)) {
    const v = labels[name];
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** Escapes HELP text as both text formats do: backslash and line feed. */
export function escapeText(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A number as the exposition writes it (as prom-client writes it, so output stays byte for byte). */
function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'Nan';
  if (!Number.isFinite(v)) return v < 0 ? '-Inf' : '+Inf';
  return `${v}`;
}

/** `{name="value",...}` in catalogue order (as orderedLabels, without building the object), each value escaped (backslash, double quote, line feed); '' when none. */
export function labelString(def: MetricDef, labels: Readonly<Record<string, string>>): string {
  let out = '';
  for (const name of labelNamesOf(def)) {
    const value = labels[name];
    if (value !== undefined) out += `${out ? ',' : ''}${name}="${escapeText(value).replace(/"/g, '\\"')}"`;
  }
  return out ? `{${out}}` : '';
}

/**
 * Renders samples as Prometheus text or OpenMetrics, from `catalogue` (the families, in output
 * order) and the samples alone (no registry, no metric objects): a series that is not in
 * `samples` is not in the output. Families appear in catalogue order and only when they have
 * samples. A series is its exact label set, so
 * no label value can merge two series (a registry keyed by `name:value,` joined strings could);
 * the same label set twice is one line with the last value, at its first place.
 */
export async function renderText(samples: readonly Sample[], format: TextFormat, catalogue: readonly MetricDef[]): Promise<string> {
  const openMetrics = format === 'openmetrics';
  const byName = groupByName(samples);
  const families: string[] = [];
  for (const def of catalogue) {
    const list = byName.get(def.name);
    if (!list || list.length === 0) continue;
    // OpenMetrics names a counter family without its `_total`; its samples keep it.
    const family = openMetrics && def.type === 'counter' ? def.name.replace(/_total$/, '') : def.name;
    const series = new Map<string, number>();
    for (const s of list) series.set(labelString(def, s.labels), s.value);
    const lines = [`# HELP ${family} ${escapeText(def.help)}`, `# TYPE ${family} ${def.type}`];
    for (const [labels, value] of series) lines.push(`${def.name}${labels} ${formatValue(value)}`);
    families.push(lines.join('\n'));
  }
  return openMetrics ? `${families.join('\n')}\n# EOF\n` : `${families.join('\n\n')}\n`;
}

/** Groups samples by metric name, keeping their order. */
function groupByName(samples: readonly Sample[]): Map<string, Sample[]> {
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
  const byName = groupByName(samples);
  const ordered: Sample[] = [];
  for (const def of catalogue) {
    for (const s of byName.get(def.name) ?? []) ordered.push({ name: s.name, labels: orderedLabels(def, s.labels), value: s.value });
  }
  return JSON.stringify({ collectedAt: new Date(collectedAt).toISOString(), samples: ordered }, null, 2) + '\n';
}
