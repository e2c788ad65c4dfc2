import type { Dispatcher } from 'undici';
import type { Config, PortalConfig } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { AuthenticationError } from '../errors.js';
import { collectPortal, type CycleResult } from '../collect/cycle.js';
import { toSamples, type ExporterFacts } from '../collect/samples.js';
import { PortalState, viewOfCycle } from '../collect/state.js';
import { SOURCES } from '../metrics/catalogue.js';
import type { Sample } from '../metrics/sample.js';
import { RateLimiter } from '../upstream/limiter.js';
import { VERSION } from '../version.js';
import { forgetSecret, resolveSecret, type KeyStoreOptions } from './keys.js';

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
}

interface PortalRuntime {
  config: PortalConfig;
  limiter: RateLimiter;
  state: PortalState;
}

/**
 * The collection service shared by `once`, `serve` and the Lambda handler: one rate limiter per
 * portal for the life of the process, portals collected concurrently, one portal's failure never
 * touching another.
 */
export class Exporter {
  private readonly portals: PortalRuntime[];

  constructor(
    readonly config: Config,
    private readonly deps: ExporterDeps,
  ) {
    this.portals = config.portals.map((p) => ({
      config: p,
      limiter: new RateLimiter({ limit: p.requestsPerMinute, windowMs: 60_000, clock: deps.clock }),
      state: new PortalState(p.name),
    }));
  }

  /** Collects every portal once, concurrently, finishing by `deadline` (epoch ms). */
  async collect(options: { deadline?: number; signal?: AbortSignal } = {}): Promise<CycleResult[]> {
    const deadline = options.deadline ?? this.deps.clock.now() + this.config.cycleTimeoutSeconds * 1000;
    return Promise.all(this.portals.map((p) => this.collectOne(p, deadline, options.signal)));
  }

  private async collectOne(p: PortalRuntime, deadline: number, signal: AbortSignal | undefined): Promise<CycleResult> {
    const { clock, logger } = this.deps;
    const started = clock.now();
    let apiKey: string;
    try {
      apiKey = await resolveSecret(p.config.key, this.deps.keyStore);
      this.deps.onSecret?.(apiKey);
    } catch (err) {
      const error = err as Error;
      logger.error('cannot resolve the API key', { portal: p.config.name, err: error });
      const failed = { ok: false as const, error };
      const result: CycleResult = { portal: p.config.name, startedAt: started, finishedAt: clock.now(), vitals: failed, alerts: failed, devices: failed, requests: new Map() };
      p.state.record(result);
      return result;
    }
    const result = await collectPortal(p.config, {
      clock,
      logger,
      limiter: p.limiter,
      apiKey,
      client: {
        dispatcher: this.deps.dispatcher,
        connectTimeoutMs: this.config.connectTimeoutSeconds * 1000,
        headersTimeoutMs: this.config.requestTimeoutSeconds * 1000,
        bodyTimeoutMs: this.config.requestTimeoutSeconds * 1000,
        maxRetries: this.config.maxRetries,
        random: this.deps.random,
      },
    }, { deadline, signal });
    // A rejected key may have been rotated in its store: fetch it again next time.
    const rejected = SOURCES.map((s) => result[s]).some((r) => !r.ok && r.error instanceof AuthenticationError);
    if (rejected) forgetSecret(p.config.key);
    p.state.record(result);
    const failed = SOURCES.filter((s) => !result[s].ok);
    logger.info('collection finished', {
      portal: p.config.name,
      durationMs: result.finishedAt - result.startedAt,
      requests: [...result.requests.values()].reduce((a, b) => a + b, 0),
      failed,
    });
    return result;
  }

  /** Samples of what is remembered (serve): failed sources keep their last values until stale. */
  samples(facts: Partial<ExporterFacts> = {}): Sample[] {
    const now = this.deps.clock.now();
    const views = this.portals.filter((p) => p.state.collected).map((p) => p.state.view(now, this.config.maxStalenessSeconds * 1000));
    return toSamples(views, { version: VERSION, runtime: this.deps.runtime, ...facts });
  }

  /** Whether a first collection has finished for every portal. */
  get ready(): boolean {
    return this.portals.every((p) => p.state.collected);
  }
}

/** Samples of single cycles only (once, Lambda): nothing from earlier cycles. */
export function samplesOfCycles(results: readonly CycleResult[], facts: ExporterFacts): Sample[] {
  return toSamples(results.map(viewOfCycle), facts);
}

/** Sources that failed, as `portal/source` names. */
export function failedSources(results: readonly CycleResult[]): string[] {
  return results.flatMap((r) => SOURCES.filter((s) => !r[s].ok).map((s) => (results.length > 1 ? `${r.portal}/${s}` : s)));
}

export { VERSION };
