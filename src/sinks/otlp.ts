import type { Meter } from '@opentelemetry/api';
import { OTLPMetricExporter as JsonExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { MeterProvider, MetricReader, type PushMetricExporter, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { untilDeadline } from '../core/abort.js';
import { redact, type Logger } from '../core/log.js';
import { CATALOGUE } from '../collect/catalogue.js';
import { renderedSeries } from '../metrics/series.js';
import type { MetricDef } from '../metrics/definition.js';
import type { Sample } from '../metrics/sample.js';
import { SinkError } from './errors.js';
import { safeUrl, untrustedReceiver } from './http.js';
import { processAgents } from '../net/agents.js';
import { batchLabels } from './batch.js';
import { DEFAULT_CONCURRENCY, poolError, sendAll } from './pool.js';
import type { Batch, PushContext, PushSettings, Sink } from './types.js';
import { USER_AGENT } from '../version.js';

/** OTLP over HTTP; gRPC is not supported. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Where and how the OTLP sink exports, resolved from settings and the OTEL_* environment. */
export interface OtlpTarget {
  url: string;
  protocol: OtlpProtocol;
  headers: Record<string, string>;
  timeoutMs: number;
  compression: 'gzip' | 'none';
  resourceAttributes: Record<string, string>;
}

const DEFAULT_ENDPOINT = 'http://localhost:4318/';
const DEFAULT_TIMEOUT_MS = 10_000;
const SERVICE_NAME = 'posture-exporter';
/** Far above any family's series count: the SDK would otherwise fold extra series into an overflow series. */
const CARDINALITY_LIMIT = 100_000;

/** Parses the OTEL_*_HEADERS / OTEL_RESOURCE_ATTRIBUTES list form: `k1=v1,k2=v2`, values percent-encoded. */
export function parseKeyValueList(raw: string | undefined, onInvalid?: (entry: string) => void): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw) return out;
  for (const entry of raw.split(',')) {
    if (entry.trim() === '') continue;
    const eq = entry.indexOf('=');
    const key = eq > 0 ? entry.slice(0, eq).trim() : '';
    if (!key) {
      onInvalid?.(entry.slice(0, Math.max(0, eq)).trim() || '(empty key)');
      continue;
    }
    try {
      out[key] = decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      onInvalid?.(key);
    }
  }
  return out;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== '' ? v.trim() : undefined;
}

function positiveNumber(v: string | undefined): number | undefined {
  const n = v === undefined ? NaN : Number(v);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * Resolves the OTLP target the way the OTLP exporter specification says, from `env` (not only
 * `process.env`, so tests and embedders can set it): OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is used
 * as is, OTEL_EXPORTER_OTLP_ENDPOINT gets `v1/metrics` appended; signal-specific headers, protocol,
 * timeout and compression win over the generic ones; the timeout setting wins over both.
 */
export function resolveOtlpTarget(settings: PushSettings['otlp'], env: Record<string, string | undefined>, logger?: Logger): OtlpTarget {
  const specific = nonEmpty(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT);
  const generic = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const url = specific ?? `${(generic ?? DEFAULT_ENDPOINT).replace(/\/*$/, '/')}v1/metrics`;
  try {
    new URL(url);
  } catch {
    throw new SinkError('otlp', `the OTLP endpoint is not a valid URL (from ${specific ? 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'})`);
  }
  const rawProtocol = nonEmpty(env.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? 'http/protobuf';
  if (rawProtocol !== 'http/protobuf' && rawProtocol !== 'http/json') {
    throw new SinkError('otlp', `OTLP protocol '${rawProtocol}' is not supported; use http/protobuf or http/json`);
  }
  const warn = (name: string) => (entry: string) => logger?.warn(`ignoring an invalid entry in ${name}`, { entry });
  const headers = {
    ...parseKeyValueList(env.OTEL_EXPORTER_OTLP_HEADERS, () => logger?.warn('ignoring an invalid entry in OTEL_EXPORTER_OTLP_HEADERS')),
    ...parseKeyValueList(env.OTEL_EXPORTER_OTLP_METRICS_HEADERS, () => logger?.warn('ignoring an invalid entry in OTEL_EXPORTER_OTLP_METRICS_HEADERS')),
  };
  const compression = (nonEmpty(env.OTEL_EXPORTER_OTLP_METRICS_COMPRESSION) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_COMPRESSION)) === 'gzip' ? 'gzip' : 'none';
  const timeoutMs =
    settings?.timeoutMs ?? positiveNumber(env.OTEL_EXPORTER_OTLP_METRICS_TIMEOUT) ?? positiveNumber(env.OTEL_EXPORTER_OTLP_TIMEOUT) ?? DEFAULT_TIMEOUT_MS;
  const resourceAttributes: Record<string, string> = {
    'service.name': SERVICE_NAME,
    ...parseKeyValueList(env.OTEL_RESOURCE_ATTRIBUTES, warn('OTEL_RESOURCE_ATTRIBUTES')),
  };
  const serviceName = nonEmpty(env.OTEL_SERVICE_NAME);
  if (serviceName) resourceAttributes['service.name'] = serviceName;
  return { url, protocol: rawProtocol, headers, timeoutMs, compression, resourceAttributes };
}

/** A reader that collects only when asked: the push collects once and exports the result itself. */
class OneShotReader extends MetricReader {
  constructor(private readonly exporter: PushMetricExporter) {
    super({
      ...(exporter.selectAggregationTemporality ? { aggregationTemporalitySelector: exporter.selectAggregationTemporality.bind(exporter) } : {}),
      cardinalitySelector: () => CARDINALITY_LIMIT,
    });
  }
  protected override async onForceFlush(): Promise<void> {
    await this.exporter.forceFlush();
  }
  protected override async onShutdown(): Promise<void> {
    await this.exporter.shutdown();
  }
}

/** Exports one collection and reports the exporter's result (which the periodic reader would only log). */
function exportOnce(exporter: PushMetricExporter, metrics: ResourceMetrics): Promise<{ ok: true } | { ok: false; error: unknown }> {
  return new Promise((resolve) => {
    exporter.export(metrics, (result) => {
      // ExportResultCode.SUCCESS is 0.
      resolve(result.code === 0 ? { ok: true } : { ok: false, error: result.error ?? new Error('export failed') });
    });
  });
}

/** The batches' samples by family, one per series as written (renderedSeries), `portal` (or the shard's `shard`) added where a sample lacks it. */
function groupByName(batches: readonly Batch[]): Map<string, Sample[]> {
  const samples = batches.flatMap((batch) => batch.snapshot.samples.map((s) => ({ ...s, labels: { ...batchLabels(batch), ...s.labels } })));
  const out = new Map<string, Sample[]>();
  for (const sample of renderedSeries(samples, CATALOGUE)) {
    let list = out.get(sample.name);
    if (!list) out.set(sample.name, (list = []));
    list.push(sample);
  }
  return out;
}

/**
 * One catalogue family as an OTLP instrument, observed from its samples: a gauge as a Gauge, a
 * counter as a monotonic cumulative Sum (what a `_total` is). Name, unit and description from the
 * catalogue; labels as attributes.
 */
function observeFamily(meter: Meter, def: MetricDef, samples: readonly Sample[]): void {
  const options = { description: def.help, unit: def.unit };
  const instrument = def.type === 'counter' ? meter.createObservableCounter(def.name, options) : meter.createObservableGauge(def.name, options);
  instrument.addCallback((result) => {
    for (const sample of samples) result.observe(sample.value, sample.labels);
  });
}

/** About this many data points per export: a fleet's push goes out as several exports, not one body of every portal. */
export const MAX_POINTS_PER_EXPORT = 2000;

/** The batches in consecutive runs of whole batches, each run holding at most `size` samples unless one batch alone has more. */
export function exportsOf(batches: readonly Batch[], size = MAX_POINTS_PER_EXPORT): Batch[][] {
  const out: Batch[][] = [];
  let current: Batch[] = [];
  let points = 0;
  for (const batch of batches) {
    const n = batch.snapshot.samples.length;
    if (current.length > 0 && points + n > size) {
      out.push(current);
      current = [];
      points = 0;
    }
    current.push(batch);
    points += n;
  }
  if (current.length > 0) out.push(current);
  return out;
}

function describeExportError(error: unknown, secrets: readonly string[]): { message: string; status?: number } {
  const e = error as { message?: unknown; code?: unknown; data?: unknown };
  const status = typeof e?.code === 'number' ? e.code : undefined;
  const parts = [typeof e?.message === 'string' && e.message ? e.message : String(error)];
  if (status !== undefined) parts.push(`HTTP ${status}`);
  if (typeof e?.data === 'string' && e.data.trim()) parts.push(e.data.trim().slice(0, 300));
  return { message: redact(parts.join(': '), secrets), ...(status !== undefined ? { status } : {}) };
}

/**
 * OpenTelemetry OTLP/HTTP: a fresh MeterProvider per export, one observable instrument per
 * catalogue family (observeFamily: every family, a gauge or a counter) observed from the batches' samples
 * with their labels (including `portal`, or `shard` for the shard's own) as attributes; a fleet's
 * batches go out as several exports, a bounded number at once.
 */
export class OtlpSink implements Sink {
  readonly name = 'otlp' as const;
  constructor(private readonly settings: PushSettings['otlp'] = {}) {}

  async push(batches: readonly Batch[], ctx: PushContext): Promise<void> {
    const target = resolveOtlpTarget(this.settings, ctx.env ?? process.env, ctx.logger);
    const exports = exportsOf(batches);
    const outcome = await sendAll(exports, (part) => this.exportOnce(part, target, ctx), {
      concurrency: this.settings?.concurrency ?? DEFAULT_CONCURRENCY,
      deadline: ctx.deadline,
      clock: ctx.clock,
      signal: ctx.signal,
    });
    // One export alone is the whole push: its own error says what happened.
    const only = exports.length === 1 ? outcome.failures[0]?.error : undefined;
    if (only !== undefined) throw only instanceof SinkError ? only : new SinkError(this.name, only instanceof Error ? only.message : String(only), { cause: only });
    const error = poolError(this.name, 'OTLP exports', outcome);
    if (error) throw error;
  }

  /** One export: a fresh MeterProvider observing these batches, collected once, exported, shut down. */
  private async exportOnce(batches: readonly Batch[], target: OtlpTarget, ctx: PushContext): Promise<void> {
    const remaining = ctx.deadline - ctx.clock.monotonic();
    if (remaining <= 0) throw new SinkError(this.name, 'the push deadline passed before the OTLP export started');
    const secrets = Object.values(target.headers);
    // Everything that matters is passed explicitly, so `ctx.env` decides; the exporter still falls
    // back to process.env for what is not (TLS files), which in Lambda is the same environment.
    const options = {
      url: target.url,
      headers: target.headers,
      timeoutMillis: Math.max(1, Math.min(target.timeoutMs, remaining)),
      compression: target.compression as unknown as NonNullable<ConstructorParameters<typeof ProtoExporter>[0]>['compression'],
      // The process's connections, kept alive and through the environment's proxy, as every other call's (src/net/agents.ts).
      httpAgentOptions: () => processAgents().routeOf(new URL(target.url)).agent,
      userAgent: USER_AGENT,
    };
    const exporter: PushMetricExporter = target.protocol === 'http/json' ? new JsonExporter(options) : new ProtoExporter(options);
    const reader = new OneShotReader(exporter);
    const resource: Resource = defaultResource().merge(resourceFromAttributes(target.resourceAttributes));
    const provider = new MeterProvider({ resource, readers: [reader] });
    try {
      const meter = provider.getMeter(SERVICE_NAME);
      const byName = groupByName(batches);
      for (const def of CATALOGUE) observeFamily(meter, def, byName.get(def.name) ?? []);
      const { resourceMetrics, errors } = await reader.collect({ timeoutMillis: options.timeoutMillis });
      if (errors.length > 0) throw new SinkError(this.name, `OTLP collection failed: ${String(errors[0])}`, { cause: errors[0] });
      const exported = await untilDeadline(exportOnce(exporter, resourceMetrics), {
        signal: ctx.signal,
        onAbort: (reason) => new SinkError(this.name, 'aborted', { cause: reason }),
      });
      if (!exported.ok) {
        const untrusted = untrustedReceiver(this.name, target.url, exported.error);
        if (untrusted) throw untrusted;
        const { message, status } = describeExportError(exported.error, secrets);
        throw new SinkError(this.name, `OTLP export to ${safeUrl(target.url)} failed: ${message}`, { status, cause: exported.error });
      }
      await provider.forceFlush();
      ctx.logger.debug('otlp: exported', { sink: this.name, protocol: target.protocol, families: byName.size });
    } finally {
      await provider.shutdown().catch((err: unknown) => ctx.logger.debug('otlp: shutdown failed', { sink: this.name, err }));
    }
  }
}
