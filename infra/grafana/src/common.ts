import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as common from '@grafana/grafana-foundation-sdk/common';
import * as prometheus from '@grafana/grafana-foundation-sdk/prometheus';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import * as bargauge from '@grafana/grafana-foundation-sdk/bargauge';
import { BUDGET_REMAINING } from '../../../src/objectives/rules.js';

/** Every query goes to the data source chosen in the `datasource` variable. */
export const DATASOURCE: dashboard.DataSourceRef = { type: 'prometheus', uid: '${datasource}' };

/** Tag shared by the posture-exporter dashboards (their links find each other by it). */
export const DASHBOARD_TAG = 'posture-exporter';

/** Matcher for the `portal` variable (regex: Grafana turns All and multi-selections into `a|b`). */
export const PORTAL = 'portal=~"$portal"';

/** Matchers for the Vitals families: portal, integration, and tag (All = whole portal, no tag label). */
export const VITALS = 'portal=~"$portal",integration=~"$integration",tag=~"$tag"';

/** A Prometheus target; range unless `instant`. */
export function promQuery(refId: string, expr: string, legend: string, instant = false): prometheus.DataqueryBuilder {
  const q = new prometheus.DataqueryBuilder().refId(refId).expr(expr).legendFormat(legend);
  return instant ? q.instant() : q.range();
}

/** The `datasource` variable: any Prometheus-compatible data source. */
function datasourceVariable(): dashboard.DatasourceVariableBuilder {
  return new dashboard.DatasourceVariableBuilder('datasource').label('Data source').type('prometheus');
}

/** A variable filled from a query on the dashboard's data source, refreshed with the time range, sorted. */
function queryVariable(name: string, label: string, query: string, description?: string): dashboard.QueryVariableBuilder {
  const variable = new dashboard.QueryVariableBuilder(name).label(label);
  // Set here, not by the caller, to keep the committed JSON's key order.
  if (description !== undefined) variable.description(description);
  return variable
    .datasource(DATASOURCE)
    .query(query)
    .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
    .sort(dashboard.VariableSort.AlphabeticalAsc);
}

/** The `portal` variable: every portal the exporter reports, several at once allowed. */
function portalVariable(): dashboard.QueryVariableBuilder {
  return queryVariable('portal', 'Portal', 'label_values(posture_collection_success, portal)').multi(true).includeAll(true).allValue('.*');
}

/** The `integration` variable: keys of the chosen portals' integrations with Vitals enabled. */
export function integrationVariable(): dashboard.QueryVariableBuilder {
  return queryVariable('integration', 'Integration', 'label_values(posture_vitals_integration_info{portal=~"$portal",vitals_enabled="true"}, integration)')
    .multi(true)
    .includeAll(true)
    .allValue('.*');
}

/** The `objective` variable: the posture objectives whose rules (posture-exporter rules) are loaded for the chosen portals. */
export function objectiveVariable(): dashboard.QueryVariableBuilder {
  return queryVariable('objective', 'Objective', `label_values(${BUDGET_REMAINING}{portal=~"$portal"}, objective)`)
    .multi(true)
    .includeAll(true)
    .allValue('.*');
}

/**
 * The `tag` variable. "All" means the whole portal: those series carry no `tag` label, which
 * `tag=~"^$"` selects; a single tag selects that tag's view. Never several (views overlap).
 */
export function tagVariable(): dashboard.QueryVariableBuilder {
  return queryVariable(
    'tag',
    'Tag (All = whole portal)',
    'label_values(posture_vitals_integration_info{portal=~"$portal"}, tag)',
    'Vitals view: All is the whole portal; a tag narrows the funnel to devices with that tag.',
  )
    .multi(false)
    .includeAll(true)
    .allValue('^$');
}

/** Grafana's own annotations (kept so the JSON round-trips through the UI unchanged). */
function builtInAnnotation(): dashboard.AnnotationQueryBuilder {
  return new dashboard.AnnotationQueryBuilder()
    .name('Annotations & Alerts')
    .datasource({ type: 'grafana', uid: '-- Grafana --' })
    .builtIn(1)
    .enable(true)
    .hide(true)
    .iconColor('rgba(0, 211, 255, 1)')
    .type('dashboard');
}

/** Marks when a posture-exporter alert (infra/prometheus/rules) was firing for the chosen portals. */
function firingAlertsAnnotation(): dashboard.AnnotationQueryBuilder {
  return new dashboard.AnnotationQueryBuilder()
    .name('Posture alerts firing')
    .datasource(DATASOURCE)
    .enable(true)
    .iconColor('red')
    .expr('ALERTS{alertname=~"Posture.*",alertstate="firing",portal=~"$portal"}');
}

/** Link to the other posture-exporter dashboards, keeping time range and variables. */
function siblingDashboardsLink(): dashboard.DashboardLinkBuilder {
  return new dashboard.DashboardLinkBuilder('posture-exporter')
    .type(dashboard.DashboardLinkType.Dashboards)
    .tags([DASHBOARD_TAG])
    .asDropdown(false)
    .includeVars(true)
    .keepTime(true);
}

/** Legend shown as a table at the bottom with last and min values. */
function tableLegend(): common.VizLegendOptionsBuilder {
  return new common.VizLegendOptionsBuilder()
    .displayMode(common.LegendDisplayMode.Table)
    .placement(common.LegendPlacement.Bottom)
    .showLegend(true)
    .calcs(['lastNotNull', 'min']);
}

/** Thresholds from a base colour and (value, colour) steps. */
export function thresholds(base: string, ...steps: Array<[number, string]>): dashboard.ThresholdsConfigBuilder {
  return new dashboard.ThresholdsConfigBuilder()
    .mode(dashboard.ThresholdsMode.Absolute)
    .steps([{ value: null, color: base }, ...steps.map(([value, color]) => ({ value, color }))]);
}

/** A value mapping from exact values to text and colour. */
export function valueMapping(options: Record<string, { text: string; color: string }>): dashboard.ValueMapping {
  return { type: dashboard.MappingType.ValueToText, options };
}

/** Override that paints the series named `name` (or matching a regex) in a fixed colour. */
export function fixedColor(color: string): dashboard.DynamicConfigValue[] {
  return [{ id: 'color', value: { mode: 'fixed', fixedColor: color } }];
}

/** Colours of the alert severities, matching the portal's own. */
const SEVERITY_COLORS: ReadonlyArray<readonly [string, string]> = [
  ['red', 'red'],
  ['amber', 'orange'],
  ['green', 'green'],
  ['unknown', 'gray'],
];

/** How long a push-mode gap may be drawn across (one push every 5 min; a missed push leaves 10). */
export const SPAN_NULLS_MS = 15 * 60 * 1000;

/**
 * How far back a panel of a slow source reads its last value: the resolved-alerts pass's interval
 * (an hour by default) and one missed run, as the response recordings do (infra/prometheus/rules).
 * Pushed (remote write, OTLP), a slow source's samples come once a run, not with every push: a raw
 * query would show a blip after each run.
 */
export const PASS_BRIDGE = '2h';

/** The bridge of a daily source (the directory): pushed, its samples come once a day; a day and an hour. */
export const DAILY_BRIDGE = '25h';

/** Thresholds drawn as a dashed line on a time series: where an alert rule fires. */
function dashedThresholds(): common.GraphThresholdsStyleConfigBuilder {
  return new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Dashed);
}

/** Series stacked on top of each other (parts of one total). */
export function normalStacking(): common.StackingConfigBuilder {
  return new common.StackingConfigBuilder().mode(common.StackingMode.Normal);
}

/** Reduce each series to its latest value (stats and bar gauges show the current state). */
export function lastNotNull(): common.ReduceDataOptionsBuilder {
  return new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false);
}

/** A panel's size on the dashboard grid: `h` rows high, `w` of the 24 columns wide. */
export interface PanelSize {
  readonly h: number;
  readonly w: number;
}

/** What each panel states for itself: title, the description behind its (i), queries, size. */
export interface PanelSpec {
  readonly title: string;
  readonly description?: string;
  readonly targets: readonly prometheus.DataqueryBuilder[];
  readonly size: PanelSize;
}

/** A panel's spec in one line: its title, the text behind its (i) (undefined: none), its size and its queries. */
export function panelSpec(title: string, description: string | undefined, size: PanelSize, ...targets: prometheus.DataqueryBuilder[]): PanelSpec {
  return { title, description, targets, size };
}

/** The builder methods the SDK's panel builders share (they have no common base type). */
interface QueryPanelBuilder<B> {
  title(title: string): B;
  description(description: string): B;
  datasource(datasource: dashboard.DataSourceRef): B;
  withTarget(target: prometheus.DataqueryBuilder): B;
}

/*
 * Key order: the SDK writes an object's keys in the order they are first set, and the committed
 * JSON has fieldConfig and options before gridPos, and each panel's field settings in the order
 * its function sets them. So these helpers set the size last (for time series, after opening
 * fieldConfig), and leave to the callers the field settings whose order differs between panels.
 */

/**
 * Title, description and the queries on the dashboard's data source: the start of every panel.
 * The size is left to the caller (see above): set it after the panel's own settings.
 */
export function queryPanel<B extends QueryPanelBuilder<B>>(panel: B, spec: PanelSpec): B {
  panel.title(spec.title);
  if (spec.description !== undefined) panel.description(spec.description);
  panel.datasource(DATASOURCE);
  for (const target of spec.targets) panel.withTarget(target);
  return panel;
}

/**
 * A time series with the table legend, at its size. Callers add unit, axis range, gap spanning
 * and style; fieldConfig is opened here so that what they add lands ahead of legend and size.
 */
export function timeSeriesPanel(spec: PanelSpec): timeseries.PanelBuilder {
  return queryPanel(new timeseries.PanelBuilder(), spec)
    .overrides([])
    .legend(tableLegend())
    .height(spec.size.h)
    .span(spec.size.w);
}

/**
 * A time series of a quantity that is never negative (counts, durations), its axis from zero and
 * push-mode gaps spanned: what most of the dashboards' time series show.
 */
export function quantityOverTime(spec: PanelSpec, unit: string): timeseries.PanelBuilder {
  return timeSeriesPanel(spec).min(0).unit(unit).spanNulls(SPAN_NULLS_MS);
}

/**
 * A time series' last field settings when an alert rule watches it: push-mode gaps spanned, and
 * the rule's threshold drawn as a dashed line. Called after the panel's unit and axis range.
 */
export function withAlertLine(panel: timeseries.PanelBuilder, steps: dashboard.ThresholdsConfigBuilder): timeseries.PanelBuilder {
  return panel.spanNulls(SPAN_NULLS_MS).thresholds(steps).thresholdsStyle(dashedThresholds());
}

/** Counts per label value stacked into their total (open alerts by severity, devices by activity). */
export function stackedCounts(spec: PanelSpec): timeseries.PanelBuilder {
  return timeSeriesPanel(spec)
    .stacking(normalStacking())
    .fillOpacity(40)
    .min(0)
    .unit('short')
    .spanNulls(SPAN_NULLS_MS);
}

/** Alert counts stacked by severity, each severity in the portal's own colour. */
export function severityStack(spec: PanelSpec): timeseries.PanelBuilder {
  const panel = stackedCounts(spec);
  for (const [severity, color] of SEVERITY_COLORS) panel.overrideByName(severity, fixedColor(color));
  return panel;
}

/** How a stat's value reads: unit, text for no value, value-to-text mappings, colour steps. */
export interface ValueFormat {
  readonly unit?: string;
  readonly noValue?: string;
  readonly mappings?: dashboard.ValueMapping[];
  readonly thresholds?: dashboard.ThresholdsConfigBuilder;
}

/** How a stat shows its value beside the name: colour mode and text mode (Grafana's defaults when unset). */
export interface StatLook {
  readonly color?: common.BigValueColorMode;
  readonly text?: common.BigValueTextMode;
}

/**
 * A stat of each series' latest value, without a sparkline, at its size, its colour and text modes
 * as `look` says. The format is a parameter, not a refinement, because field settings have to be
 * set before the options (and a stat without any has no fieldConfig at all).
 */
export function statPanel(spec: PanelSpec, format: ValueFormat = {}, look: StatLook = {}): stat.PanelBuilder {
  const panel = queryPanel(new stat.PanelBuilder(), spec);
  if (format.unit !== undefined) panel.unit(format.unit);
  if (format.noValue !== undefined) panel.noValue(format.noValue);
  if (format.mappings !== undefined) panel.mappings(format.mappings);
  if (format.thresholds !== undefined) panel.thresholds(format.thresholds);
  panel.graphMode(common.BigValueGraphMode.None).reduceOptions(lastNotNull()).height(spec.size.h).span(spec.size.w);
  if (look.color !== undefined) panel.colorMode(look.color);
  if (look.text !== undefined) panel.textMode(look.text);
  return panel;
}

/**
 * How long ago the oldest of some alerts was created (`time() - min(...timestamp...)` queries):
 * orange after an hour, red after a day, `noValue` when there is none.
 */
export function alertAgeStat(spec: PanelSpec, noValue: string, text?: common.BigValueTextMode): stat.PanelBuilder {
  return statPanel(spec, { unit: 's', noValue, thresholds: thresholds('green', [3600, 'orange'], [86400, 'red']) }, { color: common.BigValueColorMode.Value, text });
}

/** Horizontal bars of each series' latest count, from zero, at its size, drawn as `display` says. */
export function barGaugePanel(spec: PanelSpec, display: common.BarGaugeDisplayMode = common.BarGaugeDisplayMode.Basic): bargauge.PanelBuilder {
  return queryPanel(new bargauge.PanelBuilder(), spec)
    .orientation(common.VizOrientation.Horizontal)
    .reduceOptions(lastNotNull())
    .min(0)
    .unit('short')
    .height(spec.size.h)
    .span(spec.size.w)
    .displayMode(display);
}

/** What sets one posture-exporter dashboard apart from the other: name, uid, (i) text, tags, time. */
export interface DashboardSpec {
  readonly title: string;
  readonly uid: string;
  readonly description: string;
  readonly tags: string[];
  /** Start of the default time range, e.g. `now-24h`. */
  readonly from: string;
  readonly refresh: string;
  /** Variables after datasource and portal. */
  readonly variables?: readonly dashboard.QueryVariableBuilder[];
}

/** A dashboard's panels top to bottom: a panel, or a string that opens a row of that title. */
export type Layout = ReadonlyArray<cog.Builder<dashboard.Panel> | string>;

/**
 * A posture-exporter dashboard: what they share (browser time, crosshair, the link to its
 * siblings, the built-in and firing-alert annotations, the datasource and portal variables),
 * then its own variables and layout, its panels numbered.
 */
export function postureDashboard(spec: DashboardSpec, layout: Layout): dashboard.Dashboard {
  const d = new dashboard.DashboardBuilder(spec.title)
    .uid(spec.uid)
    .description(spec.description)
    .tags(spec.tags)
    .editable()
    .timezone('browser')
    .time({ from: spec.from, to: 'now' })
    .refresh(spec.refresh)
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .link(siblingDashboardsLink())
    .annotation(builtInAnnotation())
    .annotation(firingAlertsAnnotation())
    .withVariable(datasourceVariable())
    .withVariable(portalVariable());
  for (const variable of spec.variables ?? []) d.withVariable(variable);
  for (const item of layout) {
    if (typeof item === 'string') d.withRow(new dashboard.RowBuilder(item));
    else d.withPanel(item);
  }
  return numberPanels(d.build());
}

/**
 * Gives every panel (rows included) a stable id in layout order: Grafana needs unique ids for
 * links and repeats, and the SDK leaves them unset.
 */
function numberPanels(d: dashboard.Dashboard): dashboard.Dashboard {
  let next = 1;
  for (const panel of d.panels ?? []) {
    panel.id = next++;
    if (panel.type === 'row') for (const inner of (panel as dashboard.RowPanel).panels) inner.id = next++;
  }
  return d;
}
