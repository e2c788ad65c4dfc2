import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import { DASHBOARDS, EXPORTER_UID, OBJECTIVES_UID, OVERVIEW_UID, renderDashboard } from '../../infra/grafana/src/index.js';
import { PASS_BRIDGE, SPAN_NULLS_MS } from '../../infra/grafana/src/common.js';
import {
  DEFAULT_VARIABLE_VALUES,
  allDashboardQueries,
  dashboardQueries,
  metricNames,
  substituteVariables,
  unresolvedVariables,
  variableQueryToPromQL,
} from '../../infra/grafana/src/queries.js';
import { REPO_ROOT, loadRuleExpressions } from './support.js';
import { itMaps } from '../support/maps.js';

const GRAFANA_DIR = join(REPO_ROOT, 'infra/grafana');

interface Panel { id?: number; type: string; title?: string; datasource?: { uid?: string }; targets?: Array<{ refId?: string; expr?: string }>; panels?: Panel[]; repeat?: string }
interface Variable { type: string; name: string; multi?: boolean; includeAll?: boolean; allValue?: string; datasource?: { uid?: string } }
interface Dashboard { uid: string; id?: number | null; panels: Panel[]; templating: { list: Variable[] } }

function committed(file: string): string {
  return readFileSync(join(GRAFANA_DIR, 'dashboards', file), 'utf8');
}

function flatPanels(d: Dashboard): Panel[] {
  return d.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

const built = DASHBOARDS.map((spec) => ({ file: spec.file, json: JSON.parse(renderDashboard(spec.build())) as Dashboard }));
const byUid = (uid: string): Dashboard => built.find((b) => b.json.uid === uid)!.json;

describe('generated dashboards', () => {
  it.each(DASHBOARDS.map((s) => [s.file, s]))('%s matches what the code generates (run node --import tsx infra/grafana/generate.ts)', (_file, spec) => {
    expect(committed(spec.file)).toBe(renderDashboard(spec.build()));
  });

  it('generates byte-identical output every time, with no timestamps or instance ids', () => {
    for (const spec of DASHBOARDS) {
      const text = renderDashboard(spec.build());
      expect(renderDashboard(spec.build())).toBe(text);
      expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
      const json = JSON.parse(text) as Dashboard;
      expect(json.id ?? null).toBeNull();
    }
  });

  it('has stable, distinct uids', () => {
    expect(built.map((b) => b.json.uid)).toEqual([OVERVIEW_UID, EXPORTER_UID, OBJECTIVES_UID]);
    expect(OVERVIEW_UID).toBe('posture-overview');
    expect(EXPORTER_UID).toBe('posture-exporter-health');
    expect(OBJECTIVES_UID).toBe('posture-objectives');
  });

  it.each(built.map((b) => [b.json.uid, b.json]))('%s: every panel has a unique id, queries the datasource variable, and has unique refIds', (_uid, d) => {
    const panels = flatPanels(d);
    const ids = panels.map((p) => p.id);
    expect(ids.every((id) => typeof id === 'number' && id > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const queryPanels = panels.filter((x) => x.type !== 'row');
    expect(queryPanels.length).toBeGreaterThan(0);
    for (const p of queryPanels) {
      expect(p.datasource?.uid, p.title).toBe('${datasource}');
      const refIds = (p.targets ?? []).map((t) => t.refId);
      expect(refIds.length, p.title).toBeGreaterThan(0);
      expect(refIds.every((r) => typeof r === 'string' && /^[A-Z]$/.test(r)), p.title).toBe(true);
      expect(new Set(refIds).size, p.title).toBe(refIds.length);
    }
  });
});

describe('variables', () => {
  const vars = (d: Dashboard): Record<string, Variable> => Object.fromEntries(d.templating.list.map((v) => [v.name, v]));

  it('gives the overview datasource, portal, integration and tag, the exporter dashboard datasource and portal, the objectives dashboard datasource, portal, objective and integration', () => {
    expect(Object.keys(vars(byUid(OVERVIEW_UID)))).toEqual(['datasource', 'portal', 'integration', 'tag']);
    expect(Object.keys(vars(byUid(EXPORTER_UID)))).toEqual(['datasource', 'portal']);
    expect(Object.keys(vars(byUid(OBJECTIVES_UID)))).toEqual(['datasource', 'portal', 'objective', 'integration']);
  });

  it('lists the objectives whose rules are loaded, several at once', () => {
    const objective = vars(byUid(OBJECTIVES_UID)).objective!;
    expect(objective.multi).toBe(true);
    expect(objective.includeAll).toBe(true);
    const q = allDashboardQueries().find((x) => x.dashboard === OBJECTIVES_UID && x.kind === 'variable' && x.source === 'objective')!;
    expect(q.expr).toBe('group by (objective) (posture:objective_error_budget_remaining:ratio{portal=~"$portal"})');
  });

  it('uses "All = whole portal" for tag (series without a tag label), single choice only', () => {
    const tag = vars(byUid(OVERVIEW_UID)).tag!;
    expect(tag.includeAll).toBe(true);
    expect(tag.multi).toBe(false);
    expect(tag.allValue).toBe('^$');
  });

  it('substitutes each variable with its All value by default', () => {
    const variables = built.flatMap((b) => b.json.templating.list.filter((x) => x.type === 'query'));
    expect(variables.length).toBeGreaterThan(0);
    for (const v of variables) {
      expect(v.datasource?.uid).toBe('${datasource}');
      expect(DEFAULT_VARIABLE_VALUES[v.name], v.name).toBe(v.allValue);
    }
  });
});

describe('panels', () => {
  /** Each row's title with the titles of the panels under it, top to bottom ('' before the first row). */
  const rows = (uid: string): Array<[string, string[]]> => {
    const out: Array<[string, string[]]> = [['', []]];
    for (const p of byUid(uid).panels) {
      if (p.type === 'row') out.push([p.title ?? '', (p.panels ?? []).map((x) => x.title ?? '')]);
      else out.at(-1)![1].push(p.title ?? '');
    }
    return out;
  };

  it('covers Vitals, alerts and devices on the overview, each in its row', () => {
    expect(Object.fromEntries(rows(OVERVIEW_UID))).toMatchObject({
      Vitals: expect.arrayContaining(['Health ratio per integration', 'Stage compliance trends']),
      'Funnel per integration': ['Funnel: $integration'],
      Alerts: expect.arrayContaining(['Open alerts by severity', 'Open alerts by integration', 'Oldest open red alert']),
      Response: ['Time to resolve, last 7 days: p50 and p90', 'Time to acknowledge, last 7 days: p50 and p90', 'Mean time to resolve and to acknowledge, last 7 days', 'Resolved over SLA, last 7 days'],
      Devices: expect.arrayContaining(['Active and inactive devices']),
    });
    const funnel = flatPanels(byUid(OVERVIEW_UID)).find((p) => p.title === 'Funnel: $integration')!;
    expect(funnel.repeat).toBe('integration');
    // Funnel order: eligible then compliant for deployment, function, configuration.
    expect(funnel.targets!.map((t) => /stage="(\w+)"/.exec(t.expr!)![1] + ' ' + /posture_vitals_(\w+)_devices/.exec(t.expr!)![1])).toEqual([
      'deployment eligible', 'deployment compliant', 'function eligible', 'function compliant', 'configuration eligible', 'configuration compliant',
    ]);
  });

  it('covers the exporter health, collection and the API budget each in its row', () => {
    expect(Object.fromEntries(rows(EXPORTER_UID))).toMatchObject({
      Collection: expect.arrayContaining(['Collection success per source', 'Age of the last successful collection', 'Invalid records per source', 'Run duration per source']),
      'Portal API budget': expect.arrayContaining(['API requests per minute', 'Rate-limited requests (429) per run', 'Alerts page size', 'Share of the portal budget (requests per 60 s)', '429 responses in the last hour']),
    });
  });

  it('covers each objective\'s budget, burn rates and compliance, and the alerts against their SLAs, each in its row', () => {
    expect(rows(OBJECTIVES_UID)).toEqual([
      ['', []],
      ['Error budget', ['Error budget remaining', 'Error budget remaining over time']],
      ['Burn rate', ['Burn rate over the alert windows', 'Burn rate now, every window (worst integration)']],
      ['Compliance (SLI)', ['Compliance over the objective\'s window', 'Compliance over the last day']],
      ['Alert SLAs', ['Alerts over SLA', 'Open alerts by age', 'Oldest unacknowledged alert']],
    ]);
  });

  const objectiveQueries = (title: string) => allDashboardQueries().filter((x) => x.dashboard === OBJECTIVES_UID && x.source === title).map((x) => x.expr);
  const sel = '{objective=~"$objective",portal=~"$portal",integration=~"$integration"}';
  const budget = '(1 - posture:objective_target:ratio{objective=~"$objective"})';

  it('computes burn rates as the error ratio over each window divided by 1 - target, the long windows of the alerts over time and every window now', () => {
    const burn = (w: string) => `max by (objective, portal, integration) (posture:objective_error_ratio:rate${w}${sel}) / on (objective) group_left () ${budget}`;
    expect(objectiveQueries('Burn rate over the alert windows')).toEqual(['1h', '6h', '1d', '3d'].map(burn));
    expect(objectiveQueries('Burn rate now, every window (worst integration)')).toEqual(['5m', '30m', '1h', '2h', '6h', '1d', '3d'].map((w) => `max by (objective) (${burn(w)})`));
  });

  it('computes the SLI over the objective\'s window from the budget left and the target (1 - (1 - budget left) × (1 - target)), beside the target', () => {
    expect(objectiveQueries('Compliance over the objective\'s window')).toEqual([
      `1 - (1 - min by (objective, portal, integration) (posture:objective_error_budget_remaining:ratio${sel})) * on (objective) group_left () ${budget}`,
      'max by (objective) (posture:objective_target:ratio{objective=~"$objective"})',
    ]);
  });

  it('shows every age bucket of open alerts, shortest first, and the alerts over SLA and oldest unacknowledged by severity', () => {
    expect(objectiveQueries('Open alerts by age').map((e) => /age="(\w+)"/.exec(e)![1])).toEqual(['1h', '1d', '7d', '30d', '90d']);
    expect(objectiveQueries('Alerts over SLA')).toEqual(['sum by (severity) (max by (portal, severity) (posture_alerts_over_sla{portal=~"$portal"}))']);
    expect(objectiveQueries('Oldest unacknowledged alert')).toEqual(['time() - min by (severity) (posture_alerts_oldest_unacknowledged_timestamp_seconds{portal=~"$portal"})']);
  });

  const overviewQueries = (title: string) => allDashboardQueries().filter((x) => x.dashboard === OVERVIEW_UID && x.source === title).map((x) => x.expr);
  // The last pass within two hours: an hourly pass and one missed, as the response recordings bridge it.
  const lastPass = (metric: string, more = '') => `max by (portal, severity) (last_over_time(${metric}{portal=~"$portal",window="7d"${more}}[2h]))`;
  const perSeverity = (metric: string) => `sum by (severity) (${lastPass(metric)})`;

  it('bridges the pass\'s families over the same two hours as the response recordings', () => {
    const bridges = loadRuleExpressions().filter((r) => r.group === 'posture-exporter-response' && r.kind === 'record').map((r) => [...r.expr.matchAll(/last_over_time\([^[]+\[(\w+)\]\)/g)].map((m) => m[1]));
    expect(new Set(bridges.flat())).toEqual(new Set([PASS_BRIDGE]));
    const response = rows(OVERVIEW_UID).find(([row]) => row === 'Response')![1];
    const exprs = response.flatMap(overviewQueries);
    expect(exprs.length).toBeGreaterThan(0);
    // Every read of a pass family within the bridge, never a raw selector, which pushed data would show as a blip.
    for (const expr of exprs) expect(expr.replaceAll(/last_over_time\(posture_alerts_\w+\{[^}]*\}\[2h\]\)/g, ''), expr).not.toMatch(/posture_alerts_/);
  });

  it('has an Access row that reads the access settings within the 2h bridge and the directory within 25h, never raw, and the rules\' recordings for what they alert on', () => {
    const access = rows(OVERVIEW_UID).find(([row]) => row === 'Access')![1];
    expect(access).toEqual(['Enabled portal accounts by role', 'Privileged accounts without MFA or SSO', 'Enabled superAdmins', 'Managing permissions per role', 'Team members', 'Directory users inactive', 'Directory users and failed logins']);
    const exprs = access.flatMap(overviewQueries);
    for (const expr of exprs) {
      const rest = expr.replaceAll(/last_over_time\(posture_portal_\w+\{[^}]*\}\[2h\]\)/g, '').replaceAll(/last_over_time\(posture_directory_\w+\{[^}]*\}\[25h\]\)/g, '');
      expect(rest, expr).not.toMatch(/(?<![:\w])posture_(portal|directory)_/);
    }
    const recorded = new Set(loadRuleExpressions().filter((r) => r.group === 'posture-exporter-access' && r.kind === 'record').map((r) => r.name));
    for (const name of ['portal_role:posture_portal_users:enabled_without_mfa_last2h', 'portal_role:posture_portal_role_permission:privileged_last2h', 'portal:posture_portal_users:superadmins_enabled_last2h', 'portal_days:posture_directory_users_inactive:ratio']) {
      expect(recorded.has(name), name).toBe(true);
      expect(exprs.some((e) => e.includes(name)), name).toBe(true);
    }
  });

  it('shows p50 and p90 of the times to resolve and to acknowledge per portal and severity, over the last 7 days', () => {
    for (const [title, action] of [['Time to resolve, last 7 days: p50 and p90', 'resolve'], ['Time to acknowledge, last 7 days: p50 and p90', 'acknowledge']]) {
      expect(overviewQueries(title!)).toEqual(['50', '90'].map((p) => lastPass(`posture_alerts_time_to_${action}_seconds`, `,percentile="${p}"`)));
    }
  });

  it('averages the portals\' means weighted by their alerts per severity, never dividing by 0', () => {
    expect(overviewQueries('Mean time to resolve and to acknowledge, last 7 days')).toEqual(['resolve', 'acknowledge'].map((what) => {
      const alerts = `posture_alerts_time_to_${what}_alerts`;
      return `sum by (severity) (${lastPass(`posture_alerts_time_to_${what}_mean_seconds`)} * ${lastPass(alerts)}) / (${perSeverity(alerts)} > 0)`;
    }));
  });

  it('shows the share resolved over SLA as PostureAlertsResolvedOverSla reads it, beside the counts', () => {
    expect(overviewQueries('Resolved over SLA, last 7 days')).toEqual([
      `${perSeverity('posture_alerts_resolved_over_sla')} / (${perSeverity('posture_alerts_time_to_resolve_alerts')} > 0)`,
      perSeverity('posture_alerts_resolved_over_sla'),
      perSeverity('posture_alerts_resolved'),
    ]);
    const rule = loadRuleExpressions().find((r) => r.name === 'PostureAlertsResolvedOverSla')!;
    const threshold = Number(/> (\d+(?:\.\d+)?)$/.exec(rule.expr)![1]);
    const panel = flatPanels(byUid(OVERVIEW_UID)).find((p) => p.title === 'Resolved over SLA, last 7 days') as Panel & { fieldConfig: { defaults: { thresholds: { steps: Array<{ value: number | null }> } } } };
    expect(panel.fieldConfig.defaults.thresholds.steps.map((x) => x.value)).toEqual([null, threshold]);
  });

  it('shows each source\'s age against the threshold PostureCollectionFailing judges it by (twice its interval plus the rule\'s margin)', () => {
    const stale = loadRuleExpressions().find((r) => r.name === 'PostureCollectionFailing' && r.labels.reason === 'stale')!;
    const [, factor, margin] = /> on \(portal, source\) (\d+) \* portal_source:posture_collection_interval_seconds:last3d \+ (\d+)/.exec(stale.expr)!;
    const records = new Map(loadRuleExpressions().filter((r) => r.kind === 'record').map((r) => [r.name, r.expr]));
    const selected = (expr: string) => expr.replace('posture_collection_last_success_timestamp_seconds[', 'posture_collection_last_success_timestamp_seconds{portal=~"$portal"}[').replace('posture_collection_interval_seconds[', 'posture_collection_interval_seconds{portal=~"$portal"}[');
    const age = `time() - ${selected(records.get('portal_source:posture_collection_last_success_timestamp_seconds:max3d')!)}`;
    const threshold = `${factor} * ${selected(records.get('portal_source:posture_collection_interval_seconds:last3d')!)} + ${margin}`;
    const q = allDashboardQueries().filter((x) => x.dashboard === EXPORTER_UID && x.source === 'Age of the last successful collection');
    expect(q.map((x) => x.expr)).toEqual([`(${age}) / on (portal, source) (${threshold})`]);
    const panel = flatPanels(byUid(EXPORTER_UID)).find((p) => p.title === 'Age of the last successful collection') as Panel & { fieldConfig: { defaults: { unit: string; thresholds: { steps: Array<{ value: number | null }> } } } };
    expect(panel.fieldConfig.defaults.unit).toBe('percentunit');
    expect(panel.fieldConfig.defaults.thresholds.steps.map((x) => x.value)).toEqual([null, 1]);
  });

  it('reads the per-source health gauges of a source slower than 15 min (pushed once a run) within the 2h bridge, one slower than 2 h (the daily directory) within 25 h, and the others raw', () => {
    const slow = '(max by (portal, source) (last_over_time(posture_collection_interval_seconds{portal=~"$portal"}[2h])) > 900)';
    const daily = '(max by (portal, source) (last_over_time(posture_collection_interval_seconds{portal=~"$portal"}[2h])) > 7200)';
    const exporterQueries = (title: string) => allDashboardQueries().filter((x) => x.dashboard === EXPORTER_UID && x.source === title).map((x) => x.expr);
    for (const [title, metric, agg] of [
      ['Collection success per source', 'posture_collection_success', 'min'],
      ['Run duration per source', 'posture_collection_duration_seconds', 'max'],
      ['Invalid records per source', 'posture_collection_invalid_records', 'max'],
    ] as const) {
      expect(exporterQueries(title), title).toEqual([
        `(${agg} by (portal, source) (${metric}{portal=~"$portal"}) unless on (portal, source) ${slow}) or (${agg} by (portal, source) (last_over_time(${metric}{portal=~"$portal"}[2h])) and on (portal, source) (${slow} unless on (portal, source) ${daily})) or (${agg} by (portal, source) (last_over_time(${metric}{portal=~"$portal"}[25h])) and on (portal, source) ${daily})`,
      ]);
    }
    expect(SPAN_NULLS_MS).toBe(900_000);
  });

  it('computes the oldest red alert age from its creation timestamp', () => {
    const q = allDashboardQueries().find((x) => x.source === 'Oldest open red alert')!;
    expect(q.expr).toMatch(/^time\(\) - min by \(portal\) \(posture_alerts_oldest_open_timestamp_seconds\{[^}]*severity="red"[^}]*\}\)$/);
  });
});

describe('queries', () => {
  const queries = allDashboardQueries();
  const catalogue = new Set<string>(CATALOGUE.map((m) => m.name));

  it('lists panel, variable and annotation queries of every dashboard', () => {
    expect(new Set(queries.map((q) => q.dashboard))).toEqual(new Set([OVERVIEW_UID, EXPORTER_UID, OBJECTIVES_UID]));
    expect(new Set(queries.map((q) => q.kind))).toEqual(new Set(['panel', 'variable', 'annotation']));
    const panelTargets = built.flatMap((b) => flatPanels(b.json)).flatMap((p) => p.targets ?? []);
    expect(queries.filter((q) => q.kind === 'panel')).toHaveLength(panelTargets.length);
  });

  it('reads the same queries from the committed JSON as from the code', () => {
    const fromFiles = DASHBOARDS.flatMap((s) => dashboardQueries(JSON.parse(committed(s.file))));
    expect(fromFiles).toEqual(queries);
  });

  it('reads only catalogue metrics, series the shipped rules record (and ALERTS), and every catalogue metric is on some dashboard', () => {
    const used = new Set(queries.flatMap((q) => metricNames(q.expr)));
    const recorded = new Set(loadRuleExpressions().filter((r) => r.kind === 'record').map((r) => r.name));
    expect(recorded).toContain('posture:objective_target:ratio');
    for (const name of used) expect(name === 'ALERTS' || catalogue.has(name) || recorded.has(name), `unknown metric ${name}`).toBe(true);
    expect([...used].filter((n) => recorded.has(n)).sort()).toEqual(expect.arrayContaining(['posture:objective_error_budget_remaining:ratio', 'posture:objective_target:ratio']));
    for (const name of catalogue) expect(used.has(name), `${name} is on no dashboard`).toBe(true);
  });

  it.each(queries.map((q) => [`${q.dashboard} / ${q.source} ${q.refId}`, q]))('%s leaves no variable behind once substituted', (_name, q) => {
    const expr = substituteVariables(q.expr);
    expect(unresolvedVariables(expr)).toEqual([]);
    // Cheap structural checks; the end-to-end test runs them against Prometheus.
    let depth = 0;
    for (const ch of expr.replace(/"(?:[^"\\]|\\.)*"/g, '""')) {
      if ('({['.includes(ch)) depth++;
      if (')}]'.includes(ch)) depth--;
      expect(depth).toBeGreaterThanOrEqual(0);
    }
    expect(depth).toBe(0);
    expect((expr.match(/(?<!\\)"/g) ?? []).length % 2).toBe(0);
  });
});

describe('substituteVariables', () => {
  itMaps('%s -> %s', (expr: string) => substituteVariables(expr), [
    ['up{portal=~"$portal"}', 'up{portal=~".*"}'],
    ['up{portal=~"${portal}"}', 'up{portal=~".*"}'],
    ['up{portal=~"${portal:regex}"}', 'up{portal=~".*"}'],
    ['up{portal=~"[[portal]]"}', 'up{portal=~".*"}'],
    ['x{tag=~"$tag"}', 'x{tag=~"^$"}'],
    ['rate(x[$__rate_interval])', 'rate(x[5m])'],
    ['max_over_time(x[$__range])', 'max_over_time(x[1h])'],
    ['x / $__range_s', 'x / 3600'],
    ['x[$__interval]', 'x[1m]'],
    ['label_replace(x, "a", "$1", "b", "(.*)")', 'label_replace(x, "a", "$1", "b", "(.*)")'],
  ]);

  it('takes overrides and leaves unknown variables for unresolvedVariables to report', () => {
    expect(substituteVariables('x{portal=~"$portal",tag=~"$tag"}', { portal: 'acme', tag: 'servers' })).toBe('x{portal=~"acme",tag=~"servers"}');
    expect(substituteVariables('x{a="$mystery"}')).toBe('x{a="$mystery"}');
    expect(unresolvedVariables('x{a="$mystery",b="${other}"}')).toEqual(['mystery', 'other']);
  });
});

describe('variableQueryToPromQL', () => {
  itMaps('%s -> %s', variableQueryToPromQL, [
    ['label_values(posture_collection_success, portal)', 'group by (portal) (posture_collection_success)'],
    ['label_values(posture_vitals_integration_info{portal=~"$portal",vitals_enabled="true"}, integration)', 'group by (integration) (posture_vitals_integration_info{portal=~"$portal",vitals_enabled="true"})'],
    ['label_values(portal)', 'group by (portal) ({portal!=""})'],
    ['query_result(max by (portal) (up))', 'max by (portal) (up)'],
    ['up', 'up'],
  ]);
});

describe('provisioning', () => {
  it('provisions a Prometheus data source', () => {
    const doc = parse(readFileSync(join(GRAFANA_DIR, 'provisioning/datasources/prometheus.yml'), 'utf8')) as { apiVersion: number; datasources: Array<{ type: string; url: string; uid: string }> };
    expect(doc.apiVersion).toBe(1);
    expect(doc.datasources).toHaveLength(1);
    expect(doc.datasources[0]!.type).toBe('prometheus');
    expect(doc.datasources[0]!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('provisions the dashboards from a directory of files', () => {
    const doc = parse(readFileSync(join(GRAFANA_DIR, 'provisioning/dashboards/posture.yml'), 'utf8')) as { apiVersion: number; providers: Array<{ type: string; options: { path: string } }> };
    expect(doc.apiVersion).toBe(1);
    expect(doc.providers[0]!.type).toBe('file');
    expect(doc.providers[0]!.options.path).toMatch(/^\//);
  });
});
