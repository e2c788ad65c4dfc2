// Alert ages and SLAs from the /alerts fold: posture_alerts_open_older_than{severity, age},
// posture_alerts_over_sla{severity} and posture_alerts_oldest_unacknowledged_timestamp_seconds.
// Expected values are counted naively here from the records and the definitions (an age is the
// collection time minus `timestamp`; "older than" is strictly more; snoozed = `inactiveUntil` later
// than the collection time; an unset `timestamp`, the minimum date of spec 2.2, has no age).
import { describe, expect, it } from 'vitest';
import { DEFAULT_ALERT_SLAS, type AlertSlas } from '../../src/config/alert-slas.js';
import { toSamples, type PortalView } from '../../src/collect/samples.js';
import type { Sample } from '../../src/metrics/sample.js';
import { AlertsSink, foldAlerts, mergeAlerts } from '../../src/sources/alerts/fold.js';
import { mulberry32 } from '../support/prng.js';

const NOW = Date.UTC(2026, 10, 22, 12) / 1000;
const UNSET = '0001-01-01T00:00:00.0000000';
const HOUR = 3600;
const DAY = 86_400;
const AGES: ReadonlyArray<readonly [string, number]> = [
  ['1h', HOUR],
  ['1d', DAY],
  ['7d', 7 * DAY],
  ['30d', 30 * DAY],
  ['90d', 90 * DAY],
];

interface Alert {
  state: string;
  product: string;
  status: string;
  ownerName: string;
  timestamp: string;
  resolved: boolean;
  acknowledged: boolean;
  inactiveUntil: string;
}

/** An API timestamp (seven fraction digits, no zone) `seconds` after the Unix epoch. */
function apiTime(seconds: number): string {
  const whole = Math.floor(seconds);
  const frac = Math.round((seconds - whole) * 1e7);
  return `${new Date(whole * 1000).toISOString().slice(0, 19)}.${String(frac).padStart(7, '0')}`;
}

const alert = (over: Partial<Alert>): Alert => ({
  state: 'Red',
  product: 'Okta, Identity',
  status: 'Incident',
  ownerName: '',
  timestamp: apiTime(NOW - 2 * HOUR),
  resolved: false,
  acknowledged: false,
  inactiveUntil: UNSET,
  ...over,
});

/** Seconds of an API timestamp, read the plain way; null for the minimum date (year 0001). */
function seconds(ts: string): number | null {
  if (ts.startsWith('0001-')) return null;
  const [whole, frac = '0'] = ts.split('.');
  return Date.parse(`${whole}Z`) / 1000 + Number(`0.${frac}`);
}

const severityOf = (state: string) => (['red', 'amber', 'green'].includes(state.toLowerCase()) ? state.toLowerCase() : 'unknown');

/** The three families as series keys (`name|severity|age`), counted one alert at a time from the definitions. */
function expected(records: readonly Alert[], slas: AlertSlas, now = NOW): Map<string, number> {
  const out = new Map<string, number>();
  const open = new Set<string>();
  for (const a of records) if (!a.resolved) open.add(severityOf(a.state));
  const shown = [...new Set(['red', 'amber', 'green', ...open])];
  for (const sev of shown) for (const [age] of AGES) out.set(`posture_alerts_open_older_than|${sev}|${age}`, 0);
  for (const sev of ['red', 'amber', 'green']) out.set(`posture_alerts_over_sla|${sev}|`, 0);
  for (const a of records) {
    if (a.resolved) continue;
    const sev = severityOf(a.state);
    const created = seconds(a.timestamp);
    if (created === null) continue;
    const age = now - created;
    for (const [label, s] of AGES) if (age > s) out.set(`posture_alerts_open_older_than|${sev}|${label}`, out.get(`posture_alerts_open_older_than|${sev}|${label}`)! + 1);
    const until = seconds(a.inactiveUntil);
    const snoozed = until !== null && until > now;
    const sla = (slas as Record<string, number>)[sev];
    if (!snoozed && sla !== undefined && age > sla) out.set(`posture_alerts_over_sla|${sev}|`, out.get(`posture_alerts_over_sla|${sev}|`)! + 1);
    if (!a.acknowledged) {
      const k = `posture_alerts_oldest_unacknowledged_timestamp_seconds|${sev}|`;
      if (!out.has(k) || created < out.get(k)!) out.set(k, created);
    }
  }
  return out;
}

const FAMILIES = ['posture_alerts_open_older_than', 'posture_alerts_over_sla', 'posture_alerts_oldest_unacknowledged_timestamp_seconds'];

function render(value: ReturnType<typeof foldAlerts>): Sample[] {
  const view: PortalView = { portal: 'acme', vitals: { success: false }, alerts: { value, success: true }, devices: { success: false } };
  return toSamples([view], { version: '0.0.0-test', runtime: 'once' });
}

/** The three families of rendered samples, keyed as `expected` keys them. */
function got(samples: readonly Sample[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) if (FAMILIES.includes(s.name)) out.set(`${s.name}|${s.labels.severity}|${s.labels.age ?? ''}`, s.value);
  return out;
}

describe('alert ages and SLAs', () => {
  // Each alert names its case; ages straddle every bucket and SLA boundary.
  const records: Alert[] = [
    alert({ timestamp: apiTime(NOW - 30 * 60) }), // 30 min: in no bucket
    alert({ timestamp: apiTime(NOW - HOUR) }), // exactly 1h: not more than 1h
    alert({ timestamp: apiTime(NOW - HOUR - 0.001) }), // a millisecond over 1h
    alert({ timestamp: apiTime(NOW - DAY), acknowledged: true }), // exactly the red SLA: not over
    alert({ timestamp: apiTime(NOW - DAY - 1), acknowledged: true }), // a second over the red SLA
    alert({ timestamp: apiTime(NOW - 3 * DAY), inactiveUntil: apiTime(NOW + HOUR) }), // snoozed: aged, not over its SLA
    alert({ timestamp: apiTime(NOW - 3 * DAY), inactiveUntil: apiTime(NOW) }), // snooze ending now: no longer snoozed
    alert({ timestamp: apiTime(NOW - 3 * DAY), inactiveUntil: apiTime(NOW - DAY) }), // snooze expired
    alert({ timestamp: apiTime(NOW - 100 * DAY), resolved: true }), // resolved: not open
    alert({ state: 'Amber', status: 'Warning', timestamp: apiTime(NOW - 8 * DAY) }),
    alert({ state: 'amber', status: 'Warning', timestamp: apiTime(NOW - 6 * DAY), acknowledged: true }),
    alert({ state: 'Green', status: 'Info', timestamp: apiTime(NOW - 31 * DAY), acknowledged: true }),
    alert({ state: 'Green', status: 'Info', timestamp: apiTime(NOW - 91 * DAY), inactiveUntil: apiTime(NOW + 7 * DAY) }),
    alert({ state: 'Green', status: 'Info', timestamp: UNSET }), // open, no age
    alert({ state: 'Red', timestamp: UNSET, inactiveUntil: apiTime(NOW + HOUR) }),
    alert({ state: 'Purple', timestamp: apiTime(NOW - 40 * DAY) }), // unknown: aged, no SLA
    alert({ state: 'Purple', timestamp: apiTime(NOW - 2 * DAY), acknowledged: true }),
    alert({ state: 'Red', timestamp: apiTime(NOW + HOUR) }), // created in the future (skew): no bucket
  ];
  const samples = render(foldAlerts(records, NOW));

  it('counts every bucket, SLA and oldest unacknowledged time as a plain count of the records says', () => {
    expect(got(samples)).toEqual(expected(records, DEFAULT_ALERT_SLAS));
  });

  it('gives the values worked out by hand for the default SLAs', () => {
    const v = got(samples);
    // red: 1h and a millisecond, 1d (ack), 1d+1s (ack), three 3d ones; 30 min, exactly 1h, unset, future: none.
    expect(['1h', '1d', '7d', '30d', '90d'].map((a) => v.get(`posture_alerts_open_older_than|red|${a}`))).toEqual([6, 4, 0, 0, 0]);
    // Over 1d: 1d+1s and the 3d ones whose snooze is over (ending now, expired); not the snoozed one.
    expect(v.get('posture_alerts_over_sla|red|')).toBe(3);
    expect(['1h', '1d', '7d', '30d', '90d'].map((a) => v.get(`posture_alerts_open_older_than|amber|${a}`))).toEqual([2, 2, 1, 0, 0]);
    expect(v.get('posture_alerts_over_sla|amber|')).toBe(1);
    // 91 days, snoozed: in every bucket, not over its 30d SLA; 31 days (acknowledged): over.
    expect(['1h', '1d', '7d', '30d', '90d'].map((a) => v.get(`posture_alerts_open_older_than|green|${a}`))).toEqual([2, 2, 2, 2, 1]);
    expect(v.get('posture_alerts_over_sla|green|')).toBe(1);
    expect(['1h', '1d', '7d', '30d', '90d'].map((a) => v.get(`posture_alerts_open_older_than|unknown|${a}`))).toEqual([2, 2, 1, 1, 0]);
    expect(v.has('posture_alerts_over_sla|unknown|')).toBe(false);
    expect(v.get('posture_alerts_oldest_unacknowledged_timestamp_seconds|red|')).toBe(NOW - 3 * DAY);
    expect(v.get('posture_alerts_oldest_unacknowledged_timestamp_seconds|amber|')).toBe(NOW - 8 * DAY);
    expect(v.get('posture_alerts_oldest_unacknowledged_timestamp_seconds|green|')).toBe(NOW - 91 * DAY);
    expect(v.get('posture_alerts_oldest_unacknowledged_timestamp_seconds|unknown|')).toBe(NOW - 40 * DAY);
  });

  it('leaves the oldest unacknowledged time out when every open alert of a severity is acknowledged or has no creation time', () => {
    const s = got(render(foldAlerts([alert({ acknowledged: true }), alert({ timestamp: UNSET }), alert({ state: 'Amber', acknowledged: true, timestamp: apiTime(NOW - 9 * DAY) })], NOW)));
    for (const sev of ['red', 'amber', 'green']) expect(s.has(`posture_alerts_oldest_unacknowledged_timestamp_seconds|${sev}|`)).toBe(false);
    // The unset one is open, but in no bucket and never over.
    expect(s.get('posture_alerts_open_older_than|red|1h')).toBe(1);
    expect(s.get('posture_alerts_over_sla|amber|')).toBe(1);
  });

  it('serves zeros for red, amber and green, and nothing for unknown, when no alert is open', () => {
    const s = got(render(foldAlerts([], NOW)));
    expect([...s.keys()].filter((k) => k.includes('unknown') || k.includes('oldest'))).toEqual([]);
    expect([...s.values()].every((n) => n === 0)).toBe(true);
    expect(s.size).toBe(15 + 3);
  });

  it('judges each severity by its own SLA', () => {
    const slas: AlertSlas = { red: 2 * HOUR, amber: 12 * HOUR, green: 2 * DAY };
    const v = got(render(foldAlerts(records, NOW, undefined, slas)));
    expect(v).toEqual(expected(records, slas));
    // red over 2h: 1d, 1d+1s and the two unsnoozed 3d ones.
    expect(v.get('posture_alerts_over_sla|red|')).toBe(4);
    expect(v.get('posture_alerts_over_sla|amber|')).toBe(2);
    expect(v.get('posture_alerts_over_sla|green|')).toBe(1);
  });

  it('counts random alerts as the plain count does, whole or page by page', () => {
    const random = mulberry32(23);
    const states = ['Red', 'Amber', 'Green', 'red', 'Purple', ''];
    const rs: Alert[] = Array.from({ length: 3000 }, () => {
      const r = random();
      const timestamp = r < 0.05 ? UNSET : apiTime(NOW - Math.floor(random() * 120 * DAY) + (random() < 0.1 ? 0.5 : 0));
      const snooze = random();
      return alert({
        state: states[Math.floor(random() * states.length)]!,
        timestamp,
        acknowledged: random() < 0.5,
        resolved: random() < 0.05,
        inactiveUntil: snooze < 0.6 ? UNSET : apiTime(NOW + Math.floor((random() - 0.5) * 10 * DAY)),
      });
    });
    const slas: AlertSlas = { red: 3 * DAY, amber: 20 * DAY, green: 45 * DAY };
    const want = expected(rs, slas);
    expect(got(render(foldAlerts(rs, NOW, undefined, slas)))).toEqual(want);
    let merged: ReturnType<typeof foldAlerts> | undefined;
    for (let at = 0; at < rs.length; at += 700) {
      const sink = new AlertsSink(NOW, undefined, at, slas);
      for (const r of rs.slice(at, at + 700)) sink.record(r);
      merged = merged ? mergeAlerts(merged, sink.finish()) : sink.finish();
    }
    expect(got(render(merged!))).toEqual(want);
  });
});
