import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as common from '@grafana/grafana-foundation-sdk/common';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import * as statetimeline from '@grafana/grafana-foundation-sdk/statetimeline';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import {
  DASHBOARD_TAG,
  DATASOURCE,
  PORTAL,
  SPAN_NULLS_MS,
  builtInAnnotation,
  datasourceVariable,
  firingAlertsAnnotation,
  numberPanels,
  portalVariable,
  promQuery,
  siblingDashboardsLink,
  tableLegend,
  thresholds,
  valueMapping,
} from './common.js';

/** Stable uid of the exporter health dashboard. */
export const EXPORTER_UID = 'posture-exporter-health';

// Age after which PostureCollectionFailing fires (infra/prometheus/rules/posture.rules.yml).
const COLLECTION_STALE_SECONDS = 1800;

const OK_FAILED = valueMapping({ '0': { text: 'failed', color: 'red' }, '1': { text: 'ok', color: 'green' } });

function collectionSuccess(): statetimeline.PanelBuilder {
  return new statetimeline.PanelBuilder()
    .title('Collection success per source')
    .description('Whether the last collection of each source (vitals, alerts, devices) succeeded.')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `min by (portal, source) (posture_collection_success{${PORTAL}})`, '{{portal}} · {{source}}'))
    .mappings([OK_FAILED])
    .thresholds(thresholds('red', [1, 'green']))
    .showValue(common.VisibilityMode.Never)
    .mergeValues(true)
    .fillOpacity(80)
    .height(7)
    .span(12);
}

function lastSuccessAge(): timeseries.PanelBuilder {
  const expr = `time() - max by (portal, source) (posture_collection_last_success_timestamp_seconds{${PORTAL}})`;
  return new timeseries.PanelBuilder()
    .title('Age of the last successful collection')
    .description('Seconds since each source was last collected successfully. Above the dashed line, PostureCollectionFailing fires.')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', expr, '{{portal}} · {{source}}'))
    .unit('s')
    .min(0)
    .spanNulls(SPAN_NULLS_MS)
    .thresholds(thresholds('green', [COLLECTION_STALE_SECONDS, 'red']))
    .thresholdsStyle(new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Dashed))
    .legend(tableLegend())
    .height(7)
    .span(12);
}

function apiRequests(): timeseries.PanelBuilder {
  return new timeseries.PanelBuilder()
    .title('API requests per cycle')
    .description('Requests the last collection cycle sent to the portal, by endpoint and HTTP status (error = no response). The portal allows 10 requests per 60 s.')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `max by (portal, endpoint, code) (posture_collection_api_requests{${PORTAL}})`, '{{portal}} · {{endpoint}} {{code}}'))
    .drawStyle(common.GraphDrawStyle.Bars)
    .stacking(new common.StackingConfigBuilder().mode(common.StackingMode.Normal))
    .fillOpacity(60)
    .min(0)
    .unit('short')
    .legend(tableLegend())
    .height(8)
    .span(12);
}

function rateLimited(): timeseries.PanelBuilder {
  return new timeseries.PanelBuilder()
    .title('Rate-limited requests (429) per cycle')
    .description('Requests the portal answered with 429 in the last cycle. Persistent 429s mean another client shares the portal\'s budget or the interval is too short.')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `max by (portal, endpoint) (posture_collection_api_requests{${PORTAL},code="429"})`, '{{portal}} · {{endpoint}}'))
    .drawStyle(common.GraphDrawStyle.Bars)
    .min(0)
    .unit('short')
    .colorScheme(new dashboard.FieldColorBuilder().mode(dashboard.FieldColorModeId.Fixed).fixedColor('orange'))
    .legend(tableLegend())
    .height(8)
    .span(8);
}

function rateLimitedInRange(): stat.PanelBuilder {
  return new stat.PanelBuilder()
    .title('Most 429s in one cycle (time range)')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `max by (portal) (max_over_time(posture_collection_api_requests{${PORTAL},code="429"}[$__range]))`, '{{portal}}', true))
    .unit('short')
    .noValue('0')
    .thresholds(thresholds('green', [1, 'orange']))
    .graphMode(common.BigValueGraphMode.None)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
    .height(8)
    .span(4);
}

function invalidRecords(): timeseries.PanelBuilder {
  return new timeseries.PanelBuilder()
    .title('Invalid records per source')
    .description('Records the last collection skipped because they did not match the API contract (logged by the exporter, never counted as zeros).')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `max by (portal, source) (posture_collection_invalid_records{${PORTAL}})`, '{{portal}} · {{source}}'))
    .min(0)
    .unit('short')
    .spanNulls(SPAN_NULLS_MS)
    .legend(tableLegend())
    .height(8)
    .span(12);
}

function alertsPageSize(): timeseries.PanelBuilder {
  return new timeseries.PanelBuilder()
    .title('Alerts page size')
    .description('Page size the last cycle used for /alerts (0 = all in one request); above the configured size when the rate budget forced larger pages.')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `max by (portal) (posture_collection_alerts_page_size{${PORTAL}})`, '{{portal}}'))
    .min(0)
    .unit('short')
    .spanNulls(SPAN_NULLS_MS)
    .legend(tableLegend())
    .height(8)
    .span(12);
}

function cycleDuration(): timeseries.PanelBuilder {
  return new timeseries.PanelBuilder()
    .title('Collection cycle duration')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `max by (portal) (posture_collection_duration_seconds{${PORTAL}})`, '{{portal}}'))
    .min(0)
    .unit('s')
    .spanNulls(SPAN_NULLS_MS)
    .legend(tableLegend())
    .height(8)
    .span(12);
}

function pushSuccess(): statetimeline.PanelBuilder {
  return new statetimeline.PanelBuilder()
    .title('Push success per sink (push mode)')
    .description('Whether the previous push to each sink succeeded; reported with the next push, so a sink that stays down shows as missing data. Empty in pull mode.')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `min by (portal, sink) (posture_push_success{${PORTAL}})`, '{{portal}} · {{sink}}'))
    .mappings([OK_FAILED])
    .thresholds(thresholds('red', [1, 'green']))
    .showValue(common.VisibilityMode.Never)
    .mergeValues(true)
    .fillOpacity(80)
    .height(7)
    .span(12);
}

function pushDuration(): timeseries.PanelBuilder {
  return new timeseries.PanelBuilder()
    .title('Push duration per sink (push mode)')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `max by (portal, sink) (posture_push_duration_seconds{${PORTAL}})`, '{{portal}} · {{sink}}'))
    .min(0)
    .unit('s')
    .spanNulls(SPAN_NULLS_MS)
    .legend(tableLegend())
    .height(7)
    .span(12);
}

function buildInfo(): stat.PanelBuilder {
  return new stat.PanelBuilder()
    .title('Exporter version')
    .datasource(DATASOURCE)
    .withTarget(promQuery('A', `max by (portal, version, runtime) (posture_exporter_build_info{${PORTAL}})`, '{{portal}}: {{version}} ({{runtime}})', true))
    .textMode(common.BigValueTextMode.Name)
    .colorMode(common.BigValueColorMode.None)
    .graphMode(common.BigValueGraphMode.None)
    .reduceOptions(new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false))
    .height(4)
    .span(24);
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
    .withRow(new dashboard.RowBuilder('Portal API budget'))
    .withPanel(apiRequests())
    .withPanel(rateLimited())
    .withPanel(rateLimitedInRange())
    .withPanel(alertsPageSize())
    .withRow(new dashboard.RowBuilder('Push mode'))
    .withPanel(pushSuccess())
    .withPanel(pushDuration())
    .build();
  return numberPanels(d);
}
