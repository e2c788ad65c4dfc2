import snappy from 'snappyjs';
import { CATALOGUE, METRICS } from '../collect/catalogue.js';
import type { MetricDef } from '../metrics/definition.js';
import { renderedSeries } from '../metrics/series.js';
import { batchLabels } from './batch.js';
import { DEFAULT_CONCURRENCY, poolError, sendAll } from './pool.js';
import { SinkError } from './errors.js';
import { basicAuth, deliver, type HttpResult } from './http.js';
import { ProtoWriter } from './protobuf.js';
import { credentialsFromEnv, signSigV4 } from './sigv4.js';
import type { Batch, PushContext, PushSettings, Sink } from './types.js';
import { USER_AGENT } from '../version.js';

/** One series of a WriteRequest: labels sorted by name (with `__name__`), one sample. */
export interface RemoteWriteSeries {
  labels: ReadonlyArray<readonly [string, string]>;
  value: number;
  /** Unix ms. */
  timestamp: number;
}

/** Family metadata sent alongside the series: its type (the catalogue's) and HELP. */
export interface RemoteWriteMetadata {
  name: string;
  type: MetricDef['type'];
  help: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RETRIES = 3;
/** prometheus.MetricMetadata.MetricType of each catalogue type (COUNTER 1, GAUGE 2). */
const METRIC_TYPE: Readonly<Record<MetricDef['type'], number>> = { counter: 1, gauge: 2 };

function byName(a: readonly [string, string], b: readonly [string, string]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

/**
 * The series of every batch, stamped with its snapshot's `collectedAt`: one per series as written
 * (renderedSeries). Labels with empty values are left out (Prometheus treats an empty label as an
 * absent one); `portal` is added if a sample lacks it (`shard` to the shard's own series).
 */
export function toTimeSeries(batches: readonly Batch[]): RemoteWriteSeries[] {
  const out: RemoteWriteSeries[] = [];
  for (const batch of batches) {
    for (const s of renderedSeries(batch.snapshot.samples.map((x) => ({ ...x, labels: { ...batchLabels(batch), ...x.labels } })), CATALOGUE)) {
      const labels: Array<[string, string]> = [['__name__', s.name]];
      for (const [k, v] of Object.entries(s.labels)) if (k !== '__name__' && v !== '') labels.push([k, v]);
      labels.sort(byName);
      out.push({ labels, value: s.value, timestamp: batch.snapshot.collectedAt });
    }
  }
  return out;
}

/** Metadata for every family that has samples, in first-seen order. */
export function metadataOf(batches: readonly Batch[]): RemoteWriteMetadata[] {
  return metadataOfNames(batches.flatMap((b) => b.snapshot.samples.map((s) => s.name)));
}

/** Metadata of the families named, in first-seen order. */
function metadataOfNames(names: Iterable<string>): RemoteWriteMetadata[] {
  const seen = new Map<string, RemoteWriteMetadata>();
  for (const name of names) {
    const def = METRICS[name];
    if (!seen.has(name)) seen.set(name, { name, type: def?.type ?? 'gauge', help: def?.help ?? '' });
  }
  return [...seen.values()];
}

/**
 * Most series in one request: Prometheus' own remote-write queue sends at most 2,000 samples per
 * request by default (`max_samples_per_send`), a size every receiver takes; a fleet's push is
 * split into requests of this size rather than one body of every portal.
 */
export const MAX_SERIES_PER_REQUEST = 2000;

/** The series split into requests of at most `size`, each with its families' metadata. */
export function requestsOf(series: readonly RemoteWriteSeries[], size = MAX_SERIES_PER_REQUEST): Array<{ series: RemoteWriteSeries[]; metadata: RemoteWriteMetadata[] }> {
  const out: Array<{ series: RemoteWriteSeries[]; metadata: RemoteWriteMetadata[] }> = [];
  for (let i = 0; i < series.length; i += size) {
    const part = series.slice(i, i + size);
    out.push({ series: part, metadata: metadataOfNames(part.map((ts) => ts.labels.find(([k]) => k === '__name__')![1])) });
  }
  return out;
}

/**
 * Encodes a `prometheus.WriteRequest` (remote write 1.0): field 1 TimeSeries {1 Label {1 name,
 * 2 value}, 2 Sample {1 double value, 2 int64 timestamp}}, field 3 MetricMetadata {1 type,
 * 2 metric_family_name, 4 help}.
 */
export function encodeWriteRequest(series: readonly RemoteWriteSeries[], metadata: readonly RemoteWriteMetadata[] = []): Uint8Array {
  const w = new ProtoWriter();
  for (const ts of series) {
    w.message(1, (t) => {
      for (const [name, value] of ts.labels) t.message(1, (l) => l.string(1, name).string(2, value));
      t.message(2, (s) => s.double(1, ts.value).varint(2, ts.timestamp));
    });
  }
  for (const m of metadata) {
    w.message(3, (md) => {
      md.varint(1, METRIC_TYPE[m.type]).string(2, m.name);
      if (m.help) md.string(4, m.help);
    });
  }
  return w.finish();
}

/**
 * Wordings with which Prometheus, Mimir, Cortex, Amazon Managed Service for Prometheus and Thanos
 * reject samples they already have (a sample at that timestamp exists).
 */
const DUPLICATE: readonly RegExp[] = [
  /duplicate sample for timestamp/i, // Prometheus, Cortex, AMP
  /err-mimir-sample-duplicate-timestamp/i,
  /sample with repeated timestamp but different value/i, // Cortex
];

/** Wordings with which they reject samples they can no longer take (out of order, too old). */
const TOO_OLD: readonly RegExp[] = [
  /out of order sample/i, // Prometheus, AMP
  /sample timestamp out of order/i, // Cortex
  /err-mimir-sample-out-of-order/i,
  /out of bounds/i, // Prometheus, Cortex: older than the head block
  /err-mimir-sample-out-of-bounds/i,
  /too old sample/i, // Prometheus with an out-of-order window
  /timestamp too old/i, // Cortex
  /err-mimir-sample-timestamp-too-old/i,
  /its timestamp is too old/i, // Mimir
];

/**
 * Whether a rejection says the receiver already has (or has moved past) these samples. A live
 * resend after a timeout meets these; the data is there, so the push counts as delivered.
 */
export function isAlreadyIngested(res: Pick<HttpResult, 'status' | 'body'>): boolean {
  if (res.status !== 400 && res.status !== 409) return false;
  return DUPLICATE.some((re) => re.test(res.body)) || TOO_OLD.some((re) => re.test(res.body));
}

/** Whether a rejection says only that the receiver has samples at these timestamps already. */
export function isDuplicateSample(res: Pick<HttpResult, 'status' | 'body'>): boolean {
  if (res.status !== 400 && res.status !== 409) return false;
  return DUPLICATE.some((re) => re.test(res.body)) && !TOO_OLD.some((re) => re.test(res.body));
}

type RemoteWriteSettings = NonNullable<PushSettings['remoteWrite']>;

/** Prometheus remote write 1.0 (Prometheus, AMP, Mimir, Grafana Cloud, VictoriaMetrics, Cortex, Thanos). */
export class RemoteWriteSink implements Sink {
  readonly name = 'remote_write' as const;
  constructor(private readonly settings: RemoteWriteSettings) {}

  async push(batches: readonly Batch[], ctx: PushContext): Promise<void> {
    const series = toTimeSeries(batches);
    if (series.length === 0) {
      ctx.logger.debug('remote write: nothing to push', { sink: this.name });
      return;
    }
    const { url, auth } = this.settings;
    const base: Record<string, string> = {
      ...this.settings.headers,
      'content-type': 'application/x-protobuf',
      'content-encoding': 'snappy',
      'x-prometheus-remote-write-version': '0.1.0',
      'user-agent': USER_AGENT,
    };
    // Extra headers may carry credentials of their own (a tenant token, an API key).
    const secrets: string[] = Object.values(this.settings.headers ?? {});
    let headers: (payload: Uint8Array) => Promise<Record<string, string>>;
    switch (auth.kind) {
      case 'none':
        headers = async () => base;
        break;
      case 'bearer':
        secrets.push(auth.token);
        headers = async () => ({ ...base, authorization: `Bearer ${auth.token}` });
        break;
      case 'basic': {
        const value = basicAuth(auth.username, auth.password);
        secrets.push(auth.password, value.slice('Basic '.length));
        headers = async () => ({ ...base, authorization: value });
        break;
      }
      case 'sigv4': {
        const credentials = credentialsFromEnv(ctx.env ?? process.env);
        if (!credentials) {
          throw new SinkError(this.name, 'SigV4 needs AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set (the Lambda role provides them)');
        }
        secrets.push(credentials.secretAccessKey, ...(credentials.sessionToken ? [credentials.sessionToken] : []));
        const target = new URL(url);
        headers = async (payload) => ({
          ...base,
          ...(await signSigV4(
            { method: 'POST', url: target, headers: base, body: payload },
            { region: auth.region, service: auth.service ?? 'aps', credentials, date: new Date(ctx.clock.now()) },
          )),
        });
        break;
      }
    }
    const requests = requestsOf(series);
    const outcome = await sendAll(
      requests,
      async (request) => {
        const payload = snappy.compress(encodeWriteRequest(request.series, request.metadata));
        await deliver({
          sink: this.name,
          ctx,
          method: 'POST',
          url,
          body: payload,
          headers: () => headers(payload),
          timeoutMs: this.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          maxRetries: this.settings.maxRetries ?? DEFAULT_MAX_RETRIES,
          // History is new to the receiver: "too old" means it was refused, not that it is there.
          alreadyDelivered: this.settings.historical ? isDuplicateSample : isAlreadyIngested,
          secrets,
        });
      },
      { concurrency: this.settings.concurrency ?? DEFAULT_CONCURRENCY, deadline: ctx.deadline, clock: ctx.clock, signal: ctx.signal },
    );
    ctx.logger.debug('remote write: pushed', { sink: this.name, series: series.length, requests: outcome.sent, failed: outcome.failures.length });
    // One request alone is the whole push: its own error says what happened.
    const only = requests.length === 1 ? outcome.failures[0]?.error : undefined;
    if (only !== undefined) throw only instanceof SinkError ? only : new SinkError(this.name, only instanceof Error ? only.message : String(only), { cause: only });
    const error = poolError(this.name, 'remote-write requests', outcome);
    if (error) throw error;
  }
}
