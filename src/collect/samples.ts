/**
 * Orchestration has two rooms, and this is the pure one. collect/ turns what runs yielded into
 * samples: a run's outcome and a cycle of them (cycle.ts), what `serve` remembers between runs
 * (state.ts), the catalogue (catalogue.ts) and values → samples (here). Everything arrives as
 * data, times included: it reads no config, no clock, no network, and never imports exporter/.
 * exporter/ is the other room: it reads the config and the keys, runs the sources through each
 * portal's scheduler and reader on the clock, and hands their results to collect/.
 */
import type { Logger } from '../core/log.js';
import { JOBS, SLOW_JOBS, SOURCES, type Job, type SlowJob, type Source } from '../domain.js';
import { PORTAL_LABEL } from '../metrics/definition.js';
import type { Sample } from '../metrics/sample.js';
import { OTHER } from '../sources/cap.js';
import { moduleOf, SLOW_MODULES, SOURCE_MODULES, type JobValue, type SourceValue } from '../sources/index.js';
import type { Add } from '../sources/source.js';
import { METRICS, type MetricName } from './catalogue.js';
import type { BudgetFacts } from './cycle.js';

/** Most series per label-valued family and portal when the view does not say (POSTURE_MAX_SERIES_PER_FAMILY's default, checked equal to it by test/sources/registry.test.ts). */
export const DEFAULT_MAX_SERIES_PER_FAMILY = 1000;

/** Families whose series grow with portal data (one or more series per integration or team), capped per portal: each source's, in SOURCES order, then each slow job's. */
export const CAPPED_FAMILIES: readonly MetricName[] = [...SOURCES.map((s) => SOURCE_MODULES[s]), ...SLOW_JOBS.map((j) => SLOW_MODULES[j])].flatMap((m: { readonly name: string; readonly capped?: readonly MetricName[] }) => m.capped ?? []);

/** What is known of one source when rendering. */
export interface SourceView<T> {
  /** Data to serve; absent when the source never succeeded, or its last run failed and its last good data is past the staleness limit. */
  readonly value?: T;
  /** Whether the last run succeeded; absent until the source's first run ends (then it has no series at all). */
  readonly success?: boolean;
  /** Unix ms of the last success. */
  readonly lastSuccessAt?: number;
  /** Malformed records skipped by the last collection. */
  readonly invalid?: number;
}

/** Facts about the last run of each source of one portal, and its budget. */
export interface CycleFacts {
  /** How long the last run of each source took, in ms on the monotonic clock. */
  readonly durations: Readonly<Partial<Record<Job, number>>>;
  /** Requests of the last run of each source, by `endpoint\u0000code`. */
  readonly requests: ReadonlyMap<string, number>;
  /** Requests of every run since the start (serve's counters), by `endpoint\u0000code`. */
  readonly requestTotals?: ReadonlyMap<string, number>;
  /** Page size the last /alerts run used (0 = all in one request); absent if /alerts was not asked. */
  readonly alertsPageSize?: number;
  /** The portal's budget as the scheduler sees it. */
  readonly budget?: BudgetFacts;
}

/** What is known of each source of one portal. */
export type SourceViews = { readonly [S in Source]: SourceView<SourceValue<S>> };

/** What is known of each slow job of one portal, once it has run (the resolved-alerts pass's acknowledgement families joined with the open alerts served). */
export type SlowViews = { readonly [J in SlowJob]?: SourceView<JobValue<J>> };

/** Everything a render needs to know of one portal. */
export interface PortalView extends SourceViews, SlowViews {
  readonly portal: string;
  readonly cycle?: CycleFacts;
  /** Most series each label-valued family may have for this portal. @default DEFAULT_MAX_SERIES_PER_FAMILY */
  readonly maxSeriesPerFamily?: number;
  /** The configured interval of each source and of the resolved-alerts pass, in seconds (whether it has run or not). */
  readonly intervals?: Readonly<Partial<Record<Job, number>>>;
}

/** Exporter-wide facts. */
export interface ExporterFacts {
  readonly version: string;
  readonly runtime: 'once' | 'serve' | 'lambda';
  /** Outcome of the previous push per sink (push mode only). */
  readonly push?: ReadonlyArray<{ sink: string; ok: boolean; durationMs: number }>;
  /** serve, and every push (the Lambda, once): this process's shard of the portals (its series have no portal label). */
  readonly shard?: { readonly ordinal: number; readonly total: number };
}

/**
 * The pure transform: what is known of each portal → samples of the catalogue.
 * No I/O, no clock: everything time-related arrives in the views.
 */
export function toSamples(views: readonly PortalView[], exporter: ExporterFacts): Sample[] {
  const out: Sample[] = [];
  for (const view of views) {
    const add = (name: MetricName, labels: Record<string, string>, value: number) =>
      out.push({ name, labels: { [PORTAL_LABEL]: view.portal, ...labels }, value });
    const cap = view.maxSeriesPerFamily ?? DEFAULT_MAX_SERIES_PER_FAMILY;
    const folded = new Map<string, number>();
    for (const job of JOBS) samplesOf(job, view, add, cap, folded);
    // The sources, then each slow job once it has run: the same self-health series.
    const jobs = JOBS.filter((j) => view[j] !== undefined).map((source) => [source, view[source] as SourceView<unknown>] as const);
    for (const [source, s] of jobs) {
      if (s.success === undefined) continue;
      add('posture_collection_success', { source }, s.success ? 1 : 0);
      if (s.lastSuccessAt !== undefined) add('posture_collection_last_success_timestamp_seconds', { source }, s.lastSuccessAt / 1000);
    }
    for (const source of JOBS) {
      const seconds = view.intervals?.[source];
      if (seconds !== undefined) add('posture_collection_interval_seconds', { source }, seconds);
    }
    for (const [source, s] of jobs) {
      if (s.invalid !== undefined) add('posture_collection_invalid_records', { source }, s.invalid);
    }
    if (view.cycle) {
      for (const source of JOBS) {
        const ms = view.cycle.durations[source];
        if (ms !== undefined) add('posture_collection_duration_seconds', { source }, ms / 1000);
      }
      for (const [endpoint, code, n] of byEndpointAndCode(view.cycle.requests)) add('posture_collection_api_requests', { endpoint, code }, n);
      // Counters only where one process lives on and is scraped: serve (a push would reset them each run).
      const counting = exporter.runtime === 'serve';
      if (counting && view.cycle.requestTotals) for (const [endpoint, code, n] of byEndpointAndCode(view.cycle.requestTotals)) add('posture_api_requests_total', { endpoint, code }, n);
      if (view.cycle.alertsPageSize !== undefined) add('posture_collection_alerts_page_size', {}, view.cycle.alertsPageSize);
      const budget = view.cycle.budget;
      if (budget) {
        add('posture_budget_share', { kind: 'configured' }, budget.configuredShare);
        add('posture_budget_share', { kind: 'effective' }, budget.effectiveShare);
        add('posture_budget_rate_limited_responses_last_hour', {}, budget.rateLimitedLastHour);
        if (counting) add('posture_budget_rate_limited_responses_total', {}, budget.rateLimitedTotal);
      }
    }
    for (const family of CAPPED_FAMILIES) {
      const n = folded.get(family);
      if (n !== undefined) add('posture_series_folded', { family }, n);
    }
    for (const p of exporter.push ?? []) {
      add('posture_push_success', { sink: p.sink }, p.ok ? 1 : 0);
      add('posture_push_duration_seconds', { sink: p.sink }, p.durationMs / 1000);
    }
    add('posture_exporter_build_info', { version: exporter.version, runtime: exporter.runtime }, 1);
  }
  // The shard's own series carry no portal: a shard that owns no portal still says what it is.
  if (exporter.shard) {
    out.push({ name: 'posture_exporter_shard_ordinal', labels: {}, value: exporter.shard.ordinal });
    out.push({ name: 'posture_exporter_total_shards', labels: {}, value: exporter.shard.total });
  }
  return out;
}

/** Request counts keyed `endpoint\u0000code` (our own words, never portal text), sorted. */
function byEndpointAndCode(requests: ReadonlyMap<string, number>): Array<[string, string, number]> {
  // Stryker disable next-line EqualityOperator: equivalent, the keys of a Map are distinct, so a <= b is a < b
  const sorted = [...requests].sort(([a], [b]) => (a < b ? -1 : 1));
  return sorted.map(([key, n]) => {
    const [endpoint, code] = key.split('\u0000') as [string, string];
    return [endpoint, code, n];
  });
}

/** The samples of one job's value, if it has one. */
function samplesOf<J extends Job>(job: J, view: PortalView, add: (name: MetricName, labels: Record<string, string>, value: number) => void, cap: number, folded: Map<string, number>): void {
  const value = (view[job] as SourceView<JobValue<J>> | undefined)?.value;
  if (value !== undefined) moduleOf(job).samples(value, add as Add, cap, folded);
}

// ------------------------------------------------------------------ warnings

/** Logs one warning the first time a family of a portal is folded (renders repeat every scrape and cycle; the warning does not). */
export class FoldWarnings {
  private readonly warned = new Set<string>();

  constructor(private readonly logger: Logger) {}

  /** Looks at the `posture_series_folded` samples of one render. */
  check(samples: readonly Sample[]): void {
    for (const s of samples) {
      if (s.name !== 'posture_series_folded' || s.value === 0) continue;
      const portal = s.labels[PORTAL_LABEL] ?? '';
      const family = s.labels.family ?? '';
      const key = `${portal}\u0000${family}`;
      if (this.warned.has(key)) continue;
      this.warned.add(key);
      // A capped family folds by its first label: integration, or team.
      const label = METRICS[family]?.labels[0] ?? 'integration';
      this.logger.warn(`capped ${family}: folded the smallest ${label}s into ${label}="${OTHER}" (raise POSTURE_MAX_SERIES_PER_FAMILY to keep more)`, { portal, family, folded: s.value });
    }
  }
}
