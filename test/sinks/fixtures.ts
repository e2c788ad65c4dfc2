/**
 * Hand-built push batches with realistic samples: several families of every origin, and label
 * values that need care (quotes, backslashes, non-ASCII, `/`).
 */
import type { Source } from '../../src/domain.js';
import type { Sample } from '../../src/metrics/sample.js';
import type { PushBatch } from '../../src/sinks/types.js';

type Labels = Record<string, string>;

function s(name: Sample['name'], labels: Labels, value: number): Sample {
  return { name, labels, value };
}

/** Samples of one portal's collection; `scale` varies the values between cycles. */
function portalSamples(portal: string, opts: { scale?: number; failed?: readonly Source[] } = {}): Sample[] {
  const k = opts.scale ?? 1;
  const p = (labels: Labels = {}): Labels => ({ portal, ...labels });
  const failed = new Set(opts.failed ?? []);
  const out: Sample[] = [
    s('posture_collection_duration_seconds', p(), 2.5 * k),
    s('posture_collection_api_requests', p({ endpoint: '/vitals', code: '200' }), 1),
    s('posture_collection_api_requests', p({ endpoint: '/alerts', code: failed.has('alerts') ? '503' : '200' }), 2),
    s('posture_exporter_build_info', p({ version: '0.1.0', runtime: 'lambda' }), 1),
    s('posture_push_success', p({ sink: 'remote_write' }), 1),
    s('posture_push_duration_seconds', p({ sink: 'remote_write' }), 0.125),
  ];
  for (const source of ['vitals', 'alerts', 'devices'] as const) {
    out.push(s('posture_collection_success', p({ source }), failed.has(source) ? 0 : 1));
    if (!failed.has(source)) out.push(s('posture_collection_last_success_timestamp_seconds', p({ source }), 1_795_000_000 + k));
  }
  if (!failed.has('vitals')) {
    out.push(
      s('posture_vitals_integration_info', p({ integration: 'crowdstrike', name: 'CrowdStrike "Falcon" \\ EDR', vitals_enabled: 'true' }), 1),
      s('posture_vitals_integration_info', p({ integration: 'intune', name: 'Microsoft Intune – Gerätemanagement', vitals_enabled: 'false' }), 1),
      s('posture_vitals_eligible_devices', p({ integration: 'crowdstrike', stage: 'deployment' }), 120 * k),
      s('posture_vitals_compliant_devices', p({ integration: 'crowdstrike', stage: 'deployment' }), 110 * k),
      s('posture_vitals_compliant_devices', p({ integration: 'crowdstrike', stage: 'deployment', tag: 'Zürich/HQ' }), 40 * k),
      s('posture_vitals_health_ratio', p({ integration: 'crowdstrike' }), 0.875),
      s('posture_vitals_funnel_consistent', p({ integration: 'crowdstrike' }), 1),
      s('posture_vitals_active_agents', p({ integration: 'intune' }), 312 * k),
    );
  }
  if (!failed.has('alerts')) {
    out.push(
      s('posture_alerts_open', p({ severity: 'red' }), 3 * k),
      s('posture_alerts_open', p({ severity: 'amber' }), 7 * k),
      s('posture_alerts_open', p({ severity: 'green' }), 0),
      s('posture_alerts_open_by_integration', p({ integration: 'Microsoft 365 "Defender"', severity: 'red', type: 'incident' }), 2 * k),
      s('posture_alerts_oldest_open_timestamp_seconds', p({ severity: 'red' }), 1_794_990_000),
    );
  }
  if (!failed.has('devices')) {
    out.push(s('posture_devices', p({ activity: 'active' }), 1234 * k), s('posture_devices', p({ activity: 'inactive' }), 56 * k));
  }
  return out;
}

/** One portal's batch: every source succeeded unless listed in `failed`. */
export function batchFor(portal: string, collectedAt: number, opts: { scale?: number; failed?: readonly Source[] } = {}): PushBatch {
  const failed = new Set(opts.failed ?? []);
  return {
    portal,
    snapshot: { collectedAt, samples: portalSamples(portal, opts) },
    succeeded: (['vitals', 'alerts', 'devices'] as const).filter((x) => !failed.has(x)),
  };
}

/** The canonical identity of a series: name plus sorted labels. */
export function seriesKey(name: string, labels: Readonly<Record<string, string>>): string {
  const entries = Object.entries(labels).filter(([k, v]) => k !== '__name__' && v !== '');
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${name}{${entries.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
}
