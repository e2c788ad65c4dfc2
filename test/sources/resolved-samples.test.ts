// The samples of a resolved-alerts pass (the response-time families of the catalogue): every
// severity and window of the resolution families always, quantiles only where there is a duration,
// over-SLA only for the severities that have an SLA, and the acknowledgement families only once the
// open alerts were joined (never half of them).
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import type { Sample } from '../../src/metrics/sample.js';
import { renderText } from '../../src/metrics/render.js';
import { foldAlerts } from '../../src/sources/alerts/fold.js';
import { foldResolved, withOpenAlerts } from '../../src/sources/resolved/fold.js';
import { resolvedSamples } from '../../src/sources/resolved/samples.js';

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

/** `name{k=v,...} value` of every sample of one family (its `_sum` and `_count` included). */
const lines = (samples: readonly Sample[], family: string) =>
  samples.filter((s) => s.name === family || s.name === `${family}_sum` || s.name === `${family}_count`).map((s) => `${s.name}{${Object.entries(s.labels).map(([k, v]) => `${k}=${v}`).join(',')}} ${s.value}`);

describe('the samples of a resolved-alerts pass', () => {
  it('counts resolved alerts per severity and window: red, amber, green always, unknown when present', () => {
    expect(lines(samplesOf(false), 'posture_alerts_resolved')).toEqual([
      'posture_alerts_resolved{severity=red,window=1d} 1', 'posture_alerts_resolved{severity=red,window=7d} 1', 'posture_alerts_resolved{severity=red,window=30d} 1',
      'posture_alerts_resolved{severity=amber,window=1d} 0', 'posture_alerts_resolved{severity=amber,window=7d} 0', 'posture_alerts_resolved{severity=amber,window=30d} 0',
      'posture_alerts_resolved{severity=green,window=1d} 0', 'posture_alerts_resolved{severity=green,window=7d} 0', 'posture_alerts_resolved{severity=green,window=30d} 0',
      'posture_alerts_resolved{severity=unknown,window=1d} 0', 'posture_alerts_resolved{severity=unknown,window=7d} 1', 'posture_alerts_resolved{severity=unknown,window=30d} 1',
    ]);
  });

  it('writes the time to resolve as a summary: quantiles only where there is a duration, then _sum and _count', () => {
    const got = lines(samplesOf(false), 'posture_alerts_time_to_resolve_seconds');
    expect(got.slice(0, 4)).toEqual([
      'posture_alerts_time_to_resolve_seconds{severity=red,window=1d,quantile=0.5} 108000',
      'posture_alerts_time_to_resolve_seconds{severity=red,window=1d,quantile=0.9} 108000',
      'posture_alerts_time_to_resolve_seconds_sum{severity=red,window=1d} 108000',
      'posture_alerts_time_to_resolve_seconds_count{severity=red,window=1d} 1',
    ]);
    expect(got).toContain('posture_alerts_time_to_resolve_seconds_sum{severity=amber,window=30d} 0');
    expect(got).toContain('posture_alerts_time_to_resolve_seconds_count{severity=unknown,window=1d} 0');
    expect(got).toContain('posture_alerts_time_to_resolve_seconds{severity=unknown,window=7d,quantile=0.9} 3600');
    // 3 windows × 4 severities × (sum, count), and quantiles for red's 3 windows and unknown's 2.
    expect(got).toHaveLength(24 + 2 * 5);
  });

  it('counts over-SLA resolutions for red, amber and green only', () => {
    expect(lines(samplesOf(false), 'posture_alerts_resolved_over_sla')).toEqual(
      ['red', 'amber', 'green'].flatMap((severity) => ['1d', '7d', '30d'].map((window) => `posture_alerts_resolved_over_sla{severity=${severity},window=${window}} ${severity === 'red' ? 1 : 0}`)),
    );
  });

  it('writes the time to acknowledge only once the open alerts are joined', () => {
    expect(lines(samplesOf(false), 'posture_alerts_time_to_acknowledge_seconds')).toEqual([]);
    const got = lines(samplesOf(true), 'posture_alerts_time_to_acknowledge_seconds');
    // Over 7d, red: 1h (resolved, acknowledged 31h ago: not in 1d); amber: 1h (open); green: none. No unknown alert was acknowledged.
    expect(got).toContain('posture_alerts_time_to_acknowledge_seconds_count{severity=red,window=1d} 0');
    expect(got.filter((l) => l.includes('window=7d'))).toEqual([
      'posture_alerts_time_to_acknowledge_seconds{severity=red,window=7d,quantile=0.5} 3600',
      'posture_alerts_time_to_acknowledge_seconds{severity=red,window=7d,quantile=0.9} 3600',
      'posture_alerts_time_to_acknowledge_seconds_sum{severity=red,window=7d} 3600',
      'posture_alerts_time_to_acknowledge_seconds_count{severity=red,window=7d} 1',
      'posture_alerts_time_to_acknowledge_seconds{severity=amber,window=7d,quantile=0.5} 3600',
      'posture_alerts_time_to_acknowledge_seconds{severity=amber,window=7d,quantile=0.9} 3600',
      'posture_alerts_time_to_acknowledge_seconds_sum{severity=amber,window=7d} 3600',
      'posture_alerts_time_to_acknowledge_seconds_count{severity=amber,window=7d} 1',
      'posture_alerts_time_to_acknowledge_seconds_sum{severity=green,window=7d} 0',
      'posture_alerts_time_to_acknowledge_seconds_count{severity=green,window=7d} 0',
    ]);
  });

  it('renders each summary as one family: its TYPE once, its _sum and _count beside its quantiles', async () => {
    const text = await renderText(samplesOf(true).map((s) => ({ ...s, labels: { portal: 'acme', ...s.labels } })), 'prometheus', CATALOGUE);
    expect(text.match(/^# TYPE posture_alerts_time_to_resolve_seconds summary$/gm)).toHaveLength(1);
    expect(text).not.toMatch(/^# TYPE posture_alerts_time_to_resolve_seconds_(sum|count)/m);
    const block = text.split('\n\n').find((b) => b.includes('# TYPE posture_alerts_time_to_resolve_seconds summary'))!;
    expect(block).toContain('posture_alerts_time_to_resolve_seconds{portal="acme",severity="red",window="1d",quantile="0.5"} 108000');
    expect(block).toContain('posture_alerts_time_to_resolve_seconds_count{portal="acme",severity="red",window="1d"} 1');
  });
});
