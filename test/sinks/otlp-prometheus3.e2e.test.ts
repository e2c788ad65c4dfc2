/**
 * OTLP into Prometheus 3, both ways a team runs it: straight into Prometheus 3's own receiver
 * (`--web.enable-otlp-receiver`, `/api/v1/otlp/v1/metrics`), and through the OpenTelemetry
 * Collector (OTLP receiver, contrib's Prometheus remote-write exporter, debug exporter) to a
 * Prometheus 3 that takes remote write (`--web.enable-remote-write-receiver`); both built from
 * their Go modules (scripts/ensure-tools.sh). The built CLI's `once` and the built Lambda bundle
 * push over http/protobuf and http/json, and every family must be there with the exact values the
 * run sent (its own `--format json` output, or for the Lambda what it sent a loopback remote-write
 * receiver beside). With the settings docs/push.md advises, names and labels are the pull
 * endpoint's (`job` and `instance` aside); with the defaults the names are what docs/push.md's table
 * says, measured here.
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

const KEY = 'sim-otlp-prometheus3-key-0123456789';
const PROTOCOLS = ['http/protobuf', 'http/json'] as const;
const PROMETHEUS = 'global:\n  scrape_interval: 1h\n';
/** What docs/push.md advises for Prometheus 3's receiver, with one resource attribute promoted (checked below). */
const RECEIVER_ADVISED = 'otlp:\n  translation_strategy: UnderscoreEscapingWithoutSuffixes\n  promote_resource_attributes: [deployment.environment]\n';
/** What docs/push.md advises for the Collector's remote-write exporter, with one resource attribute made a label (checked below). */
const COLLECTOR_ADVISED = [
  '    translation_strategy: UnderscoreEscapingWithoutSuffixes',
  '    disable_scope_info: true',
  '    resource_constant_labels:',
  '      included: [deployment.environment]',
].join('\n');
/** Resource attributes of a run: one promoted (or made a label) where advised, one left on target_info, and the instance. */
const RESOURCE = 'deployment.environment=e2e,owner=security,service.instance.id=eu-1';

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
const receiverAdvised = peerForAll(() => startPrometheus({ version: 3, config: `${PROMETHEUS}${RECEIVER_ADVISED}`, extraArgs: ['--web.enable-otlp-receiver'] }));
const receiverDefault = peerForAll(() => startPrometheus({ version: 3, config: PROMETHEUS, extraArgs: ['--web.enable-otlp-receiver'] }));
const behindCollectors = peerForAll(() => startPrometheus({ version: 3, config: PROMETHEUS, extraArgs: ['--web.enable-remote-write-receiver'] }));
let collectorAdvised: Peer;
let collectorDefault: Peer;
let loopback: Receiver;
beforeAll(async () => {
  sim().setFixture({ vitals: TRICKY_VITALS });
  const write = `${behindCollectors().url}/api/v1/write`;
  [collectorAdvised, collectorDefault, loopback] = await Promise.all([
    startOtelcol({ config: (port) => collectorConfig(port, write, COLLECTOR_ADVISED) }),
    startOtelcol({ config: (port) => collectorConfig(port, write, '') }),
    startReceiver(() => ({ status: 204 })),
  ]);
});
afterAll(async () => {
  await Promise.all([collectorAdvised?.stop(), collectorDefault?.stop(), loopback?.close()]);
});

/** One way OTLP reaches Prometheus 3: where a run pushes, with the advised settings or the defaults, and what Prometheus then holds. */
interface Route {
  readonly name: string;
  /** The settings of a run pushing OTLP as `job` over `protocol`. */
  env(advised: boolean, portal: string, job: string, protocol: string): Record<string, string>;
  /** What Prometheus holds of `selector` once `size` series have arrived (the Collector forwards on its own schedule). */
  held(advised: boolean, selector: string, size: number, drop?: readonly string[]): Promise<SeriesValues>;
  /** The Prometheus that ends up with the series. */
  prometheus(advised: boolean): string;
  /** What the defaults add beside the documented names, as read: Prometheus 3's receiver one target_info per push; the Collector a scope label. */
  defaults(job: string, selector: string): Promise<unknown>;
  /** What `defaults` must read. */
  readonly defaultsExpected: unknown;
}

const pushEnv = (portal: string, job: string, protocol: string) => ({ ...runEnv(sim().baseUrl, KEY, portal), POSTURE_PUSH: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_SERVICE_NAME: job });

const ROUTES: readonly Route[] = [
  {
    name: "into Prometheus 3's receiver",
    env: (advised, portal, job, protocol) => ({ ...pushEnv(portal, job, protocol), OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${(advised ? receiverAdvised() : receiverDefault()).url}/api/v1/otlp/v1/metrics` }),
    held: (advised, selector, _size, drop) => heldBy((advised ? receiverAdvised() : receiverDefault()).url, selector, { drop }),
    prometheus: (advised) => (advised ? receiverAdvised() : receiverDefault()).url,
    // One target_info per push: the resource, without service.name (it is `job`).
    defaults: async (job) => (await queryPrometheusApi(receiverDefault().url, `target_info{job="${job}"}`)).map((r) => Object.keys(r.metric).sort()),
    defaultsExpected: [['__name__', 'job', 'telemetry_sdk_language', 'telemetry_sdk_name', 'telemetry_sdk_version']],
  },
  {
    name: 'through the Collector',
    env: (advised, portal, job, protocol) => ({ ...pushEnv(portal, job, protocol), OTEL_EXPORTER_OTLP_ENDPOINT: (advised ? collectorAdvised : collectorDefault).url }),
    held: (_advised, selector, size, drop) => untilHolds(() => heldBy(behindCollectors().url, selector, { drop }), size),
    prometheus: () => behindCollectors().url,
    // The meter's name (the exporter's) as a label of every series, but target_info.
    defaults: async (_job, selector) => new Set((await queryPrometheusApi(behindCollectors().url, selector)).filter((r) => r.metric.__name__ !== 'target_info').map((r) => r.metric.otel_scope_name)),
    defaultsExpected: new Set(['posture-exporter']),
  },
];

describe.each(ROUTES)('OTLP $name to Prometheus 3, with the settings docs/push.md advises', (route) => {
  const tag = route === ROUTES[0] ? 'receiver' : 'collector';

  it.each(PROTOCOLS)("holds every family of once over %s under the pull endpoint's names and labels, values exact", async (protocol) => {
    const portal = `ops/eu "once" ${protocol}`;
    const job = `${tag}-once-${protocol}`;
    const run = await oncePush(route.env(true, portal, job, protocol));
    const expected = run.pushed;
    // A `once` is one push: nothing before it to report on.
    expectEveryPushedFamily(expected, { but: PUSH_OUTCOME_FAMILIES });
    expect(await route.held(true, runSelector(portal, job), expected.size)).toEqual(expected);
  });

  it.each(PROTOCOLS)('holds every family of two pushes of a warm Lambda bundle over %s, values exact', async (protocol) => {
    const portal = `lambda ${protocol}`;
    const job = `${tag}-lambda-${protocol}`;
    // Beside OTLP, remote write to a loopback receiver: what the pushes sent, decoded apart. The first
    // push has no earlier outcome to report; the second no resolved-alerts pass (it is due hourly):
    // between them every family, and Prometheus holds the newer value of each series.
    const [first] = await invokeLambda({ ...route.env(true, portal, job, protocol), POSTURE_PUSH: 'otlp,remote_write', POSTURE_REMOTE_WRITE_URL: `${loopback.url}/api/v1/write` }, 2);
    const expected = remoteWritten(loopback, first).series;
    expectEveryPushedFamily(expected);
    expect(await route.held(true, runSelector(portal, job), expected.size)).toEqual(expected);
  });

  it('labels every series with the promoted resource attribute, and keeps the others on target_info only', async () => {
    const portal = 'resource attributes';
    const job = `${tag}-resource`;
    const run = await oncePush({ ...route.env(true, portal, job, 'http/protobuf'), OTEL_RESOURCE_ATTRIBUTES: RESOURCE });
    const expected = run.pushed;
    expect(await route.held(true, runSelector(portal, job), expected.size, ['deployment_environment'])).toEqual(expected);
    for (const r of await queryPrometheusApi(route.prometheus(true), runSelector(portal, job))) {
      // service.name and service.instance.id become job and instance; the promoted attribute a label of its own.
      expect(r.metric).toMatchObject({ job, instance: 'eu-1', deployment_environment: 'e2e' });
      expect(r.metric).not.toHaveProperty('owner');
    }
    const [info, ...more] = await queryPrometheusApi(route.prometheus(true), `target_info{job="${job}"}`);
    expect(more).toEqual([]);
    expect(info!.metric).toMatchObject({ job, instance: 'eu-1', owner: 'security' });
  });
});

describe.each(ROUTES)('OTLP $name to Prometheus 3, with the defaults', (route) => {
  it("names each family as docs/push.md's table says, values exact", async () => {
    const job = `${route === ROUTES[0] ? 'receiver' : 'collector'}-default`;
    // Two pushes of a warm container, as above: every family.
    const [first] = await invokeLambda({ ...route.env(false, 'default translation', job, 'http/protobuf'), POSTURE_PUSH: 'otlp,remote_write', POSTURE_REMOTE_WRITE_URL: `${loopback.url}/api/v1/write` }, 2);
    const expected = remoteWritten(loopback, first).series;
    expectEveryPushedFamily(expected);
    const selector = `{__name__=~".+",job="${job}"}`;
    expectDocumentedNames(expected, await route.held(false, selector, expected.size, ['otel_scope_name']));
    expect(await route.defaults(job, selector)).toEqual(route.defaultsExpected);
  });
});
