/**
 * Orchestration has two rooms, and this is the one with I/O. exporter/ is the collection service:
 * it reads the config and the keys, runs each source through its portal's scheduler and reader on
 * the clock, names a failed run's cause (failures.ts), and hands every result to collect/, the pure
 * room (runs → remembered state → samples, no config, no clock, no network), which never imports
 * exporter/.
 */
import type { Dispatcher } from 'undici';
import type { Config, PortalConfig } from '../config/load.js';
import { intervalOf, oneShotInputOf, PortalPlanner, slowJobsThatFit, stalenessMs } from '../schedule/fit.js';
import { wallIso, type Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { AuthenticationError, LateError, PortalUnreachableError, PostureError, TimeoutError, UntrustedCertificateError } from '../errors.js';
import { cycleOf, type BudgetFacts, type CycleResult, type SourceResult, type SourceRun } from '../collect/cycle.js';
import { FoldWarnings, toSamples, type ExporterFacts } from '../collect/samples.js';
import { PortalState, viewOfCycle } from '../collect/state.js';
import { isSlowJob, JOBS, RESOLVED, SLOW_JOBS, SLOW_RUN_NAMES, SOURCES, type Job, type SlowJob } from '../domain.js';
import type { PassClaim, PassLedger } from '../schedule/passes.js';
import type { ResolvedMemory } from '../sources/resolved/run.js';
import type { Sample } from '../metrics/sample.js';
import { endpointsOf, moduleOf } from '../sources/index.js';
import { fetchArchive, type VitalsList } from '../sources/vitals.js';
import { Deadline } from '../schedule/deadline.js';
import type { PortalMemory, RunContext } from '../schedule/request.js';
import type { SendLedger } from '../schedule/ledger.js';
import { portalOneShotLeastSeconds, portalOneShotSeconds, type OneShotInput } from '../schedule/one-shot.js';
import { portalIdentity } from '../config/identity.js';
import { PortalScheduler } from '../schedule/scheduler.js';
import { PortalReader } from '../upstream/reader.js';
import { VERSION } from '../version.js';
import { failureLine, stopsThePortal } from './failures.js';
import { forgetSecret, resolveSecret, type KeyStoreOptions } from '../config/secrets.js';

/** Beyond the reader's timeouts, how long a request may take to begin its answer (the event loop, DNS): part of each claim's flight. */
const FLIGHT_SLACK_MS = 5_000;

/** What the exporter needs from outside. */
export interface ExporterDeps {
  clock: Clock;
  logger: Logger;
  runtime: ExporterFacts['runtime'];
  dispatcher?: Dispatcher;
  keyStore?: KeyStoreOptions;
  /** Called with every secret learned at run time (keys from files and stores), for log redaction. */
  onSecret?: (secret: string) => void;
  random?: () => number;
  /** The ledger of a portal (by identity), shared with other processes (the state directory, a DynamoDB table); unset or undefined: this process's requests only. */
  ledgerOf?: (identity: string) => SendLedger | undefined;
  /**
   * When each entry last ran each slow job (the resolved-alerts pass, the access settings, the
   * directory): a one-shot run (`collect`) claims and runs the slow jobs whose interval has passed,
   * and gives back one that failed. Unset: `collect` runs no slow job (`serve` runs each on its own interval).
   */
  passes?: PassLedger;
}

/** One portal: its scheduler (the budget), what the jobs learned, and what `serve` remembers. */
export interface PortalRuntime {
  readonly config: PortalConfig;
  /** The portal's identity (normalised base URL): entries with the same one share `scheduler`. */
  readonly identity: string;
  /** The portal's budget, shared by every entry of the portal. */
  readonly scheduler: PortalScheduler;
  readonly memory: PortalMemory & ResolvedMemory;
  readonly state: PortalState;
  /** Deadlines of the one-shot runs under way (they follow the plan when the share is cut). */
  readonly oneShots: Set<Deadline>;
  /** The plan `serve` keeps of the portal as its runs teach it, shared by every entry of the portal. */
  readonly planner: PortalPlanner;
  /**
   * Every request sent to the portal since the start (serve's counters; backfill's too), by
   * `endpoint\u0000code`, counted as each is answered; 200 and 429 of every source's endpoint
   * start at 0, so rate() and increase() read 0 rather than nothing.
   */
  readonly requestTotals: Map<string, number>;
}

/** When a run must end: a deadline (ms on `clock.monotonic()`) and, for one-shot runs, how far the plan may push it. */
export interface RunWindow {
  deadline: number;
  /** Latest the deadline may be extended to as the plan learns list sizes; undefined: fixed. */
  cap?: number;
  signal?: AbortSignal;
}

/** A slow job of one entry in a one-shot run: claimed (due) or not, and the error of a claim that failed. */
type PassRun = PassClaim & { readonly error?: Error };

/**
 * The name a slow job of an entry is remembered under in the pass ledger: the entry's name for the
 * resolved-alerts pass (as its records have always been), the entry and the job for the others.
 */
function ledgerEntryOf(entry: string, job: SlowJob): string {
  return job === RESOLVED ? entry : `${entry}\u0000${job}`;
}

/**
 * The collection service shared by `once`, `serve`, the Lambda handler and backfill: one
 * scheduler per portal for the life of the process (its budget, shared by every entry that reads
 * the portal, each with its own key and series), sources run as jobs on it, one portal's failure
 * never touching another.
 */
export class Exporter {
  readonly portals: readonly PortalRuntime[];
  /** Warns once per portal and family when the series cap folds series. */
  private readonly foldWarnings: FoldWarnings;

  constructor(
    readonly config: Config,
    private readonly deps: ExporterDeps,
  ) {
    this.foldWarnings = new FoldWarnings(deps.logger);
    const schedulers = new Map<string, PortalScheduler>();
    const schedulerOf = (p: PortalConfig, identity: string): PortalScheduler => {
      let scheduler = schedulers.get(identity);
      if (scheduler) return scheduler;
      // The config gives every entry of a portal the same share (it refuses entries that disagree).
      const entries = config.portals.filter((q) => portalIdentity(q.baseUrl) === identity).map((q) => q.name);
      scheduler = new PortalScheduler({
        share: p.requestsPerMinute,
        clock: deps.clock,
        logger: deps.logger.child(entries.length > 1 ? { portal: p.name, entries } : { portal: p.name }),
        maxRetryAfterMs: config.maxRetryAfterSeconds * 1000,
        ledger: deps.ledgerOf?.(identity),
        // A request's answer begins within the reader's connect and headers timeouts, or it fails; the ledger counts one never said to have arrived until then.
        flightMs: (config.connectTimeoutSeconds + config.requestTimeoutSeconds) * 1000 + FLIGHT_SLACK_MS,
      });
      schedulers.set(identity, scheduler);
      return scheduler;
    };
    const memories = new Map(config.portals.map((p) => [p, {}]));
    const planners = new Map<string, PortalPlanner>();
    const plannerOf = (identity: string): PortalPlanner => {
      let planner = planners.get(identity);
      if (planner) return planner;
      const entries = config.portals.filter((q) => portalIdentity(q.baseUrl) === identity);
      planner = new PortalPlanner(entries.map((q) => ({ config: q, memory: memories.get(q)! })), config, deps.logger.child({ portal: entries[0]!.name }));
      planners.set(identity, planner);
      return planner;
    };
    this.portals = config.portals.map((p) => ({
      config: p,
      identity: portalIdentity(p.baseUrl),
      scheduler: schedulerOf(p, portalIdentity(p.baseUrl)),
      memory: memories.get(p)!,
      state: new PortalState(p.name),
      oneShots: new Set(),
      planner: plannerOf(portalIdentity(p.baseUrl)),
      requestTotals: new Map([...new Set(JOBS.flatMap(endpointsOf))].flatMap((endpoint) => ['200', '429'].map((code): [string, number] => [`${endpoint}\u0000${code}`, 0]))),
    }));
  }

  /** The slow jobs each entry's one-shot run under way includes. */
  private readonly passing = new Map<PortalRuntime, ReadonlySet<SlowJob>>();

  /** How long a one-shot run of this entry may take by default (the plan of every entry that shares its budget, the slow jobs due included), in ms. */
  oneShotMs(p: PortalRuntime): number {
    return portalOneShotSeconds(this.oneShotInputs(p), this.config.maxRetries, this.config.maxRetryAfterSeconds) * 1000;
  }

  /** What a one-shot run of every entry that shares `p`'s budget plans with, the slow jobs each includes. */
  private oneShotInputs(p: PortalRuntime): OneShotInput[] {
    return this.portals.filter((q) => q.scheduler === p.scheduler).map((q) => oneShotInputOf(q.config, q.memory, q.scheduler.share.effective, this.passing.get(q) ?? new Set()));
  }

  /**
   * One-shot (`once`, Lambda): every source of every portal, concurrently, each portal's requests
   * through its scheduler. The deadline defaults to the plan (and may grow with it up to `cap`);
   * an explicit POSTURE_CYCLE_TIMEOUT_SECONDS caps it.
   */
  async collect(options: { cap?: number; signal?: AbortSignal } = {}): Promise<CycleResult[]> {
    const now = this.deps.clock.monotonic();
    const explicit = this.config.cycleTimeoutSeconds !== undefined ? now + this.config.cycleTimeoutSeconds * 1000 : Infinity;
    const cap = Math.min(options.cap ?? Infinity, explicit);
    // Requests other processes (an earlier run, a restart) sent in the last window delay this run at most until they leave it.
    // A ledger that cannot be read fails its portal's run before any request (fail closed).
    const clearAt = new Map(await Promise.all([...new Set(this.portals.map((p) => p.scheduler))].map(async (s) => [s, await s.refresh().catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))))] as const)));
    // Each slow job of each entry whose interval has passed since its last run (every one with no record), claimed.
    const passes = new Map(
      await Promise.all(this.portals.map(async (p) => [p, new Map(await Promise.all(SLOW_JOBS.map(async (j) => [j, await this.claimPass(p, j, clearAt.get(p.scheduler)!)] as const)))] as const)),
    );
    this.passing.clear();
    // Of the slow jobs due, those that fit the run's window beside the live sources; the others are given back for a later run.
    for (const [p, claims] of passes) {
      const due = SLOW_JOBS.filter((j) => claims.get(j)?.due);
      const fit = new Set(slowJobsThatFit(p.config, p.memory, p.scheduler.share.effective, due));
      this.passing.set(p, fit);
      // A run of capped time (the Lambda's timeout) leaves out, last first, the slow jobs it could not finish by then even
      // when nothing fails: a list cut part-way is read again whole, so it would spend its requests for nothing every run.
      const clear = clearAt.get(p.scheduler);
      const from = typeof clear === 'number' ? clear : now;
      for (const j of [...fit].reverse()) {
        const needs = portalOneShotLeastSeconds(this.oneShotInputs(p)) * 1000;
        if (from + needs <= cap) break;
        fit.delete(j);
        this.deps.logger.warn(
          `the ${SLOW_RUN_NAMES[j].run} (${SLOW_RUN_NAMES[j].reads}) does not fit this run's time: the run would need at least ${Math.ceil(needs / 1000)} s at ${p.scheduler.share.effective}/min and has ${Math.floor((cap - from) / 1000)} s, so it is given back; read it with serve, or give the run more time (the Lambda's timeout, POSTURE_CYCLE_TIMEOUT_SECONDS)`,
          { portal: p.config.name, source: j, needsSeconds: Math.ceil(needs / 1000), hasSeconds: Math.floor((cap - from) / 1000) },
        );
      }
      for (const j of due) {
        if (fit.has(j)) continue;
        await claims.get(j)!.release();
        claims.delete(j);
      }
    }
    const results = await Promise.all(
      this.portals.map((p) => {
        const clear = clearAt.get(p.scheduler)!;
        const pass = passes.get(p)!;
        return clear instanceof Error ? this.collectPortal(p, { deadline: now, signal: options.signal }, pass, clear) : this.collectPortal(p, { deadline: Math.min(clear + this.oneShotMs(p), cap), cap, signal: options.signal }, pass);
      }),
    );
    // The run ends once the ledger holds when each request could last have reached the portal (a later run counts from there).
    await Promise.all([...clearAt.keys()].map((s) => s.flush()));
    return results;
  }

  /**
   * Claims slow job `job` of `p` for a one-shot run when it is due; undefined without a pass
   * ledger. With the portal's ledger unreadable (`clear` an Error) nothing is claimed, and the job
   * fails with it as every source does; a claim that fails fails that job alone.
   */
  private async claimPass(p: PortalRuntime, job: SlowJob, clear: number | Error): Promise<PassRun | undefined> {
    const ledger = this.deps.passes;
    if (!ledger) return undefined;
    if (clear instanceof Error) return { due: true, release: () => Promise.resolve() };
    try {
      return await ledger.claim(p.identity, ledgerEntryOf(p.config.name, job), intervalOf(p.config, job) * 1000);
    } catch (err) {
      return { due: true, release: () => Promise.resolve(), error: err instanceof Error ? err : new Error(String(err)) };
    }
  }

  private async collectPortal(p: PortalRuntime, window: RunWindow, passes: ReadonlyMap<SlowJob, PassRun | undefined>, ledgerError?: Error): Promise<CycleResult> {
    // A rejected key, an unreachable portal or an untrusted certificate fails every source alike:
    // the first such failure stops this portal's other runs (each still reports it).
    const portalFailed = new AbortController();
    const signal = window.signal ? AbortSignal.any([window.signal, portalFailed.signal]) : portalFailed.signal;
    // A ledger that cannot be read fails every source before any request: said once for the portal.
    if (ledgerError) this.deps.logger.error(`collecting failed before any request: ${ledgerError.message}`, { portal: p.config.name, reason: 'ledger', error: ledgerError.name });
    const apiKey = ledgerError ?? (await this.apiKeyOf(p));
    // A slow job whose claim failed fails with the claim's error, before any request.
    const claimError = (source: Job) => (ledgerError ? undefined : passes.get(source as SlowJob)?.error);
    const run = <S extends Job>(source: S) =>
      this.runSource(p, source, { ...window, signal }, claimError(source) ?? apiKey, ledgerError !== undefined).then((r) => {
        if (!r.result.ok && stopsThePortal(r.result.error)) portalFailed.abort(r.result.error);
        return r;
      });
    const due = SLOW_JOBS.filter((j) => passes.get(j)?.due);
    const jobs = [...SOURCES, ...due];
    const runs = await Promise.all(jobs.map(run));
    const result = cycleOf(p.config.name, runs, this.budgetOf(p));
    p.state.record(result);
    // A slow job that failed is given back: the next run tries again.
    await Promise.all(due.filter((j) => !result[j]?.ok).map((j) => passes.get(j)!.release()));
    const failed = jobs.filter((s) => !jobOk(result, s));
    this.deps.logger.info('collection finished', {
      portal: p.config.name,
      durationMs: result.durationMs,
      requests: totalRequests(result.requests),
      failed,
    });
    return result;
  }

  /** The API key of a portal, or the error that stops every source of this run (each source's line reports it). */
  private async apiKeyOf(p: PortalRuntime): Promise<string | Error> {
    try {
      const key = await resolveSecret(p.config.key, this.deps.keyStore);
      this.deps.onSecret?.(key);
      return key;
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  }

  /**
   * One run of one source: its requests through the portal's scheduler until done, the deadline,
   * or a real error. Never throws: a failure is the run's result, logged once (`error`, or `warn`
   * when late) naming the source and the cause, unless the run was stopped from outside or
   * `quiet` (the cause was logged for the portal already).
   */
  async runSource<S extends Job>(p: PortalRuntime, source: S, window: RunWindow, apiKey?: string | Error, quiet = false): Promise<SourceRun<S>> {
    const { clock } = this.deps;
    const logger = this.deps.logger.child({ portal: p.config.name });
    const startedAt = clock.now();
    const started = clock.monotonic();
    const requests = new Map<string, number>();
    let alertsPageSize: number | undefined;
    const key = apiKey ?? (await this.apiKeyOf(p));
    const finish = (result: SourceResult<unknown>): SourceRun<S> => {
      const finishedMonotonic = clock.monotonic();
      return {
        source,
        result: result as SourceRun<S>['result'],
        startedAt,
        finishedAt: clock.now(),
        finishedMonotonic,
        durationMs: finishedMonotonic - started,
        requests,
        ...(alertsPageSize !== undefined ? { alertsPageSize } : {}),
      };
    };
    const failed = (error: Error): SourceRun<S> => {
      // Already said once for the portal (a ledger that cannot be read).
      if (quiet) return finish({ ok: false, error });
      const line = failureLine(source, error);
      // The message is the line's msg; the error's name and cause (e.g. ECONNREFUSED) follow it.
      logger[line.level](line.msg, { source, reason: line.reason, requests: totalRequests(requests), error: error.name, ...(error.cause !== undefined ? { cause: error.cause } : {}) });
      return finish({ ok: false, error });
    };
    if (key instanceof Error) return failed(key);
    const deadline = new Deadline(window.deadline, clock, window.cap, window.signal);
    const ctx = this.contextOf(p, key, deadline, requests, window.cap !== undefined);
    if (window.cap !== undefined) p.oneShots.add(deadline);
    try {
      const module = moduleOf(source);
      const value = await module.run(ctx, { onPageSize: (limit) => (alertsPageSize = limit) });
      return finish({ ok: true, value, invalid: module.invalidOf(value) });
    } catch (err) {
      const error = this.explain(source, err, deadline);
      // A rejected key may have been rotated in its store: fetch it again next time.
      if (error instanceof AuthenticationError) forgetSecret(p.config.key);
      // Stopped from outside (serve stopping): not a failure to report. Stopped by another source's
      // rejected key or unreachable portal (a PostureError reason): this source failed alike.
      if (window.signal?.aborted && !(window.signal.reason instanceof PostureError)) return finish({ ok: false, error });
      return failed(error);
    } finally {
      deadline.close();
      p.oneShots.delete(deadline);
    }
  }

  /** What the jobs of one run need: the portal's scheduler and memory, a reader with the key, the deadline. */
  private contextOf(p: PortalRuntime, apiKey: string, deadline: Deadline, requests: Map<string, number>, oneShot: boolean): RunContext {
    const { clock } = this.deps;
    const logger = this.deps.logger.child({ portal: p.config.name });
    return {
      portal: p.config,
      scheduler: p.scheduler,
      reader: new PortalReader({
        baseUrl: p.config.baseUrl,
        apiKey,
        apiKeyHeader: p.config.apiKeyHeader,
        clock,
        logger,
        dispatcher: this.deps.dispatcher,
        connectTimeoutMs: this.config.connectTimeoutSeconds * 1000,
        headersTimeoutMs: this.config.requestTimeoutSeconds * 1000,
        bodyTimeoutMs: this.config.requestTimeoutSeconds * 1000,
      }),
      clock,
      logger,
      deadline,
      maxRetries: this.config.maxRetries,
      random: this.deps.random ?? Math.random,
      memory: p.memory,
      ...(oneShot && (this.passing.get(p)?.size ?? 0) > 0 ? { withPass: true } : {}),
      // serve: the lists' pages as the portal's plan leaves them, at the share in force.
      ...(oneShot ? {} : { pagesPlanned: () => p.planner.pages(p.scheduler.share.effective) }),
      requests,
      totals: p.requestTotals,
      ...(oneShot ? { replan: () => this.replan(p) } : {}),
    };
  }

  /**
   * One archived day of Vitals (backfill), whole portal or one tag: a job of the portal's
   * scheduler at the lowest priority, so live collection in the same process goes first. No
   * deadline: it waits as long as the share needs; `signal` stops it. `onRequest` hears each attempt.
   */
  async fetchArchiveDay(portal: PortalConfig, day: string, tag: string | undefined, signal?: AbortSignal, onRequest?: () => void): Promise<VitalsList> {
    const p = this.portals.find((x) => x.config.name === portal.name);
    if (!p) throw new Error(`unknown portal ${portal.name}`);
    const key = await this.apiKeyOf(p);
    if (key instanceof Error) throw key;
    const deadline = new Deadline(Number.POSITIVE_INFINITY, this.deps.clock, undefined, signal);
    const requests = new Map<string, number>();
    const ctx = this.contextOf(p, key, deadline, requests, false);
    try {
      return await fetchArchive(ctx, day, tag);
    } finally {
      deadline.close();
      for (const n of requests.values()) for (let i = 0; i < n; i++) onRequest?.();
    }
  }

  /** After a 429: every one-shot run of the portal (each of its entries) may take what the plan needs at the share now in force. */
  private replan(p: PortalRuntime): void {
    const until = this.deps.clock.monotonic() + this.oneShotMs(p);
    for (const q of this.portals) if (q.scheduler === p.scheduler) for (const d of q.oneShots) d.extendTo(until);
  }

  /** What a failed run reports: a deadline that cut it is a late run, named by source. */
  private explain(source: Job, err: unknown, deadline: Deadline): Error {
    const reason = deadline.signal.aborted ? deadline.signal.reason : undefined;
    if (reason instanceof Error && !(reason instanceof DOMException)) return reason;
    // An unreachable portal (or an untrusted certificate) is never reported late, even when the deadline passed while retrying it.
    if (err instanceof LateError || err instanceof TimeoutError || err instanceof PortalUnreachableError || err instanceof UntrustedCertificateError) return err;
    if (deadline.signal.aborted) {
      const what = runName(source);
      return new TimeoutError(what, 'deadline', `${what} is late: its run was cut at its deadline ${wallIso(this.deps.clock, deadline.at)} before it finished; the previous values are kept while fresh.`, { cause: err });
    }
    return err instanceof Error ? err : new Error(String(err));
  }

  /** The budget of a portal as the scheduler sees it now. */
  budgetOf(p: PortalRuntime): BudgetFacts {
    return { configuredShare: p.scheduler.share.configured, effectiveShare: p.scheduler.share.effective, rateLimitedLastHour: p.scheduler.rateLimitedInLastHour(), rateLimitedTotal: p.scheduler.rateLimitedTotal };
  }

  /**
   * Samples of what is remembered (serve), from the start: the exporter's own series at once, each
   * source's as soon as its first run ends; a failed source keeps its last values until stale.
   */
  samples(facts: Partial<ExporterFacts> = {}): Sample[] {
    const now = this.deps.clock.monotonic();
    const views = this.portals.map((p) => ({ ...p.state.view(now, stalenessMs(this.config, p.config), this.budgetOf(p), p.requestTotals), maxSeriesPerFamily: p.config.maxSeriesPerFamily, intervals: intervalsOf(p.config) }));
    return this.checked(toSamples(views, { version: VERSION, runtime: this.deps.runtime, shard: this.config.shard, ...facts }));
  }

  /** Samples of one-shot runs only (once, Lambda): nothing from earlier runs, each portal's series cap applied. */
  samplesOf(results: readonly CycleResult[], facts: ExporterFacts): Sample[] {
    const entries = new Map(this.config.portals.map((p) => [p.name, p]));
    return this.checked(toSamples(results.map((r) => ({ ...viewOfCycle(r), maxSeriesPerFamily: entries.get(r.portal)?.maxSeriesPerFamily, intervals: intervalsOf(entries.get(r.portal)) })), facts));
  }

  private checked(samples: Sample[]): Sample[] {
    this.foldWarnings.check(samples);
    return samples;
  }

  /** Whether every source of every portal has run once (/healthz says "first collection pending" until then). */
  get ready(): boolean {
    return this.portals.every((p) => p.state.collected);
  }
}

/** The configured interval of every source and of the resolved-alerts pass of an entry, in seconds (none for an entry not configured). */
function intervalsOf(portal: PortalConfig | undefined): Partial<Record<Job, number>> {
  return portal ? Object.fromEntries(JOBS.map((j) => [j, intervalOf(portal, j)])) : {};
}

/** Requests of a run, all endpoints and codes together. */
export function totalRequests(requests: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const v of requests.values()) n += v;
  return n;
}

/** A job's run as a message names it: a source by its endpoint, a slow job by the lists it reads. */
function runName(job: Job): string {
  return isSlowJob(job) ? SLOW_RUN_NAMES[job].reads : `/${job}`;
}

/** Whether a job of a one-shot run succeeded; a slow job counts only when it ran. */
function jobOk(r: CycleResult, job: Job): boolean {
  return r[job]?.ok ?? true;
}

/** Sources (and slow jobs that ran) that failed, as `portal/source` names. */
export function failedSources(results: readonly CycleResult[]): string[] {
  return results.flatMap((r) => JOBS.filter((s) => !jobOk(r, s)).map((s) => (results.length > 1 ? `${r.portal}/${s}` : s)));
}

/** The distinct error messages of the failed sources (one when a single cause, a rejected key or an unreachable portal, failed them all). */
export function failureReasons(results: readonly CycleResult[]): Set<string> {
  const failed = (r: CycleResult, s: Job) => {
    const x = r[s];
    return x && !x.ok ? [x.error.message] : [];
  };
  return new Set(results.flatMap((r) => JOBS.flatMap((s) => failed(r, s))));
}


/** The first untrusted certificate among the failed sources: a configuration error, which ends a one-shot run with exit 2 (the Lambda's invocation fails). */
export function untrustedIn(results: readonly CycleResult[]): UntrustedCertificateError | undefined {
  for (const r of results) {
    for (const s of JOBS) {
      const x = r[s];
      if (x && !x.ok && x.error instanceof UntrustedCertificateError) return x.error;
    }
  }
  return undefined;
}
