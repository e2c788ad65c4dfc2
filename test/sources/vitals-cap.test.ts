// The series cap on the Vitals families, worked by hand on a few integrations. Series per
// integration and list: info 1 per name, eligible 3 and compliant 3 when Vitals is enabled, health 1
// when it has eligible devices, funnel 1 when enabled, active agents 1 when disabled. The fold
// (__other__) has the same per list, but no info. One set of integrations is kept for every family:
// the largest (eligible devices, or active agents when disabled; the largest over the lists) first,
// as many as keep every family, fold series included, within the cap.
import { describe, expect, it } from 'vitest';
import { OTHER } from '../../src/sources/cap.js';
import { foldVitals, vitals, type VitalsList } from '../../src/sources/vitals.js';

type Row = readonly [string, Record<string, string>, number];

function samplesOf(lists: readonly VitalsList[], cap: number): { rows: Row[]; folded: Record<string, number> } {
  const rows: Row[] = [];
  const folded = new Map<string, number>();
  vitals.samples(lists, (name, labels, value) => rows.push([name, labels, value]), cap, folded);
  return { rows, folded: Object.fromEntries(folded) };
}

/** An enabled record with `e` eligible whose funnel holds: deployed e-1, functioning e-2, configured e-3. */
const enabled = (key: string, e: number, broken = false) => ({
  key, name: `${key} name`, vitalsEnabled: true,
  agentDeployedPossibleCompliant: e, agentDeployedCompliant: e - 1,
  agentFunctioningPossibleCompliant: broken ? e : e - 1, agentFunctioningCompliant: e - 2,
  configurationPossibleCompliant: e - 2, configurationCompliant: e - 3,
});
const disabled = (key: string, activeAgents: number, name = `${key} name`) => ({ key, name, vitalsEnabled: false, activeAgents });

const integrationsIn = (rows: readonly Row[], name: string, tag?: string) => [...new Set(rows.filter(([n, l]) => n === name && l.tag === tag).map(([, l]) => l.integration))].sort();
const value = (rows: readonly Row[], name: string, labels: Record<string, string>) =>
  rows.filter(([n, l]) => n === name && Object.keys(l).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => l[k] === v)).map(([, , v]) => v);
const FAMILIES = ['posture_vitals_integration_info', 'posture_vitals_eligible_devices', 'posture_vitals_compliant_devices', 'posture_vitals_health_ratio', 'posture_vitals_funnel_consistent', 'posture_vitals_active_agents'];
const foldedOf = (counts: readonly number[]) => Object.fromEntries(FAMILIES.map((f, i) => [f, counts[i]]));

describe('the Vitals series cap, by hand', () => {
  // By size: e1 (30 eligible), d (25 active agents), e2 (20), e3 (10, funnel broken).
  // Series of all four: info 4, eligible 9, compliant 9, health 3, funnel 3, active agents 1.
  const list = foldVitals([enabled('e3', 10, true), enabled('e1', 30), disabled('d', 25), enabled('e2', 20)]);

  it('keeps everything at a cap every family fits (9)', () => {
    const { rows, folded } = samplesOf([list], 9);
    expect(integrationsIn(rows, 'posture_vitals_integration_info')).toEqual(['d', 'e1', 'e2', 'e3']);
    expect(rows.some(([, l]) => l.integration === OTHER)).toBe(false);
    expect(folded).toEqual(foldedOf([0, 0, 0, 0, 0, 0]));
  });

  it('keeps the largest two at a cap of 8 and folds the rest into __other__', () => {
    // Keeping three: eligible 6 + 3 fold = 9 > 8. Keeping e1 and d: eligible 3 + 3 = 6, active agents 1 + 0.
    const { rows, folded } = samplesOf([list], 8);
    expect(integrationsIn(rows, 'posture_vitals_integration_info')).toEqual(['d', 'e1']);
    expect(integrationsIn(rows, 'posture_vitals_eligible_devices')).toEqual([OTHER, 'e1']);
    expect(integrationsIn(rows, 'posture_vitals_active_agents')).toEqual(['d']);
    // __other__ = e2 + e3: eligible 20+10, 19+10 (e3's broken funnel says 10), 18+8; compliant 19+9, 18+8, 17+7.
    expect(['deployment', 'function', 'configuration'].map((stage) => value(rows, 'posture_vitals_eligible_devices', { integration: OTHER, stage })[0])).toEqual([30, 29, 26]);
    expect(['deployment', 'function', 'configuration'].map((stage) => value(rows, 'posture_vitals_compliant_devices', { integration: OTHER, stage })[0])).toEqual([28, 26, 24]);
    expect(value(rows, 'posture_vitals_health_ratio', { integration: OTHER })).toEqual([24 / 30]);
    expect(value(rows, 'posture_vitals_funnel_consistent', { integration: OTHER })).toEqual([0]);
    expect(value(rows, 'posture_vitals_funnel_consistent', { integration: 'e1' })).toEqual([1]);
    // Left out: info of e2, e3; their 3 + 3 funnel series each, 2 health, 2 funnel; no active agents.
    expect(folded).toEqual(foldedOf([2, 6, 6, 2, 2, 0]));
  });

  it('folds everything when keeping even the largest does not fit (cap 5)', () => {
    // Keeping e1: eligible 3 + 3 fold = 6 > 5.
    const { rows, folded } = samplesOf([list], 5);
    expect(rows.filter(([n]) => n === 'posture_vitals_integration_info')).toEqual([]);
    expect(integrationsIn(rows, 'posture_vitals_eligible_devices')).toEqual([OTHER]);
    expect(value(rows, 'posture_vitals_eligible_devices', { integration: OTHER, stage: 'deployment' })).toEqual([60]);
    expect(value(rows, 'posture_vitals_active_agents', { integration: OTHER })).toEqual([25]);
    expect(folded).toEqual(foldedOf([4, 9, 9, 3, 3, 1]));
  });

  it('ranks an integration by its largest view across the lists', () => {
    // a: 30 in the whole portal, 5 in the tag view; b: 20 in both; c: 4 in both; d: 4, not in the tag view.
    // Keeping one: eligible 3 per list kept + 3 per list folded = 12; two: 6 + 6 = 18 > 15.
    const whole = foldVitals([enabled('a', 30), enabled('b', 20), enabled('c', 4), enabled('d', 4)]);
    const tagged = foldVitals([enabled('a', 5), enabled('b', 20), enabled('c', 4)], 'laptops');
    const { rows, folded } = samplesOf([whole, tagged], 15);
    expect(integrationsIn(rows, 'posture_vitals_eligible_devices')).toEqual([OTHER, 'a']);
    expect(integrationsIn(rows, 'posture_vitals_eligible_devices', 'laptops')).toEqual([OTHER, 'a']);
    expect(value(rows, 'posture_vitals_eligible_devices', { integration: OTHER, stage: 'deployment', tag: 'laptops' })).toEqual([24]); // b + c
    // Left out: b, c, d of the whole portal and b, c of the tag view.
    expect(folded).toEqual(foldedOf([5, 15, 15, 5, 5, 0]));
  });

  it('counts a fold series of active agents only when a disabled integration is folded', () => {
    // d1..d3 (100, 90, 80 active agents) and e1, e2 (1 eligible each). Cap 3: keeping the three disabled
    // ones fits (info 3, eligible 0 + 3 fold, active agents 3 + 0 fold); keeping four does not (info 4).
    const { rows, folded } = samplesOf([foldVitals([disabled('d1', 100), disabled('d2', 90), disabled('d3', 80), enabled('e1', 4), enabled('e2', 4)])], 3);
    expect(integrationsIn(rows, 'posture_vitals_integration_info')).toEqual(['d1', 'd2', 'd3']);
    expect(integrationsIn(rows, 'posture_vitals_active_agents')).toEqual(['d1', 'd2', 'd3']);
    expect(integrationsIn(rows, 'posture_vitals_eligible_devices')).toEqual([OTHER]);
    expect(folded).toEqual(foldedOf([2, 6, 6, 2, 2, 0]));
  });

  it('counts the fold of disabled integrations against the cap of active agents', () => {
    // d1, d2, d3 (30, 20, 10 active agents), all disabled: info 3, active agents 3, nothing else.
    // Cap 2: keeping d1 fits (info 1, active agents 1 + 1 fold); keeping d1 and d2 does not (active agents 2 + 1 fold).
    const { rows, folded } = samplesOf([foldVitals([disabled('d3', 10), disabled('d1', 30), disabled('d2', 20)])], 2);
    expect(integrationsIn(rows, 'posture_vitals_integration_info')).toEqual(['d1']);
    expect(integrationsIn(rows, 'posture_vitals_active_agents')).toEqual([OTHER, 'd1']);
    expect(value(rows, 'posture_vitals_active_agents', { integration: OTHER })).toEqual([30]);
    expect(rows.filter(([n]) => n === 'posture_vitals_eligible_devices')).toEqual([]);
    expect(folded).toEqual(foldedOf([2, 0, 0, 0, 0, 2]));
  });

  it('folds a real integration keyed __other__ even when everything fits', () => {
    const { rows, folded } = samplesOf([foldVitals([disabled(OTHER, 7), enabled('a', 10)])], 100);
    expect(value(rows, 'posture_vitals_active_agents', { integration: OTHER })).toEqual([7]);
    expect(integrationsIn(rows, 'posture_vitals_integration_info')).toEqual(['a']);
    expect(folded).toEqual(foldedOf([1, 0, 0, 0, 0, 1]));
  });

  it('counts each name of keys written alike as an info series against the cap', () => {
    // x\ud800 and x\ud801 are both written x\ufffd: one integration of 2 info series (two names) (disabled: 1 active agents series).
    // With y and z: info 4, active agents 3. A cap of 3 fits every family but info; keeping x and y: info 3, active 2 + 1 fold.
    const records = [disabled('x\ud800', 9, 'First'), disabled('x\ud801', 8, 'Second'), disabled('y', 5), disabled('z', 1)];
    const { rows, folded } = samplesOf([foldVitals(records)], 3);
    expect(integrationsIn(rows, 'posture_vitals_integration_info')).toEqual(['x\ufffd', 'y']);
    expect(value(rows, 'posture_vitals_active_agents', { integration: 'x\ufffd' })).toEqual([17]);
    expect(value(rows, 'posture_vitals_active_agents', { integration: OTHER })).toEqual([1]);
    expect(folded).toEqual(foldedOf([1, 0, 0, 0, 0, 1]));
  });
});
