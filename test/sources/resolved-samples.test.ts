// The samples of a resolved-alerts pass (the response-time families of the catalogue): every
// severity and window of the resolution families always, percentiles and means only where there is
// a duration, over-SLA only for the severities that have an SLA, and the acknowledgement families
// only once the open alerts were joined (never half of them). Every family is a gauge.
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import type { Sample } from '../../src/metrics/sample.js';
import { renderText } from '../../src/metrics/render.js';
import { foldAlerts } from '../../src/sources/alerts/fold.js';
import { foldResolved, withOpenAlerts, type ResolvedAggregate } from '../../src/sources/resolved/fold.js';
import { resolvedSamples } from '../../src/sources/resolved/samples.js';
import { mulberry32 } from '../support/prng.js';

const NOW = Date.UTC(2026, 10, 22, 12) / 1000;
const HOUR = 3600;
const DAY = 86_400;
const UNSET = '0001-01-01T00:00:00.0000000';
const ago = (s: number) => `${new Date((NOW - s) * 1000).toISOString().slice(0, 19)}.0000000`;
const alert = (state: string, created: string, resolvedTime: string, acknowledgedTime = UNSET, resolved = true) => ({
  state, timestamp: created, resolved, resolvedTime, acknowledged: acknowledgedTime !== UNSET, acknowledgedTime, product: 'Jamf, MDM', status: 'Info', ownerName: '', inactiveUntil: UNSET,
});

function samplesOf(withOpen: boolean): Sample[] {
  // Red resolved 2h ago after 30h (over the default 1d SLA), acknowledged after 1h; Purple (unknown) resolved 3 d ago after 1h.
  const pass = foldResolved([alert('Red', ago(32 * HOUR), ago(2 * HOUR), ago(31 * HOUR)), alert('Purple', ago(3 * DAY + HOUR), ago(3 * DAY))], NOW);
  const value = withOpen ? withOpenAlerts(pass, foldAlerts([alert('Amber', ago(5 * HOUR), UNSET, ago(4 * HOUR), false)], NOW)) : pass;
  const out: Sample[] = [];
  resolvedSamples(value, (name, labels, v) => out.push({ name, labels, value: v }));
  return out;
}

/** `name{k=v,...} value` of every sample of one family. */
const lines = (samples: readonly Sample[], family: string) =>
  samples.filter((s) => s.name === family).map((s) => `${s.name}{${Object.entries(s.labels).map(([k, v]) => `${k}=${v}`).join(',')}} ${s.value}`);

const SEVERITIES = ['red', 'amber', 'green'];
const WINDOWS = ['1d', '7d', '30d'];

describe('the samples of a resolved-alerts pass', () => {
  it('counts resolved alerts per severity and window: red, amber, green always, unknown when present', () => {
    expect(lines(samplesOf(false), 'posture_alerts_resolved')).toEqual([
      'posture_alerts_resolved{severity=red,window=1d} 1', 'posture_alerts_resolved{severity=red,window=7d} 1', 'posture_alerts_resolved{severity=red,window=30d} 1',
      'posture_alerts_resolved{severity=amber,window=1d} 0', 'posture_alerts_resolved{severity=amber,window=7d} 0', 'posture_alerts_resolved{severity=amber,window=30d} 0',
      'posture_alerts_resolved{severity=green,window=1d} 0', 'posture_alerts_resolved{severity=green,window=7d} 0', 'posture_alerts_resolved{severity=green,window=30d} 0',
      'posture_alerts_resolved{severity=unknown,window=1d} 0', 'posture_alerts_resolved{severity=unknown,window=7d} 1', 'posture_alerts_resolved{severity=unknown,window=30d} 1',
    ]);
  });

  it('writes the percentiles of the time to resolve as a gauge per percentile, only where there is a duration', () => {
    expect(lines(samplesOf(false), 'posture_alerts_time_to_resolve_seconds')).toEqual([
      ...WINDOWS.flatMap((w) => ['50', '90'].map((p) => `posture_alerts_time_to_resolve_seconds{severity=red,window=${w},percentile=${p}} 108000`)),
      ...['7d', '30d'].flatMap((w) => ['50', '90'].map((p) => `posture_alerts_time_to_resolve_seconds{severity=unknown,window=${w},percentile=${p}} 3600`)),
    ]);
  });

  it('writes the mean time to resolve only where there is a duration, and how many durations always', () => {
    const samples = samplesOf(false);
    expect(lines(samples, 'posture_alerts_time_to_resolve_mean_seconds')).toEqual([
      ...WINDOWS.map((w) => `posture_alerts_time_to_resolve_mean_seconds{severity=red,window=${w}} 108000`),
      ...['7d', '30d'].map((w) => `posture_alerts_time_to_resolve_mean_seconds{severity=unknown,window=${w}} 3600`),
    ]);
    expect(lines(samples, 'posture_alerts_time_to_resolve_alerts')).toEqual([...SEVERITIES, 'unknown'].flatMap((severity) =>
      WINDOWS.map((w) => `posture_alerts_time_to_resolve_alerts{severity=${severity},window=${w}} ${severity === 'red' || (severity === 'unknown' && w !== '1d') ? 1 : 0}`),
    ));
  });

  it('counts over-SLA resolutions for red, amber and green only', () => {
    expect(lines(samplesOf(false), 'posture_alerts_resolved_over_sla')).toEqual(
      SEVERITIES.flatMap((severity) => WINDOWS.map((window) => `posture_alerts_resolved_over_sla{severity=${severity},window=${window}} ${severity === 'red' ? 1 : 0}`)),
    );
  });

  it('writes the time to acknowledge only once the open alerts are joined', () => {
    for (const family of ['seconds', 'mean_seconds', 'alerts']) expect(lines(samplesOf(false), `posture_alerts_time_to_acknowledge_${family}`)).toEqual([]);
    const samples = samplesOf(true);
    const week = (family: string) => lines(samples, `posture_alerts_time_to_acknowledge_${family}`).filter((l) => l.includes('window=7d'));
    // Over 7d, red: 1h (resolved, acknowledged 31h ago: not in 1d); amber: 1h (open); green: none. No unknown alert was acknowledged.
    expect(lines(samples, 'posture_alerts_time_to_acknowledge_alerts')).toContain('posture_alerts_time_to_acknowledge_alerts{severity=red,window=1d} 0');
    expect(week('seconds')).toEqual(['red', 'amber'].flatMap((severity) => ['50', '90'].map((p) => `posture_alerts_time_to_acknowledge_seconds{severity=${severity},window=7d,percentile=${p}} 3600`)));
    expect(week('mean_seconds')).toEqual(['red', 'amber'].map((severity) => `posture_alerts_time_to_acknowledge_mean_seconds{severity=${severity},window=7d} 3600`));
    expect(week('alerts')).toEqual(SEVERITIES.map((severity) => `posture_alerts_time_to_acknowledge_alerts{severity=${severity},window=7d} ${severity === 'green' ? 0 : 1}`));
  });

  it('gives the nearest-rank percentiles, the mean and the count of many durations as a naive count of them does', () => {
    const rand = mulberry32(42);
    // Whole seconds, so that every sum is exact whatever its order.
    const durations = Array.from({ length: 37 }, () => 60 + Math.floor(rand() * 40 * HOUR));
    const records = durations.map((d, i) => alert('Amber', ago(i * 60 + d), ago(i * 60)));
    const samples: Sample[] = [];
    resolvedSamples(foldResolved(records, NOW), (name, labels, v) => samples.push({ name, labels, value: v }));
    const value = (name: string, labels: Record<string, string>) => samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    const sorted = [...durations].sort((a, b) => a - b);
    // Nearest rank: the ⌈p/100 · n⌉-th smallest.
    expect(value('posture_alerts_time_to_resolve_seconds', { severity: 'amber', window: '1d', percentile: '50' })).toBe(sorted[Math.ceil(0.5 * 37) - 1]);
    expect(value('posture_alerts_time_to_resolve_seconds', { severity: 'amber', window: '1d', percentile: '90' })).toBe(sorted[Math.ceil(0.9 * 37) - 1]);
    expect(value('posture_alerts_time_to_resolve_mean_seconds', { severity: 'amber', window: '1d' })).toBe(durations.reduce((a, b) => a + b, 0) / 37);
    expect(value('posture_alerts_time_to_resolve_alerts', { severity: 'amber', window: '1d' })).toBe(37);
  });

  it('reads the aggregate it is given without assuming it whole: a severity or a window missing is a count of 0 and no figure, other severities after red, amber, green in order', () => {
    const one = { count: 2, sum: 300, quantiles: [100, 200], overSla: 1 };
    // Red with its 1d window only, no amber or green at all, two other severities out of order.
    const aggregate: ResolvedAggregate = {
      nowSeconds: NOW,
      resolution: { red: [{ ...one, resolved: 2 }], zeta: [{ ...one, resolved: 2 }, { ...one, resolved: 2 }, { ...one, resolved: 2 }], unknown: [] },
      resolvedAcknowledgements: {},
      acknowledgement: { red: [one] },
      invalid: 0,
    };
    const samples: Sample[] = [];
    resolvedSamples(aggregate, (name, labels, v) => samples.push({ name, labels, value: v }));
    const of = (family: string) => lines(samples, family);
    expect(of('posture_alerts_resolved')).toEqual(['red', 'amber', 'green', 'unknown', 'zeta'].flatMap((severity) =>
      WINDOWS.map((w) => `posture_alerts_resolved{severity=${severity},window=${w}} ${(severity === 'red' && w === '1d') || severity === 'zeta' ? 2 : 0}`),
    ));
    expect(of('posture_alerts_resolved_over_sla')).toEqual(SEVERITIES.flatMap((severity) => WINDOWS.map((w) => `posture_alerts_resolved_over_sla{severity=${severity},window=${w}} ${severity === 'red' && w === '1d' ? 1 : 0}`)));
    expect(of('posture_alerts_time_to_resolve_mean_seconds')).toEqual(['posture_alerts_time_to_resolve_mean_seconds{severity=red,window=1d} 150', ...WINDOWS.map((w) => `posture_alerts_time_to_resolve_mean_seconds{severity=zeta,window=${w}} 150`)]);
    expect(of('posture_alerts_time_to_acknowledge_alerts')).toEqual(SEVERITIES.flatMap((severity) => WINDOWS.map((w) => `posture_alerts_time_to_acknowledge_alerts{severity=${severity},window=${w}} ${severity === 'red' && w === '1d' ? 2 : 0}`)));
    expect(of('posture_alerts_time_to_acknowledge_seconds')).toEqual(['posture_alerts_time_to_acknowledge_seconds{severity=red,window=1d,percentile=50} 100', 'posture_alerts_time_to_acknowledge_seconds{severity=red,window=1d,percentile=90} 200']);
  });

  it('renders every family as a gauge, none named or labelled as a summary or a histogram would be', async () => {
    const text = await renderText(samplesOf(true).map((s) => ({ ...s, labels: { portal: 'acme', ...s.labels } })), 'prometheus', CATALOGUE);
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]);
    expect(types).toEqual([
      'posture_alerts_resolved', 'posture_alerts_time_to_resolve_seconds', 'posture_alerts_time_to_resolve_mean_seconds', 'posture_alerts_time_to_resolve_alerts', 'posture_alerts_resolved_over_sla',
      'posture_alerts_time_to_acknowledge_seconds', 'posture_alerts_time_to_acknowledge_mean_seconds', 'posture_alerts_time_to_acknowledge_alerts',
    ].map((name) => [name, 'gauge']));
    expect(text).not.toMatch(/_(sum|count|bucket|total)[{ ]|[{,](quantile|le)=/);
    expect(text).toContain('posture_alerts_time_to_resolve_seconds{portal="acme",severity="red",window="1d",percentile="50"} 108000');
  });
});
