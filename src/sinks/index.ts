import { SinkError } from './errors.js';
import type { Batch, PushContext, PushSettings, Sink, SinkName } from './types.js';

export { SinkError } from './errors.js';
export type { Batch, PushContext, PushSettings, Sink, SinkName } from './types.js';

/** The outcome of one sink's push. */
export interface PushOutcome {
  sink: SinkName;
  ok: boolean;
  durationMs: number;
  error?: SinkError;
  /** When it failed in part: how many of its groups or requests got through, of how many. */
  partial?: { pushed: number; total: number };
}

/**
 * The sink `name` with its settings, its module imported now: a process loads only the sinks it
 * pushes to (the OpenTelemetry SDK alone is most of the Lambda bundle and its start-up).
 * `settings` must hold the sink's settings (loadConfig guarantees it for every configured sink).
 */
export async function loadSink(name: SinkName, settings: PushSettings): Promise<Sink> {
  switch (name) {
    case 'remote_write':
      return new (await import('./remote-write.js')).RemoteWriteSink(settings.remoteWrite!);
    case 'pushgateway':
      return new (await import('./pushgateway.js')).PushgatewaySink(settings.pushgateway!);
    case 'otlp':
      return new (await import('./otlp.js')).OtlpSink(settings.otlp);
    default: {
      // Every sink name is handled (checked at compile time).
      const unhandled: never = name;
      throw new Error(`unknown sink ${String(unhandled)}`);
    }
  }
}

/** Pushes to every sink concurrently; one failed sink never stops the others; returns each outcome. */
export async function pushAll(sinks: readonly Sink[], batches: readonly Batch[], ctx: PushContext): Promise<PushOutcome[]> {
  return Promise.all(
    sinks.map(async (sink): Promise<PushOutcome> => {
      const started = ctx.clock.monotonic();
      try {
        await sink.push(batches, ctx);
        const durationMs = ctx.clock.monotonic() - started;
        ctx.logger.info('push succeeded', { sink: sink.name, durationMs });
        return { sink: sink.name, ok: true, durationMs };
      } catch (err) {
        const error = err instanceof SinkError ? err : new SinkError(sink.name, `unexpected failure: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        const durationMs = ctx.clock.monotonic() - started;
        const partial = error.pushed !== undefined && error.total !== undefined && error.pushed > 0 ? { pushed: error.pushed, total: error.total } : undefined;
        ctx.logger.error(partial ? 'push failed in part' : 'push failed', { sink: sink.name, durationMs, err: error, ...(partial ?? {}) });
        return { sink: sink.name, ok: false, durationMs, error, ...(partial ? { partial } : {}) };
      }
    }),
  );
}
