import type { Context, ScheduledEvent } from 'aws-lambda';
import { loadConfig, type Config } from '../config/load.js';
import { systemClock, type Clock } from '../core/clock.js';
import { createLogger, type Logger } from '../core/log.js';
import { ConfigError, ConfigErrors, PostureError } from '../errors.js';
import { pushAll } from '../sinks/index.js';
import type { Sink, SinkName } from '../sinks/types.js';
import { Exporter, failedSources, samplesOfCycles, VERSION } from './exporter.js';
import type { KeyStoreOptions } from './keys.js';
import { buildBatches, sinksOf } from './push.js';

/** What one invocation did; returned to Lambda (visible in the console and in async destinations). */
export interface InvocationSummary {
  portals: Array<{ portal: string; sources: Record<'vitals' | 'alerts' | 'devices', 'ok' | string>; requests: number; durationMs: number }>;
  sinks: Array<{ sink: SinkName; ok: boolean; durationMs: number; error?: string }>;
}

/** Thrown when an invocation collected nothing, or pushed nothing, so Lambda's error metrics and retries mean something. */
export class InvocationFailedError extends PostureError {
  constructor(
    message: string,
    readonly summary?: InvocationSummary,
  ) {
    super(message);
  }
}

/** Dependencies of the handler; tests inject a clock, env and AWS client settings. */
export interface HandlerDeps {
  env?: Record<string, string | undefined>;
  clock?: Clock;
  write?: (line: string) => void;
  keyStore?: KeyStoreOptions;
}

interface Container {
  config: Config;
  exporter: Exporter;
  sinks: Sink[];
  logger: Logger;
  lastPush?: Array<{ sink: SinkName; ok: boolean; durationMs: number }>;
}

/** Builds a handler; the exported `handler` is this with the real process. */
export function createHandler(deps: HandlerDeps = {}) {
  const clock = deps.clock ?? systemClock;
  let container: Container | undefined;

  // Settings are parsed and validated once per container and reused on warm starts.
  const init = (): Container => {
    if (container) return container;
    let config: Config;
    try {
      config = loadConfig({ env: deps.env ?? process.env });
      if (config.push.sinks.length === 0) throw new ConfigError('POSTURE_PUSH', 'POSTURE_PUSH is empty: the Lambda pushes its metrics, set it to any of otlp, remote_write, pushgateway.');
    } catch (err) {
      const problems = err instanceof ConfigErrors ? err.problems : err instanceof ConfigError ? [err] : undefined;
      if (!problems) throw err;
      throw new InvocationFailedError(`invalid settings: ${problems.map((p) => p.message).join(' | ')}`);
    }
    const secrets = [...config.secrets];
    const logger = createLogger({ level: config.logLevel, shape: 'powertools', secrets, clock, base: { service: 'posture-exporter' }, write: deps.write ?? ((l) => process.stdout.write(l + '\n')) });
    const exporter = new Exporter(config, { clock, logger, runtime: 'lambda', keyStore: deps.keyStore, onSecret: (s) => secrets.push(s) });
    container = { config, exporter, sinks: sinksOf(config), logger };
    return container;
  };

  return async function handler(_event: ScheduledEvent | Record<string, unknown>, context: Pick<Context, 'getRemainingTimeInMillis' | 'awsRequestId'>): Promise<InvocationSummary> {
    const c = init();
    const logger = c.logger.child({ function_request_id: context.awsRequestId });
    const started = clock.now();
    const remaining = context.getRemainingTimeInMillis();
    const margin = c.config.lambdaMarginSeconds * 1000;
    // Collect until the margin, then push with what there is; never past the invocation's end.
    const collectDeadline = started + Math.min(c.config.cycleTimeoutSeconds * 1000, Math.max(0, remaining - margin));
    const pushDeadline = started + Math.max(0, remaining - 1000);
    const results = await c.exporter.collect({ deadline: collectDeadline });
    const facts = { version: VERSION, runtime: 'lambda' as const, push: c.lastPush };
    const samples = samplesOfCycles(results, facts);
    const outcomes = await pushAll(c.sinks, buildBatches(results, samples), { clock, logger, deadline: pushDeadline, env: deps.env ?? process.env });
    c.lastPush = outcomes.map(({ sink, ok, durationMs }) => ({ sink, ok, durationMs }));
    const summary: InvocationSummary = {
      portals: results.map((r) => ({
        portal: r.portal,
        sources: { vitals: r.vitals.ok ? 'ok' : r.vitals.error.message, alerts: r.alerts.ok ? 'ok' : r.alerts.error.message, devices: r.devices.ok ? 'ok' : r.devices.error.message },
        requests: [...r.requests.values()].reduce((a, b) => a + b, 0),
        durationMs: r.finishedAt - r.startedAt,
      })),
      sinks: outcomes.map((o) => ({ sink: o.sink, ok: o.ok, durationMs: o.durationMs, ...(o.error ? { error: o.error.message } : {}) })),
    };
    const failed = failedSources(results);
    logger.info('invocation finished', { durationMs: clock.now() - started, failed, sinks: summary.sinks });
    const collectedAnything = results.some((r) => r.vitals.ok || r.alerts.ok || r.devices.ok);
    if (!collectedAnything) throw new InvocationFailedError(`nothing could be collected (${failed.join(', ')}): ${results.map((r) => r.vitals.ok ? '' : r.vitals.error.message).filter(Boolean)[0] ?? ''}`, summary);
    if (outcomes.length > 0 && outcomes.every((o) => !o.ok)) throw new InvocationFailedError(`nothing could be pushed: ${outcomes.map((o) => `${o.sink}: ${o.error?.message ?? 'failed'}`).join(' | ')}`, summary);
    return summary;
  };
}

/** The Lambda entry point (EventBridge scheduled events). */
export const handler = createHandler();
