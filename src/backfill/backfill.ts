/**
 * `posture-exporter backfill`: loads the portal's daily Vitals archive (`/vitals?archiveDate=`,
 * spec 4.5) for past days into an OpenMetrics file (for `promtool tsdb create-blocks-from
 * openmetrics`) and/or a remote-write receiver, within the portal's share of the rate budget,
 * resumably. Fetching is injected (`fetchDay`) so a scheduler can take the default's place.
 */
import type { PortalConfig } from '../config/load.js';
import type { VitalsList } from '../sources/vitals.js';
import { CATALOGUE } from '../collect/catalogue.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { AuthenticationError, PermissionError, UpstreamHttpError } from '../errors.js';
import { renderTimestampedOpenMetrics, type TimestampedSample } from '../metrics/openmetrics-timestamped.js';
import type { PushContext, Sink } from '../sinks/types.js';
import type { Exporter } from '../exporter/exporter.js';
import { dayTimestamp, listKeys, progressBar, etaSeconds, samplesOfDay, tagOfKey, type ProgressSnapshot } from './plan.js';
import { saveState, storedLists, writeFileAtomic, type BackfillState, type DayState } from './state.js';

/** Fetches one archived day of one portal, whole (`tag` undefined) or for one tag; throws the typed errors of src/errors.ts. */
export type FetchDay = (portal: PortalConfig, day: string /* yyyyMMdd */, tag: string | undefined, signal?: AbortSignal) => Promise<VitalsList>;

/** What to backfill and where to. */
export interface BackfillOptions {
  readonly portals: readonly PortalConfig[];
  /** Days (`yyyyMMdd`) in request order. */
  readonly days: readonly string[];
  /** OpenMetrics file to (re)write with every complete day the state holds. */
  readonly output?: string;
  /** Remote write (one push per portal and day, stamped with the day's timestamp). */
  readonly remoteWrite?: Sink;
  /** The state file, and what it held when the run started (already loaded and checked). */
  readonly statePath: string;
  readonly state: BackfillState;
  /** Per push, retries included. @default 60_000 */
  readonly pushTimeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** What a run needs from outside. */
export interface BackfillDeps {
  readonly fetchDay: FetchDay;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Where progress goes (stderr). */
  readonly progress: (text: string) => void;
  /** A bar redrawn in place on a terminal; JSON lines otherwise. */
  readonly isTTY: boolean;
  /** Requests sent so far (the default fetch counts every attempt); default: fetchDay calls. */
  readonly requestsSpent?: () => number;
  /** Environment and transport for the push (AWS credentials for SigV4, a test dispatcher). */
  readonly push?: Pick<PushContext, 'env' | 'dispatcher'>;
  /** Writes the state file. @default saveState (atomic; throws when it cannot) */
  readonly saveState?: (path: string, state: BackfillState) => void;
}

/** A day that was not written, and why. */
export interface FailedDay {
  readonly portal: string;
  readonly day: string;
  readonly reason: string;
}

/** The outcome of a run. */
export interface BackfillResult {
  /** `portal/day` written by this run. */
  readonly written: string[];
  /** Days written by an earlier run, skipped. */
  readonly alreadyWritten: number;
  readonly failed: FailedDay[];
  /** Days not tried because the run was interrupted. */
  readonly notTried: number;
  readonly requests: number;
}

/**
 * The default fetch: each request a job of the portal's scheduler (src/schedule/) at the lowest
 * priority, so it shares one budget with live collection in the same process and never goes past
 * the portal's share. `onRequest` hears every HTTP attempt.
 */
export function schedulerFetchDay(exporter: Pick<Exporter, 'fetchArchiveDay'>, onRequest?: () => void): FetchDay {
  return (portal, day, tag, signal) => exporter.fetchArchiveDay(portal, day, tag, signal, onRequest);
}

/** Why a day could not be fetched, in a user's words. */
function reasonOf(err: unknown, key: string): string {
  const what = key === '' ? 'archive' : `archive for tag ${tagOfKey(key)}`;
  if (err instanceof UpstreamHttpError && err.status === 404) return `the portal has no ${what} of this day (404)`;
  if (err instanceof UpstreamHttpError && err.status === 400) return `the portal refused the ${what} request of this day (400): ${err.message}`;
  return `the ${what} of this day could not be read: ${err instanceof Error ? err.message : String(err)}`;
}

class EmptyArchive extends Error {}

/** Runs a backfill; never throws for a day's failure (it is reported in the result), only for a state file that cannot be written. */
export async function runBackfill(options: BackfillOptions, deps: BackfillDeps): Promise<BackfillResult> {
  const { clock, logger, signal } = { ...deps, signal: options.signal };
  const state = options.state;
  const wantFile = options.output !== undefined;
  const sink = options.remoteWrite;
  let calls = 0;
  const fetchDay: FetchDay = (...args) => {
    calls++;
    return deps.fetchDay(...args);
  };
  const requests = () => deps.requestsSpent?.() ?? calls;
  const save = deps.saveState ?? saveState;
  const result = { written: [] as string[], alreadyWritten: 0, failed: [] as FailedDay[], notTried: 0 };

  const daysOf = (portal: PortalConfig) => (state.portals[portal.name] ??= { baseUrl: portal.baseUrl, days: {} }).days;
  const needsOf = (portal: PortalConfig, ds: DayState | undefined): string[] =>
    listKeys(portal.vitalsTags).filter((k) => ds?.lists?.[k] === undefined && (wantFile || (sink !== undefined && !ds?.pushed?.includes(k))));
  // Requests still planned per portal, for the estimate of time left.
  const left = new Map(options.portals.map((p) => [p.name, options.days.reduce((n, d) => n + needsOf(p, daysOf(p)[d]).length, 0)]));
  const total = options.portals.length * options.days.length;
  let done = 0;

  const snapshot = (): ProgressSnapshot => ({
    daysDone: done,
    daysTotal: total,
    failed: result.failed.length,
    requests: requests(),
    left: options.portals.map((p) => ({ requests: left.get(p.name) ?? 0, perMinute: p.requestsPerMinute })),
  });
  const report = (portal: string, day: string, status: 'written' | 'already written' | 'failed') => {
    const p = snapshot();
    if (deps.isTTY) deps.progress(`\r\x1b[K${progressBar(p)}`);
    else {
      deps.progress(JSON.stringify({ time: new Date(clock.now()).toISOString(), level: 'info', msg: 'backfill progress', portal, day, status, daysDone: p.daysDone, daysTotal: p.daysTotal, failed: p.failed, requests: p.requests, etaSeconds: etaSeconds(p) }) + '\n');
    }
  };
  if (deps.isTTY) deps.progress(progressBar(snapshot()));

  const runPortal = async (portal: PortalConfig) => {
    const days = daysOf(portal);
    const portalState = state.portals[portal.name]!;
    // A run resumed at once must not add its first burst to the previous run's last minute.
    const wait = (portalState.lastRequestAt ?? -Infinity) + 60_000 - clock.monotonic();
    if (wait > 0 && options.days.some((d) => needsOf(portal, days[d]).length > 0)) {
      logger.info('backfill: waiting for the previous run\'s requests to leave the 60 s window', { portal: portal.name, waitMs: wait });
      try {
        await clock.sleep(wait, signal);
      } catch {
        // Interrupted while waiting: every day is left for the next run.
      }
    }
    const keys = listKeys(portal.vitalsTags);
    let fatal: string | undefined;
    for (const day of options.days) {
      if (signal?.aborted) {
        result.notTried++;
        continue;
      }
      const ds: DayState = (days[day] ??= {});
      const needs = needsOf(portal, ds);
      const pushNeeded = sink !== undefined && keys.some((k) => !ds.pushed?.includes(k));
      if (needs.length === 0 && !pushNeeded) {
        result.alreadyWritten++;
        done++;
        report(portal.name, day, 'already written');
        continue;
      }
      if (fatal) {
        left.set(portal.name, (left.get(portal.name) ?? 0) - needs.length);
        result.failed.push({ portal: portal.name, day, reason: `not tried: ${fatal}` });
        done++;
        report(portal.name, day, 'failed');
        continue;
      }
      let reason: string | undefined;
      for (const [i, key] of needs.entries()) {
        try {
          const list = await fetchDay(portal, day, tagOfKey(key), signal).finally(() => (portalState.lastRequestAt = clock.monotonic()));
          // An empty archive is a day the portal cannot serve: never written as zeros.
          if (list.records.length === 0) throw new EmptyArchive();
          (ds.lists ??= {})[key] = [...list.records];
        } catch (err) {
          if (signal?.aborted) break;
          reason = err instanceof EmptyArchive ? `the portal's archive${key === '' ? '' : ` for tag ${tagOfKey(key)}`} of this day is empty` : reasonOf(err, key);
          // A rejected key or a missing permission fails every day alike: stop asking.
          if (err instanceof AuthenticationError || err instanceof PermissionError) fatal = err.message;
          // The other lists of this day would most likely fail alike: keep the budget.
          left.set(portal.name, (left.get(portal.name) ?? 0) - (needs.length - i - 1));
          break;
        } finally {
          if (!signal?.aborted) left.set(portal.name, (left.get(portal.name) ?? 1) - 1);
        }
      }
      if (signal?.aborted && reason === undefined && needs.some((k) => ds.lists?.[k] === undefined)) {
        // Interrupted inside the day: keep what arrived, finish it on the next run.
        save(options.statePath, state);
        result.notTried++;
        continue;
      }
      if (reason === undefined && pushNeeded) {
        const unpushed = keys.filter((k) => !ds.pushed?.includes(k));
        const lists = storedLists(ds, unpushed)!;
        try {
          await sink!.push([{ portal: portal.name, snapshot: { collectedAt: dayTimestamp(day), samples: samplesOfDay(portal.name, day, lists) }, succeeded: ['vitals'] }], {
            clock,
            logger,
            deadline: clock.monotonic() + (options.pushTimeoutMs ?? 60_000),
            signal,
            ...deps.push,
          });
          ds.pushed = [...(ds.pushed ?? []), ...unpushed];
        } catch (err) {
          if (!signal?.aborted) reason = `the remote-write receiver did not take this day: ${err instanceof Error ? err.message : String(err)}`;
        }
        if (signal?.aborted && !keys.every((k) => ds.pushed?.includes(k))) {
          save(options.statePath, state);
          result.notTried++;
          continue;
        }
      }
      // Lists are kept for the file, or until pushed; without a file they are not needed after.
      if (!wantFile && keys.every((k) => ds.pushed?.includes(k))) delete ds.lists;
      save(options.statePath, state);
      done++;
      if (reason !== undefined) {
        result.failed.push({ portal: portal.name, day, reason });
        logger.warn('backfill: day skipped; it is tried again on the next run', { portal: portal.name, day, reason });
        report(portal.name, day, 'failed');
      } else {
        result.written.push(`${portal.name}/${day}`);
        report(portal.name, day, 'written');
      }
    }
  };

  try {
    await Promise.all(options.portals.map(runPortal));
  } finally {
    if (deps.isTTY) deps.progress('\n');
    if (options.output !== undefined) writeOutput(options.output, options.portals, state);
  }
  return { ...result, requests: requests() };
}

/** Rewrites the OpenMetrics file with every day the state holds complete (all lists the portal's tags need), oldest first. */
function writeOutput(path: string, portals: readonly PortalConfig[], state: BackfillState): void {
  const samples: TimestampedSample[] = [];
  for (const portal of portals) {
    const days = state.portals[portal.name]?.days ?? {};
    for (const day of Object.keys(days).sort()) {
      const lists = storedLists(days[day], listKeys(portal.vitalsTags));
      if (lists) samples.push(...samplesOfDay(portal.name, day, lists));
    }
  }
  writeFileAtomic(path, renderTimestampedOpenMetrics(samples, CATALOGUE));
}
