/**
 * Shared pieces of the Lambda tests: the scheduled event and context Lambda passes, the values the
 * simulated portal holds (computed from its own data, independently of the exporter), and readers
 * of what landed in the Pushgateway.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context, ScheduledEvent } from 'aws-lambda';
import type { Fleet } from '../../src/simulator/fleet.js';
import type { Simulator } from '../../src/simulator/index.js';

/**
 * Settings of a fleet deployment pushing to the Pushgateway at `url` under `job`: every portal of
 * `fleet` in a config file written in `dir`, each key in its own file there.
 */
export function fleetEnv(fleet: Fleet, dir: string, url: string, job: string): Record<string, string> {
  const portals = fleet.names.map((name) => {
    const keyFile = join(dir, `${name}.key`);
    writeFileSync(keyFile, fleet.apiKey(name));
    return { portal: name, base_url: fleet.baseUrl(name), api_key_file: keyFile };
  });
  const file = join(dir, 'portals.json');
  writeFileSync(file, JSON.stringify({ portals }));
  return { POSTURE_CONFIG_FILE: file, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: url, POSTURE_PUSHGATEWAY_JOB: job };
}

/** An EventBridge scheduled event as Lambda delivers it. */
export function scheduledEvent(at: number): ScheduledEvent {
  return {
    version: '0',
    id: `e-${at.toString(36)}`,
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '123456789012',
    time: new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: 'us-east-1',
    resources: ['arn:aws:events:us-east-1:123456789012:rule/posture-exporter-test-CollectEventsRuleSchedule1'],
    detail: {},
  };
}

/** A Lambda context whose remaining time is fixed at `remainingMs` (the test decides how much time is left). */
export function lambdaContext(remainingMs: number, requestId: string): Context {
  const fail = () => {
    throw new Error('legacy callbacks are not used by an async handler');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'posture-exporter-test-collect',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:posture-exporter-test-collect',
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: '/aws/lambda/posture-exporter-test-collect',
    logStreamName: '2026/11/22/[$LATEST]0123456789abcdef',
    getRemainingTimeInMillis: () => remainingMs,
    done: fail,
    fail,
    succeed: fail,
  };
}

/** `name{a="1",b="2"}` with labels sorted, for comparing series sets. */
export function seriesKey(name: string, labels: Record<string, string>): string {
  const body = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(',');
  return `${name}{${body}}`;
}

/** Families whose values the tests check against the portal's own data. */
export const CHECKED = {
  alerts: ['posture_alerts_open', 'posture_alerts_unacknowledged', 'posture_alerts_unassigned', 'posture_alerts_snoozed'],
  devices: ['posture_devices'],
  vitals: ['posture_vitals_integration_info', 'posture_vitals_eligible_devices', 'posture_vitals_compliant_devices', 'posture_vitals_health_ratio', 'posture_vitals_active_agents'],
} as const;

/** Unix seconds of an API timestamp (`yyyy-MM-ddTHH:mm:ss.fffffff`, UTC); null for the unset minimum date. */
function apiSeconds(ts: string): number | null {
  if (ts.startsWith('0001-')) return null;
  const [whole, frac = ''] = ts.split('.');
  return Date.parse(`${whole}Z`) / 1000 + Number(`0.${frac || '0'}`);
}

/**
 * What the portal holds at `at`, as the catalogue's series (labels without `portal`), by source:
 * unresolved alerts by severity (red, amber, green always present), device totals by activity (30
 * days), and the Vitals funnel per integration. Written from the spec, not from the exporter's code.
 */
export function expectedFromPortal(sim: Pick<Simulator, 'data'>, at: number): Record<keyof typeof CHECKED, Map<string, number>> {
  const data = sim.data(at);
  const alerts = new Map<string, number>();
  const count = (name: string, severity: string) => {
    const k = seriesKey(name, { severity });
    alerts.set(k, (alerts.get(k) ?? 0) + 1);
  };
  for (const name of CHECKED.alerts) for (const severity of ['red', 'amber', 'green']) alerts.set(seriesKey(name, { severity }), 0);
  for (const a of data.alerts()) {
    if (a.resolved) continue;
    const severity = a.state.toLowerCase();
    count('posture_alerts_open', severity);
    if (!a.acknowledged) count('posture_alerts_unacknowledged', severity);
    if (a.ownerName === '') count('posture_alerts_unassigned', severity);
    const until = apiSeconds(a.inactiveUntil);
    if (until !== null && until > at / 1000) count('posture_alerts_snoozed', severity);
  }

  let active = 0;
  let inactive = 0;
  for (const d of data.devices()) {
    if ((apiSeconds(d.lastOnline) ?? 0) >= at / 1000 - 30 * 86_400) active++;
    else inactive++;
  }
  const devices = new Map([
    [seriesKey('posture_devices', { activity: 'active' }), active],
    [seriesKey('posture_devices', { activity: 'inactive' }), inactive],
  ]);

  const vitals = new Map<string, number>();
  for (const v of data.vitals()) {
    const integration = v.key;
    vitals.set(seriesKey('posture_vitals_integration_info', { integration, name: v.name, vitals_enabled: String(v.vitalsEnabled) }), 1);
    if (!v.vitalsEnabled) {
      vitals.set(seriesKey('posture_vitals_active_agents', { integration }), v.activeAgents!);
      continue;
    }
    const stages = [
      ['deployment', v.agentDeployedPossibleCompliant!, v.agentDeployedCompliant!],
      ['function', v.agentFunctioningPossibleCompliant!, v.agentFunctioningCompliant!],
      ['configuration', v.configurationPossibleCompliant!, v.configurationCompliant!],
    ] as const;
    for (const [stage, eligible, compliant] of stages) {
      vitals.set(seriesKey('posture_vitals_eligible_devices', { integration, stage }), eligible);
      vitals.set(seriesKey('posture_vitals_compliant_devices', { integration, stage }), compliant);
    }
    if (v.agentDeployedPossibleCompliant! > 0) vitals.set(seriesKey('posture_vitals_health_ratio', { integration }), v.configurationCompliant! / v.agentDeployedPossibleCompliant!);
  }
  return { alerts, devices, vitals };
}

interface ApiFamily {
  metrics: Array<{ labels: Record<string, string>; value: string }>;
}

/** One series as read back from a receiver. */
export interface ReadSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** One Pushgateway group as `/api/v1/metrics` reports it. */
export interface PushgatewayGroup {
  labels: Record<string, string>;
  /** The `posture_*` series, without `job`, `instance` and the grouping labels other than `portal`. */
  samples: ReadSample[];
  pushTime: number;
}

/** The Pushgateway's groups, keyed by their grouping labels without `job` (e.g. `portal=acme,source=alerts`). */
export async function pushgatewayGroups(url: string): Promise<Map<string, PushgatewayGroup>> {
  const res = await fetch(`${url}/api/v1/metrics`);
  const body = (await res.json()) as { status: string; data: Array<{ labels: Record<string, string> } & Record<string, unknown>> };
  if (body.status !== 'success') throw new Error(`Pushgateway API: ${JSON.stringify(body).slice(0, 200)}`);
  const out = new Map<string, PushgatewayGroup>();
  for (const g of body.data) {
    const { job: _job, ...grouping } = g.labels;
    const drop = new Set(['job', 'instance', ...Object.keys(grouping).filter((k) => k !== 'portal')]);
    const samples: ReadSample[] = [];
    let pushTime = NaN;
    for (const [name, fam] of Object.entries(g)) {
      if (name === 'labels' || typeof fam !== 'object' || fam === null || !('metrics' in fam)) continue;
      for (const m of (fam as ApiFamily).metrics) {
        if (name === 'push_time_seconds') pushTime = Number(m.value);
        if (!name.startsWith('posture_')) continue;
        samples.push({ name, labels: Object.fromEntries(Object.entries(m.labels).filter(([k]) => !drop.has(k))), value: Number(m.value) });
      }
    }
    const key = Object.keys(grouping)
      .sort()
      .map((k) => `${k}=${grouping[k]}`)
      .join(',');
    out.set(key, { labels: grouping, samples, pushTime });
  }
  return out;
}

/** `name{labels}` → value of the samples of `families`, with `portal` left out (to compare with `expectedFromPortal`). */
export function familiesOf(samples: readonly ReadSample[] | undefined, families: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples ?? []) {
    if (!families.includes(s.name)) continue;
    const { portal: _portal, ...labels } = s.labels;
    out.set(seriesKey(s.name, labels), s.value);
  }
  return out;
}

/** The value of one series (labels without `portal`). */
export function valueIn(samples: readonly ReadSample[] | undefined, name: string, labels: Record<string, string>): number | undefined {
  return familiesOf(samples, [name]).get(seriesKey(name, labels));
}
