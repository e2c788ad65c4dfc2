/**
 * What a source is to the rest of the exporter: its requests (a run through the portal's
 * scheduler), the metric families it feeds, and how its value becomes samples. Register a new
 * source in src/sources/index.ts and the domain's SOURCES (a live one) or SLOW_JOBS (one of its own
 * interval); nothing else names it.
 */
import type { Source } from '../domain.js';
import type { MetricDef, Origin } from '../metrics/definition.js';
import type { RunContext } from '../schedule/request.js';

/** Said of every cached family: the value is what the last run read. */
export const CACHED = ' Cached: read from the portal on the exporter\'s polling interval, not at scrape time.';

/** Adds one sample of family `N` (the portal label is added by the caller). */
export type Add<N extends string = string> = (name: N, labels: Record<string, string>, value: number) => void;

/** What a run tells the exporter while it goes, besides its value. */
export interface RunHooks {
  /** The page size a paged run is using (0 = all in one request). */
  onPageSize(limit: number): void;
}

/** What feeds a family from the portal: a job (a live source, or a slow one). */
type SourceOrigin = Exclude<Origin, 'exporter'>;

/** A family of the catalogue fed by one source. */
export type SourceFamily<S extends SourceOrigin = Source> = MetricDef & { readonly origin: S };

/** One source: its run, its families and its samples. */
export interface SourceModule<S extends SourceOrigin, T, F extends readonly SourceFamily<S>[] = readonly SourceFamily<S>[]> {
  readonly name: S;
  /** Its families, in catalogue order. */
  readonly families: F;
  /** Its families whose series grow with portal data, capped per portal (POSTURE_MAX_SERIES_PER_FAMILY); unset: none. */
  readonly capped?: readonly F[number]['name'][];
  /** One run: its requests through `request`, paging and total checks; throws on failure. */
  run(ctx: RunContext, hooks: RunHooks): Promise<T>;
  /** The samples of a value, with the series cap: `folded` gets, per capped family, the series folded or dropped. */
  samples(value: T, add: Add<F[number]['name']>, cap: number, folded: Map<string, number>): void;
  /** Malformed records the run skipped. */
  invalidOf(value: T): number;
}
