import * as common from '@grafana/grafana-foundation-sdk/common';
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import type * as bargauge from '@grafana/grafana-foundation-sdk/bargauge';
import type * as stat from '@grafana/grafana-foundation-sdk/stat';
import type * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import { ALERT_WINDOWS, BUDGET_REMAINING, OBJECTIVE_TARGET, errorRatioName } from '../../../src/objectives/rules.js';
import { ALERT_AGES } from '../../../src/sources/alerts/fold.js';
import {
  DASHBOARD_TAG,
  PORTAL,
  SPAN_NULLS_MS,
  alertAgeStat,
  barGaugePanel,
  fixedColor,
  integrationVariable,
  objectiveVariable,
  panelSpec,
  postureDashboard,
  promQuery,
  severityStack,
  thresholds,
  timeSeriesPanel,
  withAlertLine,
} from './common.js';

/** Stable uid of the posture objectives dashboard. */
export const OBJECTIVES_UID = 'posture-objectives';

/** Matchers for the objective recordings: objective, portal and integration variables. */
const OBJECTIVE = 'objective=~"$objective",portal=~"$portal",integration=~"$integration"';

/** The error budget of each chosen objective, 1 - target (the target is recorded per objective). */
const BUDGET = `(1 - ${OBJECTIVE_TARGET}{objective=~"$objective"})`;

/** The long windows of the burn-rate alerts' pairs (1h and 6h page, 1d and 3d ticket). */
const LONG_WINDOWS = ['1h', '6h', '1d', '3d'] as const;

/** The budget left per objective, portal and integration (deduplicated over rule evaluators). */
const budgetLeft = `min by (objective, portal, integration) (${BUDGET_REMAINING}{${OBJECTIVE}})`;

/** Burn rate over `window` per objective, portal and integration: the error ratio as a multiple of the budget. */
const burnRate = (window: string): string => `max by (objective, portal, integration) (${errorRatioName(window)}{${OBJECTIVE}}) / on (objective) group_left () ${BUDGET}`;

const refId = (i: number): string => String.fromCharCode(65 + i);

function budgetNow(): bargauge.PanelBuilder {
  return barGaugePanel({
    title: 'Error budget remaining',
    description: 'Share of the error budget left over the objective\'s window, per integration: 1 untouched, 0 spent (PostureObjectiveBudgetExhausted fires at or below 0), below 0 overspent.',
    targets: [promQuery('A', `sort(${budgetLeft})`, '{{objective}} · {{portal}} · {{integration}}', true)],
    size: { h: 9, w: 10 },
  })
    .unit('percentunit')
    .min(-1)
    .max(1)
    .thresholds(thresholds('red', [0.001, 'orange'], [0.25, 'green']));
}

function budgetOverTime(): timeseries.PanelBuilder {
  const panel = timeSeriesPanel({
    title: 'Error budget remaining over time',
    description: 'The budget left over the objective\'s window, per integration. Below the dashed line the budget is spent.',
    targets: [promQuery('A', budgetLeft, '{{objective}} · {{portal}} · {{integration}}')],
    size: { h: 9, w: 14 },
  });
  return withAlertLine(panel.unit('percentunit').max(1), thresholds('red', [0, 'green']));
}

function burnRateOverTime(): timeseries.PanelBuilder {
  return timeSeriesPanel({
    title: 'Burn rate over the alert windows',
    description:
      'Error ratio over 1h, 6h, 1d and 3d divided by the error budget (1 - target): 1 spends exactly the budget over the objective\'s window. These are the long windows of PostureObjectiveBurnRate for a 30d objective, which pages above 14.4 (1h) or 6 (6h) and tickets above 3 (1d) or 1 (3d) when the short window agrees; for another window the factors stay and the windows scale with it (56m, 5h36m, 22h24m and 2d19h12m at 28d; the rule file\'s header and check-config list each objective\'s).',
    targets: LONG_WINDOWS.map((w, i) => promQuery(refId(i), burnRate(w), `{{objective}} · {{portal}} · {{integration}} · ${w}`)),
    size: { h: 9, w: 16 },
  })
    .unit('none')
    .decimals(2)
    .min(0)
    .spanNulls(SPAN_NULLS_MS);
}

function burnRateNow(): bargauge.PanelBuilder {
  return barGaugePanel({
    title: 'Burn rate now, every window (worst integration)',
    description: 'The highest burn rate among the chosen integrations over each recorded window, 5m to 3d.',
    targets: ALERT_WINDOWS.map((w, i) => promQuery(refId(i), `max by (objective) (${burnRate(w)})`, `{{objective}} · ${w}`, true)),
    size: { h: 9, w: 8 },
  })
    .unit('none')
    .decimals(2)
    .thresholds(thresholds('green', [1, 'orange']));
}

function sliOverWindow(): timeseries.PanelBuilder {
  // 1 - error ratio over the window, which is (1 - budget left) × (1 - target): the window's own
  // recording is named after a window the dashboard does not know (rate28d, rate7d…).
  const sli = `1 - (1 - ${budgetLeft}) * on (objective) group_left () ${BUDGET}`;
  return timeSeriesPanel({
    title: 'Compliance over the objective\'s window',
    description: 'The SLI: compliant / eligible devices of the objective\'s stage, summed over every sample of its window (device-weighted), per integration; the dashed line is the target.',
    targets: [
      promQuery('A', sli, '{{objective}} · {{portal}} · {{integration}}'),
      promQuery('B', `max by (objective) (${OBJECTIVE_TARGET}{objective=~"$objective"})`, '{{objective}} target'),
    ],
    size: { h: 9, w: 16 },
  })
    .unit('percentunit')
    .max(1)
    .spanNulls(SPAN_NULLS_MS)
    .overrideByRegexp('.* target$', [...fixedColor('red'), { id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } }]);
}

function sliLastDay(): bargauge.PanelBuilder {
  return barGaugePanel({
    title: 'Compliance over the last day',
    description: 'Compliant / eligible devices of each objective\'s stage over the last 24 hours, per integration, lowest first.',
    targets: [promQuery('A', `sort(1 - max by (objective, portal, integration) (${errorRatioName('1d')}{${OBJECTIVE}}))`, '{{objective}} · {{portal}} · {{integration}}', true)],
    size: { h: 9, w: 8 },
  })
    .unit('percentunit')
    .max(1);
}

const OVER_SLA = 'Unresolved, unsnoozed alerts open longer than their severity\'s SLA (the exporter\'s alert_slas, default red 1d, amber 7d, green 30d), stacked by severity. PostureAlertsOverSla fires after 15 minutes above 0.';
const alertsOverSla = (): timeseries.PanelBuilder =>
  severityStack(panelSpec('Alerts over SLA', OVER_SLA, { h: 9, w: 10 }, promQuery('A', `sum by (severity) (max by (portal, severity) (posture_alerts_over_sla{${PORTAL}}))`, '{{severity}}')));

/** Open alerts older than `age` per severity over the chosen portals. */
const olderThan = (age: string): string => `sum by (severity) (max by (portal, severity) (posture_alerts_open_older_than{${PORTAL},age="${age}"}))`;
const BY_AGE = 'Unresolved alerts (snoozed ones included) created more than 1 hour, 1 day, 7, 30 and 90 days ago, by severity; each bucket holds the older ones too.';
const alertsByAge = (): bargauge.PanelBuilder =>
  barGaugePanel(panelSpec('Open alerts by age', BY_AGE, { h: 9, w: 8 }, ...ALERT_AGES.map(([age], i) => promQuery(refId(i), olderThan(age), `{{severity}} · older than ${age}`, true)))).thresholds(thresholds('blue'));

const UNACKNOWLEDGED = 'How long ago the oldest unresolved alert nobody has acknowledged was created, by severity.';
const oldestUnacknowledged = (): stat.PanelBuilder =>
  alertAgeStat(
    panelSpec('Oldest unacknowledged alert', UNACKNOWLEDGED, { h: 9, w: 6 }, promQuery('A', `time() - min by (severity) (posture_alerts_oldest_unacknowledged_timestamp_seconds{${PORTAL}})`, '{{severity}}', true)),
    'none unacknowledged',
    common.BigValueTextMode.ValueAndName,
  );

/** Posture objectives: error budget, burn rates and compliance per objective, and the alert SLAs. */
export function objectivesDashboard(): dashboard.Dashboard {
  const spec = {
    title: 'Posture objectives',
    uid: OBJECTIVES_UID,
    description: 'Error budgets, burn rates and compliance of the posture objectives (rules from posture-exporter rules), and open alerts against their SLAs.',
    tags: [DASHBOARD_TAG, 'security', 'slo'],
    from: 'now-7d',
    refresh: '5m',
  };
  return postureDashboard({ ...spec, variables: [objectiveVariable(), integrationVariable()] }, [
    'Error budget',
    ...[budgetNow(), budgetOverTime()],
    'Burn rate',
    ...[burnRateOverTime(), burnRateNow()],
    'Compliance (SLI)',
    ...[sliOverWindow(), sliLastDay()],
    'Alert SLAs',
    ...[alertsOverSla(), alertsByAge(), oldestUnacknowledged()],
  ]);
}
