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
import type { AlertRecord } from '../../src/simulator/records.js';

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

/** The age and SLA families, checked by expectedAlertAges. */
export const AGE_FAMILIES = ['posture_alerts_open_older_than', 'posture_alerts_over_sla', 'posture_alerts_oldest_unacknowledged_timestamp_seconds'] as const;

/** The ages of posture_alerts_open_older_than, in seconds (docs/metrics.md). */
const AGE_BUCKETS: ReadonlyArray<readonly [string, number]> = [['1h', 3600], ['1d', 86_400], ['7d', 7 * 86_400], ['30d', 30 * 86_400], ['90d', 90 * 86_400]];

/** An alert as the age families read it (spec 2.6). */
type AgedAlert = Pick<AlertRecord, 'state' | 'timestamp' | 'resolved' | 'acknowledged' | 'inactiveUntil'>;

const severityOfState = (state: string) => (['red', 'amber', 'green'].includes(state.trim().toLowerCase()) ? state.trim().toLowerCase() : 'unknown');

/**
 * The age and SLA families for `alerts` collected at `nowSeconds` with `slas` (seconds per severity),
 * as series keys (labels without `portal`), counted one alert at a time from their definitions:
 * an alert's age is `nowSeconds` minus its creation time, "older than" is strict, a snoozed alert
 * (inactiveUntil later than now) is never over its SLA, an unset creation time has no age, and a
 * state outside Red, Amber, Green is `unknown` (ages only while it has open alerts; no SLA).
 */
export function expectedAlertAges(alerts: Iterable<AgedAlert>, nowSeconds: number, slas: Readonly<Record<string, number>>): Map<string, number> {
  const out = new Map<string, number>();
  const open = [...alerts].filter((a) => !a.resolved);
  const severities = new Set(['red', 'amber', 'green', ...open.map((a) => severityOfState(a.state))]);
  for (const severity of severities) for (const [age] of AGE_BUCKETS) out.set(seriesKey('posture_alerts_open_older_than', { severity, age }), 0);
  for (const severity of ['red', 'amber', 'green']) out.set(seriesKey('posture_alerts_over_sla', { severity }), 0);
  const add = (key: string) => out.set(key, out.get(key)! + 1);
  for (const a of open) {
    const severity = severityOfState(a.state);
    const created = apiSeconds(a.timestamp);
    if (created === null) continue;
    const age = nowSeconds - created;
    for (const [label, s] of AGE_BUCKETS) if (age > s) add(seriesKey('posture_alerts_open_older_than', { severity, age: label }));
    const until = apiSeconds(a.inactiveUntil);
    const snoozed = until !== null && until > nowSeconds;
    if (!snoozed && slas[severity] !== undefined && age > slas[severity]) add(seriesKey('posture_alerts_over_sla', { severity }));
    const oldest = seriesKey('posture_alerts_oldest_unacknowledged_timestamp_seconds', { severity });
    if (!a.acknowledged && created < (out.get(oldest) ?? Infinity)) out.set(oldest, created);
  }
  return out;
}

/**
 * The instants (Unix s) at which expectedAlertAges of `alerts` changes value: each creation time
 * plus each age and its severity's SLA, and each snooze's end. A collection at any time between two
 * of them gives the same values.
 */
export function alertAgeChanges(alerts: Iterable<AgedAlert>, slas: Readonly<Record<string, number>>): number[] {
  const out: number[] = [];
  for (const a of alerts) {
    if (a.resolved) continue;
    const created = apiSeconds(a.timestamp);
    const until = apiSeconds(a.inactiveUntil);
    if (until !== null) out.push(until);
    if (created === null) continue;
    for (const [, s] of AGE_BUCKETS) out.push(created + s);
    const sla = slas[severityOfState(a.state)];
    if (sla !== undefined) out.push(created + sla);
  }
  return out;
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
