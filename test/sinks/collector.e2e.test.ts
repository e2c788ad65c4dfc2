/**
 * OTLP through the OpenTelemetry Collector to Prometheus 3 by remote write: the Collector (OTLP
 * receiver, contrib's Prometheus remote-write exporter, debug exporter) and Prometheus 3
 * (`--web.enable-remote-write-receiver`) built from their Go modules (scripts/ensure-tools.sh). The
 * built CLI's `once` and the built Lambda bundle push over http/protobuf and http/json; every family
 * must be there with the exact values the run sent (its own `--format json` output, or for the
 * Lambda what it sent a loopback remote-write receiver beside). With the exporter settings
 * docs/push.md advises, names and labels are the pull endpoint's (`job` and `instance` aside); with
 * the exporter's defaults the names are what docs/push.md's table says, and a scope label is added.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalForAll } from '../support/closing.js';
import { peerForAll, queryPrometheusApi, startOtelcol, startPrometheus, type Peer } from '../support/peers.js';
import {
  expectDocumentedNames,
  expectEveryPushedFamily,
  heldBy,
  invokeLambda,
  oncePush,
  PUSH_OUTCOME_FAMILIES,
  remoteWritten,
  runEnv,
  runSelector,
  TRICKY_VITALS,
  untilHolds,
  type SeriesValues,
} from '../support/pushed.js';
import { startReceiver, type Receiver } from './receiver.js';

const KEY = 'sim-collector-key-0123456789abcdef';
const PROTOCOLS = ['http/protobuf', 'http/json'] as const;
/** What docs/push.md advises for the Collector's remote-write exporter, with one resource attribute made a label (checked below). */
const ADVISED = [
  '    translation_strategy: UnderscoreEscapingWithoutSuffixes',
  '    disable_scope_info: true',
  '    resource_constant_labels:',
  '      included: [deployment.environment]',
].join('\n');

/** A Collector config: OTLP/HTTP on `port` into the remote-write exporter (with `settings`) and the debug exporter. */
function collectorConfig(port: number, remoteWriteUrl: string, settings: string): string {
  return `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${port}
exporters:
  prometheus_remote_write:
    endpoint: ${remoteWriteUrl}
${settings}
  debug:
    verbosity: basic
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    metrics:
      receivers: [otlp]
      exporters: [prometheus_remote_write, debug]
`;
}

const sim = portalForAll({ keys: [{ key: KEY }], rateLimit: false, moving: false, alerts: 400, devices: 600, seed: 4646 });
const prometheus = peerForAll(() => startPrometheus({ version: 3, config: 'global:\n  scrape_interval: 1h\n', extraArgs: ['--web.enable-remote-write-receiver'] }));
let advised: Peer;
let byDefault: Peer;
let loopback: Receiver;
beforeAll(async () => {
  sim().setFixture({ vitals: TRICKY_VITALS });
  const write = `${prometheus().url}/api/v1/write`;
  [advised, byDefault, loopback] = await Promise.all([
    startOtelcol({ config: (port) => collectorConfig(port, write, ADVISED) }),
    startOtelcol({ config: (port) => collectorConfig(port, write, '') }),
    startReceiver(() => ({ status: 204 })),
  ]);
});
afterAll(async () => {
  await Promise.all([advised?.stop(), byDefault?.stop(), loopback?.close()]);
});

/** The settings of a run pushing OTLP to `collector` as `job`, over `protocol`. */
function otlpEnv(collector: Peer, portal: string, job: string, protocol: string): Record<string, string> {
  return {
    ...runEnv(sim().baseUrl, KEY, portal),
    POSTURE_PUSH: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_SERVICE_NAME: job,
  };
}

/** What Prometheus holds of one run once the Collector has forwarded `size` series (it sends on its own schedule). */
function forwarded(selector: string, size: number, drop?: readonly string[]): Promise<SeriesValues> {
  return untilHolds(() => heldBy(prometheus().url, selector, { drop }), size);
}

describe('OTLP through the Collector to Prometheus 3, with the exporter settings docs/push.md advises', () => {
  it.each(PROTOCOLS)('holds every family of once over %s under the pull endpoint\'s names and labels, values exact', async (protocol) => {
    const portal = `ops/eu "once" ${protocol}`;
    const job = `collector-once-${protocol}`;
    const run = await oncePush(otlpEnv(advised, portal, job, protocol));
    const expected = run.pushed;
    expectEveryPushedFamily(expected, { but: PUSH_OUTCOME_FAMILIES });
    expect(await forwarded(runSelector(portal, job), expected.size)).toEqual(expected);
  });

  it.each(PROTOCOLS)('holds every family of two pushes of a warm Lambda bundle over %s, values exact', async (protocol) => {
    const portal = `lambda ${protocol}`;
    const job = `collector-lambda-${protocol}`;
    const [first] = await invokeLambda({ ...otlpEnv(advised, portal, job, protocol), POSTURE_PUSH: 'otlp,remote_write', POSTURE_REMOTE_WRITE_URL: `${loopback.url}/api/v1/write` }, 2);
    const expected = remoteWritten(loopback, first).series;
    expectEveryPushedFamily(expected);
    expect(await forwarded(runSelector(portal, job), expected.size)).toEqual(expected);
  });

  it('labels every series with a resource attribute in resource_constant_labels, and keeps the others on target_info', async () => {
    const portal = 'resource attributes';
    const job = 'collector-resource';
    const run = await oncePush({ ...otlpEnv(advised, portal, job, 'http/protobuf'), OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=e2e,owner=security,service.instance.id=eu-1' });
    const expected = run.pushed;
    expect(await forwarded(runSelector(portal, job), expected.size, ['deployment_environment'])).toEqual(expected);
    for (const r of await queryPrometheusApi(prometheus().url, runSelector(portal, job))) {
      expect(r.metric).toMatchObject({ job, instance: 'eu-1', deployment_environment: 'e2e' });
      expect(r.metric).not.toHaveProperty('owner');
    }
    const [info, ...more] = await queryPrometheusApi(prometheus().url, `target_info{job="${job}"}`);
    expect(more).toEqual([]);
    expect(info!.metric).toMatchObject({ job, instance: 'eu-1', owner: 'security' });
  });
});

describe('OTLP through the Collector to Prometheus 3, with the exporter\'s defaults', () => {
  it('names each family as docs/push.md\'s table says and adds otel_scope_name, values exact', async () => {
    const job = 'collector-default';
    const [first] = await invokeLambda(
      { ...otlpEnv(byDefault, 'default translation', job, 'http/protobuf'), POSTURE_PUSH: 'otlp,remote_write', POSTURE_REMOTE_WRITE_URL: `${loopback.url}/api/v1/write` },
      2,
    );
    const expected = remoteWritten(loopback, first).series;
    expectEveryPushedFamily(expected);
    const selector = `{__name__=~".+",job="${job}"}`;
    const held = await untilHolds(() => heldBy(prometheus().url, selector, { drop: ['otel_scope_name'] }), expected.size);
    expectDocumentedNames(expected, held);
    // The meter's name (the exporter's) as a label of every series, but target_info.
    const series = (await queryPrometheusApi(prometheus().url, selector)).filter((r) => r.metric.__name__ !== 'target_info');
    expect(new Set(series.map((r) => r.metric.otel_scope_name))).toEqual(new Set(['posture-exporter']));
  });
});
