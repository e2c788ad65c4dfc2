/**
 * The metric catalogue: the exporter's public contract. Every renderer (Prometheus text,
 * OpenMetrics, JSON, OTLP, remote write, Pushgateway) and the README's metrics table derive
 * from this one table. Every series also carries `portal`.
 */

import type { Source } from '../domain.js';

/** Label added to every series. */
export const PORTAL_LABEL = 'portal';

/** Where a family's samples come from: one of the collected sources, or the exporter itself. */
export type Origin = Source | 'exporter';

export interface MetricDef {
  /** Prometheus name (also the OTLP instrument name). */
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge';
  /** UCUM unit for OTLP (`1` dimensionless, `s` seconds, `{device}` annotations). */
  readonly unit: string;
  /** Labels besides `portal`, in output order. */
  readonly labels: readonly string[];
  /** Labels that are present on some series only (the Vitals `tag`). */
  readonly optionalLabels?: readonly string[];
  readonly origin: Origin;
  /** One line for the README's metrics table. */
  readonly doc: string;
}

const CACHED = ' Cached: read from the portal on the exporter\'s polling interval, not at scrape time.';

export const CATALOGUE = [
  {
    name: 'posture_vitals_integration_info',
    help: 'Integrations reported by /vitals (value is always 1).' + CACHED,
    type: 'gauge', unit: '1', labels: ['integration', 'name', 'vitals_enabled'], optionalLabels: ['tag'], origin: 'vitals',
    doc: '1 per integration in `/vitals` (integration = `key`, name = `name`).',
  },
  {
    name: 'posture_vitals_eligible_devices',
    help: 'Vitals funnel: devices eligible for a stage (agentDeployedPossibleCompliant, agentFunctioningPossibleCompliant, configurationPossibleCompliant).' + CACHED,
    type: 'gauge', unit: '{device}', labels: ['integration', 'stage'], optionalLabels: ['tag'], origin: 'vitals',
    doc: 'Devices eligible at `stage` ∈ deployment, function, configuration (`agentDeployedPossibleCompliant`, `agentFunctioningPossibleCompliant`, `configurationPossibleCompliant`).',
  },
  {
    name: 'posture_vitals_compliant_devices',
    help: 'Vitals funnel: devices compliant at a stage (agentDeployedCompliant, agentFunctioningCompliant, configurationCompliant).' + CACHED,
    type: 'gauge', unit: '{device}', labels: ['integration', 'stage'], optionalLabels: ['tag'], origin: 'vitals',
    doc: 'Devices compliant at `stage` (`agentDeployedCompliant`, `agentFunctioningCompliant`, `configurationCompliant`).',
  },
  {
    name: 'posture_vitals_health_ratio',
    help: 'Vitals overall health: configurationCompliant / agentDeployedPossibleCompliant; absent when the denominator is 0.' + CACHED,
    type: 'gauge', unit: '1', labels: ['integration'], optionalLabels: ['tag'], origin: 'vitals',
    doc: '`configurationCompliant / agentDeployedPossibleCompliant`; absent when the denominator is 0.',
  },
  {
    name: 'posture_vitals_funnel_consistent',
    help: 'Vitals funnel rule holds: 1 when each stage\'s eligible equals the previous stage\'s compliant and no compliant exceeds its eligible, else 0.' + CACHED,
    type: 'gauge', unit: '1', labels: ['integration'], optionalLabels: ['tag'], origin: 'vitals',
    doc: '1 when each stage\'s eligible equals the previous stage\'s compliant and no compliant exceeds its eligible, else 0.',
  },
  {
    name: 'posture_vitals_active_agents',
    help: 'Devices with the integration (activeAgents), for integrations whose Vitals monitoring is disabled.' + CACHED,
    type: 'gauge', unit: '{device}', labels: ['integration'], optionalLabels: ['tag'], origin: 'vitals',
    doc: '`activeAgents`, for integrations with `vitalsEnabled` false.',
  },
  {
    name: 'posture_alerts_open',
    help: 'Unresolved alerts by severity (state); unrecognised states count as unknown.' + CACHED,
    type: 'gauge', unit: '{alert}', labels: ['severity'], origin: 'alerts',
    doc: 'Unresolved alerts by `state`: red, amber, green always present (0 when none); any other state as `unknown`.',
  },
  {
    name: 'posture_alerts_open_by_integration',
    help: 'Unresolved alerts by integration (product before its first comma), severity and type (status); only non-zero series.' + CACHED,
    type: 'gauge', unit: '{alert}', labels: ['integration', 'severity', 'type'], origin: 'alerts',
    doc: 'integration = `product` before its first comma, trimmed (`unknown` if empty); type = `status` lower-cased (incident, warning, info, else unknown); only non-zero series.',
  },
  {
    name: 'posture_alerts_unacknowledged',
    help: 'Unresolved alerts that are not acknowledged, by severity.' + CACHED,
    type: 'gauge', unit: '{alert}', labels: ['severity'], origin: 'alerts',
    doc: 'Unresolved and not acknowledged (red, amber, green always present).',
  },
  {
    name: 'posture_alerts_unassigned',
    help: 'Unresolved alerts with no owner (empty ownerName), by severity.' + CACHED,
    type: 'gauge', unit: '{alert}', labels: ['severity'], origin: 'alerts',
    doc: 'Unresolved with empty `ownerName` (red, amber, green always present).',
  },
  {
    name: 'posture_alerts_snoozed',
    help: 'Unresolved alerts snoozed (inactiveUntil later than the collection time), by severity.' + CACHED,
    type: 'gauge', unit: '{alert}', labels: ['severity'], origin: 'alerts',
    doc: 'Unresolved with `inactiveUntil` later than the collection time (red, amber, green always present).',
  },
  {
    name: 'posture_alerts_oldest_open_timestamp_seconds',
    help: 'Unix time of the oldest unresolved alert\'s creation timestamp, by severity; absent when none.' + CACHED,
    type: 'gauge', unit: 's', labels: ['severity'], origin: 'alerts',
    doc: 'Unix time of the oldest unresolved alert\'s `timestamp` (API timestamps are UTC); absent when none.',
  },
  {
    name: 'posture_devices',
    help: 'Devices by activity (total of /devices?filter=active and filter=inactive).' + CACHED,
    type: 'gauge', unit: '{device}', labels: ['activity'], origin: 'devices',
    doc: 'activity ∈ active, inactive: `total` of `/devices?filter=<activity>`.',
  },
  {
    name: 'posture_collection_success',
    help: 'Whether the last collection of a source from the portal succeeded (1) or failed (0).',
    type: 'gauge', unit: '1', labels: ['source'], origin: 'exporter',
    doc: '1 when the last collection of `source` ∈ vitals, alerts, devices succeeded, else 0.',
  },
  {
    name: 'posture_collection_last_success_timestamp_seconds',
    help: 'Unix time of the last successful collection of a source.',
    type: 'gauge', unit: 's', labels: ['source'], origin: 'exporter',
    doc: 'Unix time of the last successful collection of the source (absent until the first success).',
  },
  {
    name: 'posture_collection_duration_seconds',
    help: 'Wall time of the last run of a source, waits for the rate budget included.',
    type: 'gauge', unit: 's', labels: ['source'], origin: 'exporter',
    doc: 'Wall time of the last run of `source`, including waits for the budget.',
  },
  {
    name: 'posture_collection_api_requests',
    help: 'Requests the last run of each source sent to the portal, by endpoint and HTTP status (error when no response).',
    type: 'gauge', unit: '{request}', labels: ['endpoint', 'code'], origin: 'exporter',
    doc: 'Requests the last run of each source sent, by `endpoint` (`/vitals`, `/alerts`, `/devices`) and HTTP status `code` (`error` for no response).',
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
    type: 'gauge', unit: '{record}', labels: [], origin: 'exporter',
    doc: 'Page size the last `/alerts` run used (0 = all in one request); above `POSTURE_PAGE_SIZE` when the plan grew it to fit the share beside the other sources.',
  },
  {
    name: 'posture_budget_share',
    help: 'Requests per 60 s this exporter may send to the portal: configured (POSTURE_REQUESTS_PER_MINUTE) and effective (lowered after 429s that other clients caused, won back one per clean window).',
    type: 'gauge', unit: '{request}', labels: ['kind'], origin: 'exporter',
    doc: '`kind="configured"`: `POSTURE_REQUESTS_PER_MINUTE`; `kind="effective"`: the share in force (halved on a 429 that other clients caused, +1 per clean 60 s, never below 1).',
  },
  {
    name: 'posture_budget_rate_limited_responses',
    help: '429 (rate limit) responses this exporter received from the portal in the last hour.',
    type: 'gauge', unit: '{response}', labels: [], origin: 'exporter',
    doc: '429 responses received in the last hour (in Lambda: by this container).',
  },
  {
    name: 'posture_series_folded',
    help: 'Series of a label-valued family that the per-portal cap (POSTURE_MAX_SERIES_PER_FAMILY) folded into integration=__other__ or dropped (info series) in this output; 0 when the family fits.',
    type: 'gauge', unit: '{series}', labels: ['family'], origin: 'exporter',
    doc: 'Per family that can grow with portal data (`posture_alerts_open_by_integration`, the per-integration Vitals families): series folded into `integration="__other__"` (or, for `posture_vitals_integration_info`, dropped) by `POSTURE_MAX_SERIES_PER_FAMILY`; 0 when the family fits. See [docs/metrics.md](docs/metrics.md).',
  },
  {
    name: 'posture_push_success',
    help: 'Whether the previous push to a sink succeeded (1) or failed (0); sent with the next push (serverless mode).',
    type: 'gauge', unit: '1', labels: ['sink'], origin: 'exporter',
    doc: 'Push mode: 1 when the previous push to `sink` ∈ otlp, remote_write, pushgateway succeeded, else 0 (goes out with the next push).',
  },
  {
    name: 'posture_push_duration_seconds',
    help: 'Wall time of the previous push to a sink (serverless mode).',
    type: 'gauge', unit: 's', labels: ['sink'], origin: 'exporter',
    doc: 'Push mode: wall time of the previous push to `sink`.',
  },
  {
    name: 'posture_exporter_build_info',
    help: 'Exporter version and how it runs (value is always 1).',
    type: 'gauge', unit: '1', labels: ['version', 'runtime'], origin: 'exporter',
    doc: '1; `version` of the exporter, `runtime` ∈ once, serve, lambda.',
  },
] as const satisfies readonly MetricDef[];

export type MetricName = (typeof CATALOGUE)[number]['name'];

/** The definition of a metric by name. */
export const METRICS: Readonly<Record<MetricName, MetricDef>> = Object.fromEntries(
  CATALOGUE.map((m) => [m.name, m]),
) as unknown as Record<MetricName, MetricDef>;
