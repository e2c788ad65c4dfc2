import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as common from '@grafana/grafana-foundation-sdk/common';
import type * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import * as bargauge from '@grafana/grafana-foundation-sdk/bargauge';
import type * as stat from '@grafana/grafana-foundation-sdk/stat';
import { STAGES } from '../../../src/domain.js';
import {
  DASHBOARD_TAG,
  DATASOURCE,
  PORTAL,
  PASS_BRIDGE,
  SPAN_NULLS_MS,
  VITALS,
  alertAgeStat,
  barGaugePanel,
  fixedColor,
  integrationVariable,
  lastNotNull,
  panelSpec,
  postureDashboard,
  promQuery,
  quantityOverTime,
  severityStack,
  stackedCounts,
  statPanel,
  tagVariable,
  thresholds,
  timeSeriesPanel,
  valueMapping,
  withAlertLine,
} from './common.js';
import { accessRow } from './access.js';

/** Stable uid of the posture overview dashboard. */
export const OVERVIEW_UID = 'posture-overview';

// Health-ratio thresholds drawn on the panels: the same numbers as PostureVitalsHealthLow and
// PostureVitalsHealthRegression in infra/prometheus/rules/posture.rules.yml.
const HEALTH_LOW = 0.9;
const HEALTH_DROP = 0.05;
// The share of alerts resolved over SLA in 7 days that fires PostureAlertsResolvedOverSla.
const RESOLVED_OVER_SLA_SHARE = 0.2;

/** Matchers of the Response row: the chosen portals, the week PostureAlertsResolvedOverSla reads. */
const RESPONSE = `${PORTAL},window="7d"`;

function healthRatio(): timeseries.PanelBuilder {
  const panel = timeSeriesPanel({
    title: 'Health ratio per integration',
    description: 'configurationCompliant / agentDeployedPossibleCompliant for the chosen view (tag All = whole portal). The dashed line is the PostureVitalsHealthLow threshold.',
    targets: [promQuery('A', `max by (portal, integration) (posture_vitals_health_ratio{${VITALS}})`, '{{portal}} · {{integration}}')],
    size: { h: 9, w: 12 },
  });
  return withAlertLine(panel.unit('percentunit').min(0).max(1), thresholds('red', [HEALTH_LOW, 'green']));
}

function healthChange(): timeseries.PanelBuilder {
  const now = `max by (portal, integration) (posture_vitals_health_ratio{${VITALS}})`;
  const dayAgo = `max by (portal, integration) (posture_vitals_health_ratio{${VITALS}} offset 24h)`;
  const panel = timeSeriesPanel({
    title: 'Health ratio change against 24 hours earlier',
    description: 'Ratio points gained or lost since the same time yesterday. Below the dashed line for 30 minutes, PostureVitalsHealthRegression fires.',
    targets: [promQuery('A', `${now} - ${dayAgo}`, '{{portal}} · {{integration}}')],
    size: { h: 9, w: 12 },
  });
  return withAlertLine(panel.unit('percentunit'), thresholds('red', [-HEALTH_DROP, 'green']));
}

/**
 * One bar gauge per integration (repeated), bars in funnel order: eligible then compliant per stage.
 * Built in full rather than with barGaugePanel: the repeat settings come before the options.
 */
function funnel(): bargauge.PanelBuilder {
  const panel = new bargauge.PanelBuilder()
    .title('Funnel: $integration')
    .description('Devices eligible and compliant at each Vitals stage, in funnel order. Each stage only evaluates devices that passed the previous one.')
    .datasource(DATASOURCE)
    .repeat('integration')
    .repeatDirection('h')
    .maxPerRow(3)
    .displayMode(common.BarGaugeDisplayMode.Basic)
    .orientation(common.VizOrientation.Horizontal)
    .namePlacement(common.BarGaugeNamePlacement.Left)
    .showUnfilled(true)
    .min(0)
    .unit('short')
    .reduceOptions(lastNotNull())
    .overrideByRegexp('.*eligible$', fixedColor('blue'))
    .overrideByRegexp('.*compliant$', fixedColor('green'))
    .height(8)
    .span(8);
  let ref = 0;
  for (const { stage } of STAGES) {
    for (const kind of ['eligible', 'compliant'] as const) {
      const refId = String.fromCharCode(65 + ref++);
      const expr = `max by (portal, integration, stage) (posture_vitals_${kind}_devices{${VITALS},stage="${stage}"})`;
      panel.withTarget(promQuery(refId, expr, `{{portal}} · ${stage} ${kind}`, true));
    }
  }
  return panel;
}

function stageCompliance(): timeseries.PanelBuilder {
  const compliant = `max by (portal, integration, stage) (posture_vitals_compliant_devices{${VITALS}})`;
  const eligible = `max by (portal, integration, stage) (posture_vitals_eligible_devices{${VITALS}} > 0)`;
  return timeSeriesPanel({
    title: 'Stage compliance trends',
    description: 'Compliant / eligible at each stage. A stage falling while the one before it holds points at that control (PostureVitalsStageRegression).',
    targets: [promQuery('A', `${compliant} / ${eligible}`, '{{portal}} · {{integration}} · {{stage}}')],
    size: { h: 9, w: 12 },
  })
    .unit('percentunit')
    .min(0)
    .max(1)
    .spanNulls(SPAN_NULLS_MS);
}

const CONSISTENT = valueMapping({ '0': { text: 'inconsistent', color: 'red' }, '1': { text: 'consistent', color: 'green' } });

const funnelConsistency = (): stat.PanelBuilder =>
  statPanel(
    panelSpec('Funnel consistency', 'Whether each stage\'s eligible count equals the previous stage\'s compliant count (PostureVitalsFunnelInconsistent).', { h: 9, w: 6 }, promQuery('A', `min by (portal, integration) (posture_vitals_funnel_consistent{${VITALS}})`, '{{integration}}', true)),
    { mappings: [CONSISTENT] },
    { color: common.BigValueColorMode.Background, text: common.BigValueTextMode.ValueAndName },
  );

const ACTIVE_AGENTS = 'activeAgents for integrations whose Vitals monitoring is disabled (no funnel for them, so the integration variable, which lists Vitals integrations, does not apply).';
const activeAgents = (): bargauge.PanelBuilder =>
  barGaugePanel(panelSpec('Integrations without Vitals: devices', ACTIVE_AGENTS, { h: 9, w: 6 }, promQuery('A', `max by (portal, integration) (posture_vitals_active_agents{portal=~"$portal",tag=~"$tag"})`, '{{portal}} · {{integration}}', true)));

const alertsBySeverity = (): timeseries.PanelBuilder =>
  severityStack(panelSpec('Open alerts by severity', 'Unresolved alerts, stacked by severity, summed over the chosen portals.', { h: 9, w: 12 }, promQuery('A', `sum by (severity) (max by (portal, severity) (posture_alerts_open{${PORTAL}}))`, '{{severity}}')));

const BY_INTEGRATION = 'Unresolved alerts by the integration named in the alert\'s product (not filtered by the integration variable: alert products and Vitals keys are named differently).';
const alertsByIntegration = (): bargauge.PanelBuilder =>
  barGaugePanel(
    panelSpec('Open alerts by integration', BY_INTEGRATION, { h: 9, w: 12 }, promQuery('A', `sort_desc(sum by (integration) (max by (portal, integration, severity, type) (posture_alerts_open_by_integration{${PORTAL}})))`, '{{integration}}', true)),
    common.BarGaugeDisplayMode.Gradient,
  ).thresholds(thresholds('orange'));

const oldestRedAlert = (): stat.PanelBuilder =>
  alertAgeStat(
    panelSpec('Oldest open red alert', 'Age of the oldest unresolved red alert per portal (its creation time).', { h: 9, w: 6 }, promQuery('A', `time() - min by (portal) (posture_alerts_oldest_open_timestamp_seconds{${PORTAL},severity="red"})`, '{{portal}}', true)),
    'no open red alert',
  );

function redAlertWork(): timeseries.PanelBuilder {
  const red = (metric: string): string => `sum(max by (portal) (${metric}{${PORTAL},severity="red"}))`;
  return quantityOverTime(
    {
      title: 'Red alerts: open, unacknowledged, unassigned, snoozed',
      description: 'Unresolved red alerts and how many of them nobody has acknowledged or owns, or are snoozed.',
      targets: [
        promQuery('A', red('posture_alerts_open'), 'open'),
        promQuery('B', red('posture_alerts_unacknowledged'), 'unacknowledged'),
        promQuery('C', red('posture_alerts_unassigned'), 'unassigned'),
        promQuery('D', red('posture_alerts_snoozed'), 'snoozed'),
      ],
      size: { h: 9, w: 18 },
    },
    'short',
  );
}

/** The last pass's figure per portal and severity (each portal's exporters deduplicated), within PASS_BRIDGE. */
const lastPass = (metric: string, matchers: string = RESPONSE): string => `max by (portal, severity) (last_over_time(${metric}{${matchers}}[${PASS_BRIDGE}]))`;

/** A response family's figure per severity over the chosen portals: each portal's added up. */
const bySeverity = (metric: string): string => `sum by (severity) (${lastPass(metric)})`;

/** Said of every Response panel: when its figures change, and why they do not blink. */
const BETWEEN_PASSES = ' Recomputed on each resolved-alerts pass (hourly by default); between passes each panel shows the last pass (for up to 2 h, so that pushed samples, which come once a pass, draw a line).';

/**
 * The mean of a response time per severity over the chosen portals: each portal's mean weighted by
 * how many durations it is over, `sum(mean * alerts) / sum(alerts)` (absent while none).
 */
function meanOf(action: 'resolve' | 'acknowledge'): string {
  const alerts = `posture_alerts_time_to_${action}_alerts`;
  return `sum by (severity) (${lastPass(`posture_alerts_time_to_${action}_mean_seconds`)} * ${lastPass(alerts)}) / (${bySeverity(alerts)} > 0)`;
}

/** p50 and p90 of a response time per portal and severity (percentiles of several portals do not add up). */
function percentiles(spec: { title: string; description: string; action: 'resolve' | 'acknowledge' }): timeseries.PanelBuilder {
  const q = (percentile: string) => lastPass(`posture_alerts_time_to_${spec.action}_seconds`, `${RESPONSE},percentile="${percentile}"`);
  return quantityOverTime(
    {
      title: spec.title,
      description: spec.description + BETWEEN_PASSES,
      targets: [promQuery('A', q('50'), '{{portal}} · {{severity}} p50'), promQuery('B', q('90'), '{{portal}} · {{severity}} p90')],
      size: { h: 9, w: 12 },
    },
    's',
  );
}

function timeToResolve(): timeseries.PanelBuilder {
  return percentiles({
    title: 'Time to resolve, last 7 days: p50 and p90',
    description: 'Creation to resolution of the alerts resolved in the last 7 days, per portal and severity: the nearest-rank median and 90th percentile (the smallest duration that at least half, or 90 %, of them did not exceed). Absent while none was resolved.',
    action: 'resolve',
  });
}

function timeToAcknowledge(): timeseries.PanelBuilder {
  return percentiles({
    title: 'Time to acknowledge, last 7 days: p50 and p90',
    description: 'Creation to acknowledgement of the open and resolved alerts acknowledged in the last 7 days, per portal and severity (nearest-rank median and 90th percentile).',
    action: 'acknowledge',
  });
}

function meanResponse(): timeseries.PanelBuilder {
  return quantityOverTime(
    {
      title: 'Mean time to resolve and to acknowledge, last 7 days',
      description: 'Per severity over the chosen portals: each portal\'s mean weighted by how many alerts it is over (sum(mean * alerts) / sum(alerts), each portal counted once).' + BETWEEN_PASSES,
      targets: [promQuery('A', meanOf('resolve'), 'resolve · {{severity}}'), promQuery('B', meanOf('acknowledge'), 'acknowledge · {{severity}}')],
      size: { h: 9, w: 12 },
    },
    's',
  );
}

function resolvedOverSla(): timeseries.PanelBuilder {
  const panel = timeSeriesPanel({
    title: 'Resolved over SLA, last 7 days',
    description: 'Per severity, the share of the alerts resolved in the last 7 days that took longer than the severity\'s SLA (POSTURE_ALERT_SLAS). Above the dashed line for 30 minutes, PostureAlertsResolvedOverSla fires. The legend\'s table gives the counts too.' + BETWEEN_PASSES,
    targets: [
      promQuery('A', `${bySeverity('posture_alerts_resolved_over_sla')} / (${bySeverity('posture_alerts_time_to_resolve_alerts')} > 0)`, '{{severity}} share over SLA'),
      promQuery('B', bySeverity('posture_alerts_resolved_over_sla'), '{{severity}} over SLA'),
      promQuery('C', bySeverity('posture_alerts_resolved'), '{{severity}} resolved'),
    ],
    size: { h: 9, w: 12 },
  });
  return withAlertLine(panel.unit('percentunit').min(0), thresholds('green', [RESOLVED_OVER_SLA_SHARE, 'red']))
    .overrideByRegexp('.* (over SLA|resolved)$', [{ id: 'unit', value: 'short' }, { id: 'custom.axisPlacement', value: 'right' }]);
}

/** Devices per activity over the chosen portals (each portal's exporters deduplicated). */
const DEVICES = `sum by (activity) (max by (portal, activity) (posture_devices{${PORTAL}}))`;

const devices = (): timeseries.PanelBuilder =>
  stackedCounts(panelSpec('Active and inactive devices', 'Devices online within the portal\'s activity threshold (default 30 days) and the rest, stacked.', { h: 8, w: 18 }, promQuery('A', DEVICES, '{{activity}}')))
    .overrideByName('active', fixedColor('green'))
    .overrideByName('inactive', fixedColor('gray'));

const devicesNow = (): stat.PanelBuilder =>
  statPanel(panelSpec('Devices now', undefined, { h: 8, w: 6 }, promQuery('A', DEVICES, '{{activity}}', true)), { unit: 'short' }, { color: common.BigValueColorMode.None, text: common.BigValueTextMode.ValueAndName });

/** The posture overview: Vitals health and funnel, open alerts, response times, devices, access. */
export function overviewDashboard(): dashboard.Dashboard {
  const spec = { title: 'Security posture overview', uid: OVERVIEW_UID, description: 'Vitals funnel and health, open alerts, response times, devices and access from posture-exporter.', tags: [DASHBOARD_TAG, 'security'], from: 'now-7d', refresh: '5m' };
  return postureDashboard({ ...spec, variables: [integrationVariable(), tagVariable()] }, [
    'Vitals',
    ...[healthRatio(), healthChange(), stageCompliance(), funnelConsistency(), activeAgents()],
    'Funnel per integration',
    funnel(),
    'Alerts',
    ...[alertsBySeverity(), alertsByIntegration(), redAlertWork(), oldestRedAlert()],
    'Response',
    ...[timeToResolve(), timeToAcknowledge(), meanResponse(), resolvedOverSla()],
    'Devices',
    ...[devices(), devicesNow()],
    ...accessRow(),
  ]);
}
