import { PORTAL_LABEL, SEVERITIES, SOURCES, STAGES, type MetricName, type Source } from '../metrics/catalogue.js';
import type { Sample } from '../metrics/sample.js';
import type { AlertsAggregate } from './alerts.js';
import type { BudgetFacts } from './cycle.js';
import type { DevicesTotals } from './devices.js';
import { funnelConsistent, type VitalsList } from './vitals.js';

/** What is known of one source when rendering. */
export interface SourceView<T> {
  /** Data to serve; absent when the source never succeeded or its last good data is too old. */
  readonly value?: T;
  /** Whether the last collection succeeded. */
  readonly success: boolean;
  /** Unix ms of the last success. */
  readonly lastSuccessAt?: number;
  /** Malformed records skipped by the last collection. */
  readonly invalid?: number;
}

/** Facts about the last run of each source of one portal, and its budget. */
export interface CycleFacts {
  /** Wall time of the last run of each source. */
  readonly durations: Readonly<Partial<Record<Source, number>>>;
  /** Requests of the last run of each source, by `endpoint\u0000code`. */
  readonly requests: ReadonlyMap<string, number>;
  /** Page size the last /alerts run used (0 = all in one request); absent if /alerts was not asked. */
  readonly alertsPageSize?: number;
  /** The portal's budget as the scheduler sees it. */
  readonly budget?: BudgetFacts;
}

/** Everything a render needs to know of one portal. */
export interface PortalView {
  readonly portal: string;
  readonly vitals: SourceView<readonly VitalsList[]>;
  readonly alerts: SourceView<AlertsAggregate>;
  readonly devices: SourceView<DevicesTotals>;
  readonly cycle?: CycleFacts;
}

/** Exporter-wide facts. */
export interface ExporterFacts {
  readonly version: string;
  readonly runtime: 'once' | 'serve' | 'lambda';
  /** Outcome of the previous push per sink (push mode only). */
  readonly push?: ReadonlyArray<{ sink: string; ok: boolean; durationMs: number }>;
}

/**
 * The pure transform: what is known of each portal → samples of the catalogue.
 * No I/O, no clock: everything time-related arrives in the views.
 */
export function toSamples(views: readonly PortalView[], exporter: ExporterFacts): Sample[] {
  const out: Sample[] = [];
  for (const view of views) {
    const add = (name: MetricName, labels: Record<string, string>, value: number) =>
      out.push({ name, labels: { [PORTAL_LABEL]: view.portal, ...labels }, value });
    if (view.vitals.value) vitalsSamples(view.vitals.value, add);
    if (view.alerts.value) alertsSamples(view.alerts.value, add);
    if (view.devices.value) {
      add('posture_devices', { activity: 'active' }, view.devices.value.active);
      add('posture_devices', { activity: 'inactive' }, view.devices.value.inactive);
    }
    const sources: Record<Source, SourceView<unknown>> = { vitals: view.vitals, alerts: view.alerts, devices: view.devices };
    for (const source of SOURCES) {
      const s = sources[source];
      add('posture_collection_success', { source }, s.success ? 1 : 0);
      if (s.lastSuccessAt !== undefined) add('posture_collection_last_success_timestamp_seconds', { source }, s.lastSuccessAt / 1000);
    }
    for (const source of SOURCES) {
      const invalid = sources[source].invalid;
      if (invalid !== undefined) add('posture_collection_invalid_records', { source }, invalid);
    }
    if (view.cycle) {
      for (const source of SOURCES) {
        const ms = view.cycle.durations[source];
        if (ms !== undefined) add('posture_collection_duration_seconds', { source }, ms / 1000);
      }
      for (const [key, n] of [...view.cycle.requests].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const [endpoint, code] = key.split('\u0000') as [string, string];
        add('posture_collection_api_requests', { endpoint, code }, n);
      }
      if (view.cycle.alertsPageSize !== undefined) add('posture_collection_alerts_page_size', {}, view.cycle.alertsPageSize);
      const budget = view.cycle.budget;
      if (budget) {
        add('posture_budget_share', { kind: 'configured' }, budget.configuredShare);
        add('posture_budget_share', { kind: 'effective' }, budget.effectiveShare);
        add('posture_budget_rate_limited_responses', {}, budget.rateLimitedLastHour);
      }
    }
    for (const p of exporter.push ?? []) {
      add('posture_push_success', { sink: p.sink }, p.ok ? 1 : 0);
      add('posture_push_duration_seconds', { sink: p.sink }, p.durationMs / 1000);
    }
    add('posture_exporter_build_info', { version: exporter.version, runtime: exporter.runtime }, 1);
  }
  return out;
}

type Add = (name: MetricName, labels: Record<string, string>, value: number) => void;

function vitalsSamples(lists: readonly VitalsList[], add: Add): void {
  for (const list of lists) {
    const tag: Record<string, string> = list.tag === undefined ? {} : { tag: list.tag };
    for (const r of list.records) {
      const integration = r.key;
      add('posture_vitals_integration_info', { integration, name: r.name, vitals_enabled: String(r.vitalsEnabled), ...tag }, 1);
      if (r.vitalsEnabled) {
        for (const st of STAGES) add('posture_vitals_eligible_devices', { integration, stage: st.stage, ...tag }, r[st.eligible]);
        for (const st of STAGES) add('posture_vitals_compliant_devices', { integration, stage: st.stage, ...tag }, r[st.compliant]);
        if (r.agentDeployedPossibleCompliant > 0) {
          add('posture_vitals_health_ratio', { integration, ...tag }, r.configurationCompliant / r.agentDeployedPossibleCompliant);
        }
        add('posture_vitals_funnel_consistent', { integration, ...tag }, funnelConsistent(r) ? 1 : 0);
      } else {
        add('posture_vitals_active_agents', { integration, ...tag }, r.activeAgents);
      }
    }
  }
}

/** Severities to emit for a counted family: red, amber, green always, others when non-zero. */
function severitiesOf(counts: Record<string, number>): string[] {
  const extra = Object.keys(counts).filter((k) => !(SEVERITIES as readonly string[]).includes(k) && counts[k]! > 0).sort();
  return [...SEVERITIES, ...extra];
}

function alertsSamples(a: AlertsAggregate, add: Add): void {
  const families = [
    ['posture_alerts_open', a.open],
    ['posture_alerts_unacknowledged', a.unacknowledged],
    ['posture_alerts_unassigned', a.unassigned],
    ['posture_alerts_snoozed', a.snoozed],
  ] as const;
  for (const [name, counts] of families) {
    for (const severity of severitiesOf(counts)) add(name, { severity }, counts[severity] ?? 0);
  }
  const byInt = [...a.byIntegration].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  for (const [key, n] of byInt) {
    if (n === 0) continue;
    const [integration, severity, type] = key.split('\u0000') as [string, string, string];
    add('posture_alerts_open_by_integration', { integration, severity, type }, n);
  }
  for (const severity of severitiesOf(a.open)) {
    const t = a.oldest[severity];
    if (t !== undefined) add('posture_alerts_oldest_open_timestamp_seconds', { severity }, t);
  }
}
