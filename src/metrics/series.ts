/**
 * One series per rendered label set: the invariant every exposition keeps (Prometheus text,
 * OpenMetrics, JSON, timestamped OpenMetrics, OTLP, remote write, Pushgateway bodies). Portal
 * text reaches label values, and two different strings can be written as the same series: every
 * format is UTF-8, where a lone UTF-16 surrogate (legal in JSON text) has no encoding and is
 * written as U+FFFD, so `X\ud800` and `X\ud801` are both `X�`; and Prometheus reads an empty label
 * value as no label at all. Each renderer and sink passes its samples through `renderedSeries`
 * first, so what two samples share on the wire they share here, and their values are combined
 * by their family's rule (its definition's `combine`), never written twice.
 */
import { asWritten } from '../core/utf8.js';
import { PORTAL_LABEL, type MetricDef } from './definition.js';
import type { Sample } from './sample.js';

const labelNames = new WeakMap<MetricDef, readonly string[]>();
const byName = new WeakMap<readonly MetricDef[], ReadonlyMap<string, MetricDef>>();
const NONE: readonly string[] = [];

/** The families of a catalogue by name, which each of its samples carries (worked out once per catalogue). */
function defsOf(catalogue: readonly MetricDef[]): ReadonlyMap<string, MetricDef> {
  let defs = byName.get(catalogue);
  // Stryker disable next-line ConditionalExpression: equivalent, a cache: the map worked out again is the same map
  if (!defs) byName.set(catalogue, (defs = new Map(catalogue.map((def) => [def.name, def] as const))));
  return defs;
}

/** Every label a family may carry, in output order: `portal`, its own labels, then optional ones (worked out once per family). */
function labelNamesOf(def: MetricDef): readonly string[] {
  let names = labelNames.get(def);
  // Stryker disable next-line ConditionalExpression: equivalent, a cache: the names worked out again are the same names
  if (!names) labelNames.set(def, (names = [PORTAL_LABEL, ...def.labels, ...(def.optionalLabels ?? NONE)]));
  return names;
}

/** Combines two values of one rendered series by the family's rule: a sum unless it says min or max. */
function combine(def: MetricDef | undefined, a: number, b: number): number {
  switch (def?.combine) {
    case 'min':
      return Math.min(a, b);
    case 'max':
      return Math.max(a, b);
    default:
      return a + b;
  }
}

/**
 * The samples as the formats write them, one per series: label values as UTF-8 carries them,
 * labels in the order of their family in `catalogue` (any others after them, by name); samples whose label sets are
 * written alike, an empty value counting as no label (as Prometheus reads it), are combined into
 * the first one's place. `pointOf` tells apart samples of one series that are different points
 * (backfill's timestamps); without it every sample of a series is the same point.
 */
export function renderedSeries<S extends Sample>(samples: readonly S[], catalogue: readonly MetricDef[], pointOf?: (s: S) => number): S[] {
  const defs = defsOf(catalogue);
  const out: S[] = [];
  const at = new Map<string, number>();
  for (const s of samples) {
    const def = defs.get(s.name);
    const names = def ? labelNamesOf(def) : NONE;
    const labels: Record<string, string> = {};
    let key = s.name;
    let placed = 0;
    for (const name of names) {
      const raw = s.labels[name];
      if (raw === undefined) continue;
      // Stryker disable next-line UpdateOperator: equivalent, `placed` only spares the search below, which finds nothing when every label is placed
      placed++;
      key = place(labels, key, name, raw);
    }
    // Labels the catalogue does not name (none the exporter makes), after its own, by name.
    // Stryker disable next-line ConditionalExpression: equivalent, the search finds nothing when every label is placed; skipping it is for speed
    if (placed !== Object.keys(s.labels).length) {
      for (const name of Object.keys(s.labels).filter((n) => !names.includes(n)).sort()) key = place(labels, key, name, s.labels[name]!);
    }
    if (pointOf) key += '\u0000@' + pointOf(s);
    const i = at.get(key);
    if (i === undefined) {
      at.set(key, out.length);
      out.push({ ...s, labels });
    } else {
      out[i] = { ...out[i]!, value: combine(def, out[i]!.value, s.value) };
    }
  }
  return out;
}

/** Sets `labels[name]` to `raw` as written and returns `key` extended by it (an empty value is no label). */
function place(labels: Record<string, string>, key: string, name: string, raw: string): string {
  const value = asWritten(raw);
  labels[name] = value;
  // Each value with its length: no value can reach another label.
  return value === '' ? key : key + '\u0000' + name + '\u0000' + value.length + '\u0000' + value;
}
