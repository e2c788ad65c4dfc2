import type { Config } from '../config/load.js';
import { untilDeadline } from '../core/abort.js';
import type { CycleResult } from '../collect/cycle.js';
import { PORTAL_LABEL, SOURCES } from '../metrics/catalogue.js';
import type { Sample } from '../metrics/sample.js';
import { createSinks } from '../sinks/index.js';
import { SinkError } from '../sinks/errors.js';
import type { PushBatch, PushContext, PushSettings, RemoteWriteAuth, Sink, SinkName } from '../sinks/types.js';
import { forgetApiKey, REMOTE_WRITE_BEARER_TOKEN, REMOTE_WRITE_PASSWORD, resolveApiKey, type KeyStoreOptions } from './keys.js';

/** What resolving push credentials needs: AWS client settings, and where to report each secret read (for log redaction). */
export interface PushDeps {
  keyStore?: KeyStoreOptions;
  /** Called with every credential read, so loggers redact it from then on. */
  onSecret?: (secret: string) => void;
}

/** Remote write's auth, its credential read from the environment or its store (cached per process). */
async function remoteWriteAuth(push: Config['push'], deps: PushDeps): Promise<RemoteWriteAuth> {
  if (push.remoteWriteSigv4Region) return { kind: 'sigv4', region: push.remoteWriteSigv4Region };
  if (push.remoteWriteBearerToken) {
    const token = await resolveApiKey(push.remoteWriteBearerToken, deps.keyStore, REMOTE_WRITE_BEARER_TOKEN);
    deps.onSecret?.(token);
    return { kind: 'bearer', token };
  }
  if (push.remoteWriteUsername && push.remoteWritePassword) {
    const password = await resolveApiKey(push.remoteWritePassword, deps.keyStore, REMOTE_WRITE_PASSWORD);
    deps.onSecret?.(password);
    return { kind: 'basic', username: push.remoteWriteUsername, password };
  }
  return { kind: 'none' };
}

/**
 * The sink settings a config asks for, with the remote-write credential resolved (read from SSM or
 * Secrets Manager when so configured; rejects with a ConfigError naming the setting when it cannot be).
 */
export async function pushSettingsOf(config: Config, deps: PushDeps = {}): Promise<PushSettings> {
  const p = config.push;
  return {
    sinks: p.sinks,
    // The credential is read only when remote write is one of the sinks.
    remoteWrite: p.remoteWriteUrl && p.sinks.includes('remote_write') ? { url: p.remoteWriteUrl, auth: await remoteWriteAuth(p, deps) } : undefined,
    pushgateway: p.pushgatewayUrl ? { url: p.pushgatewayUrl, job: p.pushgatewayJob } : undefined,
    otlp: {},
  };
}

/**
 * Remote write whose credential is resolved on its first push, so a key store that cannot be read
 * fails this sink only (a SinkError in its outcome), never the collection or the other sinks. The
 * built sink is kept (one read per container); a failed read, or a 401 from the receiver (a rotated
 * credential), makes the next push read the store again.
 */
class RemoteWriteWithCredential implements Sink {
  readonly name = 'remote_write' as const;
  private sink: Promise<Sink> | undefined;

  constructor(
    private readonly config: Config,
    private readonly deps: PushDeps,
  ) {}

  async push(batches: readonly PushBatch[], ctx: PushContext): Promise<void> {
    const pending = (this.sink ??= pushSettingsOf(this.config, this.deps).then((s) => createSinks({ ...s, sinks: ['remote_write'] })[0]!));
    let sink: Sink;
    try {
      // A key store that hangs must not hold up the push summary.
      sink = await untilDeadline(pending, {
        deadline: ctx.deadline,
        clock: ctx.clock,
        signal: ctx.signal,
        onDeadline: () => new Error('the push deadline passed while its credential was read'),
        onAbort: () => new Error('the push was cancelled while its credential was read'),
      });
    } catch (err) {
      if (this.sink === pending) this.sink = undefined;
      throw new SinkError(this.name, err instanceof Error ? err.message : String(err), { cause: err });
    }
    try {
      await sink.push(batches, ctx);
    } catch (err) {
      if (err instanceof SinkError && err.status === 401) {
        // The receiver no longer takes the credential: it may have been rotated in its store.
        this.sink = undefined;
        const p = this.config.push;
        if (p.remoteWriteBearerToken) forgetApiKey(p.remoteWriteBearerToken, REMOTE_WRITE_BEARER_TOKEN);
        if (p.remoteWritePassword) forgetApiKey(p.remoteWritePassword, REMOTE_WRITE_PASSWORD);
      }
      throw err;
    }
  }
}

/** The configured sinks, in the configured order; remote write resolves its credential on its first push. */
export function sinksOf(config: Config, deps: PushDeps = {}): Sink[] {
  const p = config.push;
  const others = createSinks({
    sinks: p.sinks.filter((s) => s !== 'remote_write'),
    pushgateway: p.pushgatewayUrl ? { url: p.pushgatewayUrl, job: p.pushgatewayJob } : undefined,
    otlp: {},
  });
  return p.sinks.map((name: SinkName) => (name === 'remote_write' ? new RemoteWriteWithCredential(config, deps) : others.find((s) => s.name === name)!));
}

/** One batch per portal: its samples and the sources it collected successfully this cycle. */
export function buildBatches(results: readonly CycleResult[], samples: readonly Sample[]): PushBatch[] {
  return results.map((r) => ({
    portal: r.portal,
    snapshot: { collectedAt: r.finishedAt, samples: samples.filter((s) => s.labels[PORTAL_LABEL] === r.portal) },
    succeeded: SOURCES.filter((s) => r[s].ok),
  }));
}
