// Every family of the catalogue reaches every sink: OTLP (protobuf and JSON), remote write and the
// Pushgateway each carry one sample of each family, with its value and type, read back by decoding
// the payload the sink sent (test/sinks/decode.ts, written from the .proto files and the text
// format, not from the sinks). The batch is made from the catalogue by hand: each family once, a
// value of its own.
import snappy from 'snappyjs';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import { JOBS } from '../../src/domain.js';
import type { MetricDef } from '../../src/metrics/definition.js';
import type { Sample } from '../../src/metrics/sample.js';
import { OtlpSink } from '../../src/sinks/otlp.js';
import { PushgatewaySink } from '../../src/sinks/pushgateway.js';
import { RemoteWriteSink } from '../../src/sinks/remote-write.js';
import type { Batch, PushContext } from '../../src/sinks/types.js';
import { closeAfterEach } from '../support/closing.js';
import { decodeMetricsRequest, decodeMetricsRequestJson, decodeWriteRequest } from './decode.js';
import { startReceiver } from './receiver.js';

const PORTAL = 'acme';
const AT = Date.UTC(2026, 10, 22, 12);

/** Each family's one sample: its labels set to `v<i>`, its value i + 0.25 (every value of its own). */
const FAMILIES = CATALOGUE.map((def: MetricDef, i) => ({
  def,
  sample: { name: def.name, labels: Object.fromEntries(def.labels.map((l) => [l, `v${i}`])), value: i + 0.25 } satisfies Sample,
}));

/** A portal's batch of every family but the shard's own, which go out in the shard's batch (as the push builds them). */
function batches(): Batch[] {
  return [
    { portal: PORTAL, succeeded: [...JOBS], snapshot: { collectedAt: AT, samples: FAMILIES.filter((f) => !f.def.noPortal).map((f) => ({ ...f.sample, labels: { portal: PORTAL, ...f.sample.labels } })) } },
    { shard: { ordinal: 0, total: 1 }, snapshot: { collectedAt: AT, samples: FAMILIES.filter((f) => f.def.noPortal).map((f) => f.sample) } },
  ];
}

/** What each family must arrive with: its value and type. */
const WANT = new Map(FAMILIES.map((f) => [f.def.name, { value: f.sample.value, type: f.def.type }]));

const context = (env: Record<string, string> = {}): PushContext => ({ clock: systemClock, logger: memoryLogger(), deadline: Date.now() + 20_000, env });

describe('every family reaches every sink', () => {
  const closing = closeAfterEach();

  it('has gauges and counters to carry', () => {
    expect(new Set(FAMILIES.map((f) => f.def.type))).toEqual(new Set(['gauge', 'counter']));
    expect(FAMILIES.some((f) => f.def.origin === 'resolved')).toBe(true);
  });

  it.each(['http/protobuf', 'http/json'] as const)('OTLP over %s: a gauge as a Gauge, a counter as a cumulative monotonic Sum', async (protocol) => {
    const receiver = closing(await startReceiver(() => ({ status: 200 })));
    await new OtlpSink().push(batches(), context({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol }));
    const body = receiver.requests[0]!.body;
    const metrics = (protocol === 'http/json' ? decodeMetricsRequestJson(body.toString('utf8')) : decodeMetricsRequest(body)).flatMap((r) => r.scopes).flatMap((s) => s.metrics);
    const got = new Map(metrics.map((m) => [m.name, { value: m.points.map((p) => p.value), type: m.kind === 'sum' ? 'counter' : m.kind }]));
    expect(got).toEqual(new Map([...WANT].map(([name, w]) => [name, { value: [w.value], type: w.type }])));
    // AGGREGATION_TEMPORALITY_CUMULATIVE is 2 (opentelemetry/proto/metrics/v1/metrics.proto).
    for (const m of metrics.filter((x) => x.kind === 'sum')) expect([m.name, m.temporality, m.monotonic]).toEqual([m.name, 2, true]);
  });

  it('remote write: every family\'s series, and its metadata with the family\'s type (COUNTER 1, GAUGE 2)', async () => {
    const receiver = closing(await startReceiver(() => ({ status: 204 })));
    await new RemoteWriteSink({ url: `${receiver.url}/api/v1/write`, auth: { kind: 'none' } }).push(batches(), context());
    const decoded = decodeWriteRequest(snappy.uncompress(new Uint8Array(receiver.requests[0]!.body)));
    const values = new Map(decoded.timeseries.map((ts) => [ts.labels.find(([k]) => k === '__name__')![1], ts.samples.map((s) => s.value)]));
    expect(values).toEqual(new Map([...WANT].map(([name, w]) => [name, [w.value]])));
    const types = new Map(decoded.metadata.map((m) => [m.name, m.type]));
    expect(types).toEqual(new Map([...WANT].map(([name, w]) => [name, w.type === 'counter' ? 1 : 2])));
  });

  it('Pushgateway: every family in some group, under its own TYPE', async () => {
    const receiver = closing(await startReceiver(() => ({ status: 200 })));
    await new PushgatewaySink({ url: receiver.url }).push(batches(), context());
    const got = new Map<string, { value: number[]; type: string }>();
    for (const req of receiver.requests) {
      const text = req.body.toString('utf8');
      for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) got.set(name!, { value: [], type: type! });
      for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) {
        const name = /^[a-z_:][a-z0-9_:]*/.exec(line)![0];
        got.get(name)!.value.push(Number(line.slice(line.lastIndexOf(' ') + 1)));
      }
    }
    expect(got).toEqual(new Map([...WANT].map(([name, w]) => [name, { value: [w.value], type: w.type }])));
  });
});
