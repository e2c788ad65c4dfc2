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
  ] as const)('%s %j = %d', (name, labels, value) => {
    const s = samplesOf(input);
    expect(valueOf(s, name, { ...p, ...labels })).toBe(value);
  });

  it('leaves the health ratio out when nothing is eligible (no division by zero)', () => {
    const s = samplesOf(input);
    expect(valueOf(s, 'posture_vitals_health_ratio', { ...p, integration: 'jamf' })).toBeUndefined();
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
