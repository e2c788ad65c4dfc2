import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { METRICS } from '../../src/collect/catalogue.js';
import { SinkError } from '../../src/sinks/errors.js';
import { OtlpSink, parseKeyValueList, resolveOtlpTarget } from '../../src/sinks/otlp.js';
import type { PushBatch, PushContext } from '../../src/sinks/types.js';
import { closeAfterEach } from '../support/closing.js';
import { decodeMetricsRequest, decodeMetricsRequestJson, type DecodedMetricsRequest } from './decode.js';
import { batchFor, seriesKey } from './fixtures.js';
import { startReceiver } from './receiver.js';

describe('OTLP target from settings and the OTEL_* environment', () => {
  it('defaults to http/protobuf on localhost:4318 with service.name posture-exporter', () => {
    expect(resolveOtlpTarget(undefined, {})).toEqual({
      url: 'http://localhost:4318/v1/metrics',
      protocol: 'http/protobuf',
      headers: {},
      timeoutMs: 10_000,
      compression: 'none',
      resourceAttributes: { 'service.name': 'posture-exporter' },
    });
  });

  it.each([
    ['base endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, 'http://collector:4318/v1/metrics'],
    ['base endpoint with a slash', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'http://collector:4318/v1/metrics'],
    ['base endpoint with a path', { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp-gateway-prod-eu-west-2.grafana.net/otlp' }, 'https://otlp-gateway-prod-eu-west-2.grafana.net/otlp/v1/metrics'],
    [
      'metrics endpoint used as is, over the base one',
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://prom:9090/api/v1/otlp/v1/metrics' },
      'http://prom:9090/api/v1/otlp/v1/metrics',
    ],
  ])('%s', (_label, env, url) => {
    expect(resolveOtlpTarget(undefined, env).url).toBe(url);
  });

  it('merges generic and metrics headers, percent-decoding values', () => {
    const t = resolveOtlpTarget(undefined, {
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Basic%20MTIzOmFiYw==, X-Scope-OrgID = tenant-a',
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'X-Scope-OrgID=tenant-b',
    });
    expect(t.headers).toEqual({ Authorization: 'Basic MTIzOmFiYw==', 'X-Scope-OrgID': 'tenant-b' });
  });

  it('takes the protocol from the metrics variable, then the generic one', () => {
    expect(resolveOtlpTarget(undefined, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).protocol).toBe('http/json');
    expect(resolveOtlpTarget(undefined, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/protobuf' }).protocol).toBe('http/protobuf');
  });

  it('refuses gRPC with a SinkError', () => {
    const err = (() => {
      try {
        resolveOtlpTarget(undefined, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).message).toMatch(/grpc/);
  });

  it('merges OTEL_RESOURCE_ATTRIBUTES and lets OTEL_SERVICE_NAME win', () => {
    expect(resolveOtlpTarget(undefined, { OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,service.namespace=security%20team' }).resourceAttributes).toEqual({
      'service.name': 'posture-exporter',
      'deployment.environment.name': 'prod',
      'service.namespace': 'security team',
    });
    expect(resolveOtlpTarget(undefined, { OTEL_RESOURCE_ATTRIBUTES: 'service.name=a', OTEL_SERVICE_NAME: 'b' }).resourceAttributes['service.name']).toBe('b');
  });

  it('reads timeout and compression, signal-specific first', () => {
    const t = resolveOtlpTarget(undefined, { OTEL_EXPORTER_OTLP_TIMEOUT: '3000', OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: '2000', OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip' });
    expect(t.timeoutMs).toBe(2000);
    expect(t.compression).toBe('gzip');
    expect(resolveOtlpTarget({ timeoutMs: 500 }, { OTEL_EXPORTER_OTLP_TIMEOUT: '3000' }).timeoutMs).toBe(500);
  });

  it('skips malformed list entries', () => {
    const bad: string[] = [];
    expect(parseKeyValueList('a=1,=2,novalue,b=%E0%A4%A', (e) => bad.push(e))).toEqual({ a: '1' });
    expect(bad).toHaveLength(3);
  });
});

describe('OtlpSink against a local decoding receiver', () => {
  const closing = closeAfterEach();

  function context(env: Record<string, string>, logger = memoryLogger()): PushContext & { logger: ReturnType<typeof memoryLogger> } {
    return { clock: systemClock, logger, deadline: Date.now() + 20_000, env };
  }

  /** Checks the decoded request against the batches: names, units, descriptions, attributes, values. */
  function expectMatches(requests: DecodedMetricsRequest[], batches: readonly PushBatch[], started: number) {
    expect(requests).toHaveLength(1);
    const [req] = requests;
    expect(req!.resourceAttributes['service.name']).toBe('posture-exporter');
    expect(req!.resourceAttributes['deployment.environment.name']).toBe('test');
    expect(req!.scopes).toHaveLength(1);
    const want = new Map<string, number>();
    for (const b of batches) for (const s of b.snapshot.samples) want.set(seriesKey(s.name, s.labels), s.value);
    const got = new Map<string, number>();
    const names = new Set<string>();
    for (const m of req!.scopes[0]!.metrics) {
      const def = METRICS[m.name];
      expect(def, m.name).toBeDefined();
      expect(m.kind).toBe('gauge');
      expect(m.unit).toBe(def?.unit);
      expect(m.description).toBe(def?.help);
      names.add(m.name);
      for (const p of m.points) {
        for (const v of Object.values(p.attributes)) expect(typeof v).toBe('string');
        got.set(seriesKey(m.name, p.attributes as Record<string, string>), p.value);
        expect(Number(p.timeUnixNano / 1_000_000n)).toBeGreaterThanOrEqual(started);
      }
    }
    expect(got).toEqual(want);
    expect(names).toEqual(new Set(batches.flatMap((b) => b.snapshot.samples.map((s) => s.name))));
  }

  const env = (url: string): Record<string, string> => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: url,
    OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20otlp-secret-token,X-Scope-OrgID=tenant-a',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
  });

  it('exports every sample as protobuf gauges to OTEL_EXPORTER_OTLP_ENDPOINT/v1/metrics', async () => {
    const receiver = closing(await startReceiver(() => ({ status: 200, headers: { 'content-type': 'application/x-protobuf' } })));
    const now = Date.now();
    const batches = [batchFor('acme', now), batchFor('ops/eu', now, { scale: 2, failed: ['alerts'] })];
    const started = Date.now();
    await new OtlpSink().push(batches, context(env(receiver.url)));
    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v1/metrics');
    expect(req.headers['content-type']).toBe('application/x-protobuf');
    expect(req.headers.authorization).toBe('Bearer otlp-secret-token');
    expect(req.headers['x-scope-orgid']).toBe('tenant-a');
    expect(req.headers['user-agent']).toMatch(/^posture-exporter\//);
    expectMatches(decodeMetricsRequest(new Uint8Array(req.body)), batches, started);
  });

  it('exports OTLP/JSON when the protocol says http/json, to the metrics endpoint as is', async () => {
    const receiver = closing(await startReceiver(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{}' })));
    const batches = [batchFor('acme', Date.now())];
    const started = Date.now();
    await new OtlpSink().push(batches, context({ ...env('http://127.0.0.1:1'), OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/otlp/metrics`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }));
    const req = receiver.requests[0]!;
    expect(req.url).toBe('/otlp/metrics');
    expect(req.headers['content-type']).toBe('application/json');
    expectMatches(decodeMetricsRequestJson(req.body.toString('utf8')), batches, started);
  });

  it('turns a 500 from the receiver into a SinkError with the status, without leaking headers', async () => {
    const receiver = closing(await startReceiver(() => ({ status: 500, body: 'boom: Bearer otlp-secret-token' })));
    const logger = memoryLogger();
    const err = await new OtlpSink().push([batchFor('acme', Date.now())], context(env(receiver.url), logger)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).sink).toBe('otlp');
    expect((err as SinkError).status).toBe(500);
    expect((err as SinkError).message).not.toContain('otlp-secret-token');
    expect(logger.lines.join('\n')).not.toContain('otlp-secret-token');
  });

  it('turns an unreachable receiver into a SinkError', async () => {
    const closed = await startReceiver();
    const url = closed.url;
    await closed.close();
    const started = Date.now();
    const err = await new OtlpSink({ timeoutMs: 500 }).push([batchFor('acme', Date.now())], context(env(url))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).status).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
