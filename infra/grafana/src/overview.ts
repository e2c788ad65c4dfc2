import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as common from '@grafana/grafana-foundation-sdk/common';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import * as bargauge from '@grafana/grafana-foundation-sdk/bargauge';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import { STAGES } from '../../../src/metrics/catalogue.js';
import {
  DASHBOARD_TAG,
  DATASOURCE,
  PORTAL,
  SEVERITY_COLORS,
  SPAN_NULLS_MS,
  VITALS,
  builtInAnnotation,
  datasourceVariable,
  firingAlertsAnnotation,
  fixedColor,
  integrationVariable,
  numberPanels,
  portalVariable,
  promQuery,
  siblingDashboardsLink,
  tableLegend,
  tagVariable,
  thresholds,
  valueMapping,
} from './common.js';

/** Stable uid of the posture overview dashboard. */
export const OVERVIEW_UID = 'posture-overview';

// Health-ratio thresholds drawn on the panels: the same numbers as PostureVitalsHealthLow and
// PostureVitalsHealthRegression in infra/prometheus/rules/posture.rules.yml.
const HEALTH_LOW = 0.9;
const HEALTH_DROP = 0.05;

function lastNotNull(): common.ReduceDataOptionsBuilder {
  return new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false);
}

function vitalsRow(): dashboard.RowBuilder {
  return new dashboard.RowBuilder('Vitals');
}

function healthRatio(): timeseries.PanelBuilder {
  return new timeseries.PanelBuilder()
    .title('Health ratio per integration')
    .description('configurationCompliant / agentDeployedPossibleCompliant for the chosen view (tag All = whole portal). The dashed line is the PostureVitalsHealthLow threshold.')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `max by (portal, integration) (posture_vitals_health_ratio{${VITALS}})`, '{{portal}} · {{integration}}'))
    .unit('percentunit')
    .min(0)
    .max(1)
    .spanNulls(SPAN_NULLS_MS)
    .thresholds(thresholds('red', [HEALTH_LOW, 'green']))
    .thresholdsStyle(new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Dashed))
    .legend(tableLegend())
    .height(9)
    .span(12);
}

function healthChange(): timeseries.PanelBuilder {
  const now = `max by (portal, integration) (posture_vitals_health_ratio{${VITALS}})`;
  const dayAgo = `max by (portal, integration) (posture_vitals_health_ratio{${VITALS}} offset 24h)`;
  return new timeseries.PanelBuilder()
    .title('Health ratio change against 24 hours earlier')
    .description('Ratio points gained or lost since the same time yesterday. Below the dashed line for 30 minutes, PostureVitalsHealthRegression fires.')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `${now} - ${dayAgo}`, '{{portal}} · {{integration}}'))
    .unit('percentunit')
    .spanNulls(SPAN_NULLS_MS)
    .thresholds(thresholds('red', [-HEALTH_DROP, 'green']))
    .thresholdsStyle(new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Dashed))
    .legend(tableLegend())
    .height(9)
    .span(12);
}

/** One bar gauge per integration (repeated), bars in funnel order: eligible then compliant per stage. */
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
  return new timeseries.PanelBuilder()
    .title('Stage compliance trends')
    .description('Compliant / eligible at each stage. A stage falling while the one before it holds points at that control (PostureVitalsStageRegression).')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `${compliant} / ${eligible}`, '{{portal}} · {{integration}} · {{stage}}'))
    .unit('percentunit')
    .min(0)
    .max(1)
    .spanNulls(SPAN_NULLS_MS)
    .legend(tableLegend())
    .height(9)
    .span(12);
}

function funnelConsistency(): stat.PanelBuilder {
  return new stat.PanelBuilder()
    .title('Funnel consistency')
    .description('Whether each stage\'s eligible count equals the previous stage\'s compliant count (PostureVitalsFunnelInconsistent).')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `min by (portal, integration) (posture_vitals_funnel_consistent{${VITALS}})`, '{{integration}}', true))
    .mappings([valueMapping({ '0': { text: 'inconsistent', color: 'red' }, '1': { text: 'consistent', color: 'green' } })])
    .colorMode(common.BigValueColorMode.Background)
    .graphMode(common.BigValueGraphMode.None)
    .textMode(common.BigValueTextMode.ValueAndName)
    .reduceOptions(lastNotNull())
    .height(9)
    .span(6);
}

function activeAgents(): bargauge.PanelBuilder {
  return new bargauge.PanelBuilder()
    .title('Integrations without Vitals: devices')
    .description('activeAgents for integrations whose Vitals monitoring is disabled (no funnel for them, so the integration variable, which lists Vitals integrations, does not apply).')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `max by (portal, integration) (posture_vitals_active_agents{portal=~"$portal",tag=~"$tag"})`, '{{portal}} · {{integration}}', true))
    .displayMode(common.BarGaugeDisplayMode.Basic)
    .orientation(common.VizOrientation.Horizontal)
    .min(0)
    .unit('short')
    .reduceOptions(lastNotNull())
    .height(9)
    .span(6);
}

function alertsBySeverity(): timeseries.PanelBuilder {
  const panel = new timeseries.PanelBuilder()
    .title('Open alerts by severity')
    .description('Unresolved alerts, stacked by severity, summed over the chosen portals.')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `sum by (severity) (max by (portal, severity) (posture_alerts_open{${PORTAL}}))`, '{{severity}}'))
    .stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal))
    .fillOpacity(40)
    .min(0)
    .unit('short')
    .spanNulls(SPAN_NULLS_MS)
    .legend(tableLegend())
    .height(9)
    .span(12);
  for (const [severity, color] of SEVERITY_COLORS) panel.overrideByName(severity, fixedColor(color));
  return panel;
}

function alertsByIntegration(): bargauge.PanelBuilder {
  const expr = `sort_desc(sum by (integration) (max by (portal, integration, severity, type) (posture_alerts_open_by_integration{${PORTAL}})))`;
  return new bargauge.PanelBuilder()
    .title('Open alerts by integration')
    .description('Unresolved alerts by the integration named in the alert\'s product (not filtered by the integration variable: alert products and Vitals keys are named differently).')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', expr, '{{integration}}', true))
    .displayMode(common.BarGaugeDisplayMode.Gradient)
    .orientation(common.VizOrientation.Horizontal)
    .min(0)
    .unit('short')
    .reduceOptions(lastNotNull())
    .thresholds(thresholds('orange'))
    .height(9)
    .span(12);
}

function oldestRedAlert(): stat.PanelBuilder {
  return new stat.PanelBuilder()
    .title('Oldest open red alert')
    .description('Age of the oldest unresolved red alert per portal (its creation time).')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `time() - min by (portal) (posture_alerts_oldest_open_timestamp_seconds{${PORTAL},severity="red"})`, '{{portal}}', true))
    .unit('s')
    .noValue('no open red alert')
    .thresholds(thresholds('green', [3600, 'orange'], [86400, 'red']))
    .colorMode(common.BigValueColorMode.Value)
    .graphMode(common.BigValueGraphMode.None)
    .reduceOptions(lastNotNull())
    .height(9)
    .span(6);
}

function redAlertWork(): timeseries.PanelBuilder {
  const red = (metric: string): string => `sum(max by (portal) (${metric}{${PORTAL},severity="red"}))`;
  return new timeseries.PanelBuilder()
    .title('Red alerts: open, unacknowledged, unassigned, snoozed')
    .description('Unresolved red alerts and how many of them nobody has acknowledged or owns, or are snoozed.')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', red('posture_alerts_open'), 'open'))
    .withTarget(promQuery('B', red('posture_alerts_unacknowledged'), 'unacknowledged'))
    .withTarget(promQuery('C', red('posture_alerts_unassigned'), 'unassigned'))
    .withTarget(promQuery('D', red('posture_alerts_snoozed'), 'snoozed'))
    .min(0)
    .unit('short')
    .spanNulls(SPAN_NULLS_MS)
    .legend(tableLegend())
    .height(9)
    .span(18);
}

function devices(): timeseries.PanelBuilder {
  return new timeseries.PanelBuilder()
    .title('Active and inactive devices')
    .description('Devices online within the portal\'s activity threshold (default 30 days) and the rest, stacked.')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `sum by (activity) (max by (portal, activity) (posture_devices{${PORTAL}}))`, '{{activity}}'))
    .stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal))
    .fillOpacity(40)
    .min(0)
    .unit('short')
    .spanNulls(SPAN_NULLS_MS)
    .overrideByName('active', fixedColor('green'))
    .overrideByName('inactive', fixedColor('gray'))
    .legend(tableLegend())
    .height(8)
    .span(18);
}

function devicesNow(): stat.PanelBuilder {
  return new stat.PanelBuilder()
    .title('Devices now')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `sum by (activity) (max by (portal, activity) (posture_devices{${PORTAL}}))`, '{{activity}}', true))
    .unit('short')
    .colorMode(common.BigValueColorMode.None)
    .graphMode(common.BigValueGraphMode.None)
    .textMode(common.BigValueTextMode.ValueAndName)
    .reduceOptions(lastNotNull())
    .height(8)
    .span(6);
}

/** The posture overview: Vitals health and funnel, open alerts, devices. */
export function overviewDashboard(): dashboard.Dashboard {
  const d = new dashboard.DashboardBuilder('Security posture overview')
    .uid(OVERVIEW_UID)
    .description('Vitals funnel and health, open alerts and devices from posture-exporter.')
    .tags([DASHBOARD_TAG, 'security'])
    .editable()
    .timezone('browser')
    .time({ from: 'now-7d', to: 'now' })
    .refresh('5m')
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .link(siblingDashboardsLink())
    .annotation(builtInAnnotation())
    .annotation(firingAlertsAnnotation())
    .withVariable(datasourceVariable())
    .withVariable(portalVariable())
    .withVariable(integrationVariable())
    .withVariable(tagVariable())
    .withRow(vitalsRow())
    .withPanel(healthRatio())
    .withPanel(healthChange())
    .withPanel(stageCompliance())
    .withPanel(funnelConsistency())
    .withPanel(activeAgents())
    .withRow(new dashboard.RowBuilder('Funnel per integration'))
    .withPanel(funnel())
    .withRow(new dashboard.RowBuilder('Alerts'))
    .withPanel(alertsBySeverity())
    .withPanel(alertsByIntegration())
    .withPanel(redAlertWork())
    .withPanel(oldestRedAlert())
    .withRow(new dashboard.RowBuilder('Devices'))
    .withPanel(devices())
    .withPanel(devicesNow())
    .build();
  return numberPanels(d);
}
