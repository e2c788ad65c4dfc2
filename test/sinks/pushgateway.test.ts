import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { METRICS } from '../../src/collect/catalogue.js';
import { SinkError } from '../../src/sinks/errors.js';
import { groupingKeySegment, groupsOf, groupUrl, PushgatewaySink, withoutGroupingLabels } from '../../src/sinks/pushgateway.js';
import { closeAfterEach } from '../support/closing.js';
import { batchFor } from './fixtures.js';
import { startReceiver } from './receiver.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

describe('Pushgateway grouping key URLs', () => {
  it.each([
    ['plain value', 'portal', 'acme', 'portal/acme'],
    // The Pushgateway README's own example.
    ['value with a slash', 'path', '/var/tmp', 'path@base64/L3Zhci90bXA'],
    ['empty value', 'portal', '', 'portal@base64/='],
    ['base64url alphabet, not base64', 'portal', 'a/b?>', 'portal@base64/YS9iPz4'],
    ['space and non-ASCII, URI-encoded', 'portal', 'Zürich HQ', 'portal/Z%C3%BCrich%20HQ'],
  ])('%s', (_label, name, value, segment) => {
    expect(groupingKeySegment(name, value)).toBe(segment);
  });

  it('builds the group URL under any base path, job first', () => {
    expect(groupUrl('http://pgw:9091/', 'posture-exporter', [['portal', 'acme'], ['source', 'vitals']])).toBe('http://pgw:9091/metrics/job/posture-exporter/portal/acme/source/vitals');
    expect(groupUrl('https://proxy/pushgateway', 'team/posture', [['portal', 'ops/eu']])).toBe(
      `https://proxy/pushgateway/metrics/job@base64/${Buffer.from('team/posture').toString('base64url')}/portal@base64/${Buffer.from('ops/eu').toString('base64url')}`,
    );
  });
});

describe('Pushgateway groups', () => {
  it('pushes a group per succeeded source with only its families, and the exporter group always', () => {
    const batch = batchFor('acme', T0, { failed: ['alerts'] });
    const groups = groupsOf(batch);
    expect(groups.map((g) => g.labels)).toEqual([
      [['portal', 'acme'], ['source', 'vitals']],
      [['portal', 'acme'], ['source', 'devices']],
      [['portal', 'acme']],
    ]);
    const [vitals, devices, exporter] = groups;
    expect(new Set(vitals!.samples.map((s) => METRICS[s.name]?.origin))).toEqual(new Set(['vitals']));
    expect(new Set(devices!.samples.map((s) => METRICS[s.name]?.origin))).toEqual(new Set(['devices']));
    expect(new Set(exporter!.samples.map((s) => METRICS[s.name]?.origin))).toEqual(new Set(['exporter']));
    const all = groups.flatMap((g) => g.samples);
    const expected = batch.snapshot.samples.filter((s) => METRICS[s.name]?.origin !== 'alerts');
    expect(all).toHaveLength(expected.length);
    // The exporter's own view of the failure still goes out.
    expect(exporter!.samples.find((s) => s.name === 'posture_collection_success' && s.labels.source === 'alerts')?.value).toBe(0);
  });

  it('strips the labels the grouping key sets, keeping the others', () => {
    const [s] = withoutGroupingLabels([{ name: 'posture_collection_success', labels: { portal: 'acme', source: 'alerts' }, value: 0 }], [['portal', 'acme']]);
    expect(s!.labels).toEqual({ source: 'alerts' });
  });
});

describe('PushgatewaySink over HTTP', () => {
  const closing = closeAfterEach();

  it('PUTs each group as Prometheus text without portal labels or timestamps', async () => {
    const receiver = closing(await startReceiver(() => ({ status: 200 })));
    const sink = new PushgatewaySink({ url: receiver.url, auth: { kind: 'basic', username: 'pusher', password: 'pgw-password-1' } });
    await sink.push([batchFor('acme', T0)], { clock: new FakeClock(T0), logger: memoryLogger(), deadline: T0 + 30_000 });
    const byUrl = new Map(receiver.requests.map((r) => [r.url, r]));
    expect([...byUrl.keys()].sort()).toEqual([
      '/metrics/job/posture-exporter/portal/acme',
      '/metrics/job/posture-exporter/portal/acme/source/alerts',
      '/metrics/job/posture-exporter/portal/acme/source/devices',
      '/metrics/job/posture-exporter/portal/acme/source/vitals',
    ]);
    for (const r of receiver.requests) {
      expect(r.method).toBe('PUT');
      expect(r.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(r.headers.authorization).toBe('Basic ' + Buffer.from('pusher:pgw-password-1').toString('base64'));
      const text = r.body.toString('utf8');
      expect(text).not.toMatch(/portal=/);
      // Every sample line is `name{labels} value` with no trailing timestamp.
      for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) expect(line).toMatch(/^[a-z_]+(\{.*\})? [-+0-9.eE]+$/);
    }
    const vitals = byUrl.get('/metrics/job/posture-exporter/portal/acme/source/vitals')!.body.toString('utf8');
    expect(vitals).toContain('# TYPE posture_vitals_integration_info gauge');
    expect(vitals).toContain('name="CrowdStrike \\"Falcon\\" \\\\ EDR"');
    expect(vitals).toContain('tag="Zürich/HQ"');
    expect(vitals).not.toContain('posture_devices');
  });

  it('still pushes the other groups when one fails, then throws a SinkError', async () => {
    const receiver = closing(await startReceiver((req) => (req.url.endsWith('/source/devices') ? { status: 400, body: 'pushed metrics are invalid' } : { status: 200 })));
    const sink = new PushgatewaySink({ url: receiver.url, job: 'posture' });
    const err = await sink.push([batchFor('acme', T0)], { clock: new FakeClock(T0), logger: memoryLogger(), deadline: T0 + 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).status).toBe(400);
    expect((err as SinkError).message).toMatch(/^3 of 4 Pushgateway groups pushed; 1 failed, first: PUT \S+\/source\/devices: HTTP 400: pushed metrics are invalid$/);
    expect(err).toMatchObject({ pushed: 3, total: 4 });
    expect(receiver.requests).toHaveLength(4);
  });
});
