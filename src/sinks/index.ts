import { SinkError } from './errors.js';
import type { PushBatch, PushContext, PushSettings, Sink, SinkName } from './types.js';

export { SinkError } from './errors.js';
export type { PushBatch, PushContext, PushSettings, Sink, SinkName } from './types.js';

/** The outcome of one sink's push. */
export interface PushOutcome {
  sink: SinkName;
  ok: boolean;
  durationMs: number;
  error?: SinkError;
}

/**
 * A sink whose code is imported on its first push: a process loads only the sinks it is
 * configured with (the OpenTelemetry SDK alone is most of the Lambda bundle and its start-up).
 */
class LazySink implements Sink {
  private real: Promise<Sink> | undefined;
  constructor(
    readonly name: SinkName,
    private readonly load: () => Promise<Sink>,
  ) {}

  async push(batches: readonly PushBatch[], ctx: PushContext): Promise<void> {
    // A failed import is retried on the next push rather than remembered.
    const pending = (this.real ??= this.load().catch((err: unknown) => {
      this.real = undefined;
      throw new SinkError(this.name, `could not load the ${this.name} sink: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }));
    await (await pending).push(batches, ctx);
  }
}

/** Builds the sinks `settings.sinks` names (each once, in order); loadConfig guarantees each named sink its settings. Each sink's module is imported on its first push. */
export function createSinks(settings: PushSettings): Sink[] {
  const sinks: Sink[] = [];
  for (const name of new Set(settings.sinks)) {
    switch (name) {
      case 'remote_write': {
        const rw = settings.remoteWrite!;
        sinks.push(new LazySink(name, async () => new (await import('./remote-write.js')).RemoteWriteSink(rw)));
        break;
      }
      case 'pushgateway': {
        const pg = settings.pushgateway!;
        sinks.push(new LazySink(name, async () => new (await import('./pushgateway.js')).PushgatewaySink(pg)));
        break;
      }
      case 'otlp': {
        const otlp = settings.otlp;
        sinks.push(new LazySink(name, async () => new (await import('./otlp.js')).OtlpSink(otlp)));
        break;
      }
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
      const started = ctx.clock.monotonic();
      try {
        await sink.push(batches, ctx);
        const durationMs = ctx.clock.monotonic() - started;
        ctx.logger.info('push succeeded', { sink: sink.name, durationMs });
        return { sink: sink.name, ok: true, durationMs };
      } catch (err) {
        const error = err instanceof SinkError ? err : new SinkError(sink.name, `unexpected failure: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        const durationMs = ctx.clock.monotonic() - started;
        ctx.logger.error('push failed', { sink: sink.name, durationMs, err: error });
        return { sink: sink.name, ok: false, durationMs, error };
      }
    }),
  );
}
