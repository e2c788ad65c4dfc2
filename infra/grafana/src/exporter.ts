import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as common from '@grafana/grafana-foundation-sdk/common';
import type * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import * as statetimeline from '@grafana/grafana-foundation-sdk/statetimeline';
import type * as stat from '@grafana/grafana-foundation-sdk/stat';
import {
  DASHBOARD_TAG,
  PORTAL,
  SPAN_NULLS_MS,
  builtInAnnotation,
  dashedThresholds,
  datasourceVariable,
  firingAlertsAnnotation,
  normalStacking,
  numberPanels,
  portalVariable,
  promQuery,
  quantityOverTime,
  queryPanel,
  siblingDashboardsLink,
  statPanel,
  thresholds,
  timeSeriesPanel,
  valueMapping,
  type PanelSpec,
} from './common.js';

/** Stable uid of the exporter health dashboard. */
export const EXPORTER_UID = 'posture-exporter-health';

// Age after which PostureCollectionFailing fires (infra/prometheus/rules/posture.rules.yml).
const COLLECTION_STALE_SECONDS = 1800;

const OK_FAILED = valueMapping({ '0': { text: 'failed', color: 'red' }, '1': { text: 'ok', color: 'green' } });

/** A 1/0 success gauge per series over time, as green "ok" and red "failed" bands. */
function successTimeline(spec: PanelSpec): statetimeline.PanelBuilder {
  return queryPanel(new statetimeline.PanelBuilder(), spec)
    .mappings([OK_FAILED])
    .thresholds(thresholds('red', [1, 'green']))
    .showValue(common.VisibilityMode.Never)
    .mergeValues(true)
    .fillOpacity(80)
    .height(spec.size.h)
    .span(spec.size.w);
}

function collectionSuccess(): statetimeline.PanelBuilder {
  return successTimeline({
    title: 'Collection success per source',
    description: 'Whether the last collection of each source (vitals, alerts, devices) succeeded.',
    targets: [promQuery('A', `min by (portal, source) (posture_collection_success{${PORTAL}})`, '{{portal}} · {{source}}')],
    size: { h: 7, w: 12 },
  });
}

function lastSuccessAge(): timeseries.PanelBuilder {
  const expr = `time() - max by (portal, source) (posture_collection_last_success_timestamp_seconds{${PORTAL}})`;
  return timeSeriesPanel({
    title: 'Age of the last successful collection',
    description: 'Seconds since each source was last collected successfully. Above the dashed line, PostureCollectionFailing fires.',
    targets: [promQuery('A', expr, '{{portal}} · {{source}}')],
    size: { h: 7, w: 12 },
  })
    .unit('s')
    .min(0)
    .spanNulls(SPAN_NULLS_MS)
    .thresholds(thresholds('green', [COLLECTION_STALE_SECONDS, 'red']))
    .thresholdsStyle(dashedThresholds());
}

function apiRequests(): timeseries.PanelBuilder {
  return timeSeriesPanel({
    title: 'API requests per run',
    description: 'Requests the last run of each source sent to the portal, by endpoint and HTTP status (error = no response). The portal allows 10 requests per 60 s.',
    targets: [promQuery('A', `max by (portal, endpoint, code) (posture_collection_api_requests{${PORTAL}})`, '{{portal}} · {{endpoint}} {{code}}')],
    size: { h: 8, w: 12 },
  })
    .drawStyle(common.GraphDrawStyle.Bars)
    .stacking(normalStacking())
    .fillOpacity(60)
    .min(0)
    .unit('short');
}

// A run without 429s sends no code="429" series, so a healthy exporter would show "No data":
// 0 for every endpoint the exporter reports, unless a 429 series exists for it.
const ZERO_PER_ENDPOINT = `0 * group by (portal, endpoint) (posture_collection_api_requests{${PORTAL}})`;

function rateLimited(): timeseries.PanelBuilder {
  return timeSeriesPanel({
    title: 'Rate-limited requests (429) per run',
    description: 'Requests the portal answered with 429 in the last run of each source. Persistent 429s mean another client shares the portal\'s budget or the interval is too short.',
    targets: [promQuery('A', `max by (portal, endpoint) (posture_collection_api_requests{${PORTAL},code="429"}) or ${ZERO_PER_ENDPOINT}`, '{{portal}} · {{endpoint}}')],
    size: { h: 8, w: 8 },
  })
    .drawStyle(common.GraphDrawStyle.Bars)
    .min(0)
    .unit('short')
    .colorScheme(new dashboard.FieldColorBuilder().mode(dashboard.FieldColorModeId.Fixed).fixedColor('orange'));
}

function rateLimitedInRange(): stat.PanelBuilder {
  return statPanel(
    {
      title: 'Most 429s in one run (time range)',
      targets: [promQuery('A', `max by (portal) (max_over_time(posture_collection_api_requests{${PORTAL},code="429"}[$__range])) or 0 * group by (portal) (last_over_time(posture_collection_api_requests{${PORTAL}}[$__range]))`, '{{portal}}', true)],
      size: { h: 8, w: 4 },
    },
    { unit: 'short', noValue: '0', thresholds: thresholds('green', [1, 'orange']) },
  );
}

function budgetShare(): timeseries.PanelBuilder {
  return quantityOverTime(
    {
      title: 'Share of the portal budget (requests per 60 s)',
      description: 'configured: POSTURE_REQUESTS_PER_MINUTE. effective: the share in force; halved when the portal answers 429 although the exporter stayed within its share (other clients are spending the budget), won back one request per clean minute. See docs/budget.md.',
      targets: [promQuery('A', `max by (portal, kind) (posture_budget_share{${PORTAL}})`, '{{portal}} · {{kind}}')],
      size: { h: 8, w: 12 },
    },
    'short',
  );
}

function throttledLastHour(): timeseries.PanelBuilder {
  return quantityOverTime(
    {
      title: '429 responses in the last hour',
      description: 'Rate-limit answers the exporter received from the portal in the hour before each scrape (in Lambda: by the container).',
      targets: [promQuery('A', `max by (portal) (posture_budget_rate_limited_responses{${PORTAL}})`, '{{portal}}')],
      size: { h: 8, w: 12 },
    },
    'short',
  );
}

function invalidRecords(): timeseries.PanelBuilder {
  return quantityOverTime(
    {
      title: 'Invalid records per source',
      description: 'Records the last collection skipped because they did not match the API contract (logged by the exporter, never counted as zeros).',
      targets: [promQuery('A', `max by (portal, source) (posture_collection_invalid_records{${PORTAL}})`, '{{portal}} · {{source}}')],
      size: { h: 8, w: 12 },
    },
    'short',
  );
}

function seriesFolded(): timeseries.PanelBuilder {
  return quantityOverTime(
    {
      title: 'Series folded by the series cap',
      description: 'Series of a family that grows with portal data (alerts by integration, per-integration Vitals) folded into integration="__other__" by POSTURE_MAX_SERIES_PER_FAMILY; 0 when every family fits (docs/metrics.md).',
      targets: [promQuery('A', `max by (portal, family) (posture_series_folded{${PORTAL}})`, '{{portal}} · {{family}}')],
      size: { h: 8, w: 12 },
    },
    'short',
  );
}

function alertsPageSize(): timeseries.PanelBuilder {
  return quantityOverTime(
    {
      title: 'Alerts page size',
      description: 'Page size the last /alerts run used (0 = all in one request); above the configured size when the plan grew the pages to fit the share beside the other sources.',
      targets: [promQuery('A', `max by (portal) (posture_collection_alerts_page_size{${PORTAL}})`, '{{portal}}')],
      size: { h: 8, w: 12 },
    },
    'short',
  );
}

function cycleDuration(): timeseries.PanelBuilder {
  return quantityOverTime(
    {
      title: 'Run duration per source',
      description: 'Wall time of the last run of each source, waits for the budget included.',
      targets: [promQuery('A', `max by (portal, source) (posture_collection_duration_seconds{${PORTAL}})`, '{{portal}} · {{source}}')],
      size: { h: 8, w: 12 },
    },
    's',
  );
}

function pushSuccess(): statetimeline.PanelBuilder {
  return successTimeline({
    title: 'Push success per sink (push mode)',
    description: 'Whether the previous push to each sink succeeded; reported with the next push, so a sink that stays down shows as missing data. Empty in pull mode.',
    targets: [promQuery('A', `min by (portal, sink) (posture_push_success{${PORTAL}})`, '{{portal}} · {{sink}}')],
    size: { h: 7, w: 12 },
  });
}

function pushDuration(): timeseries.PanelBuilder {
  return quantityOverTime(
    {
      title: 'Push duration per sink (push mode)',
      targets: [promQuery('A', `max by (portal, sink) (posture_push_duration_seconds{${PORTAL}})`, '{{portal}} · {{sink}}')],
      size: { h: 7, w: 12 },
    },
    's',
  );
}

function buildInfo(): stat.PanelBuilder {
  return statPanel({
    title: 'Exporter version',
    targets: [promQuery('A', `max by (portal, version, runtime) (posture_exporter_build_info{${PORTAL}})`, '{{portal}}: {{version}} ({{runtime}})', true)],
    size: { h: 4, w: 24 },
  })
    .textMode(common.BigValueTextMode.Name)
    .colorMode(common.BigValueColorMode.None);
}

/** The exporter's own health: collection per source, portal API budget, data quality, pushes. */
export function exporterDashboard(): dashboard.Dashboard {
  const d = new dashboard.DashboardBuilder('posture-exporter health')
    .uid(EXPORTER_UID)
    .description('Is posture-exporter collecting, how much of the portal\'s API budget it spends, and whether its pushes land.')
    .tags([DASHBOARD_TAG])
    .editable()
    .timezone('browser')
    .time({ from: 'now-24h', to: 'now' })
    .refresh('1m')
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .link(siblingDashboardsLink())
    .annotation(builtInAnnotation())
    .annotation(firingAlertsAnnotation())
    .withVariable(datasourceVariable())
    .withVariable(portalVariable())
    .withPanel(buildInfo())
    .withRow(new dashboard.RowBuilder('Collection'))
    .withPanel(collectionSuccess())
    .withPanel(lastSuccessAge())
    .withPanel(cycleDuration())
    .withPanel(invalidRecords())
    .withPanel(seriesFolded())
    .withRow(new dashboard.RowBuilder('Portal API budget'))
    .withPanel(apiRequests())
    .withPanel(rateLimited())
    .withPanel(rateLimitedInRange())
    .withPanel(alertsPageSize())
    .withPanel(budgetShare())
    .withPanel(throttledLastHour())
    .withRow(new dashboard.RowBuilder('Push mode'))
    .withPanel(pushSuccess())
    .withPanel(pushDuration())
    .build();
  return numberPanels(d);
}
