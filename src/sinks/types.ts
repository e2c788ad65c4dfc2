import type { Dispatch } from '../net/transport.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { Job } from '../domain.js';
import type { Snapshot } from '../metrics/sample.js';
import type { SinkName } from '../config/settings.js';

export type { SinkName } from '../config/settings.js';

/** One portal's collection, as pushed. */
export interface PushBatch {
  portal: string;
  snapshot: Snapshot;
  /** Sources (and the resolved-alerts pass, when it ran) collected successfully this cycle. */
  succeeded: readonly Job[];
}

/**
 * The shard's own series (`posture_exporter_shard_ordinal`, `posture_exporter_total_shards`): they
 * carry no `portal` label, so a shard that owns no portal still says what it is. Every sink labels
 * them `shard="<ordinal>"` (pushed series have no `instance` to tell the shards apart); the
 * Pushgateway keeps them in one group per shard.
 */
export interface ShardBatch {
  shard: { readonly ordinal: number; readonly total: number };
  snapshot: Snapshot;
}

/** What one push carries: the portals' batches and, from a shard, its own batch. */
export type Batch = PushBatch | ShardBatch;

/** What a push may use: time, logging, the cycle's deadline, cancellation and transport. */
export interface PushContext {
  clock: Clock;
  logger: Logger;
  /** Ms on `clock.monotonic()` by which the push must be over, retries included. */
  deadline: number;
  signal?: AbortSignal;
  /** The HTTP client of remote write and the Pushgateway (tests inject an undici Dispatcher); @default the process's (src/net/) */
  dispatcher?: Dispatch;
  /** Environment for OTEL_* and AWS credentials; defaults to `process.env`. */
  env?: Record<string, string | undefined>;
}

/** A push destination. */
export interface Sink {
  readonly name: SinkName;
  /** Pushes every batch; throws SinkError (with how much was pushed when only part of it failed). */
  push(batches: readonly Batch[], ctx: PushContext): Promise<void>;
}

/** How remote write authenticates. */
export type RemoteWriteAuth =
  | { kind: 'none' }
  | { kind: 'bearer'; token: string }
  | { kind: 'basic'; username: string; password: string }
  | {
      kind: 'sigv4';
      region: string;
      /** @default 'aps' */
      service?: string;
    };

/** How the Pushgateway authenticates (its web config knows basic auth only). */
export type PushgatewayAuth = { kind: 'none' } | { kind: 'basic'; username: string; password: string };

/** Push settings, as the config layer hands them over. */
export interface PushSettings {
  sinks: readonly SinkName[];
  remoteWrite?: {
    url: string;
    auth: RemoteWriteAuth;
    /** Per attempt. @default 10000 */
    timeoutMs?: number;
    /** Retries after the first attempt on 5xx, 429 and network errors. @default 3 */
    maxRetries?: number;
    /** Extra headers (e.g. `X-Scope-OrgID` for Mimir). */
    headers?: Record<string, string>;
    /** Requests in flight at once (a fleet's series are split into requests of at most 2,000). @default 8 */
    concurrency?: number;
    /** Backfill: a refusal as out of order, out of bounds or too old is a failure, not a resend the receiver already has. @default false */
    historical?: boolean;
  };
  pushgateway?: {
    url: string;
    /** @default 'posture-exporter' */
    job?: string;
    auth?: PushgatewayAuth;
    /** Per request. @default 10000 */
    timeoutMs?: number;
    /** Retries of each group's PUT after the first attempt on 5xx, 429 and network errors (a PUT replaces the group, so a repeat is safe). @default 3 */
    maxRetries?: number;
    /** Group PUTs in flight at once. @default 8 */
    concurrency?: number;
  };
  /** Endpoint, protocol, headers and resource come from the standard OTEL_* environment. */
  otlp?: {
    /** Wins over OTEL_EXPORTER_OTLP_(METRICS_)TIMEOUT. @default 10000 */
    timeoutMs?: number;
    /** Exports in flight at once (a fleet's batches are split into exports of about 2,000 data points). @default 8 */
    concurrency?: number;
  };
}
