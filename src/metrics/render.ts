import { Counter, Gauge, Registry, type RegistryContentType } from 'prom-client';
import { CATALOGUE, PORTAL_LABEL, type MetricDef } from './catalogue.js';
import type { Sample } from './sample.js';

/** Text formats the pull endpoint and `once` can produce. */
export type TextFormat = 'prometheus' | 'openmetrics';

/** The Content-Type header for a text format. */
export function contentType(format: TextFormat): string {
  return format === 'openmetrics' ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE;
}

/** Every label a family may carry, in output order: `portal`, its own labels, then optional ones. */
export function labelNamesOf(def: MetricDef): string[] {
  return [PORTAL_LABEL, ...def.labels, ...(def.optionalLabels ?? [])];
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

/**
 * Renders samples as Prometheus text or OpenMetrics. A new registry per call (no global state):
 * a series that is not in `samples` is not in the output. Families appear in catalogue order and
 * only when they have samples.
 */
export async function renderText(samples: readonly Sample[], format: TextFormat): Promise<string> {
  // prom-client's typings omit the constructor that takes the content type.
  const RegistryWithType = Registry as unknown as new (type: string) => Registry<RegistryContentType>;
  const registry = new RegistryWithType(contentType(format));
  const byName = groupByName(samples);
  for (const def of CATALOGUE) {
    const list = byName.get(def.name);
    if (!list || list.length === 0) continue;
    const options = { name: def.name, help: def.help, labelNames: labelNamesOf(def), registers: [registry] };
    if (def.type === 'counter') {
      // A fresh counter per render, so inc() by the value sets it (OpenMetrics: the family without _total).
      const counter = new Counter(options);
      for (const s of list) counter.inc(orderedLabels(def, s.labels), s.value);
    } else {
      const gauge = new Gauge(options);
      for (const s of list) gauge.set(orderedLabels(def, s.labels), s.value);
    }
  }
  const text = await registry.metrics();
  if (format === 'openmetrics') return text.endsWith('\n') ? text : text + '\n';
  return text;
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

/** Renders samples as JSON: `{ collectedAt, samples: [{ name, labels, value }] }` in catalogue order. */
export function renderJson(samples: readonly Sample[], collectedAt: number): string {
  const byName = groupByName(samples);
  const ordered: Sample[] = [];
  for (const def of CATALOGUE) {
    for (const s of byName.get(def.name) ?? []) ordered.push({ name: s.name, labels: orderedLabels(def, s.labels), value: s.value });
  }
  return JSON.stringify({ collectedAt: new Date(collectedAt).toISOString(), samples: ordered }, null, 2) + '\n';
}
