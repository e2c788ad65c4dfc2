/**
 * OTLP into Prometheus 3's own receiver (`--web.enable-otlp-receiver`, `/api/v1/otlp/v1/metrics`),
 * built from its Go module (scripts/ensure-tools.sh): the built CLI's `once` and the built Lambda
 * bundle push over http/protobuf and http/json, and every family must be there with the exact
 * values the run sent (its own `--format json` output, or for the Lambda what it sent a loopback
 * remote-write receiver beside). With the translation docs/push.md advises, the names are the pull
 * endpoint's; with Prometheus 3's default they are what docs/push.md's table says, measured here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalForAll } from '../support/closing.js';
import { peerForAll, queryPrometheusApi, startPrometheus } from '../support/peers.js';
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
} from '../support/pushed.js';
import { startReceiver, type Receiver } from './receiver.js';

const KEY = 'sim-prometheus3-otlp-key-0123456789';
const PROTOCOLS = ['http/protobuf', 'http/json'] as const;
/** What docs/push.md advises for Prometheus 3's receiver, with one resource attribute promoted (checked below). */
const ADVISED = 'otlp:\n  translation_strategy: UnderscoreEscapingWithoutSuffixes\n  promote_resource_attributes: [deployment.environment]\n';

const sim = portalForAll({ keys: [{ key: KEY }], rateLimit: false, moving: false, alerts: 400, devices: 600, seed: 46 });
const advised = peerForAll(() => startPrometheus({ version: 3, config: `global:\n  scrape_interval: 1h\n${ADVISED}`, extraArgs: ['--web.enable-otlp-receiver'] }));
const byDefault = peerForAll(() => startPrometheus({ version: 3, config: 'global:\n  scrape_interval: 1h\n', extraArgs: ['--web.enable-otlp-receiver'] }));
let loopback: Receiver;
beforeAll(async () => {
  sim().setFixture({ vitals: TRICKY_VITALS });
  loopback = await startReceiver(() => ({ status: 204 }));
});
afterAll(() => loopback?.close());

/** The settings of a run pushing OTLP to `prometheusUrl`'s receiver as `job`, over `protocol`. */
function otlpEnv(prometheusUrl: string, portal: string, job: string, protocol: string): Record<string, string> {
  return {
    ...runEnv(sim().baseUrl, KEY, portal),
    POSTURE_PUSH: 'otlp',
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${prometheusUrl}/api/v1/otlp/v1/metrics`,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_SERVICE_NAME: job,
  };
}

describe('OTLP into Prometheus 3 with the translation docs/push.md advises', () => {
  it.each(PROTOCOLS)('holds every family of once over %s under the pull endpoint\'s names, values exact', async (protocol) => {
    const portal = `ops/eu "once" ${protocol}`;
    const job = `once-${protocol}`;
    const run = await oncePush(otlpEnv(advised().url, portal, job, protocol));
    const expected = run.pushed;
    // A `once` is one push: nothing before it to report on.
    expectEveryPushedFamily(expected, { but: PUSH_OUTCOME_FAMILIES });
    expect(await heldBy(advised().url, runSelector(portal, job))).toEqual(expected);
  });

  it.each(PROTOCOLS)('holds every family of two pushes of a warm Lambda bundle over %s, values exact', async (protocol) => {
    const portal = `lambda ${protocol}`;
    const job = `lambda-${protocol}`;
    // Beside OTLP, remote write to a loopback receiver: what the pushes sent, decoded apart. The first
    // push has no earlier outcome to report; the second no resolved-alerts pass (it is due hourly):
    // between them every family, and Prometheus holds the newer value of each series.
    const [first] = await invokeLambda(
      { ...otlpEnv(advised().url, portal, job, protocol), POSTURE_PUSH: 'otlp,remote_write', POSTURE_REMOTE_WRITE_URL: `${loopback.url}/api/v1/write` },
      2,
    );
    const expected = remoteWritten(loopback, first).series;
    expectEveryPushedFamily(expected);
    expect(await heldBy(advised().url, runSelector(portal, job))).toEqual(expected);
  });

  it('labels every series with a promoted resource attribute, and keeps the others on target_info only', async () => {
    const portal = 'resource attributes';
    const job = 'once-resource';
    const run = await oncePush({ ...otlpEnv(advised().url, portal, job, 'http/protobuf'), OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=e2e,owner=security,service.instance.id=eu-1' });
    const expected = run.pushed;
    const held = await queryPrometheusApi(advised().url, runSelector(portal, job));
    expect(held.length).toBe(expected.size);
    for (const r of held) {
      // service.name and service.instance.id become job and instance; the promoted attribute a label of its own.
      expect(r.metric).toMatchObject({ job, instance: 'eu-1', deployment_environment: 'e2e' });
      expect(r.metric).not.toHaveProperty('owner');
    }
    expect(await heldBy(advised().url, runSelector(portal, job), { drop: ['deployment_environment'] })).toEqual(expected);
    const [info, ...more] = await queryPrometheusApi(advised().url, `target_info{job="${job}"}`);
    expect(more).toEqual([]);
    expect(info!.metric).toMatchObject({ job, instance: 'eu-1', owner: 'security' });
  });
});

describe('OTLP into Prometheus 3 with its default translation', () => {
  it('names each family as docs/push.md\'s table says, values exact', async () => {
    const job = 'lambda-default';
    // Two pushes of a warm container, as above: every family.
    const [first] = await invokeLambda(
      { ...otlpEnv(byDefault().url, 'default translation', job, 'http/protobuf'), POSTURE_PUSH: 'otlp,remote_write', POSTURE_REMOTE_WRITE_URL: `${loopback.url}/api/v1/write` },
      2,
    );
    const expected = remoteWritten(loopback, first).series;
    expectEveryPushedFamily(expected);
    expectDocumentedNames(expected, await heldBy(byDefault().url, `{__name__=~".+",job="${job}"}`));
    // One target_info per push: the resource, without service.name (it is `job`).
    const [info, ...more] = await queryPrometheusApi(byDefault().url, `target_info{job="${job}"}`);
    expect(more).toEqual([]);
    expect(Object.keys(info!.metric).sort()).toEqual(['__name__', 'job', 'telemetry_sdk_language', 'telemetry_sdk_name', 'telemetry_sdk_version']);
  });
});
