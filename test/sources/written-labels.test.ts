// Portal text written alike is one integration. UTF-8 has no form for a lone surrogate (legal in
// JSON text): "X\ud800" and "X\ud801" are both written "X\ufffd", so the sources count them as one
// integration, computing every value as they do for a fold (counts added up, ratios from the sums),
// rather than leaving two samples for the renderer to combine. An empty or whitespace-only product
// names no integration: its alerts count under integration="unknown".
import { describe, expect, it } from 'vitest';
import { foldAlerts } from '../../src/sources/alerts/fold.js';
import { foldVitals } from '../../src/sources/vitals.js';
import { toSamples, type PortalView } from '../../src/collect/samples.js';
import type { Sample } from '../../src/metrics/sample.js';

const NOW = Date.UTC(2026, 10, 22) / 1000;
const OBI = 'posture_alerts_open_by_integration';

const alert = (product: string, state = 'Red', status = 'Incident') => ({
  state,
  product,
  status,
  ownerName: '',
  timestamp: '2026-11-20T10:00:00.0000000',
  resolved: false,
  acknowledged: false,
  inactiveUntil: '0001-01-01T00:00:00.0000000',
});

const enabled = (key: string, name: string, possible: number, deployed: number, functioning: number, configured: number) => ({
  key,
  name,
  vitalsEnabled: true,
  agentDeployedPossibleCompliant: possible,
  agentDeployedCompliant: deployed,
  agentFunctioningPossibleCompliant: deployed,
  agentFunctioningCompliant: functioning,
  configurationPossibleCompliant: functioning,
  configurationCompliant: configured,
});

function samples(view: Partial<PortalView>): Sample[] {
  return toSamples([{ portal: 'acme', vitals: { success: false }, alerts: { success: false }, devices: { success: false }, ...view }], { version: '0.0.0-test', runtime: 'once' });
}

const values = (s: readonly Sample[], name: string) => s.filter((x) => x.name === name).map((x) => [x.labels, x.value] as const);

describe('alerts: products written alike', () => {
  it('counts "X\\ud800, a" and "X\\ud801, a" as one integration X\\ufffd', () => {
    const agg = foldAlerts([alert('X\ud800, a'), alert('X\ud801, a'), alert('X\ufffd, b'), alert('X, c')], NOW);
    const s = samples({ alerts: { value: agg, success: true } });
    expect(values(s, OBI)).toEqual([
      [{ portal: 'acme', integration: 'X', severity: 'red', type: 'incident' }, 1],
      [{ portal: 'acme', integration: 'X\ufffd', severity: 'red', type: 'incident' }, 3],
    ]);
  });

  it.each([
    ['empty', ''],
    ['a space', ' '],
    ['tabs and line feeds', '\t\n\r '],
    ['a no-break space and an ideographic space', '\u00a0\u3000'],
    ['only a category', ', Identity'],
    ['whitespace before the comma', '   , Identity'],
  ])('counts an alert whose product is %s under integration="unknown"', (_what, product) => {
    const agg = foldAlerts([alert(product), alert('Okta, Identity')], NOW);
    const s = samples({ alerts: { value: agg, success: true } });
    expect(values(s, OBI)).toEqual([
      [{ portal: 'acme', integration: 'Okta', severity: 'red', type: 'incident' }, 1],
      [{ portal: 'acme', integration: 'unknown', severity: 'red', type: 'incident' }, 1],
    ]);
    expect(agg.invalid).toBe(0);
    expect(agg.open.red).toBe(2);
  });

  it('keeps NUL-only and other non-whitespace text as it is', () => {
    const agg = foldAlerts([alert('\u0000, x'), alert('\u200b, x')], NOW);
    expect(values(samples({ alerts: { value: agg, success: true } }), OBI).map(([l]) => l.integration)).toEqual(['\u0000', '\u200b']);
  });
});

describe('vitals: keys written alike', () => {
  const list = foldVitals([enabled('X\ud800', 'First', 10, 8, 6, 5), enabled('X\ud801', 'Second', 30, 29, 28, 27), enabled('Y', 'Y', 4, 4, 4, 4)]);
  const s = samples({ vitals: { value: [list], success: true } });
  const of = (name: string, integration: string, stage?: string) =>
    s.filter((x) => x.name === name && x.labels.integration === integration && (stage === undefined || x.labels.stage === stage)).map((x) => x.value);

  it('adds up their funnel counts under one integration', () => {
    expect(list.invalid).toBe(0);
    expect(of('posture_vitals_eligible_devices', 'X\ufffd', 'deployment')).toEqual([40]);
    expect(of('posture_vitals_compliant_devices', 'X\ufffd', 'deployment')).toEqual([37]);
    expect(of('posture_vitals_eligible_devices', 'X\ufffd', 'function')).toEqual([37]);
    expect(of('posture_vitals_compliant_devices', 'X\ufffd', 'function')).toEqual([34]);
    expect(of('posture_vitals_eligible_devices', 'X\ufffd', 'configuration')).toEqual([34]);
    expect(of('posture_vitals_compliant_devices', 'X\ufffd', 'configuration')).toEqual([32]);
  });

  it('computes their health ratio from the summed counts (32 / 40), not from either ratio', () => {
    expect(of('posture_vitals_health_ratio', 'X\ufffd')).toEqual([32 / 40]);
    expect(of('posture_vitals_funnel_consistent', 'X\ufffd')).toEqual([1]);
    expect(of('posture_vitals_health_ratio', 'Y')).toEqual([1]);
  });

  it('keeps an info series per name', () => {
    expect(values(s, 'posture_vitals_integration_info').filter(([l]) => l.integration === 'X\ufffd').map(([l, v]) => [l.name, v])).toEqual([
      ['First', 1],
      ['Second', 1],
    ]);
  });

  it('says the merged funnel is inconsistent when one of them is', () => {
    const bad = { ...enabled('Z\udc00', 'Z', 10, 8, 6, 5), agentFunctioningPossibleCompliant: 7 };
    const one = foldVitals([bad, enabled('Z\udc01', 'Z', 10, 10, 10, 10)]);
    const t = samples({ vitals: { value: [one], success: true } });
    expect(t.filter((x) => x.name === 'posture_vitals_funnel_consistent').map((x) => [x.labels.integration, x.value])).toEqual([['Z\ufffd', 0]]);
  });
});
