import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { PushgatewaySink } from '../../src/sinks/pushgateway.js';
import type { PushBatch } from '../../src/sinks/types.js';
import { startPushgateway, peerForAll, type Peer } from '../support/peers.js';
import { batchFor, seriesKey } from './fixtures.js';

interface ApiFamily {
  metrics: Array<{ labels: Record<string, string>; value: string }>;
}
type ApiGroup = { labels: Record<string, string> } & Record<string, ApiFamily | unknown>;

/** Groups from the Pushgateway's /api/v1/metrics, keyed by their grouping labels (job omitted). */
async function groups(peer: Peer): Promise<Map<string, ApiGroup>> {
  const res = await fetch(`${peer.url}/api/v1/metrics`);
  const body = (await res.json()) as { status: string; data: ApiGroup[] };
  expect(body.status).toBe('success');
  const out = new Map<string, ApiGroup>();
  for (const g of body.data) {
    const { job: _job, ...rest } = g.labels;
    out.set(seriesKey('group', rest), g);
  }
  return out;
}

function family(group: ApiGroup | undefined, name: string): ApiFamily['metrics'] {
  return ((group?.[name] as ApiFamily | undefined)?.metrics ?? []).map((m) => m);
}

function pushTime(group: ApiGroup | undefined): number {
  return Number(family(group, 'push_time_seconds')[0]?.value);
}

/** Expected samples of one group, as `name{labels}` → value, with the labels the Pushgateway adds. */
function expectedSeries(batch: PushBatch, origin: (name: string) => boolean, groupLabels: Record<string, string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of batch.snapshot.samples) {
    if (!origin(s.name)) continue;
    out.set(seriesKey(s.name, { ...s.labels, ...groupLabels, job: 'posture-exporter' }), s.value);
  }
  return out;
}

function actualSeries(group: ApiGroup | undefined, names: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const name of names) for (const m of family(group, name)) out.set(seriesKey(name, m.labels), Number(m.value));
  return out;
}

describe('Pushgateway end to end (Debian prometheus-pushgateway)', () => {
  const pgw = peerForAll(() => startPushgateway());

  it('keeps a failed source’s last values and push time while the other groups move on', async () => {
    const sink = new PushgatewaySink({ url: pgw().url });
    const ctx = () => ({ clock: systemClock, logger: memoryLogger(), deadline: Date.now() + 20_000 });
    const now = Date.now();
    const first = [batchFor('acme', now), batchFor('ops/eu', now)];
    await sink.push(first, ctx());
    const before = await groups(pgw());
    expect([...before.keys()].sort()).toEqual(
      [
        'group{portal="acme"}',
        'group{portal="acme",source="alerts"}',
        'group{portal="acme",source="devices"}',
        'group{portal="acme",source="vitals"}',
        'group{portal="ops/eu"}',
        'group{portal="ops/eu",source="alerts"}',
        'group{portal="ops/eu",source="devices"}',
        'group{portal="ops/eu",source="vitals"}',
      ].sort(),
    );

    await new Promise((r) => setTimeout(r, 50));
    const second = [batchFor('acme', now + 60_000, { scale: 2, failed: ['alerts'] }), batchFor('ops/eu', now + 60_000, { scale: 2 })];
    await sink.push(second, ctx());
    const after = await groups(pgw());

    const alertsKey = 'group{portal="acme",source="alerts"}';
    const alertFamilies = ['posture_alerts_open', 'posture_alerts_open_by_integration', 'posture_alerts_oldest_open_timestamp_seconds'];
    // The failed source: untouched, old values and old push time.
    expect(pushTime(after.get(alertsKey))).toBe(pushTime(before.get(alertsKey)));
    expect(actualSeries(after.get(alertsKey), alertFamilies)).toEqual(
      expectedSeries(first[0]!, (n) => n.startsWith('posture_alerts_'), { portal: 'acme', source: 'alerts', instance: '' }),
    );
    // The sources that succeeded: replaced, new values and a later push time.
    for (const key of ['group{portal="acme",source="vitals"}', 'group{portal="acme",source="devices"}', 'group{portal="acme"}', 'group{portal="ops/eu",source="alerts"}']) {
      expect(pushTime(after.get(key)), key).toBeGreaterThan(pushTime(before.get(key)));
    }
    const vitalsFamilies = Object.keys(after.get('group{portal="acme",source="vitals"}')!).filter((k) => k.startsWith('posture_'));
    expect(actualSeries(after.get('group{portal="acme",source="vitals"}'), vitalsFamilies)).toEqual(
      expectedSeries(second[0]!, (n) => n.startsWith('posture_vitals_'), { portal: 'acme', source: 'vitals', instance: '' }),
    );
    // The exporter group reports the failure, keeping its own `source` labels.
    const success = family(after.get('group{portal="acme"}'), 'posture_collection_success');
    expect(Object.fromEntries(success.map((m) => [m.labels.source, m.value]))).toEqual({ vitals: '1', alerts: '0', devices: '1' });
    // The portal with a slash arrived through the @base64 grouping key.
    expect(family(after.get('group{portal="ops/eu",source="devices"}'), 'posture_devices').map((m) => m.labels.portal)).toEqual(['ops/eu', 'ops/eu']);
    for (const g of after.values()) expect(g.last_push_successful).toBe(true);
  });
});
