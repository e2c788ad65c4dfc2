/**
 * Remote write into Prometheus 3 (`--web.enable-remote-write-receiver`), built from its Go module
 * (scripts/ensure-tools.sh): the built CLI's `once` and the built Lambda bundle push, and every
 * family must be there, under its own name and labels, with the exact value
 * and the time it was sent with. What was sent is `once`'s own `--format json` output of the same
 * run, or, for the Lambda, the requests themselves as a loopback proxy in front of Prometheus saw
 * them (decoded apart from the sink's code).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalForAll } from '../support/closing.js';
import { peerForAll, startPrometheus } from '../support/peers.js';
import { expectEveryPushedFamily, heldBy, invokeLambda, oncePush, PUSH_OUTCOME_FAMILIES, remoteWritten, runEnv, runSelector, TRICKY_VITALS } from '../support/pushed.js';
import { seriesKey } from './fixtures.js';
import { startReceiver, type Receiver } from './receiver.js';

const KEY = 'sim-prometheus3-rw-key-0123456789ab';
/** The shard's own series of a remote write (no portal, and no job: nothing adds one). */
const SHARD_SERIES = '{__name__=~"posture_exporter_(shard_ordinal|total_shards)",job=""}';

const sim = portalForAll({ keys: [{ key: KEY }], rateLimit: false, moving: false, alerts: 400, devices: 600, seed: 464 });
const prometheus = peerForAll(() => startPrometheus({ version: 3, config: 'global:\n  scrape_interval: 1h\n', extraArgs: ['--web.enable-remote-write-receiver'] }));
/** Forwards each remote write to Prometheus 3 and answers with its answer, keeping the request. */
let proxy: Receiver;
beforeAll(async () => {
  sim().setFixture({ vitals: TRICKY_VITALS });
  proxy = await startReceiver(async (req) => {
    const headers = Object.fromEntries(['content-type', 'content-encoding', 'x-prometheus-remote-write-version', 'user-agent'].map((h) => [h, String(req.headers[h] ?? '')]));
    const res = await fetch(`${prometheus().url}/api/v1/write`, { method: 'POST', headers, body: new Uint8Array(req.body) });
    return { status: res.status, body: await res.text() };
  });
});
afterAll(() => proxy?.close());

function env(portal: string): Record<string, string> {
  return { ...runEnv(sim().baseUrl, KEY, portal), POSTURE_PUSH: 'remote_write' };
}

/** Every sample Prometheus holds of `selector` (a plain selector) after `since` up to `at` (Unix ms; `since` 10 minutes earlier by default): series → its samples' timestamps. */
async function stampsOf(selector: string, at: number, since = at - 600_000): Promise<Map<string, number[]>> {
  const params = new URLSearchParams({ query: `${selector}[${at - since}ms]`, time: String(at / 1000) });
  const res = await fetch(`${prometheus().url}/api/v1/query?${params.toString()}`);
  const body = (await res.json()) as { data: { result: Array<{ metric: Record<string, string>; values: Array<[number, string]> }> } };
  return new Map(
    body.data.result.map((r) => {
      const { __name__: name, ...labels } = r.metric;
      return [seriesKey(name!, labels), r.values.map(([t]) => Math.round(t * 1000))];
    }),
  );
}

describe('remote write into Prometheus 3', () => {
  it('holds every family of once under its own name and labels, values exact, stamped with the collection time', async () => {
    const portal = 'ops/eu "once"';
    const run = await oncePush({ ...env(portal), POSTURE_REMOTE_WRITE_URL: `${prometheus().url}/api/v1/write` });
    const pushedAt = Date.now();
    expectEveryPushedFamily(run.pushed, { but: PUSH_OUTCOME_FAMILIES });
    expect(await heldBy(prometheus().url, runSelector(portal), { time: pushedAt / 1000 })).toEqual(run.pushed);
    // The portal's series carry the collection time, one sample each; the shard's own the time of the push.
    const portals = await stampsOf(`{portal=${JSON.stringify(portal)}}`, pushedAt);
    expect(portals.size).toBe(run.pushed.size - 2);
    expect(new Set([...portals.values()].map((t) => t.join()))).toEqual(new Set([String(run.collectedAt)]));
    const shard = await stampsOf(SHARD_SERIES, pushedAt);
    expect(shard.size).toBe(2);
    for (const [stamp, ...more] of shard.values()) {
      expect(more).toEqual([]);
      expect(stamp).toBeGreaterThanOrEqual(run.collectedAt);
      expect(stamp).toBeLessThanOrEqual(pushedAt);
    }
  });

  it('holds every family of two pushes of a warm Lambda bundle, values exact, each sample at the time it was sent with', async () => {
    const portal = 'lambda';
    const [first, second] = await invokeLambda({ ...env(portal), POSTURE_REMOTE_WRITE_URL: `${proxy.url}/api/v1/write` }, 2);
    const one = remoteWritten({ requests: proxy.requests.filter((r) => r.at >= first! && r.at < second!) });
    const two = remoteWritten(proxy, second);
    const both = remoteWritten(proxy, first);
    // Each push as it stood at its last sample's time; between them every family.
    const lastOf = (stamps: Map<string, number>) => Math.max(...stamps.values());
    expect(await heldBy(prometheus().url, runSelector(portal), { time: lastOf(one.timestamps) / 1000 })).toEqual(one.series);
    const at = lastOf(two.timestamps);
    expect(await heldBy(prometheus().url, runSelector(portal), { time: at / 1000 })).toEqual(both.series);
    expectEveryPushedFamily(both.series);
    // Every sample Prometheus holds of the run, at the time it was sent with.
    const since = first! - 1;
    const held = new Map([...(await stampsOf(`{portal=${JSON.stringify(portal)}}`, at, since)), ...(await stampsOf(SHARD_SERIES, at, since))]);
    const sent = new Map<string, number[]>();
    for (const push of [one, two]) for (const [key, t] of push.timestamps) sent.set(key, [...(sent.get(key) ?? []), t]);
    expect(held).toEqual(sent);
  });
});
