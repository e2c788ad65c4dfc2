import type { Context, ScheduledEvent } from 'aws-lambda';
import { loadConfig, type Config } from '../config/load.js';
import { SETTINGS, SETTING_BY_KEY, envName } from '../config/settings.js';
import { systemClock, type Clock } from '../core/clock.js';
import { createLogger, redact, type LogFields, type Logger } from '../core/log.js';
import { ConfigError, ConfigErrors, PostureError, UntrustedCertificateError } from '../errors.js';
import { JOBS, SOURCES, type SlowJob, type Source } from '../domain.js';
import { PassMemory } from '../schedule/passes.js';
import { pushAll, type PushOutcome } from '../sinks/index.js';
import type { CycleResult } from '../collect/cycle.js';
import type { Sink, SinkName } from '../sinks/types.js';
import { Exporter, failedSources, failureReasons, totalRequests, untrustedIn } from '../exporter/exporter.js';
import { VERSION } from '../version.js';
import type { KeyStoreOptions } from '../config/secrets.js';
import { buildBatches, sinksOf } from '../sinks/configured.js';
import { portalIdentity } from '../config/identity.js';
import { pushRequiredProblem } from '../config/push.js';
import { openState } from '../state/index.js';
import { keyFileProblems, problemsFirst, problemsOf, settingsProblems, unknownVariables } from './startup.js';
import { MAX_TOTAL_SHARDS, ownsPortal, parseShard, parseTotalShards } from '../config/shard.js';

/** What one invocation did; returned to Lambda (visible in the console and in async destinations). */
export interface InvocationSummary {
  /** Each portal's sources (and each slow one that ran: the resolved-alerts pass, access, directory): `ok` or why it failed. */
  portals: Array<{ portal: string; sources: Record<Source, 'ok' | string> & Partial<Record<SlowJob, 'ok' | string>>; requests: number; durationMs: number }>;
  /** Each sink's outcome; a sink that failed in part says how many of its groups or requests got through (`pushed` of `total`). */
  sinks: Array<{ sink: SinkName; ok: boolean; durationMs: number; error?: string; pushed?: number; total?: number }>;
  /** Present when the invocation ran one shard (named by its event or its settings): which one, and how many portals it owned. */
  shard?: { shard: number; totalShards: number; portals: number };
}

/** A shard named by the invocation's event (`{"shard": i, "totalShards": n}`). */
export interface EventShard {
  shard: number;
  totalShards: number;
}

/** What every refusal of an event says the handler takes. */
const ACCEPTED_EVENTS = 'the handler takes an EventBridge scheduled event or an empty event {} (every portal), or {"shard": i, "totalShards": n} (one shard of a fan-out)';
const SHARD_FIELDS = ['shard', 'totalShards'] as const;

/** An EventBridge rule's scheduled event (`source` aws.events, `detail-type` Scheduled Event), as Lambda delivers it. */
function isScheduledEvent(e: Record<string, unknown>): boolean {
  return e.source === 'aws.events' && e['detail-type'] === 'Scheduled Event';
}

/** `shard` or `totalShards` when `key` is one of them spelt another way (`Shard`, `total_shards`). */
function shardFieldLike(key: string): string | undefined {
  const plain = key.toLowerCase().replace(/[^a-z]/g, '');
  return SHARD_FIELDS.find((f) => f.toLowerCase() === plain);
}

/**
 * The shard an event names, or undefined for an event that names none (every portal): exactly
 * an EventBridge scheduled event, an empty event `{}` (as EventBridge Scheduler sends without an
 * input), or `{"shard": i, "totalShards": n}` with no other field, `shard` a number or a
 * StatefulSet-style name ending in -N. Anything else throws a ConfigError naming the event field
 * and the forms taken, so a misspelt fan-out event never collects every portal.
 */
export function shardOfEvent(event: unknown): EventShard | undefined {
  if (event === null || typeof event !== 'object' || Array.isArray(event)) {
    throw new ConfigError('event', `the event ${JSON.stringify(event) ?? String(event)} is not an object: ${ACCEPTED_EVENTS}`);
  }
  const e = event as Record<string, unknown>;
  const keys = Object.keys(e);
  const lookalikes = keys.filter((k) => !(SHARD_FIELDS as readonly string[]).includes(k) && shardFieldLike(k) !== undefined);
  if (keys.length === 0 || (isScheduledEvent(e) && lookalikes.length === 0 && !keys.some((k) => (SHARD_FIELDS as readonly string[]).includes(k)))) return undefined;
  const unknown = keys.filter((k) => !(SHARD_FIELDS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    const meant = unknown.map(shardFieldLike);
    const hint = meant.some((m) => m !== undefined) ? ` (did you mean ${[...new Set(meant.filter((m) => m !== undefined))].map((m) => JSON.stringify(m)).join(', ')}?)` : '';
    const shown = unknown.slice(0, 5).map((k) => JSON.stringify(k)).join(', ') + (unknown.length > 5 ? `, and ${unknown.length - 5} more` : '');
    throw new ConfigError('event', `the event has ${unknown.length === 1 ? 'an unknown field' : 'unknown fields'} ${shown}${hint}: ${ACCEPTED_EVENTS}`);
  }
  if (!('totalShards' in e)) throw new ConfigError('event.totalShards', `event.totalShards is missing beside event.shard ${JSON.stringify(e.shard)}: give both, e.g. {"shard": 0, "totalShards": 3}`);
  if (!('shard' in e)) throw new ConfigError('event.shard', `event.shard is missing beside event.totalShards ${JSON.stringify(e.totalShards)}: give both, e.g. {"shard": 0, "totalShards": 3}`);
  const text = (k: string): string => {
    const v = e[k];
    if (typeof v === 'number' || typeof v === 'string') return String(v);
    throw new ConfigError(`event.${k}`, `event.${k}: ${JSON.stringify(v)} is not a number: give a whole number, e.g. {"shard": 0, "totalShards": 3}`);
  };
  const totalShards = parseTotalShards(text('totalShards'), 'event.totalShards');
  const shard = parseShard(text('shard'), 'event.shard');
  if (shard >= totalShards) throw new ConfigError('event.shard', `event.shard: shard ${shard} is not below event.totalShards ${totalShards}: give 0 to ${totalShards - 1} (at most ${MAX_TOTAL_SHARDS} shards)`);
  return { shard, totalShards };
}

/**
 * Refuses a shard given twice: by the event and by the settings (POSTURE_SHARD and
 * POSTURE_TOTAL_SHARDS, or the config file's shard and total_shards), which would filter the
 * portals twice and leave some to no shard. Throws a ConfigError naming both.
 */
function checkShardGivenOnce(shard: EventShard, config: Config, env: Record<string, string | undefined>): void {
  const names = [envName(SETTING_BY_KEY.shard), envName(SETTING_BY_KEY.total_shards)];
  const inEnv = names.filter((n) => (env[n] ?? '').trim() !== '');
  if (config.shard.total === 1 && inEnv.length === 0) return;
  const where = inEnv.length > 0 ? inEnv.join(' and ') : "the config file's shard and total_shards";
  throw new ConfigError(
    'event.shard',
    `the shard is given twice: the event names shard ${shard.shard} of ${shard.totalShards}, and ${where} name shard ${config.shard.ordinal} of ${config.shard.total}: give it in one place, the fan-out's event (unset ${names.join(' and ')}, and shard and total_shards in the config file) or the settings (invoke with a scheduled event or {})`,
  );
}

/** Thrown when an invocation collected nothing, or pushed nothing, so Lambda's error metrics and retries mean something. */
export class InvocationFailedError extends PostureError {
  constructor(
    message: string,
    readonly summary?: InvocationSummary,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Dependencies of the handler; tests inject a clock, env and AWS client settings. */
export interface HandlerDeps {
  env?: Record<string, string | undefined>;
  clock?: Clock;
  write?: (line: string) => void;
  keyStore?: KeyStoreOptions;
}

/** The part of Lambda's context the handler reads (Lambda passes the whole Context). */
export type InvocationContext = Pick<Context, 'getRemainingTimeInMillis' | 'awsRequestId'> &
  Partial<Pick<Context, 'functionName' | 'functionVersion' | 'memoryLimitInMB' | 'invokedFunctionArn'>>;

interface Container {
  config: Config;
  /**
   * The exporter of the portal selection last run (`all`, or `i/n`), keeping its portals' budgets
   * across warm invocations. A different shard replaces it: a warm container holds at most one
   * shard's state (a fan-out may hand it any shard).
   */
  current?: { id: string; exporter: Exporter };
  /** Builds the exporter of a portal selection (the same logger, clock and key store). */
  newExporter(config: Config): Exporter;
  sinks: Sink[];
  logger: Logger;
  secrets: string[];
  /** Sets the fields every line carries during this invocation (request id, cold start). */
  setContext(fields: LogFields): void;
  invocations: number;
  /** The previous push of the current selection (reported with the next push). */
  lastPush?: Array<{ sink: SinkName; ok: boolean; durationMs: number }>;
}

/**
 * A logger whose per-invocation fields can be swapped: the exporter and its collectors keep the
 * logger they were built with for the life of the container, yet their lines must carry the
 * current request id, as Powertools Logger's `addContext` does.
 */
function swappableLogger(base: Logger): { logger: Logger; setContext(fields: LogFields): void } {
  let current = base;
  const wrap = (get: () => Logger): Logger => ({
    debug: (m, f) => get().debug(m, f),
    info: (m, f) => get().info(m, f),
    warn: (m, f) => get().warn(m, f),
    error: (m, f) => get().error(m, f),
    child: (fields) => wrap(() => get().child(fields)),
  });
  return { logger: wrap(() => current), setContext: (fields) => (current = base.child(fields)) };
}

/** Values of the secret settings as given in the environment (redacted even before the config is valid). */
function envSecrets(env: Record<string, string | undefined>): string[] {
  return SETTINGS.filter((s) => s.kind === 'secret')
    .map((s) => env[envName(s)]?.trim())
    .filter((v): v is string => !!v);
}

/** A local invoke without Lambda's clock: what the plan needs (or the cycle timeout), plus the margin. */
function localInvocationMs(container: Container | undefined, exporter: Exporter | undefined): number {
  if (!container || !exporter || exporter.portals.length === 0) return 70_000;
  const { config } = container;
  const planned = Math.max(...exporter.portals.map((p) => exporter.oneShotMs(p)));
  return Math.min(planned, (config.cycleTimeoutSeconds ?? Infinity) * 1000) + config.lambdaMarginSeconds * 1000;
}

/** The process the handler runs in: clock, environment, where log lines go, key-store settings. */
interface HandlerEnv {
  readonly clock: Clock;
  readonly env: Record<string, string | undefined>;
  readonly write: (line: string) => void;
  readonly keyStore?: KeyStoreOptions;
}

/**
 * Settings parsed and validated once per container, and what lives as long as it: the exporter
 * (its schedulers keep the budget's history across warm invocations) and the sinks (a credential
 * from a store is read once). Invalid settings (whatever check-config refuses, with the same
 * lines): one log line and InvocationFailedError, before any request.
 */
async function startContainer(h: HandlerEnv, requestId: string): Promise<Container> {
  // A POSTURE_* variable that is not a setting (a typo) leaves the setting meant unset: refused, as the CLI refuses it.
  const unknown = unknownVariables(h.env);
  let config: Config;
  try {
    config = loadConfig({ env: h.env });
    // The key files are checked per shard, when an event names one (exporterOf): a shard reads only its own portals' keys.
    const problems = await settingsProblems(config, unknown);
    const noSink = pushRequiredProblem(config.push);
    if (noSink) problems.push(noSink);
    if (problems.length > 0) throw new ConfigErrors(problems);
  } catch (err) {
    const own = problemsOf(err);
    if (!own) throw err;
    const problems = problemsFirst(unknown, own);
    // One line, so the Lambda console and the error metric's log show the whole reason.
    const message = redact(`invalid settings: ${problems.map((p) => p.message).join(' | ')}`, envSecrets(h.env));
    createLogger({ shape: 'powertools', secrets: envSecrets(h.env), clock: h.clock, base: { service: 'posture-exporter', function_request_id: requestId }, write: h.write }).error('invalid settings', {
      settings: problems.map((p) => p.setting),
      reason: message,
    });
    throw new InvocationFailedError(message, undefined, { cause: err });
  }
  // Keys and credentials read from files and stores are appended when first read, so later lines redact them too.
  const secrets = [...config.secrets];
  // Once per secret: warm invocations must not grow the list.
  const onSecret = (s: string) => {
    if (!secrets.includes(s)) secrets.push(s);
  };
  const base = createLogger({ level: config.logLevel, shape: 'powertools', secrets, clock: h.clock, base: { service: 'posture-exporter' }, write: h.write });
  const { logger, setContext } = swappableLogger(base);
  // Requests are recorded in the DynamoDB table when one is set (serverless.yml declares it: shared by
  // every container and host), else only in a state directory that is set: a Lambda's home is not writable.
  // The table's module (and the AWS SDK it loads on first use) is imported only then.
  const state = config.stateTable === undefined && config.stateDirSet ? openState(config.stateDir, logger, h.clock) : undefined;
  const table = config.stateTable !== undefined ? (await import('../state/table.js')).openTable(config.stateTable, logger, h.clock) : undefined;
  const ledgerOf = table?.ledgerOf ?? state?.ledgerOf;
  // The last resolved-alerts pass: in the table (every container shares it) or the state directory
  // when one is set, else in the container's memory (a warm container remembers it; a cold one runs the pass).
  const passes = table?.passes ?? state?.passes ?? new PassMemory(() => h.clock.monotonic());
  const newExporter = (selection: Config) => new Exporter(selection, { clock: h.clock, logger, runtime: 'lambda', keyStore: h.keyStore, onSecret, ledgerOf, passes });
  return { config, newExporter, sinks: sinksOf(config, { keyStore: h.keyStore, onSecret }), logger, secrets, setContext, invocations: 0 };
}

/** Lambda always passes a full context; a test harness or a local invoke may not: fill in what is missing. */
function contextOf(invocationContext: Partial<InvocationContext> | undefined, container: () => Container | undefined, exporter: () => Exporter | undefined): InvocationContext {
  return {
    ...invocationContext,
    awsRequestId: invocationContext?.awsRequestId ?? 'local',
    getRemainingTimeInMillis:
      typeof invocationContext?.getRemainingTimeInMillis === 'function'
        ? invocationContext.getRemainingTimeInMillis.bind(invocationContext)
        : () => localInvocationMs(container(), exporter()),
  };
}

/** The summary of an invocation, every portal message scrubbed of secrets. */
function summarize(results: readonly CycleResult[], outcomes: readonly PushOutcome[], scrub: (text: string) => string): InvocationSummary {
  return {
    portals: results.map((r) => ({
      portal: r.portal,
      // A slow source (the resolved-alerts pass, access, directory) only when this invocation ran it.
      sources: Object.fromEntries(JOBS.flatMap((s) => (r[s] ? [[s, r[s].ok ? 'ok' : scrub(r[s].error.message)]] : []))) as InvocationSummary['portals'][number]['sources'],
      requests: totalRequests(r.requests),
      durationMs: r.durationMs,
    })),
    sinks: outcomes.map((o) => ({
      sink: o.sink,
      ok: o.ok,
      durationMs: o.durationMs,
      ...(o.error ? { error: scrub(o.error.message) } : {}),
      ...(o.partial ? { pushed: o.partial.pushed, total: o.partial.total } : {}),
    })),
  };
}

/**
 * Why the invocation failed as a whole, or undefined: a certificate not trusted (by the portal or
 * a receiver), nothing collected (when it had portals), or nothing pushed. A push that got part of its groups or requests through is a partial
 * failure (in the summary and the logs as `N of M`), not a failed invocation.
 */
function failureOf(results: readonly CycleResult[], outcomes: readonly PushOutcome[]): string | undefined {
  // A certificate this process does not trust is a setting to fix (NODE_EXTRA_CA_CERTS): the invocation fails with its line.
  const untrusted = untrustedIn(results) ?? outcomes.find((o) => o.error?.cause instanceof UntrustedCertificateError)?.error;
  if (untrusted) return `invalid settings: ${untrusted instanceof UntrustedCertificateError ? untrusted.message : (untrusted.cause as Error).message}`;
  if (results.length > 0 && !results.some((r) => SOURCES.some((s) => r[s].ok))) {
    const reasons = failureReasons(results);
    return `nothing could be collected (${failedSources(results).join(', ')}): ${[...reasons].join(' | ')}`;
  }
  if (outcomes.length > 0 && outcomes.every((o) => !o.ok && o.partial === undefined)) {
    return `nothing could be pushed: ${outcomes.map((o) => `${o.sink}: ${o.error?.message ?? 'failed'}`).join(' | ')}`;
  }
  return undefined;
}

/**
 * The exporter of this invocation's portals: every portal, or the shard's. Kept for the
 * container's life while the same selection comes back, so warm invocations keep its budgets; a
 * different selection replaces it (the container then holds one shard's state, never a list of
 * every shard it ever served). A shard's exporter never holds another shard's portals, so their
 * keys are never read. Throws ConfigErrors, as check-config does for the same shard, when a key
 * file of its portals cannot be read (nothing is kept, so the next invocation reads it again).
 */
async function exporterOf(c: Container, shard: EventShard | undefined, keyStore: KeyStoreOptions | undefined): Promise<Exporter> {
  const id = shard ? `${shard.shard}/${shard.totalShards}` : 'all';
  if (c.current?.id === id) return c.current.exporter;
  const portals = shard ? c.config.portals.filter((p) => ownsPortal(portalIdentity(p.baseUrl), shard.shard, shard.totalShards)) : c.config.portals;
  const selection: Config = shard ? { ...c.config, portals, shard: { ordinal: shard.shard, total: shard.totalShards, portalsInAll: c.config.portals.length } } : c.config;
  const problems = await keyFileProblems(portals, keyStore);
  if (problems.length > 0) throw new ConfigErrors(problems);
  if (c.current) c.logger.info('a different shard: the previous one\'s state is dropped', { previous: c.current.id, next: id });
  c.current = { id, exporter: c.newExporter(selection) };
  // The previous push was the previous selection's.
  c.lastPush = undefined;
  return c.current.exporter;
}

/** Builds a handler; the exported `handler` is this with the real process. */
export function createHandler(deps: HandlerDeps = {}) {
  const h: HandlerEnv = { clock: deps.clock ?? systemClock, env: deps.env ?? process.env, write: deps.write ?? ((l: string) => process.stdout.write(l + '\n')), keyStore: deps.keyStore };
  const { clock, env } = h;
  let container: Container | undefined;

  return async function handler(event: ScheduledEvent | Record<string, unknown>, invocationContext?: Partial<InvocationContext>): Promise<InvocationSummary> {
    // The local clock's estimate needs this invocation's exporter, known once the event is read.
    const current: { exporter?: Exporter } = {};
    const context = contextOf(invocationContext, () => container, () => current.exporter);
    const c = (container ??= await startContainer(h, context.awsRequestId));
    c.setContext({
      cold_start: c.invocations++ === 0,
      function_request_id: context.awsRequestId,
      ...(context.functionName ? { function_name: context.functionName } : {}),
      ...(context.memoryLimitInMB ? { function_memory_size: Number(context.memoryLimitInMB) } : {}),
      ...(context.invokedFunctionArn ? { function_arn: context.invokedFunctionArn } : {}),
    });
    const logger = c.logger;
    const scrub = (text: string) => redact(text, c.secrets);
    let shard: EventShard | undefined;
    try {
      shard = shardOfEvent(event);
      if (shard) checkShardGivenOnce(shard, c.config, env);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const message = `invalid event: ${scrub(err.message)}`;
      logger.error('invocation failed', { reason: message, settings: [err.setting] });
      throw new InvocationFailedError(message, undefined, { cause: err });
    }
    let exporter: Exporter;
    try {
      exporter = current.exporter = await exporterOf(c, shard, h.keyStore);
    } catch (err) {
      const problems = problemsOf(err);
      if (!problems) throw err;
      // The lines check-config prints for this shard's settings, before any request.
      const message = `invalid settings: ${scrub(problems.map((p) => p.message).join(' | '))}`;
      logger.error('invalid settings', { settings: problems.map((p) => p.setting), reason: message });
      throw new InvocationFailedError(message, undefined, { cause: err });
    }
    // The shard this invocation runs (the event's, or the settings'; 0 of 1 unsharded): its gauges go with every push.
    const { ordinal, total } = exporter.config.shard;
    const shardFacts = shard || total > 1 ? { shard: { shard: ordinal, totalShards: total, portals: exporter.portals.length } } : {};
    const started = clock.monotonic();
    const remaining = context.getRemainingTimeInMillis();
    let results: CycleResult[] = [];
    // jump hash leaves a shard empty when there are fewer portals than shards: nothing to collect,
    // not a failure, but the shard still pushes its gauges so the shard rules see it.
    if (exporter.portals.length > 0) {
      // Collect until the margin, then push with what there is; never past the invocation's end.
      const collectMs = Math.min((c.config.cycleTimeoutSeconds ?? Infinity) * 1000, Math.max(0, remaining - c.config.lambdaMarginSeconds * 1000));
      if (collectMs === 0) {
        const message = `no time to collect: the invocation had ${remaining} ms left and POSTURE_LAMBDA_MARGIN_SECONDS is ${c.config.lambdaMarginSeconds}: give the function a timeout well above the margin.`;
        logger.error('invocation failed', { reason: message });
        throw new InvocationFailedError(message);
      }
      // Every source completes as the budget allows, as long as the plan needs, but never past the
      // margin: the scheduler refuses slots after it and the requests in flight are cut there.
      results = await exporter.collect({ cap: started + collectMs });
    }
    const samples = exporter.samplesOf(results, { version: VERSION, runtime: 'lambda', push: c.lastPush, shard: { ordinal, total } });
    const batches = buildBatches(results, samples, { ordinal, total, at: clock.now() });
    // The whole push (every sink, every group or request, retries included) ends a second before the invocation does.
    const outcomes = await pushAll(c.sinks, batches, { clock, logger, deadline: started + Math.max(0, remaining - 1000), env });
    c.lastPush = outcomes.map(({ sink, ok, durationMs }) => ({ sink, ok, durationMs }));
    const summary: InvocationSummary = { ...summarize(results, outcomes, scrub), ...shardFacts };
    logger.info('invocation finished', { durationMs: clock.monotonic() - started, failed: failedSources(results), portals: summary.portals, sinks: summary.sinks, ...shardFacts });
    const failure = failureOf(results, outcomes);
    if (failure !== undefined) {
      const message = scrub(failure);
      logger.error('invocation failed', { reason: message });
      throw new InvocationFailedError(message, summary);
    }
    return summary;
  };
}

/** The Lambda entry point (an EventBridge scheduled event or `{}`, or `{"shard": i, "totalShards": n}` from a fan-out). */
export const handler = createHandler();
