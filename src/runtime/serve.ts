import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { isSlowJob, JOBS, SOURCES, type Job } from '../domain.js';
import { AuthenticationError, PermissionError, UntrustedCertificateError } from '../errors.js';
import { Exporter, totalRequests, type ExporterDeps, type PortalRuntime } from '../exporter/exporter.js';
import { startMetricsServer } from '../http/server.js';
import { wallIso } from '../core/clock.js';
import { LedgerError } from '../errors.js';
import { intervalOf, phasesOf } from '../schedule/fit.js';
import { PRIORITY, type PortalScheduler } from '../schedule/scheduler.js';
import { LiveGrid } from '../schedule/yield.js';

/** A running `serve`: stop it to end the loops and close the server. */
export interface ServeHandle {
  readonly url: string;
  readonly exporter: Exporter;
  /** Resolves after the next run of any source finishes (tests wait on it instead of on time). */
  nextCycle(): Promise<void>;
  /**
   * Resolves when serve cannot go on: a portal's certificate is not trusted before any run of that
   * portal succeeded (a configuration error, as at start: the CLI stops with exit 2). Met later (a
   * certificate replaced while serving), it fails that portal's runs only, each logged, and the next
   * run tries again.
   */
  readonly refused: Promise<UntrustedCertificateError>;
  stop(): Promise<void>;
}

/**
 * How soon a slow job (the resolved-alerts pass, the access settings, the directory) whose run
 * failed for a reason that may pass (not a refused key or a missing permission) tries again,
 * rather than a whole interval (a day for the directory) later.
 */
const SLOW_RETRY_MS = 15 * 60_000;

/**
 * Runs each source of each portal on its own interval, and its resolved-alerts pass on its own,
 * and serves what is known on /metrics.
 * Polling on a timer is the documented exception to "collect at scrape time": the portal allows
 * 10 requests a minute. A run that cannot finish before its source is due again is cut, reported
 * late and failed; the next run starts on time.
 */
export async function startServe(config: Config, deps: Omit<ExporterDeps, 'runtime'> & { clock: Clock; logger: Logger }): Promise<ServeHandle> {
  const exporter = new Exporter(config, { ...deps, runtime: 'serve' });
  // One stop per loop, not one signal every loop shares: each loop's waits (its run's deadline, its
  // sleep to the next slot) listen on its own, so no signal collects a listener per portal and source.
  const stoppers: AbortController[] = [];
  let lastCycle: string | undefined;
  /** While the first runs wait for a window other processes filled: when it clears (wall time). */
  let waitingUntil: string | undefined;
  /** The portals (by identity: their ledger) whose last run failed because the ledger could not record a claim (a full disk): why. */
  const stoppedBy = new Map<string, string>();
  const shortest = Math.min(...config.portals.flatMap((p) => SOURCES.map((s) => p.intervals[s])), config.intervalSeconds);
  const server = await startMetricsServer(
    {
      samples: () => exporter.samples(),
      get ready() {
        return exporter.ready;
      },
      describe: () => ({ portals: config.portals.map((p) => p.name), intervalSeconds: shortest, lastCycle }),
      waitingUntil: () => waitingUntil,
      stopped: () => stoppedBy.values().next().value,
    },
    { host: config.listen.host, port: config.listen.port, logger: deps.logger, webConfigFile: config.webConfigFile },
  );
  deps.logger.info('serving metrics', {
    url: `${server.url}/metrics`,
    portals: config.portals.map((p) => ({ portal: p.name, intervals: p.intervals, share: p.requestsPerMinute })),
  });

  /** Portals (by identity) a run has succeeded on since the start. */
  const reached = new Set<string>();
  let refuse: (err: UntrustedCertificateError) => void = () => {};
  const refused = new Promise<UntrustedCertificateError>((resolve) => (refuse = resolve));

  let waiters: Array<() => void> = [];
  const finished = () => {
    lastCycle = new Date(deps.clock.now()).toISOString();
    const done = waiters;
    waiters = [];
    for (const w of done) w();
  };

  /** One source (or the resolved-alerts pass) of one portal, on its grid: run k starts at start + k × interval and must end by run k + 1. */
  const loop = async (p: PortalRuntime, source: Job, start: number) => {
    const every = intervalOf(p.config, source) * 1000;
    const stopper = new AbortController();
    stoppers.push(stopper);
    // The source's phase: the plan's timeline runs the sources staggered so, and checked it on time.
    try {
      await deps.clock.sleep(start - deps.clock.monotonic(), stopper.signal);
    } catch {
      return;
    }
    // The window other processes filled has cleared: /healthz no longer says it waits.
    waitingUntil = undefined;
    for (let k = 0; !stopper.signal.aborted; ) {
      const due = start + (k + 1) * every;
      const deadline = config.cycleTimeoutSeconds !== undefined ? Math.min(due, deps.clock.monotonic() + config.cycleTimeoutSeconds * 1000) : due;
      const run = await exporter.runSource(p, source, { deadline, signal: stopper.signal });
      if (stopper.signal.aborted) break;
      if (run.result.ok) reached.add(p.identity);
      else if (run.result.error instanceof UntrustedCertificateError && !reached.has(p.identity)) refuse(run.result.error);
      p.state.recordRun(run);
      // Nothing is sent while the ledger cannot record a claim: /healthz says why until a run goes through again.
      // Any run of the portal that claimed a slot says the ledger records claims again (an hourly or daily source's next run may be far).
      if (!run.result.ok && run.result.error instanceof LedgerError) stoppedBy.set(p.identity, run.result.error.message);
      else if (run.result.ok || totalRequests(run.requests) > 0) stoppedBy.delete(p.identity);
      deps.logger.info('run finished', {
        portal: p.config.name,
        source,
        ok: run.result.ok,
        durationMs: run.durationMs,
        requests: totalRequests(run.requests),
      });
      finished();
      // The next slot on the grid; a run that overran skips the slots it missed.
      k = Math.max(k + 1, Math.floor((deps.clock.monotonic() - start) / every) + 1);
      let next = start + k * every;
      // A slow job (hourly, daily) whose run failed for a reason that may pass tries again sooner, by the grid's next slot.
      const retryAt = deps.clock.monotonic() + SLOW_RETRY_MS;
      if (isSlowJob(source) && !run.result.ok && !(run.result.error instanceof AuthenticationError || run.result.error instanceof PermissionError) && retryAt < next) {
        next = retryAt;
        k--;
      }
      try {
        await deps.clock.sleep(next - deps.clock.monotonic(), stopper.signal);
      } catch {
        break;
      }
    }
  };
  const start = deps.clock.monotonic();
  // The plan holds from a window with nothing in it: each portal starts when the requests other
  // processes recorded (a restart, a once from cron) have left it. /healthz and the log say until when.
  const clearAt = new Map<PortalScheduler, number>();
  for (const p of exporter.portals) {
    if (clearAt.has(p.scheduler)) continue;
    clearAt.set(p.scheduler, await p.scheduler.refresh().catch(() => start));
  }
  const latest = Math.max(...clearAt.values());
  if (latest > deps.clock.monotonic()) {
    waitingUntil = wallIso(deps.clock, latest);
    const ledger = exporter.portals.map((p) => p.scheduler.ledgerWhere).find((w) => w !== undefined);
    deps.logger.info(`waiting for the portal's budget until ${waitingUntil}: requests other processes (or an earlier run) recorded in ${ledger} fill its window, so serve starts collecting when they have left it`, { reason: 'others', until: waitingUntil, ledger });
  }
  const phases = phasesOf(config);
  // Each portal's scheduler knows when its live runs are due: a slow source's request makes none of them late.
  for (const scheduler of clearAt.keys()) {
    const entries = exporter.portals.filter((p) => p.scheduler === scheduler);
    const runs = entries.flatMap((p) =>
      SOURCES.map((s) => ({ startMs: clearAt.get(scheduler)! + phases.get(p.config)![s], everyMs: intervalOf(p.config, s) * 1000, priority: PRIORITY[s], requests: () => p.planner.liveRequests(p.config, s, scheduler.share.effective) })),
    );
    scheduler.expectLive(new LiveGrid(runs));
  }
  const loops = Promise.all(exporter.portals.flatMap((p) => JOBS.map((s) => loop(p, s, clearAt.get(p.scheduler)! + phases.get(p.config)![s]))));

  return {
    url: server.url,
    exporter,
    nextCycle: () => new Promise<void>((resolve) => waiters.push(resolve)),
    refused,
    stop: async () => {
      const reason = new Error('stopping');
      for (const stopper of stoppers) stopper.abort(reason);
      await loops;
      await server.close();
      deps.logger.info('stopped');
    },
  };
}
