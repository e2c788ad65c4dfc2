import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import { renderJson, renderText } from '../../src/metrics/render.js';
import { expectGolden } from '../support/golden.js';
import { readFixture, samplesOf, valueOf } from './pipeline.js';

const dir = (scenario: string) => new URL(`../fixtures/${scenario}/`, import.meta.url).pathname;

// The samples are made inside each test, not when the file is collected, so that mutation testing
// sees which tests run which code.
describe.each(['basic', 'tricky'])('scenario %s', (scenario) => {
  const input = readFixture(scenario);

  it('renders the Prometheus text exposition exactly as the golden file', async () => {
    expectGolden(dir(scenario) + 'expected.prom', await renderText(samplesOf(input), 'prometheus', CATALOGUE));
  });

  it('renders OpenMetrics exactly as the golden file', async () => {
    expectGolden(dir(scenario) + 'expected.om', await renderText(samplesOf(input), 'openmetrics', CATALOGUE));
  });

  it('renders JSON exactly as the golden file', () => {
    expectGolden(dir(scenario) + 'expected.json', renderJson(samplesOf(input), Date.parse(input.now), CATALOGUE));
  });

  it('emits no series twice', () => {
    const keys = samplesOf(input).map((s) => s.name + JSON.stringify(Object.entries(s.labels).sort()));
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('basic values', () => {
  const input = readFixture('basic');
  const p = { portal: 'acme' };
  it.each([
    ['posture_vitals_health_ratio', { integration: 'crowdstrike' }, 0.75],
    ['posture_vitals_funnel_consistent', { integration: 'crowdstrike' }, 1],
    ['posture_vitals_eligible_devices', { integration: 'crowdstrike', stage: 'function' }, 180],
    ['posture_vitals_compliant_devices', { integration: 'crowdstrike', stage: 'configuration' }, 150],
    ['posture_vitals_active_agents', { integration: 'okta' }, 412],
    ['posture_vitals_integration_info', { integration: 'okta', name: 'Okta', vitals_enabled: 'false' }, 1],
    ['posture_vitals_funnel_consistent', { integration: 'jamf' }, 1],
    ['posture_alerts_open', { severity: 'red' }, 2],
    ['posture_alerts_open', { severity: 'amber' }, 1],
    ['posture_alerts_open', { severity: 'green' }, 0],
    ['posture_alerts_unacknowledged', { severity: 'red' }, 1],
    ['posture_alerts_unassigned', { severity: 'red' }, 1],
    ['posture_alerts_snoozed', { severity: 'amber' }, 1],
    ['posture_alerts_snoozed', { severity: 'red' }, 0],
    ['posture_alerts_open_by_integration', { integration: 'CrowdStrike Falcon', severity: 'red', type: 'incident' }, 2],
    ['posture_alerts_oldest_open_timestamp_seconds', { severity: 'red' }, Date.UTC(2026, 10, 20, 8, 30) / 1000],
    // At 2026-11-22 12:00: red ones 51.5 h and 27 h old, the amber one 11 h (snoozed); SLAs red 1d, amber 7d.
    ['posture_alerts_open_older_than', { severity: 'red', age: '1d' }, 2],
    ['posture_alerts_open_older_than', { severity: 'red', age: '7d' }, 0],
    ['posture_alerts_open_older_than', { severity: 'amber', age: '1h' }, 1],
    ['posture_alerts_open_older_than', { severity: 'amber', age: '1d' }, 0],
    ['posture_alerts_over_sla', { severity: 'red' }, 2],
    ['posture_alerts_over_sla', { severity: 'amber' }, 0],
    ['posture_alerts_oldest_unacknowledged_timestamp_seconds', { severity: 'red' }, Date.UTC(2026, 10, 20, 8, 30) / 1000],
    ['posture_alerts_oldest_unacknowledged_timestamp_seconds', { severity: 'amber' }, Date.UTC(2026, 10, 22, 1) / 1000],
    ['posture_devices', { activity: 'active' }, 950],
    ['posture_devices', { activity: 'inactive' }, 50],
    // The pass at 2026-11-22 12:00: red resolved after 26 h (4 h ago) and 2 h (1 h ago), amber after
    // 5 d exactly 7 d ago (not later than now - 7d: in 30d only), green with no creation time 2 d ago.
    ['posture_alerts_resolved', { severity: 'red', window: '1d' }, 2],
    ['posture_alerts_resolved', { severity: 'amber', window: '7d' }, 0],
    ['posture_alerts_resolved', { severity: 'amber', window: '30d' }, 1],
    ['posture_alerts_resolved', { severity: 'green', window: '7d' }, 1],
    // Red: 7200 and 93600 s; p50 the 1st of 2 (⌈0.5·2⌉), p90 the 2nd (⌈0.9·2⌉).
    ['posture_alerts_time_to_resolve_seconds', { severity: 'red', window: '1d', percentile: '50' }, 7200],
    ['posture_alerts_time_to_resolve_seconds', { severity: 'red', window: '1d', percentile: '90' }, 93600],
    ['posture_alerts_time_to_resolve_mean_seconds', { severity: 'red', window: '7d' }, (7200 + 93600) / 2],
    ['posture_alerts_time_to_resolve_alerts', { severity: 'red', window: '30d' }, 2],
    ['posture_alerts_time_to_resolve_seconds', { severity: 'amber', window: '30d', percentile: '90' }, 5 * 86_400],
    ['posture_alerts_time_to_resolve_alerts', { severity: 'green', window: '7d' }, 0],
    // Over the red SLA of 1d: the 26 h one.
    ['posture_alerts_resolved_over_sla', { severity: 'red', window: '1d' }, 1],
    ['posture_alerts_resolved_over_sla', { severity: 'amber', window: '30d' }, 0],
    // Acknowledged red: 1800 s (resolved, 2.5 h ago), 3600 s (resolved, 29 h ago) and 3599.5 s (open, 26 h ago).
    ['posture_alerts_time_to_acknowledge_seconds', { severity: 'red', window: '1d', percentile: '90' }, 1800],
    ['posture_alerts_time_to_acknowledge_seconds', { severity: 'red', window: '7d', percentile: '50' }, 3599.5],
    ['posture_alerts_time_to_acknowledge_seconds', { severity: 'red', window: '7d', percentile: '90' }, 3600],
    ['posture_alerts_time_to_acknowledge_mean_seconds', { severity: 'red', window: '7d' }, (1800 + 3600 + 3599.5) / 3],
    ['posture_alerts_time_to_acknowledge_alerts', { severity: 'red', window: '7d' }, 3],
    ['posture_alerts_time_to_acknowledge_alerts', { severity: 'amber', window: '30d' }, 0],
    ['posture_collection_interval_seconds', { source: 'resolved' }, 3600],
    ['posture_collection_interval_seconds', { source: 'vitals' }, 300],
  ] as const)('%s %j = %d', (name, labels, value) => {
    const s = samplesOf(input);
    expect(valueOf(s, name, { ...p, ...labels })).toBe(value);
  });

  it('leaves the health ratio out when nothing is eligible (no division by zero)', () => {
    const s = samplesOf(input);
    expect(valueOf(s, 'posture_vitals_health_ratio', { ...p, integration: 'jamf' })).toBeUndefined();
  });

  it('has no percentile or mean of the time to resolve or to acknowledge where there is no duration', () => {
    const s = samplesOf(input);
    for (const action of ['resolve', 'acknowledge']) {
      expect(valueOf(s, `posture_alerts_time_to_${action}_mean_seconds`, { ...p, severity: 'green', window: '30d' }), action).toBeUndefined();
      expect(valueOf(s, `posture_alerts_time_to_${action}_seconds`, { ...p, severity: 'green', window: '30d', percentile: '50' }), action).toBeUndefined();
    }
    expect(valueOf(s, 'posture_alerts_time_to_resolve_mean_seconds', { ...p, severity: 'amber', window: '7d' })).toBeUndefined();
  });

  it('has no oldest-alert series for a severity with no open alerts', () => {
    const s = samplesOf(input);
    expect(valueOf(s, 'posture_alerts_oldest_open_timestamp_seconds', { ...p, severity: 'green' })).toBeUndefined();
  });
});

describe('tricky values', () => {
  const input = readFixture('tricky');
  const p = { portal: 'eu "prod"' };
  it.each([
    ['posture_vitals_health_ratio', { integration: 'defender' }, 0.8],
    ['posture_vitals_funnel_consistent', { integration: 'defender' }, 0],
    ['posture_vitals_health_ratio', { integration: 'defender', tag: 'laptops' }, 0.75],
    ['posture_vitals_funnel_consistent', { integration: 'defender', tag: 'laptops' }, 1],
    ['posture_vitals_active_agents', { integration: 'intune' }, 0],
    ['posture_collection_invalid_records', { source: 'vitals' }, 2],
    ['posture_collection_invalid_records', { source: 'alerts' }, 3],
    ['posture_alerts_open', { severity: 'red' }, 1],
    ['posture_alerts_open', { severity: 'amber' }, 0],
    ['posture_alerts_open', { severity: 'green' }, 1],
    ['posture_alerts_open', { severity: 'unknown' }, 1],
    ['posture_alerts_unacknowledged', { severity: 'red' }, 0],
    ['posture_alerts_unassigned', { severity: 'red' }, 0],
    ['posture_alerts_unassigned', { severity: 'unknown' }, 1],
    ['posture_alerts_snoozed', { severity: 'red' }, 0],
    ['posture_alerts_snoozed', { severity: 'green' }, 1],
    ['posture_alerts_open_by_integration', { integration: 'Tenable', severity: 'unknown', type: 'unknown' }, 1],
    ['posture_alerts_open_by_integration', { integration: 'unknown', severity: 'red', type: 'info' }, 1],
    ['posture_alerts_open_by_integration', { integration: 'Qualys "VM"', severity: 'green', type: 'info' }, 1],
    ['posture_alerts_oldest_open_timestamp_seconds', { severity: 'red' }, Date.UTC(2026, 10, 10) / 1000 + 0.1234567],
    ['posture_alerts_oldest_open_timestamp_seconds', { severity: 'unknown' }, Date.UTC(2026, 10, 1) / 1000],
    ['posture_devices', { activity: 'active' }, 0],
  ] as const)('%s %j = %d', (name, labels, value) => {
    const s = samplesOf(input);
    expect(valueOf(s, name, { ...p, ...labels })).toBeCloseTo(value, 9);
  });

  it('skips the mistyped and the repeated Vitals records rather than guessing', () => {
    const s = samplesOf(input);
    expect(valueOf(s, 'posture_vitals_health_ratio', { ...p, integration: 'sentinelone' })).toBeUndefined();
    expect(s.filter((x) => x.name === 'posture_vitals_integration_info' && x.labels.integration === 'defender' && !x.labels.tag)).toHaveLength(1);
  });

  it('keeps quotes, backslashes, newlines and non-ASCII in label values, escaped in the text format', async () => {
    const s = samplesOf(input);
    const text = await renderText(s, 'prometheus', CATALOGUE);
    expect(text).toContain('name="Defender \\"ATP\\" \\\\ Plan 2\\nß"');
    expect(text).toContain('portal="eu \\"prod\\""');
  });
});
