import type { Job, SlowJob, Source } from '../domain.js';
import type { JobValue, SourceValue } from '../sources/index.js';

/** The outcome of collecting one source. */
export type SourceResult<T> =
  | { readonly ok: true; readonly value: T; readonly invalid: number }
  | { readonly ok: false; readonly error: Error; readonly invalid?: number };

/** The values each source yields. */
export type SourceValues = { readonly [S in Source]: SourceValue<S> };

/** The outcome of each source of one portal. */
export type SourceResults = { readonly [S in Source]: SourceResult<SourceValues[S]> };

/** One run of one job (a source, or a slow job) of one portal: its outcome, its time and the requests it sent. */
export interface SourceRun<S extends Job = Job> {
  readonly source: S;
  readonly result: SourceResult<JobValue<S>>;
  /** Wall time (epoch ms) of the start and the end: timestamps. */
  readonly startedAt: number;
  readonly finishedAt: number;
  /** The end on the monotonic clock: staleness is counted from it. */
  readonly finishedMonotonic: number;
  /** How long the run took, on the monotonic clock (a wall clock step does not change it). */
  readonly durationMs: number;
  /** Requests sent, by `endpoint\u0000code`. */
  readonly requests: ReadonlyMap<string, number>;
  /** /alerts only: the page size used (0 = all in one request). */
  readonly alertsPageSize?: number;
}

/** The outcome of each slow job of one portal that a one-shot run included (its interval had passed). */
export type SlowResults = { readonly [J in SlowJob]?: SourceResult<JobValue<J>> };

/** Everything a one-shot run (`once`, Lambda) learned about one portal: a run of every source, and of each slow job due. */
export interface CycleResult extends SourceResults, SlowResults {
  readonly portal: string;
  /** Wall time (epoch ms) of the first run's start and the last run's end. */
  readonly startedAt: number;
  readonly finishedAt: number;
  /** The last run's end on the monotonic clock. */
  readonly finishedMonotonic: number;
  /** From the first run's start to the last run's end, on the monotonic clock. */
  readonly durationMs: number;
  /** Requests sent, by `endpoint\u0000code`. */
  readonly requests: ReadonlyMap<string, number>;
  /** The run of each source (and of each slow job) this result was put together from. */
  readonly runs: readonly SourceRun[];
  /** The /alerts page size used (0 = all in one request); absent when /alerts was not asked. */
  readonly alertsPageSize?: number;
  /** The portal's budget at the end. */
  readonly budget?: BudgetFacts;
}

/** What the scheduler says of a portal's budget. */
export interface BudgetFacts {
  readonly configuredShare: number;
  readonly effectiveShare: number;
  readonly rateLimitedLastHour: number;
  /** 429s since the scheduler was created (the process, or the Lambda container). */
  readonly rateLimitedTotal: number;
}

/** Puts the runs of every source together. */
export function cycleOf(portal: string, all: readonly SourceRun[], budget?: BudgetFacts): CycleResult {
  const requests = new Map<string, number>();
  for (const run of all) for (const [k, n] of run.requests) requests.set(k, (requests.get(k) ?? 0) + n);
  return {
    portal,
    startedAt: Math.min(...all.map((r) => r.startedAt)),
    finishedAt: Math.max(...all.map((r) => r.finishedAt)),
    // The runs start together, so the longest run spans the whole.
    finishedMonotonic: Math.max(...all.map((r) => r.finishedMonotonic)),
    durationMs: Math.max(...all.map((r) => r.durationMs)),
    ...(Object.fromEntries(all.map((r) => [r.source, r.result])) as unknown as SourceResults),
    requests,
    runs: all,
    ...pageSizeOf(all),
    ...(budget ? { budget } : {}),
  };
}

/** The page size of the run that paged, if any. */
function pageSizeOf(runs: readonly SourceRun[]): { alertsPageSize?: number } {
  const paged = runs.find((r) => r.alertsPageSize !== undefined);
  return paged ? { alertsPageSize: paged.alertsPageSize } : {};
}
