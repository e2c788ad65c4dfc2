/**
 * What a metric family is: its name, help, type, unit, labels and origin. The floor below the
 * sources: each source declares its families with it, the catalogue (src/collect/catalogue.ts)
 * puts them together with the exporter's own above the sources, and the renderers here take that
 * catalogue as an argument, so nothing in metrics/ imports upward.
 */

import type { Job } from '../domain.js';

/** Label added to every series but the process's own (`noPortal`). */
export const PORTAL_LABEL = 'portal';

/**
 * Where a family's samples come from: one of the jobs (a live source, or a slow one on its own
 * interval: the resolved-alerts pass, the access settings, the directory), or the exporter itself.
 */
export type Origin = Job | 'exporter';

/** One family: what every renderer and the README's metrics table need to know of it. */
export interface MetricDef {
  /** Prometheus name (also the OTLP instrument name). */
  readonly name: string;
  readonly help: string;
  /**
   * `counter`: a `_total` that only grows while the process lives (serve only, where rate() reads it).
   * `gauge`: everything else, windowed figures included (a count over the last 7 days goes down as
   * alerts age out of the window, which a summary's `_count` or a counter may never do).
   */
  readonly type: 'gauge' | 'counter';
  /** UCUM unit for OTLP (`1` dimensionless, `s` seconds, `{device}` annotations). */
  readonly unit: string;
  /** Labels besides `portal`, in output order. */
  readonly labels: readonly string[];
  /** The process's own series, about no portal: it never carries `portal` (the shard gauges). */
  readonly noPortal?: true;
  /** Labels that are present on some series only (the Vitals `tag`). */
  readonly optionalLabels?: readonly string[];
  readonly origin: Origin;
  /**
   * How samples written as one series combine (src/metrics/series.ts): a sum (the default, right
   * for counts), or `min`/`max` where a sum would mean nothing.
   */
  readonly combine?: 'min' | 'max';
  /** One line for the README's metrics table. */
  readonly doc: string;
}
