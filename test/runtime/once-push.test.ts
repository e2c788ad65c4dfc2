/**
 * `once` with push sinks: every shard's push, in every sink, carries the shard's own gauges
 * (posture_exporter_shard_ordinal and posture_exporter_total_shards, labelled `shard`, no
 * portal), as the Lambda's does, so the shard rules see `once` shards run from cron too; an empty
 * shard pushes them alone. Against one loopback receiver that records what each sink sent.
 */
import snappy from 'snappyjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMain } from '../support/cli.js';
import { portalForAll } from '../support/closing.js';
import { decodeMetricsRequest, decodeWriteRequest } from '../sinks/decode.js';
import { startReceiver, type Receiver } from '../sinks/receiver.js';

const KEY = 'sim-once-push-key-0123456789abcdef';
const sim = portalForAll({ keys: [{ key: KEY }], rateLimit: false, moving: false });
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver(() => ({ status: 200 }));
});
afterAll(() => receiver.close());

/** What one `once` pushed of the shard gauges, per sink: `{ name: value }` with the labels each sink put on them. */
async function shardGaugesPushed(args: string[]): Promise<{ code: number; pushgateway: Record<string, Record<string, number>>; remoteWrite: Record<string, number>; otlp: Record<string, number>; groups: string[] }> {
  const from = receiver.requests.length;
  const r = await runMain(['once', ...args], {
    env: {
      POSTURE_BASE_URL: sim().baseUrl,
      POSTURE_API_KEY: KEY,
      POSTURE_PUSH: 'pushgateway,remote_write,otlp',
      POSTURE_PUSHGATEWAY_URL: receiver.url,
      POSTURE_REMOTE_WRITE_URL: `${receiver.url}/api/v1/write`,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    },
  });
  const sent = receiver.requests.slice(from);
  const isShardGauge = (name: string) => name === 'posture_exporter_shard_ordinal' || name === 'posture_exporter_total_shards';
  const pushgateway: Record<string, Record<string, number>> = {};
  for (const req of sent.filter((q) => q.url.startsWith('/metrics/job/'))) {
    for (const line of req.body.toString('utf8').split('\n')) {
      const m = /^(\w+)(?:\{[^}]*\})? (\S+)$/.exec(line);
      if (m && isShardGauge(m[1]!)) (pushgateway[req.url] ??= {})[m[1]!] = Number(m[2]);
    }
  }
  const remoteWrite: Record<string, number> = {};
  for (const req of sent.filter((q) => q.url === '/api/v1/write')) {
    for (const ts of decodeWriteRequest(snappy.uncompress(new Uint8Array(req.body))).timeseries) {
      const labels = Object.fromEntries(ts.labels);
      if (isShardGauge(labels.__name__!)) remoteWrite[`${labels.__name__}${JSON.stringify(Object.fromEntries(ts.labels.filter(([k]) => k !== '__name__')))}`] = ts.samples[0]!.value;
    }
  }
  const otlp: Record<string, number> = {};
  for (const req of sent.filter((q) => q.url === '/v1/metrics')) {
    for (const exported of decodeMetricsRequest(new Uint8Array(req.body))) {
      for (const metric of exported.scopes.flatMap((s) => s.metrics)) {
        const name = metric.name.replace(/_ratio$/, '');
        if (isShardGauge(name)) for (const p of metric.points) otlp[`${name}${JSON.stringify(p.attributes)}`] = p.value;
      }
    }
  }
  // Every Pushgateway group PUT, to see the portal's groups beside the shard's.
  const groups = sent.filter((q) => q.method === 'PUT' && q.url.startsWith('/metrics/job/')).map((q) => q.url).sort();
  return { code: r.code, pushgateway, remoteWrite, otlp, groups };
}

describe('once pushes its shard gauges in every sink', () => {
  it.each([0, 1, 2])('shard %i of 3 (one portal: the shards that do not own it push their gauges alone)', async (i) => {
    const pushed = await shardGaugesPushed(['--shard', String(i), '--total-shards', '3']);
    expect(pushed).toEqual({
      code: 0,
      pushgateway: { [`/metrics/job/posture-exporter/shard/${i}`]: { posture_exporter_shard_ordinal: i, posture_exporter_total_shards: 3 } },
      remoteWrite: { [`posture_exporter_shard_ordinal{"shard":"${i}"}`]: i, [`posture_exporter_total_shards{"shard":"${i}"}`]: 3 },
      otlp: { [`posture_exporter_shard_ordinal{"shard":"${i}"}`]: i, [`posture_exporter_total_shards{"shard":"${i}"}`]: 3 },
      groups: expect.any(Array),
    });
    // The shard that owns the portal pushes its five groups (three sources, the resolved-alerts pass of a first run, and the
    // exporter's own) too; the others only their own.
    expect(pushed.groups.length === 6 || pushed.groups.length === 1, String(pushed.groups)).toBe(true);
  });

  it('unsharded: shard 0 of 1, as the Lambda pushes', async () => {
    const pushed = await shardGaugesPushed([]);
    expect(pushed).toEqual({
      code: 0,
      pushgateway: { '/metrics/job/posture-exporter/shard/0': { posture_exporter_shard_ordinal: 0, posture_exporter_total_shards: 1 } },
      remoteWrite: { 'posture_exporter_shard_ordinal{"shard":"0"}': 0, 'posture_exporter_total_shards{"shard":"0"}': 1 },
      otlp: { 'posture_exporter_shard_ordinal{"shard":"0"}': 0, 'posture_exporter_total_shards{"shard":"0"}': 1 },
      groups: [
        '/metrics/job/posture-exporter/portal/127.0.0.1',
        '/metrics/job/posture-exporter/portal/127.0.0.1/source/alerts',
        '/metrics/job/posture-exporter/portal/127.0.0.1/source/devices',
        // A first run (no record of a pass) runs the resolved-alerts pass: its own group.
        '/metrics/job/posture-exporter/portal/127.0.0.1/source/resolved',
        '/metrics/job/posture-exporter/portal/127.0.0.1/source/vitals',
        '/metrics/job/posture-exporter/shard/0',
      ],
    });
  });

  it('of the three shards, exactly one pushes the portal', async () => {
    const owners: number[] = [];
    for (const i of [0, 1, 2]) if ((await shardGaugesPushed(['--shard', String(i), '--total-shards', '3'])).groups.some((g) => g.includes('/portal/'))) owners.push(i);
    expect(owners).toHaveLength(1);
  });
});
