import type { Config, KeySource } from '../config/load.js';
import { untilDeadline } from '../core/abort.js';
import type { CycleResult } from '../collect/cycle.js';
import { PORTAL_LABEL } from '../metrics/definition.js';
import { JOBS } from '../domain.js';
import type { Sample } from '../metrics/sample.js';
import { loadSink } from './index.js';
import { SinkError } from './errors.js';
import type { Batch, PushContext, PushgatewayAuth, PushSettings, RemoteWriteAuth, Sink, SinkName } from './types.js';
import { forgetSecret, PUSHGATEWAY_PASSWORD, REMOTE_WRITE_BEARER_TOKEN, REMOTE_WRITE_PASSWORD, resolveSecret, type KeyStoreOptions, type SecretKind } from '../config/secrets.js';

/** What resolving push credentials needs: AWS client settings, and where to report each secret read (for log redaction). */
export interface PushDeps {
  keyStore?: KeyStoreOptions;
  /** Called with every credential read, so loggers redact it from then on. */
  onSecret?: (secret: string) => void;
}

type PushConfig = Config['push'];

/** Reads one credential (cached per process) and reports it for log redaction. */
async function secretOf(source: KeySource, kind: SecretKind, deps: PushDeps): Promise<string> {
  const secret = await resolveSecret(source, deps.keyStore, kind);
  deps.onSecret?.(secret);
  return secret;
}

/** Remote write's auth, its credential read from the environment or its store. */
async function remoteWriteAuth(push: PushConfig, deps: PushDeps): Promise<RemoteWriteAuth> {
  if (push.remoteWriteSigv4Region) return { kind: 'sigv4', region: push.remoteWriteSigv4Region };
  if (push.remoteWriteBearerToken) return { kind: 'bearer', token: await secretOf(push.remoteWriteBearerToken, REMOTE_WRITE_BEARER_TOKEN, deps) };
  if (push.remoteWriteUsername && push.remoteWritePassword) {
    return { kind: 'basic', username: push.remoteWriteUsername, password: await secretOf(push.remoteWritePassword, REMOTE_WRITE_PASSWORD, deps) };
  }
  return { kind: 'none' };
}

/** The Pushgateway's auth, its password read from the environment or its store. */
async function pushgatewayAuth(push: PushConfig, deps: PushDeps): Promise<PushgatewayAuth> {
  if (push.pushgatewayUsername && push.pushgatewayPassword) {
    return { kind: 'basic', username: push.pushgatewayUsername, password: await secretOf(push.pushgatewayPassword, PUSHGATEWAY_PASSWORD, deps) };
  }
  return { kind: 'none' };
}

/** The credentials each sink reads, so a rejected one can be forgotten and read again. */
function credentialsOf(push: PushConfig, sink: SinkName): Array<[KeySource, SecretKind]> {
  const all: Array<[KeySource | undefined, SecretKind]> =
    sink === 'remote_write'
      ? [
          [push.remoteWriteBearerToken, REMOTE_WRITE_BEARER_TOKEN],
          [push.remoteWritePassword, REMOTE_WRITE_PASSWORD],
        ]
      : sink === 'pushgateway'
        ? [[push.pushgatewayPassword, PUSHGATEWAY_PASSWORD]]
        : [];
  return all.flatMap(([source, kind]) => (source ? [[source, kind] as [KeySource, SecretKind]] : []));
}

/**
 * The settings of the configured sinks (of `only` among them, when given), built in this one
 * place, with their credentials resolved: read from SSM or Secrets Manager when so configured;
 * rejects with a ConfigError naming the setting when one cannot be. A sink that is not configured
 * has no settings and its credentials are never read.
 */
export async function pushSettingsOf(config: Config, deps: PushDeps = {}, only: readonly SinkName[] = config.push.sinks): Promise<PushSettings> {
  const p = config.push;
  const sinks = p.sinks.filter((s) => only.includes(s));
  const timeoutMs = p.timeoutSeconds === undefined ? undefined : p.timeoutSeconds * 1000;
  const limits = { ...(timeoutMs === undefined ? {} : { timeoutMs }), maxRetries: p.maxRetries, concurrency: p.concurrency };
  return {
    sinks,
    remoteWrite:
      p.remoteWriteUrl && sinks.includes('remote_write')
        ? { url: p.remoteWriteUrl, auth: await remoteWriteAuth(p, deps), headers: { ...p.remoteWriteHeaders }, ...limits }
        : undefined,
    pushgateway: p.pushgatewayUrl && sinks.includes('pushgateway') ? { url: p.pushgatewayUrl, job: p.pushgatewayJob, auth: await pushgatewayAuth(p, deps), ...limits } : undefined,
    otlp: sinks.includes('otlp') ? { ...(timeoutMs === undefined ? {} : { timeoutMs }), concurrency: p.concurrency } : undefined,
  };
}

/**
 * One configured sink, built on its first push: its credentials read and its module imported, so
 * a process loads only the sinks it pushes to, and a key store that cannot be read (or a module
 * that cannot load) fails this sink only (a SinkError in its outcome), never the collection or the
 * other sinks; a store that hangs fails it at the push's deadline. The built sink is kept (one
 * read per container); a failed build, or a 401 from the receiver (a rotated credential), makes
 * the next push build it again.
 */
class ConfiguredSink implements Sink {
  private sink: Promise<Sink> | undefined;

  constructor(
    readonly name: SinkName,
    private readonly config: Config,
    private readonly deps: PushDeps,
  ) {}

  async push(batches: readonly Batch[], ctx: PushContext): Promise<void> {
    const pending = (this.sink ??= this.build());
    let sink: Sink;
    try {
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
        for (const [source, kind] of credentialsOf(this.config.push, this.name)) forgetSecret(source, kind);
      }
      throw err;
    }
  }

  private async build(): Promise<Sink> {
    return loadSink(this.name, await pushSettingsOf(this.config, this.deps, [this.name]));
  }
}

/** The configured sinks, in the configured order; each reads its credentials on its first push. */
export function sinksOf(config: Config, deps: PushDeps = {}): Sink[] {
  return [...new Set(config.push.sinks)].map((name) => new ConfiguredSink(name, config, deps));
}

/**
 * One batch per portal (its samples and the sources it collected successfully this cycle) and,
 * when `shard` is given, the shard's own batch: the samples with no portal label (its shard
 * gauges), stamped `shard.at` (Unix ms).
 */
export function buildBatches(results: readonly CycleResult[], samples: readonly Sample[], shard?: { ordinal: number; total: number; at: number }): Batch[] {
  const batches: Batch[] = results.map((r) => ({
    portal: r.portal,
    snapshot: { collectedAt: r.finishedAt, samples: samples.filter((s) => s.labels[PORTAL_LABEL] === r.portal) },
    succeeded: JOBS.filter((s) => r[s]?.ok === true),
  }));
  const own = samples.filter((s) => s.labels[PORTAL_LABEL] === undefined);
  if (shard && own.length > 0) batches.push({ shard: { ordinal: shard.ordinal, total: shard.total }, snapshot: { collectedAt: shard.at, samples: own } });
  return batches;
}
