import { SinkError } from './errors.js';
import { OtlpSink } from './otlp.js';
import { PushgatewaySink } from './pushgateway.js';
import { RemoteWriteSink } from './remote-write.js';
import type { PushBatch, PushContext, PushSettings, Sink, SinkName } from './types.js';

export { SinkError } from './errors.js';
export type { PushBatch, PushContext, PushSettings, PushgatewayAuth, RemoteWriteAuth, Sink, SinkName } from './types.js';

/** The outcome of one sink's push. */
export interface PushOutcome {
  sink: SinkName;
  ok: boolean;
  durationMs: number;
  error?: SinkError;
}

/** Builds the sinks `settings.sinks` names (each once, in order); loadConfig guarantees each named sink its settings. */
export function createSinks(settings: PushSettings): Sink[] {
  const sinks: Sink[] = [];
  for (const name of new Set(settings.sinks)) {
    switch (name) {
      case 'remote_write':
        sinks.push(new RemoteWriteSink(settings.remoteWrite!));
        break;
      case 'pushgateway':
        sinks.push(new PushgatewaySink(settings.pushgateway!));
        break;
      case 'otlp':
        sinks.push(new OtlpSink(settings.otlp));
        break;
      default: {
        // Every sink name is handled (checked at compile time).
        const unhandled: never = name;
        void unhandled;
      }
    }
  }
  return sinks;
}

/** Pushes to every sink concurrently; one failed sink never stops the others; returns each outcome. */
export async function pushAll(sinks: readonly Sink[], batches: readonly PushBatch[], ctx: PushContext): Promise<PushOutcome[]> {
  return Promise.all(
    sinks.map(async (sink): Promise<PushOutcome> => {
      const started = ctx.clock.now();
      try {
        await sink.push(batches, ctx);
        const durationMs = ctx.clock.now() - started;
        ctx.logger.info('push succeeded', { sink: sink.name, durationMs });
        return { sink: sink.name, ok: true, durationMs };
      } catch (err) {
        const error = err instanceof SinkError ? err : new SinkError(sink.name, `unexpected failure: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        const durationMs = ctx.clock.now() - started;
        ctx.logger.warn('push failed', { sink: sink.name, durationMs, err: error });
        return { sink: sink.name, ok: false, durationMs, error };
      }
    }),
  );
}
