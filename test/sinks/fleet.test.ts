/**
 * Pushes at fleet size: every sink sends with a bounded number of requests in flight and a total
 * deadline, a partial failure says how much got through, and a shard's own gauges go out labelled
 * with the shard and no portal. Against loopback receivers that count what arrives.
 */
import snappy from 'snappyjs';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { pushAll } from '../../src/sinks/index.js';
import { OtlpSink, exportsOf } from '../../src/sinks/otlp.js';
import { PushgatewaySink } from '../../src/sinks/pushgateway.js';
import { RemoteWriteSink } from '../../src/sinks/remote-write.js';
import { SinkError } from '../../src/sinks/errors.js';
import type { PushContext, ShardBatch } from '../../src/sinks/types.js';
import { closeAfterEach } from '../support/closing.js';
import { decodeMetricsRequest, decodeWriteRequest } from './decode.js';
import { batchFor, seriesKey } from './fixtures.js';
import { startReceiver, type Reply } from './receiver.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const closing = closeAfterEach();

/** A receiver that holds each request `holdMs` (real time) and records the most it ever had at once. */
async function slowReceiver(holdMs: number, reply: (url: string) => Reply = () => ({ status: 200 })) {
  let inFlight = 0;
  const stats = { most: 0 };
  const receiver = closing(
    await startReceiver(async (req) => {
      stats.most = Math.max(stats.most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, holdMs));
      inFlight--;
      return reply(req.url);
    }),
  );
  return { receiver, stats };
}

function ctx(clock = new FakeClock(T0), deadline = clock.monotonic() + 60_000): PushContext {
  return { clock, logger: memoryLogger(), deadline, env: {} };
}

const shardBatch = (ordinal: number, total: number): ShardBatch => ({
  shard: { ordinal, total },
  snapshot: {
    collectedAt: T0,
    samples: [
      { name: 'posture_exporter_shard_ordinal', labels: {}, value: ordinal },
      { name: 'posture_exporter_total_shards', labels: {}, value: total },
    ],
  },
});

describe('Pushgateway at fleet size', () => {
  it('keeps at most `concurrency` group PUTs in flight and still pushes every group', async () => {
    const { receiver, stats } = await slowReceiver(25);
    const batches = Array.from({ length: 10 }, (_, i) => batchFor(`portal-${i}`, T0));
    await new PushgatewaySink({ url: receiver.url, concurrency: 3 }).push(batches, ctx());
    // Four groups a portal (three sources and the exporter's own), each PUT once.
    const urls = receiver.requests.map((r) => r.url);
    expect(urls).toHaveLength(40);
    expect(new Set(urls).size).toBe(40);
    expect(stats.most).toBe(3);
  });

  it('sends nothing whose turn comes after the deadline, and says how many of how many got through', async () => {
    const clock = new FakeClock(T0);
    // Each PUT takes 10 s of the push's clock; the deadline is 25 s away.
    const receiver = closing(
      await startReceiver(() => {
        clock.advance(10_000);
        return { status: 200 };
      }),
    );
    const batches = [batchFor('acme', T0), batchFor('globex', T0)];
    const err = await new PushgatewaySink({ url: receiver.url, concurrency: 1, maxRetries: 0 }).push(batches, ctx(clock, T0 + 25_000)).catch((e: unknown) => e);
    // PUTs start at 0 s, 10 s and 20 s; the fourth's turn comes at 30 s, past the deadline.
    expect(receiver.requests).toHaveLength(3);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).message).toBe('3 of 8 Pushgateway groups pushed; 5 failed, first: not sent: the push deadline passed before its turn');
    expect(err).toMatchObject({ pushed: 3, total: 8 });
  });

  it('sends when the time left before the deadline is a fraction of a millisecond (a monotonic clock reads fractions)', async () => {
    const receiver = closing(await startReceiver(() => ({ status: 200 })));
    // Less time left than the request timeout, and not a whole number of milliseconds.
    await new PushgatewaySink({ url: receiver.url, maxRetries: 0 }).push([batchFor('acme', T0)], ctx(new FakeClock(T0), T0 + 5_000.25));
    expect(receiver.requests).toHaveLength(4);
  });

  it('reports a partial push as partial, not as nothing pushed', async () => {
    const receiver = closing(await startReceiver((req) => (req.url.includes('/portal/globex') ? { status: 400, body: 'pushed metrics are invalid' } : { status: 200 })));
    const sink = new PushgatewaySink({ url: receiver.url, maxRetries: 0 });
    const [outcome] = await pushAll([sink], [batchFor('acme', T0), batchFor('globex', T0), batchFor('initech', T0)], ctx());
    expect(outcome).toMatchObject({ sink: 'pushgateway', ok: false, partial: { pushed: 8, total: 12 } });
    expect(outcome!.error!.message).toMatch(/^8 of 12 Pushgateway groups pushed; 4 failed, first: PUT \S+\/portal\/globex\S*: HTTP 400: pushed metrics are invalid$/);
  });

  it('keeps the shard gauges in one group per shard, keyed job and shard, without a portal', async () => {
    const receiver = closing(await startReceiver(() => ({ status: 200 })));
    await new PushgatewaySink({ url: receiver.url }).push([batchFor('acme', T0), shardBatch(2, 3)], ctx());
    const shardPut = receiver.requests.find((r) => r.url === '/metrics/job/posture-exporter/shard/2');
    expect(shardPut).toBeDefined();
    const lines = shardPut!.body.toString('utf8').split('\n').filter((l) => l && !l.startsWith('#'));
    expect(lines.sort()).toEqual(['posture_exporter_shard_ordinal 2', 'posture_exporter_total_shards 3']);
    expect(receiver.requests.filter((r) => r.url.includes('/shard/'))).toHaveLength(1);
  });
});

describe('remote write at fleet size', () => {
  it('splits a fleet into requests of at most 2,000 series, a bounded number at once, every series once', async () => {
    const { receiver, stats } = await slowReceiver(25, () => ({ status: 204 }));
    const batches = [...Array.from({ length: 200 }, (_, i) => batchFor(`portal-${String(i).padStart(3, '0')}`, T0 + i)), shardBatch(1, 3)];
    const want = new Map<string, number>();
    for (const b of batches) {
      const own: Record<string, string> = 'portal' in b ? { portal: b.portal } : { shard: String(b.shard.ordinal) };
      for (const s of b.snapshot.samples) want.set(seriesKey(s.name, { ...own, ...s.labels }), b.snapshot.collectedAt);
    }
    await new RemoteWriteSink({ url: `${receiver.url}/api/v1/write`, auth: { kind: 'none' }, concurrency: 2 }).push(batches, ctx());

    const decoded = receiver.requests.map((r) => decodeWriteRequest(snappy.uncompress(new Uint8Array(r.body))));
    const sizes = decoded.map((d) => d.timeseries.length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2000);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(want.size);
    expect(decoded.length).toBe(Math.ceil(want.size / 2000));
    const got = new Map<string, number>();
    for (const d of decoded) {
      for (const ts of d.timeseries) {
        const labels = Object.fromEntries(ts.labels);
        const key = seriesKey(labels.__name__!, labels);
        expect(got.has(key), key).toBe(false);
        got.set(key, ts.samples[0]!.timestamp);
      }
      // Each request carries the metadata of the families in it.
      expect(new Set(d.metadata.map((m) => m.name))).toEqual(new Set(d.timeseries.map((ts) => Object.fromEntries(ts.labels).__name__)));
    }
    expect(got).toEqual(want);
    expect(stats.most).toBe(2);
    // The shard's gauges: labelled with the shard, never with a portal.
    expect(got.get('posture_exporter_shard_ordinal{shard="1"}')).toBe(T0);
  });

  it('reports N of M requests when some fail', async () => {
    const receiver = closing(await startReceiver((_req, i) => (i === 1 ? { status: 400, body: 'invalid labels' } : { status: 204 })));
    const batches = Array.from({ length: 200 }, (_, i) => batchFor(`portal-${i}`, T0));
    const err = await new RemoteWriteSink({ url: `${receiver.url}/api/v1/write`, auth: { kind: 'none' }, concurrency: 1, maxRetries: 0 }).push(batches, ctx()).catch((e: unknown) => e);
    const total = receiver.requests.length;
    expect(total).toBeGreaterThan(2);
    expect((err as SinkError).message).toMatch(new RegExp(`^${total - 1} of ${total} remote-write requests pushed; 1 failed, first: POST \\S+: HTTP 400: invalid labels$`));
    expect(err).toMatchObject({ pushed: total - 1, total, status: 400 });
  });
});

describe('OTLP at fleet size', () => {
  it('groups whole batches into exports of about 2,000 data points', () => {
    const batches = Array.from({ length: 300 }, (_, i) => batchFor(`portal-${i}`, T0));
    const per = batches[0]!.snapshot.samples.length;
    const parts = exportsOf(batches);
    expect(parts.flat()).toEqual(batches);
    for (const part of parts) expect(part.length * per).toBeLessThanOrEqual(2000);
    expect(parts).toHaveLength(Math.ceil(300 / Math.floor(2000 / per)));
  });

  it('exports a fleet in several requests, a bounded number at once, with the shard gauges labelled by shard', async () => {
    const { receiver, stats } = await slowReceiver(25);
    const batches = [...Array.from({ length: 300 }, (_, i) => batchFor(`portal-${i}`, T0)), shardBatch(0, 2)];
    await new OtlpSink({ concurrency: 2 }).push(batches, { ...ctx(new FakeClock(Date.now())), env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
    expect(receiver.requests.length).toBe(exportsOf(batches).length);
    expect(receiver.requests.length).toBeGreaterThan(2);
    expect(stats.most).toBe(2);
    const points = receiver.requests.flatMap((r) => decodeMetricsRequest(new Uint8Array(r.body))).flatMap((req) => req.scopes.flatMap((s) => s.metrics.flatMap((m) => m.points.map((p) => ({ name: m.name, ...p })))));
    expect(points).toHaveLength(batches.reduce((n, b) => n + b.snapshot.samples.length, 0));
    expect(new Set(points.map((p) => p.attributes.portal).filter((p) => p !== undefined)).size).toBe(300);
    const shard = points.filter((p) => p.name.startsWith('posture_exporter_') && p.name.endsWith('shard_ordinal'));
    expect(shard).toEqual([expect.objectContaining({ attributes: { shard: '0' }, value: 0 })]);
  });
});
