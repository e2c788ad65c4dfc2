import { SETTING_BY_KEY } from '../config/settings.js';
import type { Logger } from '../core/log.js';
import { PORTAL_LABEL, type MetricName } from '../metrics/catalogue.js';
import { SEVERITIES, SOURCES, STAGES, type Source } from '../domain.js';
import type { Sample } from '../metrics/sample.js';
import type { VitalsRecord } from '../upstream/schemas.js';
import type { AlertsAggregate } from '../sources/alerts/fold.js';
import type { BudgetFacts } from './cycle.js';
import type { DevicesTotals } from '../sources/devices.js';
import { funnelConsistent, type VitalsList } from '../sources/vitals.js';

/** The reserved `integration` label value that a capped family folds its smallest integrations into. */
export const OTHER = '__other__';

/** Most series per label-valued family and portal when the view does not say (POSTURE_MAX_SERIES_PER_FAMILY's default). */
export const DEFAULT_MAX_SERIES_PER_FAMILY = Number(SETTING_BY_KEY.max_series_per_family.default);

/** Families whose series grow with portal data (one or more series per integration), capped per portal. */
export const CAPPED_FAMILIES = [
  'posture_vitals_integration_info',
  'posture_vitals_eligible_devices',
  'posture_vitals_compliant_devices',
  'posture_vitals_health_ratio',
  'posture_vitals_funnel_consistent',
  'posture_vitals_active_agents',
  'posture_alerts_open_by_integration',
] as const satisfies readonly MetricName[];
type CappedFamily = (typeof CAPPED_FAMILIES)[number];

/** What is known of one source when rendering. */
export interface SourceView<T> {
  /** Data to serve; absent when the source never succeeded, or its last run failed and its last good data is past the staleness limit. */
  readonly value?: T;
  /** Whether the last run succeeded; absent until the source's first run ends (then it has no series at all). */
  readonly success?: boolean;
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
  /** Most series each label-valued family may have for this portal. @default DEFAULT_MAX_SERIES_PER_FAMILY */
  readonly maxSeriesPerFamily?: number;
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
    const cap = view.maxSeriesPerFamily ?? DEFAULT_MAX_SERIES_PER_FAMILY;
    const folded = new Map<CappedFamily, number>();
    if (view.vitals.value) vitalsSamples(view.vitals.value, add, cap, folded);
    if (view.alerts.value) alertsSamples(view.alerts.value, add, cap, folded);
    if (view.devices.value) {
      add('posture_devices', { activity: 'active' }, view.devices.value.active);
      add('posture_devices', { activity: 'inactive' }, view.devices.value.inactive);
    }
    const sources: Record<Source, SourceView<unknown>> = { vitals: view.vitals, alerts: view.alerts, devices: view.devices };
    for (const source of SOURCES) {
      const s = sources[source];
      if (s.success === undefined) continue;
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
    for (const family of CAPPED_FAMILIES) {
      const n = folded.get(family);
      if (n !== undefined) add('posture_series_folded', { family }, n);
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

// ------------------------------------------------------------------ the cap

/**
 * The largest `k` such that keeping the first `k` groups (in size order) and folding the rest
 * keeps every family within `cap`: `kept[f][k]` series kept, `other[f][k]` fold series. When even
 * folding everything does not fit (a cap below the fold series), `k` is 0.
 */
function largestFit(n: number, families: number, kept: (f: number, k: number) => number, other: (f: number, k: number) => number, cap: number, limit = n): number {
  for (let k = limit; k > 0; k--) {
    let fits = true;
    for (let f = 0; f < families && fits; f++) fits = kept(f, k) + other(f, k) <= cap;
    if (fits) return k;
  }
  return 0;
}

/** Orders group names by size, largest first (ties by name), with a real group named OTHER last (always folded). */
function bySize(sizes: ReadonlyMap<string, number>): string[] {
  return [...sizes.keys()].sort((a, b) => {
    if ((a === OTHER) !== (b === OTHER)) return a === OTHER ? 1 : -1;
    const d = sizes.get(b)! - sizes.get(a)!;
    return d !== 0 ? d : a < b ? -1 : a > b ? 1 : 0;
  });
}

// ------------------------------------------------------------------ vitals

type Enabled = Extract<VitalsRecord, { vitalsEnabled: true }>;
const VITALS_FAMILIES = ['posture_vitals_integration_info', 'posture_vitals_eligible_devices', 'posture_vitals_compliant_devices', 'posture_vitals_health_ratio', 'posture_vitals_funnel_consistent', 'posture_vitals_active_agents'] as const;

/** Series one record has in each Vitals family, in VITALS_FAMILIES order. */
function vitalsSeriesOf(r: VitalsRecord): number[] {
  if (!r.vitalsEnabled) return [1, 0, 0, 0, 0, 1];
  return [1, 3, 3, r.agentDeployedPossibleCompliant > 0 ? 1 : 0, 1, 0];
}

/** What the fold series of one list need: whether it folded enabled / disabled records, and the health denominator. */
interface VitalsFoldState {
  enabled: boolean;
  disabled: boolean;
  denominator: number;
}

/** Fold series of one list in each Vitals family (info has none: info series are dropped). */
function vitalsOtherOf(st: VitalsFoldState): number[] {
  return [0, st.enabled ? 3 : 0, st.enabled ? 3 : 0, st.denominator > 0 ? 1 : 0, st.enabled ? 1 : 0, st.disabled ? 1 : 0];
}

/**
 * Which integrations the Vitals families keep: one set for all of them (so they stay joinable),
 * the largest (eligible devices, or active agents when Vitals is disabled; the largest over the
 * tag views) first, as many as keep every family within `cap`. Undefined: keep all.
 */
function vitalsKept(lists: readonly VitalsList[], cap: number): Set<string> | undefined {
  const sizes = new Map<string, number>();
  const perKey = new Map<string, number[]>();
  const totals = [0, 0, 0, 0, 0, 0];
  for (const list of lists) {
    for (const r of list.records) {
      const size = r.vitalsEnabled ? r.agentDeployedPossibleCompliant : r.activeAgents;
      sizes.set(r.key, Math.max(sizes.get(r.key) ?? 0, size));
      const series = vitalsSeriesOf(r);
      const acc = perKey.get(r.key) ?? [0, 0, 0, 0, 0, 0];
      series.forEach((n, f) => {
        acc[f]! += n;
        totals[f]! += n;
      });
      perKey.set(r.key, acc);
    }
  }
  if (!sizes.has(OTHER) && totals.every((n) => n <= cap)) return undefined;
  const order = bySize(sizes);
  const n = order.length;
  // kept[f][k]: series of the first k integrations; other[f][k]: fold series of the rest.
  const kept = VITALS_FAMILIES.map(() => new Array<number>(n + 1).fill(0));
  for (let k = 0; k < n; k++) perKey.get(order[k]!)!.forEach((c, f) => (kept[f]![k + 1] = kept[f]![k]! + c));
  const other = VITALS_FAMILIES.map(() => new Array<number>(n + 1).fill(0));
  const byKey = lists.map((list) => new Map(list.records.map((r) => [r.key, r])));
  const states: VitalsFoldState[] = lists.map(() => ({ enabled: false, disabled: false, denominator: 0 }));
  const current = [0, 0, 0, 0, 0, 0];
  for (let k = n - 1; k >= 0; k--) {
    byKey.forEach((records, i) => {
      const r = records.get(order[k]!);
      if (!r) return;
      const st = states[i]!;
      const before = vitalsOtherOf(st);
      if (r.vitalsEnabled) {
        st.enabled = true;
        st.denominator += r.agentDeployedPossibleCompliant;
      } else st.disabled = true;
      vitalsOtherOf(st).forEach((c, f) => (current[f]! += c - before[f]!));
    });
    current.forEach((c, f) => (other[f]![k] = c));
  }
  const k = largestFit(n, VITALS_FAMILIES.length, (f, j) => kept[f]![j]!, (f, j) => other[f]![j]!, cap, order[n - 1] === OTHER ? n - 1 : n);
  return new Set(order.slice(0, k));
}

function vitalsSamples(lists: readonly VitalsList[], add: Add, cap: number, folded: Map<CappedFamily, number>): void {
  const keep = vitalsKept(lists, cap);
  // Original series left out, per family: folded into OTHER, or (info) dropped.
  const left = [0, 0, 0, 0, 0, 0];
  for (const list of lists) {
    const tag: Record<string, string> = list.tag === undefined ? {} : { tag: list.tag };
    const rest: VitalsRecord[] = [];
    for (const r of list.records) {
      if (keep && !keep.has(r.key)) {
        rest.push(r);
        vitalsSeriesOf(r).forEach((c, f) => (left[f]! += c));
      } else vitalsRecordSamples(r, r.key, tag, add);
    }
    if (rest.length > 0) vitalsOtherSamples(rest, tag, add);
  }
  VITALS_FAMILIES.forEach((family, f) => folded.set(family, left[f]!));
}

function vitalsRecordSamples(r: VitalsRecord, integration: string, tag: Record<string, string>, add: Add): void {
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

/**
 * The fold series of one list: counts summed; the health ratio recomputed from the summed counts;
 * funnel_consistent 1 only when every folded funnel is consistent; info series dropped.
 */
function vitalsOtherSamples(rest: readonly VitalsRecord[], tag: Record<string, string>, add: Add): void {
  const enabled = rest.filter((r): r is Enabled => r.vitalsEnabled);
  const disabled = rest.filter((r) => !r.vitalsEnabled);
  const integration = OTHER;
  if (enabled.length > 0) {
    const sum = (field: keyof Enabled) => enabled.reduce((n, r) => n + (r[field] as number), 0);
    for (const st of STAGES) add('posture_vitals_eligible_devices', { integration, stage: st.stage, ...tag }, sum(st.eligible));
    for (const st of STAGES) add('posture_vitals_compliant_devices', { integration, stage: st.stage, ...tag }, sum(st.compliant));
    const denominator = sum('agentDeployedPossibleCompliant');
    if (denominator > 0) add('posture_vitals_health_ratio', { integration, ...tag }, sum('configurationCompliant') / denominator);
    add('posture_vitals_funnel_consistent', { integration, ...tag }, enabled.every(funnelConsistent) ? 1 : 0);
  }
  if (disabled.length > 0) {
    add('posture_vitals_active_agents', { integration, ...tag }, disabled.reduce((n, r) => n + (r.vitalsEnabled ? 0 : r.activeAgents), 0));
  }
}

// ------------------------------------------------------------------ alerts

/** Severities to emit for a counted family: red, amber, green always, others when non-zero. */
function severitiesOf(counts: Record<string, number>): string[] {
  const extra = Object.keys(counts).filter((k) => !(SEVERITIES as readonly string[]).includes(k) && counts[k]! > 0).sort();
  return [...SEVERITIES, ...extra];
}

const byString = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

/** One series of posture_alerts_open_by_integration. */
interface IntegrationRow {
  readonly integration: string;
  readonly severity: string;
  readonly type: string;
  readonly n: number;
}

/** The non-zero series of an aggregate, by integration, severity, then type. */
function integrationRows(counts: AlertsAggregate['byIntegration']): IntegrationRow[] {
  const rows: IntegrationRow[] = [];
  for (const [integration, bySeverity] of counts) {
    for (const [severity, types] of bySeverity) {
      for (const [type, n] of types) if (n !== 0) rows.push({ integration, severity, type, n });
    }
  }
  return rows.sort((x, y) => byString(x.integration, y.integration) || byString(x.severity, y.severity) || byString(x.type, y.type));
}

/** Adds `n` to (severity, type) of a nested count map. */
function addTo(counts: Map<string, Map<string, number>>, severity: string, type: string, n: number): void {
  let types = counts.get(severity);
  if (!types) counts.set(severity, (types = new Map()));
  types.set(type, (types.get(type) ?? 0) + n);
}

/**
 * Which integrations posture_alerts_open_by_integration keeps: the largest (open alerts) first,
 * as many as keep the family, fold series included, within `cap`. Undefined: keep all.
 */
function alertsKept(rows: readonly IntegrationRow[], cap: number): Set<string> | undefined {
  const sizes = new Map<string, number>();
  // integration → severity → type → series (1 each): the severity x type combinations it has.
  const combos = new Map<string, Map<string, Map<string, number>>>();
  for (const r of rows) {
    sizes.set(r.integration, (sizes.get(r.integration) ?? 0) + r.n);
    let own = combos.get(r.integration);
    if (!own) combos.set(r.integration, (own = new Map()));
    addTo(own, r.severity, r.type, 1);
  }
  if (!sizes.has(OTHER) && rows.length <= cap) return undefined;
  const order = bySize(sizes);
  const n = order.length;
  const comboCount = (c: Map<string, Map<string, number>>) => [...c.values()].reduce((sum, types) => sum + types.size, 0);
  const kept = new Array<number>(n + 1).fill(0);
  for (let k = 0; k < n; k++) kept[k + 1] = kept[k]! + comboCount(combos.get(order[k]!)!);
  // other[k]: distinct severity x type of the integrations from k on (one fold series each).
  const other = new Array<number>(n + 1).fill(0);
  const seen = new Map<string, Map<string, number>>();
  let distinct = 0;
  for (let k = n - 1; k >= 0; k--) {
    for (const [severity, types] of combos.get(order[k]!)!) {
      for (const type of types.keys()) {
        if (seen.get(severity)?.has(type)) continue;
        addTo(seen, severity, type, 1);
        distinct++;
      }
    }
    other[k] = distinct;
  }
  const k = largestFit(n, 1, (_f, j) => kept[j]!, (_f, j) => other[j]!, cap, order[n - 1] === OTHER ? n - 1 : n);
  return new Set(order.slice(0, k));
}

function alertsSamples(a: AlertsAggregate, add: Add, cap: number, folded: Map<CappedFamily, number>): void {
  const families = [
    ['posture_alerts_open', a.open],
    ['posture_alerts_unacknowledged', a.unacknowledged],
    ['posture_alerts_unassigned', a.unassigned],
    ['posture_alerts_snoozed', a.snoozed],
  ] as const;
  for (const [name, counts] of families) {
    for (const severity of severitiesOf(counts)) add(name, { severity }, counts[severity] ?? 0);
  }
  const rows = integrationRows(a.byIntegration);
  const keep = alertsKept(rows, cap);
  // severity → type → open alerts of the folded integrations.
  const rest = new Map<string, Map<string, number>>();
  let foldedSeries = 0;
  for (const { integration, severity, type, n } of rows) {
    if (keep && !keep.has(integration)) {
      foldedSeries++;
      addTo(rest, severity, type, n);
      continue;
    }
    add('posture_alerts_open_by_integration', { integration, severity, type }, n);
  }
  for (const [severity, types] of [...rest].sort(([x], [y]) => byString(x, y))) {
    for (const [type, n] of [...types].sort(([x], [y]) => byString(x, y))) add('posture_alerts_open_by_integration', { integration: OTHER, severity, type }, n);
  }
  folded.set('posture_alerts_open_by_integration', foldedSeries);
  for (const severity of severitiesOf(a.open)) {
    const t = a.oldest[severity];
    if (t !== undefined) add('posture_alerts_oldest_open_timestamp_seconds', { severity }, t);
  }
}

// ------------------------------------------------------------------ warnings

/** Logs one warning the first time a family of a portal is folded (renders repeat every scrape and cycle; the warning does not). */
export class FoldWarnings {
  private readonly warned = new Set<string>();

  constructor(private readonly logger: Logger) {}

  /** Looks at the `posture_series_folded` samples of one render. */
  check(samples: readonly Sample[]): void {
    for (const s of samples) {
      if (s.name !== 'posture_series_folded' || s.value === 0) continue;
      const portal = s.labels[PORTAL_LABEL] ?? '';
      const family = s.labels.family ?? '';
      const key = `${portal}\u0000${family}`;
      if (this.warned.has(key)) continue;
      this.warned.add(key);
      this.logger.warn(`capped ${family}: folded the smallest integrations into integration="${OTHER}" (raise POSTURE_MAX_SERIES_PER_FAMILY to keep more)`, { portal, family, folded: s.value });
    }
  }
}
