/**
 * The metric catalogue: the exporter's public contract. Every renderer (Prometheus text,
 * OpenMetrics, JSON, OTLP, remote write, Pushgateway) and the README's metrics table derive
 * from this one table. Every series also carries `portal`, but the shard's own two (`noPortal`). It is composed here, above the
 * sources, from each source's families (src/sources/) and the exporter's own below; the type of a
 * definition sits lower, in src/metrics/definition.ts, where the sources declare theirs.
 */

import { SLOW_JOBS, SOURCES } from '../domain.js';
import type { MetricDef } from '../metrics/definition.js';
import { SLOW_MODULES, SOURCE_MODULES, type SlowFamilyOf, type SourceFamilyOf } from '../sources/index.js';

/**
 * The exporter's own families of each source's runs (label `source`: vitals, alerts, devices, and
 * each slow source once it has run: resolved, access, directory): name, unit, how two samples written as
 * one series combine, help, and the README's line.
 */
const PER_SOURCE = [
  ['posture_collection_success', '1', 'min', 'Whether the last collection of a source from the portal succeeded (1) or failed (0).', '1 when the last collection of `source` ∈ vitals, alerts, devices (and each slow source once it has run: `resolved`, the resolved-alerts pass; `access`, the portal\'s accounts, roles and teams; `directory`, its directory users) succeeded, else 0.'],
  ['posture_collection_last_success_timestamp_seconds', 's', 'min', 'Unix time of the last successful collection of a source.', 'Unix time of the last successful collection of the source (absent until the first success).'],
  ['posture_collection_interval_seconds', 's', 'max', 'Configured interval of a source (the slow ones included: resolved, access, directory): how often it is collected, the time its freshness is judged against.', 'The configured interval of `source` ∈ vitals, alerts, devices (`POSTURE_<SOURCE>_INTERVAL_SECONDS`) and the slow sources resolved, access and directory (`POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS`, `POSTURE_ACCESS_INTERVAL_SECONDS`, `POSTURE_DIRECTORY_INTERVAL_SECONDS`), from the start and in every output; `PostureCollectionFailing` fires when a last success is older than twice it plus 10 minutes ([docs/alerting.md](docs/alerting.md#staleness-per-source)).'],
  ['posture_collection_duration_seconds', 's', 'max', 'Wall time of the last run of a source, waits for the rate budget included.', 'Wall time of the last run of `source`, including waits for the budget.'],
] as const;

/** The exporter's own families (collection, budget, cap, push and build facts). */
const EXPORTER_FAMILIES = [
  ...PER_SOURCE.map(([name, unit, combine, help, doc]) => ({ name, help, type: 'gauge', unit, labels: ['source'], origin: 'exporter', combine, doc }) as const),
  {
    name: 'posture_collection_api_requests',
    help: 'Requests the last run of each source sent to the portal, by endpoint and HTTP status (error when no response).',
    type: 'gauge', unit: '{request}', labels: ['endpoint', 'code'], origin: 'exporter',
    doc: 'Requests the last run of each source sent, by `endpoint` (`/vitals`, `/alerts`, `/devices`, `/settings/usermanagement/users`, `/roles`, `/teams`, `/users`) and HTTP status `code` (`error` for no response).',
  },
  {
    name: 'posture_api_requests_total',
    help: 'Requests sent to the portal since the exporter started, by endpoint and HTTP status (error when no response); serve only.',
    type: 'counter', unit: '{request}', labels: ['endpoint', 'code'], origin: 'exporter',
    doc: '`serve`: requests sent to the portal since start, by `endpoint` and `code` (as above); `code="200"` and `"429"` start at 0 for every endpoint, so `rate()` and `increase()` read 0, not nothing.',
  },
  {
    name: 'posture_collection_invalid_records',
    help: 'Records the last collection of a source skipped because they did not match the API contract.',
    type: 'gauge', unit: '{record}', labels: ['source'], origin: 'exporter',
    doc: 'Malformed records skipped in the last collection of the source (they are logged, never counted as zeros).',
  },
  {
    name: 'posture_collection_alerts_page_size',
    help: 'Page size the last /alerts run used (0 means all in one request); larger than configured when the plan grew it to fit the share.',
    type: 'gauge', unit: '{record}', labels: [], origin: 'exporter', combine: 'max',
    doc: 'Page size the last `/alerts` run used (0 = all in one request); above `POSTURE_PAGE_SIZE` when the plan grew it to fit the share beside the other sources.',
  },
  {
    name: 'posture_budget_share',
    help: 'Requests per 60 s this exporter may send to the portal: configured (POSTURE_REQUESTS_PER_MINUTE) and effective (lowered after 429s that other clients caused, won back one per clean window).',
    type: 'gauge', unit: '{request}', labels: ['kind'], origin: 'exporter', combine: 'min',
    doc: '`kind="configured"`: `POSTURE_REQUESTS_PER_MINUTE`; `kind="effective"`: the share in force (halved on a 429 that other clients caused, +1 per clean 60 s, never below 1).',
  },
  {
    name: 'posture_budget_rate_limited_responses_last_hour',
    help: '429 (rate limit) responses this exporter received from the portal in the last hour.',
    type: 'gauge', unit: '{response}', labels: [], origin: 'exporter',
    doc: '429 responses received in the last hour (in Lambda: by this container); a name of its own, apart from the counter `posture_budget_rate_limited_responses_total`, whose OpenMetrics family is `posture_budget_rate_limited_responses`.',
  },
  {
    name: 'posture_budget_rate_limited_responses_total',
    help: '429 (rate limit) responses the portal sent this exporter since it started, by live collection and backfill alike; serve only.',
    type: 'counter', unit: '{response}', labels: [], origin: 'exporter',
    doc: '`serve`: 429 responses received since start (0 from the start); `increase(...[1h])` replaces the hourly gauge in rules and dashboards.',
  },
  {
    name: 'posture_series_folded',
    help: 'Series of a label-valued family that the per-portal cap (POSTURE_MAX_SERIES_PER_FAMILY) folded into integration=__other__ (team=__other__ for teams) or dropped (info series) in this output; 0 when the family fits.',
    type: 'gauge', unit: '{series}', labels: ['family'], origin: 'exporter',
    doc: 'Per family that can grow with portal data (`posture_alerts_open_by_integration`, the per-integration Vitals families, `posture_portal_team_members`): series folded into `integration="__other__"` (`team="__other__"`; or, for `posture_vitals_integration_info`, dropped) by `POSTURE_MAX_SERIES_PER_FAMILY`; 0 when the family fits. See [docs/metrics.md](docs/metrics.md).',
  },
  {
    name: 'posture_push_success',
    help: 'Whether the previous push to a sink succeeded (1) or failed (0); sent with the next push (serverless mode).',
    type: 'gauge', unit: '1', labels: ['sink'], origin: 'exporter', combine: 'min',
    doc: 'Push mode: 1 when the previous push to `sink` ∈ otlp, remote_write, pushgateway succeeded, else 0 (goes out with the next push).',
  },
  {
    name: 'posture_push_duration_seconds',
    help: 'Wall time of the previous push to a sink (serverless mode).',
    type: 'gauge', unit: 's', labels: ['sink'], origin: 'exporter', combine: 'max',
    doc: 'Push mode: wall time of the previous push to `sink`.',
  },
  {
    name: 'posture_exporter_build_info',
    help: 'Exporter version and how it runs (value is always 1).',
    type: 'gauge', unit: '1', labels: ['version', 'runtime'], origin: 'exporter', combine: 'max',
    doc: '1; `version` of the exporter, `runtime` ∈ once, serve, lambda.',
  },
  {
    name: 'posture_exporter_shard_ordinal',
    help: 'This process\'s shard (POSTURE_SHARD, or the Lambda event\'s shard): it collects the portals whose base URL hashes to it; no portal label.',
    type: 'gauge', unit: '1', labels: [], noPortal: true, origin: 'exporter', combine: 'max',
    doc: '`serve`, and every push (the Lambda, `once`): this process\'s shard, 0 unsharded (no `portal` label: a shard that owns no portal still has it; a push labels it `shard`).',
  },
  {
    name: 'posture_exporter_total_shards',
    help: 'How many shards split the portals (POSTURE_TOTAL_SHARDS, or the Lambda event\'s totalShards); every shard must say the same; no portal label.',
    type: 'gauge', unit: '1', labels: [], noPortal: true, origin: 'exporter', combine: 'max',
    doc: '`serve`, and every push (the Lambda, `once`): the shard count, 1 unsharded (no `portal` label; a push labels it `shard`); shards that disagree, or fewer shards up than this, are alerts (docs/sharding.md).',
  },
] as const satisfies readonly MetricDef[];

/** Every family: each live source's (src/sources/, in SOURCES order), each slow job's (in SLOW_JOBS order), then the exporter's own. */
export const CATALOGUE: readonly (SourceFamilyOf | SlowFamilyOf | (typeof EXPORTER_FAMILIES)[number])[] = [
  ...SOURCES.flatMap((s): readonly SourceFamilyOf[] => SOURCE_MODULES[s].families),
  ...SLOW_JOBS.flatMap((j): readonly SlowFamilyOf[] => SLOW_MODULES[j].families),
  ...EXPORTER_FAMILIES,
];

export type MetricName = (typeof CATALOGUE)[number]['name'];

/** The definition of a metric by name (undefined for a name not in the catalogue). */
export const METRICS: Readonly<Record<string, MetricDef | undefined>> = Object.fromEntries(CATALOGUE.map((m) => [m.name, m]));
