/**
 * Every PromQL expression the dashboards run, and how to make them plain PromQL (Grafana
 * variables substituted) so a test can send each one to a real Prometheus.
 */
import { DASHBOARDS } from './index.js';

/** Where a query sits in a dashboard. */
export type QueryKind = 'panel' | 'variable' | 'annotation';

/** One query of one dashboard, with its Grafana variables still in. */
export interface DashboardQuery {
  /** Dashboard uid. */
  readonly dashboard: string;
  /** Panel title, variable name or annotation name. */
  readonly source: string;
  /** Panel target refId; empty for variables and annotations. */
  readonly refId: string;
  readonly kind: QueryKind;
  /** PromQL (variable queries already turned from `label_values(...)` into PromQL). */
  readonly expr: string;
  /** True for instant queries; false for range queries. */
  readonly instant: boolean;
}

interface JsonTarget { refId?: string; expr?: string; instant?: boolean; range?: boolean }
interface JsonPanel { type?: string; title?: string; targets?: JsonTarget[]; panels?: JsonPanel[] }
interface JsonVariable { type?: string; name?: string; query?: unknown }
interface JsonAnnotation { name?: string; expr?: string }
interface JsonDashboard {
  uid?: string;
  panels?: JsonPanel[];
  templating?: { list?: JsonVariable[] };
  annotations?: { list?: JsonAnnotation[] };
}

/**
 * Grafana's `label_values(selector, label)` as PromQL that returns the same label values
 * (`group by (label) (selector)`); `query_result(expr)` as `expr`; anything else unchanged.
 */
export function variableQueryToPromQL(query: string): string {
  const q = query.trim();
  const withSelector = /^label_values\(\s*(.+)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)$/s.exec(q);
  if (withSelector) return `group by (${withSelector[2]}) (${withSelector[1]!.trim()})`;
  const labelOnly = /^label_values\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)$/.exec(q);
  if (labelOnly) return `group by (${labelOnly[1]}) ({${labelOnly[1]}!=""})`;
  const result = /^query_result\((.*)\)$/s.exec(q);
  if (result) return result[1]!.trim();
  return q;
}

function panelQueries(uid: string, panels: readonly JsonPanel[], out: DashboardQuery[]): void {
  for (const panel of panels) {
    if (panel.panels) panelQueries(uid, panel.panels, out);
    for (const target of panel.targets ?? []) {
      if (typeof target.expr !== 'string' || target.expr === '') continue;
      out.push({
        dashboard: uid,
        source: panel.title ?? '',
        refId: target.refId ?? '',
        kind: 'panel',
        expr: target.expr,
        instant: target.instant === true && target.range !== true,
      });
    }
  }
}

/** Lists every PromQL expression of one dashboard (its JSON model): panels, query variables, annotations. */
export function dashboardQueries(json: unknown): DashboardQuery[] {
  const d = json as JsonDashboard;
  const uid = d.uid ?? '';
  const out: DashboardQuery[] = [];
  panelQueries(uid, d.panels ?? [], out);
  for (const v of d.templating?.list ?? []) {
    if (v.type !== 'query') continue;
    const raw = typeof v.query === 'string' ? v.query : (v.query as { query?: unknown } | undefined)?.query;
    if (typeof raw !== 'string' || raw === '') continue;
    out.push({ dashboard: uid, source: v.name ?? '', refId: '', kind: 'variable', expr: variableQueryToPromQL(raw), instant: true });
  }
  for (const a of d.annotations?.list ?? []) {
    if (typeof a.expr !== 'string' || a.expr === '') continue;
    out.push({ dashboard: uid, source: a.name ?? '', refId: '', kind: 'annotation', expr: a.expr, instant: false });
  }
  return out;
}

/** Every PromQL expression of every dashboard this repository ships, built from the code. */
export function allDashboardQueries(): DashboardQuery[] {
  return DASHBOARDS.flatMap((spec) => dashboardQueries(spec.build()));
}

/**
 * Values that stand in for the dashboards' variables: each variable's "All" value (portal and
 * integration: any; tag: none, i.e. the whole portal) and typical values for Grafana's built-ins.
 */
export const DEFAULT_VARIABLE_VALUES: Readonly<Record<string, string>> = {
  portal: '.*',
  integration: '.*',
  objective: '.*',
  tag: '^$',
  __interval: '1m',
  __interval_ms: '60000',
  __rate_interval: '5m',
  __rate_interval_ms: '300000',
  __range: '1h',
  __range_s: '3600',
  __range_ms: '3600000',
};

// $name, ${name}, ${name:format}, [[name]] — the forms Grafana interpolates.
const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::[A-Za-z0-9_]+)?\}|\[\[([A-Za-z_][A-Za-z0-9_]*)(?::[A-Za-z0-9_]+)?\]\]|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * Replaces Grafana variables in `expr` with `values` (merged over DEFAULT_VARIABLE_VALUES).
 * Values are inserted as is: callers pass regex-ready text for variables used in `=~` matchers.
 * Unknown variables are left in place (see unresolvedVariables).
 */
export function substituteVariables(expr: string, values: Readonly<Record<string, string>> = {}): string {
  const all: Record<string, string> = { ...DEFAULT_VARIABLE_VALUES, ...values };
  return expr.replace(VARIABLE, (match, braced?: string, bracketed?: string, bare?: string) => {
    const name = braced ?? bracketed ?? bare ?? '';
    return Object.hasOwn(all, name) ? all[name]! : match;
  });
}

/** Names of the Grafana variables still present in `expr`. */
export function unresolvedVariables(expr: string): string[] {
  const names = new Set<string>();
  for (const m of expr.matchAll(VARIABLE)) names.add(m[1] ?? m[2] ?? m[3] ?? '');
  return [...names];
}

/** Metric names an expression reads (the exporter's `posture_*` families, rule outputs such as `posture:objective_target:ratio`, ALERTS). */
export function metricNames(expr: string): string[] {
  const names = new Set<string>();
  for (const m of expr.matchAll(/(?<![A-Za-z0-9_:])((?:[a-z_]+:)?posture_[a-z0-9_]+(?::[a-z0-9_]+)?|posture:[a-z0-9_]+:[a-z0-9_]+|ALERTS)(?![A-Za-z0-9_:])/g)) names.add(m[1]!);
  return [...names];
}
