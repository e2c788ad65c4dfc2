import { JOBS, RESOLVED, SLOW_JOBS, SOURCES, type Job } from '../domain.js';
import { passBeside } from '../sources/index.js';
import type { ResolvedAggregate } from '../sources/resolved/fold.js';
import type { BudgetFacts, CycleResult, SourceResult, SourceRun } from './cycle.js';
import type { CycleFacts, PortalView, SlowViews, SourceView, SourceViews } from './samples.js';

interface Kept {
  value?: unknown;
  /** Wall time of the last success (the timestamp metric). */
  lastSuccessAt?: number;
  /** The last success on the monotonic clock (staleness). */
  lastSuccessMonotonic?: number;
  /** Whether the last run succeeded; undefined until the source's first run ends. */
  success?: boolean;
  invalid?: number;
  durationMs?: number;
  requests?: ReadonlyMap<string, number>;
}

/**
 * What `serve` remembers of one portal between runs. A source whose last run succeeded is served
 * whatever the age of its values; only while its last run failed are its last good values kept,
 * for at most its staleness limit after its last success, then dropped (never zeros).
 */
export class PortalState {
  private readonly sources = Object.fromEntries(JOBS.map((j) => [j, {}])) as Record<Job, Kept>;
  private alertsPageSize: number | undefined;

  constructor(readonly portal: string) {}

  /** Takes in one run of one source. */
  recordRun(run: SourceRun): void {
    this.take(run.source, run.result, run.finishedAt, run.finishedMonotonic, run.durationMs, run.requests);
    if (run.alertsPageSize !== undefined) this.alertsPageSize = run.alertsPageSize;
  }

  /** Takes in a one-shot run of every source. */
  record(result: CycleResult): void {
    // Stamped with the end of the whole run, so its view at that instant holds every source.
    for (const run of result.runs) this.take(run.source, run.result, result.finishedAt, result.finishedMonotonic, run.durationMs, run.requests);
    if (result.alertsPageSize !== undefined) this.alertsPageSize = result.alertsPageSize;
  }

  private take(source: Job, r: SourceResult<unknown>, at: number, atMonotonic: number, durationMs: number | undefined, requests: ReadonlyMap<string, number>): void {
    const kept = this.sources[source];
    kept.invalid = r.invalid;
    kept.durationMs = durationMs;
    kept.requests = requests;
    if (r.ok) {
      kept.value = r.value;
      kept.lastSuccessAt = at;
      kept.lastSuccessMonotonic = atMonotonic;
      kept.success = true;
    } else {
      kept.success = false;
    }
  }

  /**
   * The view to render at `now` (monotonic ms). A source whose last run succeeded has its values; one whose last
   * run failed keeps its last good values while `now` is within its staleness limit (ms) of its
   * last success, and none with a limit of 0. A source that has not run yet has an empty view (no
   * series); the portal's budget, and `serve`'s request counters since the start, are there from the start.
   */
  view(now: number, maxStalenessMs: number | Readonly<Partial<Record<Job, number>>>, budget?: BudgetFacts, requestTotals?: ReadonlyMap<string, number>): PortalView {
    const limit = (s: Job) => (typeof maxStalenessMs === 'number' ? maxStalenessMs : (maxStalenessMs[s] ?? 0));
    const viewOf = <T>(source: Job): SourceView<T> => {
      const k = this.sources[source];
      if (k.success === undefined) return {};
      const kept =
        k.success ||
        (limit(source) > 0 &&
          // Stryker disable next-line ConditionalExpression: equivalent, a source that never succeeded has no value to keep (and now - undefined is NaN, never within the limit)
          k.lastSuccessMonotonic !== undefined &&
          now - k.lastSuccessMonotonic <= limit(source));
      return { value: kept ? (k.value as T) : undefined, success: k.success, lastSuccessAt: k.lastSuccessAt, invalid: k.invalid };
    };
    const requests = new Map<string, number>();
    const durations: Partial<Record<Job, number>> = {};
    for (const s of JOBS) {
      // The pass reads /alerts too: its requests add to the open alerts' run's; each job's requests add up by endpoint.
      for (const [k, n] of this.sources[s].requests ?? []) requests.set(k, (requests.get(k) ?? 0) + n);
      if (this.sources[s].durationMs !== undefined) durations[s] = this.sources[s].durationMs;
    }
    const cycle: CycleFacts = { durations, requests, alertsPageSize: this.alertsPageSize, budget, ...(requestTotals ? { requestTotals } : {}) };
    const views = Object.fromEntries(SOURCES.map((s) => [s, viewOf(s)])) as SourceViews;
    // Each slow job once it has run.
    const slow = Object.fromEntries(SLOW_JOBS.flatMap((j) => (this.sources[j].success === undefined ? [] : [[j, viewOf(j)]]))) as SlowViews;
    const pass = slow[RESOLVED];
    if (!pass) return { portal: this.portal, ...views, ...slow, cycle };
    // The pass's acknowledgement families joined with the open alerts served beside it.
    const values = Object.fromEntries(SOURCES.map((s) => [s, views[s].value]));
    return { portal: this.portal, ...views, ...slow, resolved: { ...pass, value: passBeside(pass.value as ResolvedAggregate | undefined, values) }, cycle };
  }

  /** Whether every source has run at least once (successfully or not). */
  get collected(): boolean {
    return SOURCES.every((s) => this.sources[s].success !== undefined);
  }
}

/** The view of a single one-shot run on its own (no memory): `once` and Lambda. */
export function viewOfCycle(result: CycleResult): PortalView {
  const state = new PortalState(result.portal);
  state.record(result);
  return state.view(result.finishedMonotonic, 0, result.budget);
}
