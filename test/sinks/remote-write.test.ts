import { afterEach, describe, expect, it, vi } from 'vitest';
import snappy from 'snappyjs';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { SinkError } from '../../src/sinks/errors.js';
import { encodeWriteRequest, isAlreadyIngested, metadataOf, RemoteWriteSink, toTimeSeries } from '../../src/sinks/remote-write.js';
import type { PushContext, RemoteWriteAuth } from '../../src/sinks/types.js';
import { decodeWriteRequest } from './decode.js';
import { batchFor, seriesKey } from './fixtures.js';
import { startReceiver, type Receiver, type Reply } from './receiver.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

function context(clock: FakeClock, extra: Partial<PushContext> = {}) {
  const logger = memoryLogger();
  const ctx: PushContext = { clock, logger, deadline: clock.now() + 60_000, env: {}, ...extra };
  return { ctx, logger };
}

describe('WriteRequest encoding', () => {
  it('matches hand-assembled bytes for one series with one sample', () => {
    const bytes = encodeWriteRequest([{ labels: [['__name__', 'up']], value: 1, timestamp: 1000 }]);
    // WriteRequest{1: TimeSeries{1: Label{1:"__name__", 2:"up"}, 2: Sample{1: 1.0 (fixed64), 2: 1000 (varint e8 07)}}}
    const expected = '0a1e' + '0a0e' + '0a08' + Buffer.from('__name__').toString('hex') + '1202' + Buffer.from('up').toString('hex') + '120c' + '09' + '000000000000f03f' + '10e807';
    expect(Buffer.from(bytes).toString('hex')).toBe(expected);
  });

  it('decodes back to every series, label, value and collectedAt timestamp of the batches', () => {
    const batches = [batchFor('acme', T0), batchFor('ops/eu', T0 + 5)];
    const decoded = decodeWriteRequest(encodeWriteRequest(toTimeSeries(batches), metadataOf(batches)));
    const want = new Map<string, { value: number; timestamp: number }>();
    for (const b of batches) for (const s of b.snapshot.samples) want.set(seriesKey(s.name, s.labels), { value: s.value, timestamp: b.snapshot.collectedAt });
    const got = new Map<string, { value: number; timestamp: number }>();
    for (const ts of decoded.timeseries) {
      const labels = Object.fromEntries(ts.labels);
      expect(ts.samples).toHaveLength(1);
      got.set(seriesKey(labels.__name__!, labels), ts.samples[0]!);
    }
    expect(got).toEqual(want);
    expect(decoded.timeseries).toHaveLength(batches[0]!.snapshot.samples.length + batches[1]!.snapshot.samples.length);
  });

  it('sends GAUGE metadata with the catalogue help once per family', () => {
    const batches = [batchFor('acme', T0), batchFor('other', T0)];
    const { metadata } = decodeWriteRequest(encodeWriteRequest([], metadataOf(batches)));
    const names = metadata.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain('posture_devices');
    const devices = metadata.find((m) => m.name === 'posture_devices')!;
    expect(devices.type).toBe(2);
    expect(devices.help).toMatch(/^Devices by activity/);
  });

  it('sorts labels by name with __name__ first, drops empty values and adds a missing portal', () => {
    const [series] = toTimeSeries([
      {
        portal: 'acme',
        succeeded: ['alerts'],
        snapshot: { collectedAt: T0, samples: [{ name: 'posture_alerts_open_by_integration', labels: { type: 'incident', severity: 'red', integration: '', Zeta: 'z' }, value: 4 }] },
      },
    ]);
    expect(series!.labels).toEqual([
      ['Zeta', 'z'],
      ['__name__', 'posture_alerts_open_by_integration'],
      ['portal', 'acme'],
      ['severity', 'red'],
      ['type', 'incident'],
    ]);
    expect(series!.timestamp).toBe(T0);
  });

  it('round-trips through snappy block compression', () => {
    const raw = encodeWriteRequest(toTimeSeries([batchFor('acme', T0)]));
    const compressed = snappy.compress(raw);
    expect(compressed.length).toBeLessThan(raw.length);
    // Block format starts with the uncompressed length as a varint (no stream identifier chunk).
    let len = 0;
    for (let i = 0, shift = 0; ; i++, shift += 7) {
      len |= (compressed[i]! & 0x7f) << shift;
      if ((compressed[i]! & 0x80) === 0) break;
    }
    expect(len).toBe(raw.length);
    expect(Buffer.from(snappy.uncompress(compressed)).equals(Buffer.from(raw))).toBe(true);
  });
});

describe('rejections that mean the receiver already has the samples', () => {
  it.each([
    ['Prometheus duplicate', 400, 'duplicate sample for timestamp', true],
    ['Prometheus out of order', 400, 'out of order sample', true],
    ['Prometheus too old', 400, 'out of bounds', true],
    ['Prometheus OOO window', 400, 'too old sample', true],
    ['Mimir out of order', 400, 'failed pushing to ingester: user=anonymous: the sample has been rejected because another sample with a more recent timestamp has already been ingested and out-of-order samples are not allowed (err-mimir-sample-out-of-order). The affected sample has timestamp 2026-11-22T12:00:00Z', true],
    ['Mimir too old', 400, 'the sample has been rejected because its timestamp is too old (err-mimir-sample-timestamp-too-old)', true],
    ['Mimir duplicate', 400, 'the sample has been rejected because another sample with the same timestamp, but a different value, has already been ingested (err-mimir-sample-duplicate-timestamp)', true],
    ['Cortex out of order', 400, 'user=fake: sample timestamp out of order; last timestamp: 1795000000000, incoming timestamp: 1794999990000 for series {__name__="posture_devices"}', true],
    ['Cortex duplicate', 400, 'sample with repeated timestamp but different value; last value: 3, incoming value: 4', true],
    ['Cortex too old', 400, "sample for 'posture_devices{activity=\"active\"}' has timestamp too old: 1600000000000", true],
    ['AMP out of order', 400, 'err: out of order sample. timestamp=2026-11-22T12:00:00Z, series={__name__="posture_devices"}: out of order sample', true],
    ['Thanos conflict', 409, 'store locally for endpoint 127.0.0.1:10901: conflict: out of order sample', true],
    ['invalid label', 400, 'invalid metric name or label names', false],
    ['corrupt snappy', 400, 'snappy: corrupt input', false],
    ['auth', 401, 'authentication error: duplicate sample for timestamp', false],
    ['server error mentioning order', 500, 'out of order sample', false],
    ['rate limit', 429, 'ingestion rate limit exceeded', false],
  ])('%s counts as delivered: %s', (_label, status, body, ingested) => {
    expect(isAlreadyIngested({ status, body })).toBe(ingested);
  });
});

describe('RemoteWriteSink over HTTP', () => {
  const batches = [batchFor('acme', T0)];

  async function sinkAgainst(replies: Reply[], auth: RemoteWriteAuth = { kind: 'none' }, clock = new FakeClock(T0, { autoAdvance: true })) {
    receiver = await startReceiver((_req, i) => replies[Math.min(i, replies.length - 1)]!, () => clock.now());
    const sink = new RemoteWriteSink({ url: `${receiver.url}/api/v1/write`, auth, maxRetries: 3, headers: { 'X-Scope-OrgID': 'tenant-1' } });
    return { sink, clock, receiver };
  }

  it('posts snappy-compressed protobuf with the remote-write headers', async () => {
    const { sink, clock, receiver } = await sinkAgainst([{ status: 204 }], { kind: 'bearer', token: 'rw-token-123456' });
    const { ctx } = context(clock);
    await sink.push(batches, ctx);
    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/api/v1/write');
    expect(req.headers['content-type']).toBe('application/x-protobuf');
    expect(req.headers['content-encoding']).toBe('snappy');
    expect(req.headers['x-prometheus-remote-write-version']).toBe('0.1.0');
    expect(req.headers['user-agent']).toMatch(/^posture-exporter\/\d+\.\d+\.\d+/);
    expect(req.headers['authorization']).toBe('Bearer rw-token-123456');
    expect(req.headers['x-scope-orgid']).toBe('tenant-1');
    const decoded = decodeWriteRequest(snappy.uncompress(new Uint8Array(req.body)));
    expect(decoded.timeseries).toHaveLength(batches[0]!.snapshot.samples.length);
  });

  it('sends basic auth', async () => {
    const { sink, clock, receiver } = await sinkAgainst([{ status: 200 }], { kind: 'basic', username: '123456', password: 'glc_secret_value' });
    await sink.push(batches, context(clock).ctx);
    expect(receiver.requests[0]!.headers['authorization']).toBe('Basic ' + Buffer.from('123456:glc_secret_value').toString('base64'));
  });

  it('retries 5xx with backoff and 429 after Retry-After, then succeeds', async () => {
    const { sink, clock, receiver } = await sinkAgainst([{ status: 503, body: 'ingester unavailable' }, { status: 429, headers: { 'retry-after': '7' } }, { status: 204 }]);
    const { ctx, logger } = context(clock);
    await sink.push(batches, ctx);
    const at = receiver.requests.map((r) => r.at);
    expect(at).toHaveLength(3);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(250);
    expect(at[1]! - at[0]!).toBeLessThanOrEqual(500);
    expect(at[2]! - at[1]!).toBe(7000);
    expect(logger.records().filter((r) => r.msg === 'push attempt failed; retrying').map((r) => r.status)).toEqual([503, 429]);
  });

  it('fails at once on a 4xx that is not a resend, with the status', async () => {
    const { sink, clock, receiver } = await sinkAgainst([{ status: 400, body: 'invalid metric name' }]);
    const err = await sink.push(batches, context(clock).ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).sink).toBe('remote_write');
    expect((err as SinkError).status).toBe(400);
    expect((err as SinkError).message).toContain('invalid metric name');
    expect(receiver.requests).toHaveLength(1);
    expect(clock.now()).toBe(T0);
  });

  it('counts a duplicate-sample rejection as delivered and logs it at info', async () => {
    const { sink, clock } = await sinkAgainst([{ status: 400, body: 'duplicate sample for timestamp' }]);
    const { ctx, logger } = context(clock);
    await sink.push(batches, ctx);
    const record = logger.records().find((r) => String(r.msg).includes('already has these samples'));
    expect(record?.level).toBe('info');
  });

  it('gives up after maxRetries and reports the last status', async () => {
    const { sink, clock, receiver } = await sinkAgainst([{ status: 502 }]);
    const err = await sink.push(batches, context(clock).ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).status).toBe(502);
    expect((err as SinkError).message).toMatch(/HTTP 502.*\(gave up after 4 attempts\)$/);
    expect(receiver.requests).toHaveLength(4);
  });

  it('stops waiting to retry when the push is cancelled, and sends nothing more', async () => {
    const clock = new FakeClock(T0);
    const { sink, receiver } = await sinkAgainst([{ status: 503 }], { kind: 'none' }, clock);
    const controller = new AbortController();
    const pushing = sink.push(batches, context(clock, { signal: controller.signal }).ctx).catch((e: unknown) => e);
    await vi.waitFor(() => expect(clock.pending).toBe(1));
    controller.abort(new Error('invocation ending'));
    const err = await pushing;
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).message).toMatch(/: aborted while waiting to retry$/);
    clock.advance(60_000);
    expect(receiver.requests).toHaveLength(1);
  });

  it('does not wait past the deadline for a long Retry-After', async () => {
    const { sink, clock, receiver } = await sinkAgainst([{ status: 429, headers: { 'retry-after': '120' } }, { status: 204 }]);
    const err = await sink.push(batches, context(clock).ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).status).toBe(429);
    expect((err as SinkError).message).toMatch(/deadline/);
    expect(receiver.requests).toHaveLength(1);
    expect(clock.now()).toBe(T0);
  });

  it('retries a connection failure and reports it as a SinkError', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    receiver = await startReceiver();
    const url = `${receiver.url}/api/v1/write`;
    await receiver.close();
    receiver = undefined;
    const sink = new RemoteWriteSink({ url, auth: { kind: 'none' }, maxRetries: 2 });
    const { ctx, logger } = context(clock);
    const err = await sink.push(batches, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).status).toBeUndefined();
    expect(logger.records().filter((r) => r.msg === 'push attempt failed; retrying')).toHaveLength(2);
  });

  it('never lets the token or password into logs or errors, even when the receiver echoes them', async () => {
    const token = 'super-secret-token-value';
    const { sink, clock } = await sinkAgainst([{ status: 401, body: `bad token ${token}` }], { kind: 'bearer', token });
    const { ctx, logger } = context(clock);
    const err = (await sink.push(batches, ctx).catch((e: unknown) => e)) as SinkError;
    expect(err.message).toContain('[REDACTED]');
    expect(err.message).not.toContain(token);
    expect(logger.lines.join('\n')).not.toContain(token);
  });

  it('pushes nothing when there are no samples', async () => {
    const { sink, clock, receiver } = await sinkAgainst([{ status: 204 }]);
    await sink.push([{ portal: 'acme', succeeded: [], snapshot: { collectedAt: T0, samples: [] } }], context(clock).ctx);
    expect(receiver.requests).toHaveLength(0);
  });
});
