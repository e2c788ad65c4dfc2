import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as common from '@grafana/grafana-foundation-sdk/common';
import type * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import * as statetimeline from '@grafana/grafana-foundation-sdk/statetimeline';
import type * as stat from '@grafana/grafana-foundation-sdk/stat';
import type * as prometheus from '@grafana/grafana-foundation-sdk/prometheus';
import {
  DASHBOARD_TAG,
  DAILY_BRIDGE,
  PASS_BRIDGE,
  PORTAL,
  SPAN_NULLS_MS,
  normalStacking,
  panelSpec,
  postureDashboard,
  promQuery,
  quantityOverTime,
  queryPanel,
  statPanel,
  thresholds,
  timeSeriesPanel,
  valueMapping,
  withAlertLine,
  type PanelSize,
  type PanelSpec,
} from './common.js';

/** Stable uid of the exporter health dashboard. */
export const EXPORTER_UID = 'posture-exporter-health';

// PostureCollectionFailing fires when a source's last success is older than twice its own interval
// plus this margin (infra/prometheus/rules/posture.rules.yml).
const COLLECTION_STALE_MARGIN_SECONDS = 600;

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

const collectionSuccess = () =>
  successTimeline(gaugeSpec({ title: 'Collection success per source', description: 'Whether the last collection of each source (vitals, alerts, devices, and the slow ones: resolved, the hourly resolved-alerts pass; access, the hourly access settings; directory, the daily directory) succeeded.' + SLOW_NOTE, metric: 'posture_collection_success', by: 'source', size: { h: 7, w: 12 } }, 'min'));

/**
 * Each source's age against its own alert threshold, as PostureCollectionFailing reads it: the
 * newest last success and the interval seen in the past 3 days (a source whose samples come once a
 * pass, or that stopped, keeps its line), the age over twice the interval plus the margin.
 */
function lastSuccessAge(): timeseries.PanelBuilder {
  const age = `time() - max by (portal, source) (max_over_time(posture_collection_last_success_timestamp_seconds{${PORTAL}}[3d]))`;
  const threshold = `2 * max by (portal, source) (last_over_time(posture_collection_interval_seconds{${PORTAL}}[3d])) + ${COLLECTION_STALE_MARGIN_SECONDS}`;
  const panel = timeSeriesPanel({
    title: 'Age of the last successful collection',
    description: 'How old each source\'s last successful collection is, as a share of the age at which PostureCollectionFailing fires: twice the source\'s own interval (posture_collection_interval_seconds: 5 min by default, the resolved-alerts pass and the access settings 1 h, the directory 1 d) plus 10 minutes. A source on time stays below about half; above the dashed line (100 %) the alert fires.',
    targets: [promQuery('A', `(${age}) / on (portal, source) (${threshold})`, '{{portal}} · {{source}}')],
    size: { h: 7, w: 12 },
  });
  return withAlertLine(panel.unit('percentunit').min(0), thresholds('green', [1, 'red']));
}

function apiRequests(): timeseries.PanelBuilder {
  return timeSeriesPanel({
    title: 'API requests per minute',
    description: 'Requests sent to the portal per minute, by endpoint and HTTP status (error = no response), from the serve counter posture_api_requests_total; in push mode, the requests of the last run of each source. The portal allows 10 requests per 60 s.',
    targets: [promQuery('A', `60 * sum by (portal, endpoint, code) (rate(posture_api_requests_total{${PORTAL}}[$__rate_interval])) or ${perEndpoint('', 'portal, endpoint, code')}`, '{{portal}} · {{endpoint}} {{code}}')],
    size: { h: 8, w: 12 },
  })
    .drawStyle(common.GraphDrawStyle.Bars)
    .stacking(normalStacking())
    .fillOpacity(60)
    .min(0)
    .unit('short');
}


/** The endpoints of the slow sources of their own (the access settings hourly, the directory daily), each with its bridge. */
const SLOW_ENDPOINTS: ReadonlyArray<readonly [matcher: string, bridge: string]> = [
  ['endpoint=~"/settings/.*"', PASS_BRIDGE],
  ['endpoint="/users"', DAILY_BRIDGE],
];

/**
 * The requests of the last run per endpoint (push mode's gauge): a live endpoint's raw series, and an endpoint read
 * only by a slow source within that source's bridge (pushed, its samples come once a run).
 */
function perEndpoint(matchers: string, by: string): string {
  const live = `max by (${by}) (posture_collection_api_requests{${PORTAL}${matchers},endpoint!~"/settings/.*|/users"})`;
  return [live, ...SLOW_ENDPOINTS.map(([endpoint, bridge]) => `max by (${by}) (last_over_time(posture_collection_api_requests{${PORTAL}${matchers},${endpoint}}[${bridge}]))`)].join(' or ');
}

// A run without 429s sends no code="429" series, so a healthy exporter would show "No data":
// 0 for every endpoint the exporter reports, unless a 429 series exists for it.
const ZERO_PER_ENDPOINT = `0 * group by (portal, endpoint) (${perEndpoint('', 'portal, endpoint, code')})`;

function rateLimited(): timeseries.PanelBuilder {
  return timeSeriesPanel({
    title: 'Rate-limited requests (429) per run',
    description: 'Requests the portal answered with 429 in the last run of each source. Persistent 429s mean another client shares the portal\'s budget or the interval is too short.',
    targets: [promQuery('A', `(${perEndpoint(',code="429"', 'portal, endpoint')}) or ${ZERO_PER_ENDPOINT}`, '{{portal}} · {{endpoint}}')],
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
      title: '429s in the time range',
      // serve counts every 429 (a counter that starts at 0); push mode has only the per-run gauge.
      targets: [promQuery('A', `sum by (portal) (increase(posture_budget_rate_limited_responses_total{${PORTAL}}[$__range])) or max by (portal) (max_over_time(posture_collection_api_requests{${PORTAL},code="429"}[$__range])) or 0 * group by (portal) (last_over_time(posture_collection_api_requests{${PORTAL}}[$__range]))`, '{{portal}}', true)],
      size: { h: 8, w: 4 },
    },
    { unit: 'short', noValue: '0', thresholds: thresholds('green', [1, 'orange']) },
  );
}

/** Said of every per-source panel: how it draws a slow source between its runs. */
const SLOW_NOTE = ' A source whose interval is longer than 15 minutes (the pass, the access settings) shows its last run for up to 2 h, one longer than 2 h (the directory, daily) for up to 25 h: pushed, its samples come once a run.';

/** The interval gauge of each source. */
const INTERVAL = `max by (portal, source) (last_over_time(posture_collection_interval_seconds{${PORTAL}}[${PASS_BRIDGE}]))`;
/** Sources slower than a push-mode gap a time series spans (the resolved-alerts pass, access, directory), by their interval gauge. */
const SLOW_SOURCES = `(${INTERVAL} > ${SPAN_NULLS_MS / 1000})`;
/** Of those, the ones slower than the 2 h bridge (the directory, daily). */
const DAILY_SOURCES = `(${INTERVAL} > 7200)`;

/**
 * A per-source exporter gauge per portal and source. Pushed, a slow source's samples come once a
 * run (the pass's hourly), so it reads its last value within PASS_BRIDGE; every other source its
 * raw series, so that a source that stops reporting leaves the panel within minutes.
 */
function perSource(metric: string, agg: 'max' | 'min'): string {
  const raw = `${agg} by (portal, source) (${metric}{${PORTAL}})`;
  const last = (bridge: string) => `${agg} by (portal, source) (last_over_time(${metric}{${PORTAL}}[${bridge}]))`;
  const hourly = `(${SLOW_SOURCES} unless on (portal, source) ${DAILY_SOURCES})`;
  return `(${raw} unless on (portal, source) ${SLOW_SOURCES}) or (${last(PASS_BRIDGE)} and on (portal, source) ${hourly}) or (${last(DAILY_BRIDGE)} and on (portal, source) ${DAILY_SOURCES})`;
}

/** An exporter gauge per portal (and per `by` label): `agg by (portal, by) (metric)`, per source as perSource says, legend to match. */
function gauge(metric: string, by?: string, agg: 'max' | 'min' = 'max'): prometheus.DataqueryBuilder {
  const labels = by === undefined ? 'portal' : `portal, ${by}`;
  const legend = by === undefined ? '{{portal}}' : `{{portal}} · {{${by}}}`;
  // The teams' fold is reported with the access settings' reads (hourly): within their bridge.
  const folded = `${agg} by (${labels}) (${metric}{${PORTAL},family!="posture_portal_team_members"}) or ${agg} by (${labels}) (last_over_time(${metric}{${PORTAL},family="posture_portal_team_members"}[${PASS_BRIDGE}]))`;
  return promQuery('A', by === 'source' ? perSource(metric, agg) : by === 'family' ? folded : `${agg} by (${labels}) (${metric}{${PORTAL}})`, legend);
}

/** A panel of one exporter gauge: title, the (i) text, the gauge and its label, size. */
interface GaugeSpec {
  readonly title: string;
  readonly description?: string;
  readonly metric: string;
  readonly by?: string;
  readonly size?: PanelSize;
}

function gaugeSpec({ title, description, metric, by, size = { h: 8, w: 12 } }: GaugeSpec, agg?: 'max' | 'min'): PanelSpec {
  return { title, description, targets: [gauge(metric, by, agg)], size };
}

/** A gauge that is never negative (count, size, duration), over time; `unit` as Grafana names it. */
function gaugeOverTime(spec: GaugeSpec, unit: string): timeseries.PanelBuilder {
  return quantityOverTime(gaugeSpec(spec), unit);
}

// The budget panels' (i) texts, too long for the panel list below.
const BUDGET_SHARE = 'configured: POSTURE_REQUESTS_PER_MINUTE. effective: the share in force; halved when the portal answers 429 although the exporter stayed within its share (other clients are spending the budget), won back one request per clean minute. See docs/budget.md.';
const SERIES_FOLDED = 'Series of a family that grows with portal data (alerts by integration, per-integration Vitals, team members) folded into integration="__other__" (team="__other__") by POSTURE_MAX_SERIES_PER_FAMILY; 0 when every family fits (docs/metrics.md). The teams\' fold comes with the hourly read of the access settings and shows for up to 2 h.';
const PAGE_SIZE = 'Page size the last /alerts run used (0 = all in one request); above the configured size when the plan grew the pages to fit the share beside the other sources.';
const PUSH_SUCCESS = 'Whether the previous push to each sink succeeded; reported with the next push, so a sink that stays down shows as missing data. Empty in pull mode.';

const budgetShare = () => gaugeOverTime({ title: 'Share of the portal budget (requests per 60 s)', description: BUDGET_SHARE, metric: 'posture_budget_share', by: 'kind' }, 'short');
const throttledLastHour = () =>
  gaugeOverTime({ title: '429 responses in the last hour', description: 'Rate-limit answers the exporter received from the portal in the hour before each scrape (in Lambda: by the container).', metric: 'posture_budget_rate_limited_responses_last_hour' }, 'short');
const invalidRecords = () =>
  gaugeOverTime({ title: 'Invalid records per source', description: 'Records the last collection skipped because they did not match the API contract (logged by the exporter, never counted as zeros).' + SLOW_NOTE, metric: 'posture_collection_invalid_records', by: 'source' }, 'short');
const seriesFolded = () => gaugeOverTime({ title: 'Series folded by the series cap', description: SERIES_FOLDED, metric: 'posture_series_folded', by: 'family' }, 'short');
const alertsPageSize = () => gaugeOverTime({ title: 'Alerts page size', description: PAGE_SIZE, metric: 'posture_collection_alerts_page_size' }, 'short');
const cycleDuration = () => gaugeOverTime({ title: 'Run duration per source', description: 'Wall time of the last run of each source, waits for the budget included.' + SLOW_NOTE, metric: 'posture_collection_duration_seconds', by: 'source' }, 's');
const pushSuccess = () => successTimeline(gaugeSpec({ title: 'Push success per sink (push mode)', description: PUSH_SUCCESS, metric: 'posture_push_success', by: 'sink', size: { h: 7, w: 12 } }, 'min'));
const pushDuration = () => gaugeOverTime({ title: 'Push duration per sink (push mode)', metric: 'posture_push_duration_seconds', by: 'sink', size: { h: 7, w: 12 } }, 's');

const buildInfo = (): stat.PanelBuilder =>
  statPanel(panelSpec('Exporter version', undefined, { h: 4, w: 16 }, promQuery('A', `max by (portal, version, runtime) (posture_exporter_build_info{${PORTAL}})`, '{{portal}}: {{version}} ({{runtime}})', true)), {}, { color: common.BigValueColorMode.None, text: common.BigValueTextMode.Name });

/** serve's shards: how many report, and how many there should be (1 and 1 unsharded); docs/sharding.md. */
const SHARDS = 'Shards (serve processes) that report posture_exporter_shard_ordinal, and the shard count they were given (POSTURE_TOTAL_SHARDS). Fewer up than the total, or shards that disagree on the total, are alerts; see docs/sharding.md.';
const shards = (): stat.PanelBuilder =>
  statPanel(
    panelSpec('Shards up / total', SHARDS, { h: 4, w: 8 }, promQuery('A', 'count(count by (instance) (posture_exporter_shard_ordinal))', 'up', true), promQuery('B', 'max(posture_exporter_total_shards)', 'total', true)),
    {},
    { color: common.BigValueColorMode.None },
  );

/** The exporter's own health: collection per source, portal API budget, data quality, pushes. */
export function exporterDashboard(): dashboard.Dashboard {
  return postureDashboard({ title: 'posture-exporter health', uid: EXPORTER_UID, description: 'Is posture-exporter collecting, how much of the portal\'s API budget it spends, and whether its pushes land.', tags: [DASHBOARD_TAG], from: 'now-24h', refresh: '1m' }, [
    buildInfo(),
    shards(),
    'Collection',
    ...[collectionSuccess(), lastSuccessAge(), cycleDuration(), invalidRecords(), seriesFolded()],
    'Portal API budget',
    ...[apiRequests(), rateLimited(), rateLimitedInRange(), alertsPageSize(), budgetShare(), throttledLastHour()],
    'Push mode',
    ...[pushSuccess(), pushDuration()],
  ]);
}
