import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { RemoteWriteSink } from '../../src/sinks/remote-write.js';
import type { PushBatch, PushContext } from '../../src/sinks/types.js';
import { queryPrometheusApi, startPrometheus, startVictoriaMetrics, peerForAll } from '../support/peers.js';
import { batchFor, seriesKey } from './fixtures.js';

function ctx(logger = memoryLogger()): PushContext & { logger: ReturnType<typeof memoryLogger> } {
  return { clock: systemClock, logger, deadline: Date.now() + 20_000 };
}

/** Every pushed sample as `name{labels}` → value (labels as Prometheus stores them: empty ones absent). */
function expected(batches: readonly PushBatch[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const b of batches) for (const s of b.snapshot.samples) out.set(seriesKey(s.name, s.labels), s.value);
  return out;
}

describe('remote write end to end (Debian prometheus with --web.enable-remote-write-receiver)', () => {
  const prom = peerForAll(() => startPrometheus({ config: 'global:\n  scrape_interval: 1h\n', extraArgs: ['--web.enable-remote-write-receiver'] }));

  it('stores every sample with its name, labels, value and collectedAt timestamp', async () => {
    // Recent, whole milliseconds: Prometheus rejects samples older than its head block.
    const collectedAt = Date.now() - 2_000;
    const batches = [batchFor('acme', collectedAt), batchFor('ops/eu', collectedAt, { scale: 3, failed: ['devices'] })];
    const sink = new RemoteWriteSink({ url: `${prom().url}/api/v1/write`, auth: { kind: 'none' } });
    await sink.push(batches, ctx());

    const at = collectedAt / 1000;
    const names = [...new Set(batches.flatMap((b) => b.snapshot.samples.map((s) => s.name)))];
    const got = new Map<string, number>();
    for (const name of names) {
      for (const r of await queryPrometheusApi(prom().url, `{__name__="${name}"}`, at)) {
        const { __name__: metricName, ...labels } = r.metric;
        got.set(seriesKey(metricName!, labels), Number(r.value[1]));
      }
      // timestamp() returns each sample's own timestamp, which must be collectedAt.
      const stamps = await queryPrometheusApi(prom().url, `timestamp({__name__="${name}"})`, at);
      expect(stamps.length).toBeGreaterThan(0);
      for (const r of stamps) expect(Math.round(Number(r.value[1]) * 1000)).toBe(collectedAt);
    }
    expect(got).toEqual(expected(batches));
  });

  it('treats a resend Prometheus rejects as duplicate or out of order as delivered', async () => {
    const collectedAt = Date.now() - 1_000;
    const sink = new RemoteWriteSink({ url: `${prom().url}/api/v1/write`, auth: { kind: 'none' } });
    await sink.push([batchFor('dup', collectedAt)], ctx());

    // Same timestamps, other values: "duplicate sample for timestamp".
    const dup = ctx();
    await sink.push([batchFor('dup', collectedAt, { scale: 5 })], dup);
    // Older timestamps: "out of order sample".
    const ooo = ctx();
    await sink.push([batchFor('dup', collectedAt - 30_000)], ooo);

    for (const logger of [dup.logger, ooo.logger]) {
      const rec = logger.records().find((r) => String(r.msg).includes('already has these samples'));
      expect(rec?.level).toBe('info');
      expect(rec?.status).toBe(400);
    }
    const [devices] = await queryPrometheusApi(prom().url, 'posture_devices{portal="dup",activity="active"}', collectedAt / 1000);
    expect(Number(devices!.value[1])).toBe(1234);
  });
});

describe('remote write end to end (Debian victoria-metrics)', () => {
  const vm = peerForAll(() => startVictoriaMetrics());

  it('stores every sample with its labels, value and collectedAt timestamp', async () => {
    const collectedAt = Date.now() - 2_000;
    const batches = [batchFor('acme', collectedAt), batchFor('ops/eu', collectedAt, { scale: 2 })];
    const sink = new RemoteWriteSink({ url: `${vm().url}/api/v1/write`, auth: { kind: 'bearer', token: 'vm-token-ignored' } });
    await sink.push(batches, ctx());

    const want = expected(batches);
    let got = new Map<string, { value: number; timestamp: number }>();
    for (let i = 0; i < 50 && got.size < want.size; i++) {
      await fetch(`${vm().url}/internal/force_flush`).then((r) => r.arrayBuffer());
      const res = await fetch(`${vm().url}/api/v1/export?${new URLSearchParams({ 'match[]': '{__name__=~"posture_.+"}' }).toString()}`);
      const lines = (await res.text()).split('\n').filter(Boolean);
      got = new Map(
        lines.map((line) => {
          const row = JSON.parse(line) as { metric: Record<string, string>; values: number[]; timestamps: number[] };
          const { __name__: name, ...labels } = row.metric;
          expect(row.values).toHaveLength(1);
          return [seriesKey(name!, labels), { value: row.values[0]!, timestamp: row.timestamps[0]! }];
        }),
      );
      if (got.size < want.size) await new Promise((r) => setTimeout(r, 100));
    }
    expect(new Map([...got].map(([k, v]) => [k, v.value]))).toEqual(want);
    for (const v of got.values()) expect(v.timestamp).toBe(collectedAt);
  });
});
