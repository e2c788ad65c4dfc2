import { describe, expect, it } from 'vitest';
import type { AlertsAggregate } from '../../src/sources/alerts/fold.js';
import { CAPPED_FAMILIES, DEFAULT_MAX_SERIES_PER_FAMILY, FoldWarnings, toSamples, type PortalView } from '../../src/collect/samples.js';
import { OTHER } from '../../src/sources/cap.js';
import { foldVitals, type VitalsList } from '../../src/sources/vitals.js';
import { createLogger } from '../../src/core/log.js';
import type { Sample } from '../../src/metrics/sample.js';

/** An alerts aggregate from `[integration, severity, type, count]` rows (plain data, no records). */
function alerts(rows: ReadonlyArray<readonly [string, string, string, number]>): AlertsAggregate {
  const open: Record<string, number> = { red: 0, amber: 0, green: 0 };
  const byIntegration = new Map<string, Map<string, Map<string, number>>>();
  for (const [i, sev, type, n] of rows) {
    open[sev] = (open[sev] ?? 0) + n;
    let bySeverity = byIntegration.get(i);
    if (!bySeverity) byIntegration.set(i, (bySeverity = new Map()));
    let types = bySeverity.get(sev);
    if (!types) bySeverity.set(sev, (types = new Map()));
    types.set(type, (types.get(type) ?? 0) + n);
  }
  return { open, unacknowledged: { ...open }, unassigned: { red: 0, amber: 0, green: 0 }, snoozed: { red: 0, amber: 0, green: 0 }, oldest: {}, olderThan: {}, overSla: { red: 0, amber: 0, green: 0 }, oldestUnacknowledged: {}, byIntegration, invalid: 0 };
}

function view(parts: { alerts?: AlertsAggregate; vitals?: VitalsList[]; cap?: number; portal?: string }): PortalView {
  return {
    portal: parts.portal ?? 'acme',
    vitals: parts.vitals ? { value: parts.vitals, success: true } : { success: false },
    alerts: parts.alerts ? { value: parts.alerts, success: true } : { success: false },
    devices: { success: false },
    ...(parts.cap === undefined ? {} : { maxSeriesPerFamily: parts.cap }),
  };
}

const render = (v: PortalView | PortalView[]) => toSamples(Array.isArray(v) ? v : [v], { version: '0.0.0-test', runtime: 'once' });
const family = (s: readonly Sample[], name: string, portal = 'acme') => s.filter((x) => x.name === name && x.labels.portal === portal);
const folded = (s: readonly Sample[], name: string, portal = 'acme') => s.find((x) => x.name === 'posture_series_folded' && x.labels.family === name && x.labels.portal === portal)?.value;
const sumBy = (s: readonly Sample[], key: (x: Sample) => string) => {
  const out = new Map<string, number>();
  for (const x of s) out.set(key(x), (out.get(key(x)) ?? 0) + x.value);
  return out;
};

/** `n` integrations `int-000`…, integration i has i+1 alerts spread over red/incident and amber/warning. */
function manyIntegrations(n: number): Array<readonly [string, string, string, number]> {
  const rows: Array<readonly [string, string, string, number]> = [];
  for (let i = 0; i < n; i++) {
    const name = `int-${String(i).padStart(3, '0')}`;
    rows.push([name, 'red', 'incident', i + 1]);
    if (i % 2 === 0) rows.push([name, 'amber', 'warning', 1]);
  }
  return rows;
}

describe('capping posture_alerts_open_by_integration', () => {
  const OBI = 'posture_alerts_open_by_integration';

  it('leaves a family within the cap untouched and reports 0 folded', () => {
    const s = render(view({ alerts: alerts([['A', 'red', 'incident', 2], ['B', 'amber', 'info', 1]]), cap: 10 }));
    expect(family(s, OBI).map((x) => [x.labels.integration, x.value])).toEqual([['A', 2], ['B', 1]]);
    expect(folded(s, OBI)).toBe(0);
  });

  it('keeps the largest integrations, folds the rest into __other__ per severity and type, and still adds up', () => {
    const rows = manyIntegrations(30); // 45 series
    const s = render(view({ alerts: alerts(rows), cap: 10 }));
    const fam = family(s, OBI);
    expect(fam.length).toBeLessThanOrEqual(10);
    const others = fam.filter((x) => x.labels.integration === OTHER);
    expect(others.map((x) => [x.labels.severity, x.labels.type])).toEqual([['amber', 'warning'], ['red', 'incident']]);
    const kept = [...new Set(fam.filter((x) => x.labels.integration !== OTHER).map((x) => x.labels.integration))];
    // Largest first (int-028 and int-029 have 30 each, …); 2 fold series leave room for 8 kept series.
    expect(kept.sort()).toEqual(['int-024', 'int-026', 'int-027', 'int-028', 'int-029']);
    expect(fam.length).toBe(8 + 2);
    // Per severity and type, and in total, the family adds up to the open alerts.
    const want = sumBy(rows.map(([, sev, type, n]) => ({ name: OBI, labels: { sev, type }, value: n }) as unknown as Sample), (x) => `${x.labels.sev}/${x.labels.type}`);
    expect(sumBy(fam, (x) => `${x.labels.severity}/${x.labels.type}`)).toEqual(want);
    const open = family(s, 'posture_alerts_open').reduce((n, x) => n + x.value, 0);
    expect(fam.reduce((n, x) => n + x.value, 0)).toBe(open);
    expect(folded(s, OBI)).toBe(45 - 8);
  });

  it('keeps a kept integration whole (all its severity x type series)', () => {
    const s = render(view({ alerts: alerts([['Big', 'red', 'incident', 50], ['Big', 'green', 'info', 1], ...manyIntegrations(20)]), cap: 12 }));
    const big = family(s, OBI).filter((x) => x.labels.integration === 'Big');
    expect(big.map((x) => [x.labels.severity, x.labels.type, x.value])).toEqual([['green', 'info', 1], ['red', 'incident', 50]]);
  });

  it('breaks ties by name, so the output is stable', () => {
    const rows = ['d', 'b', 'a', 'c', 'e'].map((i) => [i, 'red', 'incident', 1] as const);
    const s = render(view({ alerts: alerts(rows), cap: 3 }));
    expect(family(s, OBI).map((x) => x.labels.integration)).toEqual(['a', 'b', OTHER]);
    expect(folded(s, OBI)).toBe(3);
  });

  it('folds everything when even the fold series exceed a tiny cap', () => {
    const rows = ['red', 'amber', 'green'].flatMap((sev) => ['incident', 'warning', 'info', 'unknown'].map((t) => ['X', sev, t, 1] as const));
    const s = render(view({ alerts: alerts([...rows, ['Y', 'red', 'incident', 3]]), cap: 5 }));
    const fam = family(s, OBI);
    expect(fam.every((x) => x.labels.integration === OTHER)).toBe(true);
    expect(fam).toHaveLength(12);
    expect(fam.reduce((n, x) => n + x.value, 0)).toBe(15);
  });

  it('folds a real integration named __other__ so no series repeats', () => {
    const s = render(view({ alerts: alerts([[OTHER, 'red', 'incident', 7], ['A', 'red', 'incident', 1]]), cap: 10 }));
    expect(family(s, OBI).map((x) => [x.labels.integration, x.value])).toEqual([['A', 1], [OTHER, 7]]);
    expect(folded(s, OBI)).toBe(1);
  });

  it(`applies the default cap of ${DEFAULT_MAX_SERIES_PER_FAMILY} when the view does not give one`, () => {
    const s = render(view({ alerts: alerts(manyIntegrations(1500)) }));
    const fam = family(s, OBI);
    expect(fam.length).toBeLessThanOrEqual(DEFAULT_MAX_SERIES_PER_FAMILY);
    expect(fam.length).toBeGreaterThan(DEFAULT_MAX_SERIES_PER_FAMILY - 3);
    expect(folded(s, OBI)).toBeGreaterThan(0);
  });

  it('caps each portal on its own, with its own cap', () => {
    const s = render([view({ portal: 'eu', alerts: alerts(manyIntegrations(30)), cap: 10 }), view({ portal: 'us', alerts: alerts(manyIntegrations(30)), cap: 100 })]);
    expect(family(s, OBI, 'eu').length).toBeLessThanOrEqual(10);
    expect(family(s, OBI, 'us')).toHaveLength(45);
    expect([folded(s, OBI, 'eu'), folded(s, OBI, 'us')]).toEqual([37, 0]);
  });
});

/** Vitals records: `enabled` Vitals-enabled integrations (integration i has 10·(i+1) eligible) and `disabled` others. */
function vitalsRecords(enabled: number, disabled: number, broken: ReadonlySet<number> = new Set()) {
  const out: unknown[] = [];
  for (let i = 0; i < enabled; i++) {
    const e = 10 * (i + 1);
    out.push({
      key: `en-${String(i).padStart(2, '0')}`, name: `Enabled ${i}`, vitalsEnabled: true,
      agentDeployedPossibleCompliant: e, agentDeployedCompliant: e - 1,
      agentFunctioningPossibleCompliant: broken.has(i) ? e : e - 1, agentFunctioningCompliant: e - 2,
      configurationPossibleCompliant: e - 2, configurationCompliant: e - 4,
    });
  }
  for (let i = 0; i < disabled; i++) out.push({ key: `dis-${String(i).padStart(2, '0')}`, name: `Disabled ${i}`, vitalsEnabled: false, activeAgents: 5 * (i + 1) });
  return out;
}

describe('capping the per-integration Vitals families', () => {
  const VITALS = CAPPED_FAMILIES.filter((f) => f.startsWith('posture_vitals_'));

  it('leaves Vitals within the cap untouched', () => {
    const s = render(view({ vitals: [foldVitals(vitalsRecords(3, 2))], cap: 100 }));
    expect(s.some((x) => x.labels.integration === OTHER)).toBe(false);
    for (const f of VITALS) expect(folded(s, f)).toBe(0);
  });

  it('keeps one set of the largest integrations in every Vitals family, each family within the cap', () => {
    const records = vitalsRecords(40, 10, new Set([0, 1]));
    const s = render(view({ vitals: [foldVitals(records)], cap: 30 }));
    for (const f of VITALS) expect(family(s, f).length).toBeLessThanOrEqual(30);
    // eligible has 3 series per integration and 3 fold series: 9 integrations at most.
    const keptIn = (f: string) => new Set(family(s, f).map((x) => x.labels.integration).filter((i) => i !== OTHER));
    const eligible = keptIn('posture_vitals_eligible_devices');
    expect([...eligible].sort()).toEqual(['en-31', 'en-32', 'en-33', 'en-34', 'en-35', 'en-36', 'en-37', 'en-38', 'en-39']);
    expect(keptIn('posture_vitals_health_ratio')).toEqual(eligible);
    expect(keptIn('posture_vitals_compliant_devices')).toEqual(eligible);
    // Disabled integrations are smaller than the kept ones: all folded.
    expect(keptIn('posture_vitals_active_agents').size).toBe(0);
    expect(family(s, 'posture_vitals_integration_info')).toHaveLength(9);
    expect(folded(s, 'posture_vitals_integration_info')).toBe(50 - 9);
    expect(folded(s, 'posture_vitals_eligible_devices')).toBe(3 * (40 - 9));
    expect(folded(s, 'posture_vitals_active_agents')).toBe(10);
  });

  it('sums counts, recomputes the health ratio from the sums and ANDs the funnel rule in __other__', () => {
    const records = vitalsRecords(40, 10, new Set([0]));
    const s = render(view({ vitals: [foldVitals(records)], cap: 30 }));
    const value = (f: string, labels: Record<string, string>) => family(s, f).find((x) => x.labels.integration === OTHER && Object.entries(labels).every(([k, v]) => x.labels[k] === v))?.value;
    const foldedEnabled = Array.from({ length: 31 }, (_, i) => 10 * (i + 1)); // en-00 … en-30
    const sum = (f: (e: number) => number) => foldedEnabled.reduce((n, e) => n + f(e), 0);
    expect(value('posture_vitals_eligible_devices', { stage: 'deployment' })).toBe(sum((e) => e));
    expect(value('posture_vitals_eligible_devices', { stage: 'function' })).toBe(sum((e) => e - 1) + 1); // en-00 broken: e
    expect(value('posture_vitals_compliant_devices', { stage: 'configuration' })).toBe(sum((e) => e - 4));
    expect(value('posture_vitals_health_ratio', {})).toBeCloseTo(sum((e) => e - 4) / sum((e) => e), 12);
    expect(value('posture_vitals_funnel_consistent', {})).toBe(0);
    expect(value('posture_vitals_active_agents', {})).toBe(5 * (1 + 10) * 10 / 2);
    expect(family(s, 'posture_vitals_integration_info').some((x) => x.labels.integration === OTHER)).toBe(false);
    // Every eligible and compliant count adds up to the unfolded totals.
    const whole = render(view({ vitals: [foldVitals(records)], cap: 1000 }));
    for (const f of ['posture_vitals_eligible_devices', 'posture_vitals_compliant_devices', 'posture_vitals_active_agents']) {
      expect(sumBy(family(s, f), (x) => x.labels.stage ?? '')).toEqual(sumBy(family(whole, f), (x) => x.labels.stage ?? ''));
    }
  });

  it('says 1 for the funnel rule of __other__ when every folded funnel holds', () => {
    const s = render(view({ vitals: [foldVitals(vitalsRecords(20, 0))], cap: 12 }));
    expect(family(s, 'posture_vitals_funnel_consistent').find((x) => x.labels.integration === OTHER)?.value).toBe(1);
  });

  it('counts the series of every tag view against the cap and folds the same integrations in each', () => {
    const records = vitalsRecords(20, 4);
    const lists = [foldVitals(records), foldVitals(records, 'laptops')];
    const s = render(view({ vitals: lists, cap: 20 }));
    for (const f of VITALS) expect(family(s, f).length).toBeLessThanOrEqual(20);
    const keptFor = (tag: string | undefined) => family(s, 'posture_vitals_eligible_devices').filter((x) => x.labels.tag === tag && x.labels.integration !== OTHER).map((x) => x.labels.integration);
    expect(keptFor(undefined).length).toBeGreaterThan(0);
    expect(keptFor('laptops')).toEqual(keptFor(undefined));
    expect(family(s, 'posture_vitals_eligible_devices').filter((x) => x.labels.integration === OTHER).map((x) => x.labels.tag ?? '')).toEqual(['', '', '', 'laptops', 'laptops', 'laptops']);
  });

  it('leaves the health ratio of __other__ out when nothing folded is eligible', () => {
    const zero = (key: string) => ({ key, name: key, vitalsEnabled: true, agentDeployedPossibleCompliant: 0, agentDeployedCompliant: 0, agentFunctioningPossibleCompliant: 0, agentFunctioningCompliant: 0, configurationPossibleCompliant: 0, configurationCompliant: 0 });
    const records = [...vitalsRecords(3, 0), ...Array.from({ length: 10 }, (_, i) => zero(`z-${i}`))];
    const s = render(view({ vitals: [foldVitals(records)], cap: 12 }));
    expect(family(s, 'posture_vitals_eligible_devices').some((x) => x.labels.integration === OTHER)).toBe(true);
    expect(family(s, 'posture_vitals_health_ratio').some((x) => x.labels.integration === OTHER)).toBe(false);
  });
});

describe('posture_series_folded', () => {
  it('is exported for each capped family whose source has data, and not for a source without data', () => {
    const s = render(view({ alerts: alerts([['A', 'red', 'incident', 1]]) }));
    expect(s.filter((x) => x.name === 'posture_series_folded').map((x) => x.labels.family)).toEqual(['posture_alerts_open_by_integration']);
  });
});

describe('FoldWarnings', () => {
  it('warns once per portal and family, not on every render', () => {
    const lines: string[] = [];
    const warnings = new FoldWarnings(createLogger({ level: 'info', write: (l) => lines.push(l) }));
    const eu = view({ portal: 'eu', alerts: alerts(manyIntegrations(30)), cap: 10 });
    const us = view({ portal: 'us', alerts: alerts(manyIntegrations(3)), cap: 10 });
    for (let i = 0; i < 5; i++) warnings.check(render([eu, us]));
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ level: 'warn', portal: 'eu', family: 'posture_alerts_open_by_integration', folded: 37 });
    expect(line.msg).toContain('POSTURE_MAX_SERIES_PER_FAMILY');
    warnings.check(render([view({ portal: 'us', alerts: alerts(manyIntegrations(30)), cap: 10 })]));
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1]!)).toMatchObject({ portal: 'us' });
  });
});
