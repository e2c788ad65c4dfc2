import { describe, expect, it } from 'vitest';
import { foldAlerts } from '../../src/sources/alerts/fold.js';
import { cycleOf, type SourceResult, type SourceRun } from '../../src/collect/cycle.js';
import { toSamples } from '../../src/collect/samples.js';
import { PortalState } from '../../src/collect/state.js';
import { foldVitals } from '../../src/sources/vitals.js';
import type { Source } from '../../src/domain.js';
import { readFixture } from './pipeline.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const input = readFixture('basic');
const VALUES = {
  vitals: input.vitals.map((v) => foldVitals(v.data, v.tag)),
  alerts: foldAlerts(input.alerts, Date.parse(input.now) / 1000),
  devices: input.devices,
};
const BUDGET = { configuredShare: 5, effectiveShare: 5, rateLimitedLastHour: 0, rateLimitedTotal: 0 };

/** One run of `source` ending at `at` (1 s long; the monotonic and wall clocks agree): a success with the fixture's values, or a failure. */
function run(source: Source, at: number, ok: boolean): SourceRun {
  const result: SourceResult<unknown> = ok ? { ok: true, value: VALUES[source], invalid: 0 } : { ok: false, error: new Error('portal down') };
  return { source, result, startedAt: at - 1000, finishedAt: at, finishedMonotonic: at, durationMs: 1000, requests: new Map([[`/${source}\u0000${ok ? 200 : 503}`, 1]]) } as SourceRun;
}

const names = (state: PortalState, now: number, limit: number | Record<Source, number>) => new Set(toSamples([state.view(now, limit, BUDGET)], { version: 't', runtime: 'serve' }).map((s) => s.name));
const series = (state: PortalState, now: number, limit: number | Record<Source, number>, name: string, source?: Source) =>
  toSamples([state.view(now, limit, BUDGET)], { version: 't', runtime: 'serve' }).filter((s) => s.name === name && (source === undefined || s.labels.source === source));

describe('PortalState views', () => {
  it.each([0, 5_000, 120_000])('serves a source whose last run succeeded whatever the age of its values (limit %i ms)', (limit) => {
    const state = new PortalState('acme');
    for (const s of ['vitals', 'alerts', 'devices'] as const) state.recordRun(run(s, T0, true));
    for (const now of [T0, T0 + 9_000, T0 + 3_600_000]) {
      const view = state.view(now, limit);
      expect(view.vitals.value).toBe(VALUES.vitals);
      expect(view.alerts.value).toBe(VALUES.alerts);
      expect(view.devices.value).toBe(VALUES.devices);
      expect(view.devices.success).toBe(true);
    }
  });

  it('keeps a failed source\'s last good values up to its limit after its last success, then drops them, never zeros', () => {
    const state = new PortalState('acme');
    state.recordRun(run('devices', T0, true));
    state.recordRun(run('devices', T0 + 60_000, false));
    const limit = { vitals: 1, alerts: 1, devices: 120_000 };
    expect(state.view(T0 + 60_000, limit).devices.value).toBe(VALUES.devices);
    expect(state.view(T0 + 120_000, limit).devices.value).toBe(VALUES.devices);
    const gone = state.view(T0 + 120_001, limit).devices;
    expect(gone).toEqual({ value: undefined, success: false, lastSuccessAt: T0, invalid: undefined });
    expect(series(state, T0 + 120_001, limit, 'posture_devices')).toEqual([]);
    expect(series(state, T0 + 120_001, limit, 'posture_collection_success', 'devices').map((s) => s.value)).toEqual([0]);
    expect(series(state, T0 + 120_001, limit, 'posture_collection_last_success_timestamp_seconds', 'devices').map((s) => s.value)).toEqual([T0 / 1000]);
  });

  it('drops a failed source\'s values at its first failed run when the limit is 0, and serves them again after the next success', () => {
    const state = new PortalState('acme');
    state.recordRun(run('alerts', T0, true));
    expect(state.view(T0 + 1, 0).alerts.value).toBe(VALUES.alerts);
    state.recordRun(run('alerts', T0 + 1, false));
    expect(state.view(T0 + 1, 0).alerts.value).toBeUndefined();
    state.recordRun(run('alerts', T0 + 2, true));
    expect(state.view(T0 + 500_000, 0).alerts.value).toBe(VALUES.alerts);
  });

  it('has only the exporter\'s own series before any run: build info and budget, no per-source series', () => {
    const state = new PortalState('acme');
    expect(state.collected).toBe(false);
    expect(names(state, T0, 5_000)).toEqual(new Set(['posture_exporter_build_info', 'posture_budget_share', 'posture_budget_rate_limited_responses_last_hour', 'posture_budget_rate_limited_responses_total']));
  });

  it('serves each source as soon as its own first run ends, without the sources still running', () => {
    const state = new PortalState('acme');
    state.recordRun(run('vitals', T0, true));
    state.recordRun(run('devices', T0 + 1_000, true));
    expect(state.collected).toBe(false);
    const got = names(state, T0 + 1_000, 5_000);
    for (const n of ['posture_vitals_eligible_devices', 'posture_devices', 'posture_collection_success', 'posture_exporter_build_info', 'posture_budget_share']) expect(got).toContain(n);
    expect([...got].filter((n) => n.startsWith('posture_alerts_'))).toEqual([]);
    expect(series(state, T0 + 1_000, 5_000, 'posture_collection_success').map((s) => s.labels.source)).toEqual(['vitals', 'devices']);
    expect(series(state, T0 + 1_000, 5_000, 'posture_collection_duration_seconds').map((s) => s.labels.source)).toEqual(['vitals', 'devices']);
    expect(series(state, T0 + 1_000, 5_000, 'posture_collection_alerts_page_size')).toEqual([]);
    state.recordRun(run('alerts', T0 + 60_000, false));
    expect(state.collected).toBe(true);
    expect(series(state, T0 + 60_000, 5_000, 'posture_collection_success').map((s) => `${s.labels.source}=${s.value}`)).toEqual(['vitals=1', 'alerts=0', 'devices=1']);
  });
});

describe('PortalState views, more', () => {
  it('keeps a failed source\'s values for a limit given as one number for every source', () => {
    const state = new PortalState('acme');
    state.recordRun(run('vitals', T0, true));
    state.recordRun(run('vitals', T0 + 30_000, false));
    expect(state.view(T0 + 120_000, 120_000).vitals.value).toBe(VALUES.vitals);
    expect(state.view(T0 + 120_001, 120_000).vitals.value).toBeUndefined();
  });

  it.each([
    ['one number', 0],
    ['per source', { vitals: 60_000, alerts: 60_000, devices: 0 }],
  ] as const)('with a limit of 0 (%s), drops a source whose run failed in the same millisecond as its last success', (_, limit) => {
    const state = new PortalState('acme');
    state.recordRun(run('devices', T0, true));
    state.recordRun(run('devices', T0, false));
    expect(state.view(T0, limit).devices).toEqual({ value: undefined, success: false, lastSuccessAt: T0, invalid: undefined });
    expect(series(state, T0, limit, 'posture_devices')).toEqual([]);
  });

  it('gives a source that has not run an empty view, and no duration', () => {
    const state = new PortalState('acme');
    state.recordRun(run('devices', T0, true));
    const view = state.view(T0, 5_000);
    expect(view.vitals).toStrictEqual({});
    expect(view.alerts).toStrictEqual({});
    expect(view.cycle?.durations).toStrictEqual({ devices: 1000 });
  });

  it('keeps the last /alerts page size through runs of the other sources, and takes each new one, 0 included', () => {
    const state = new PortalState('acme');
    const pageSize = () => series(state, T0 + 60_000, 5_000, 'posture_collection_alerts_page_size').map((s) => s.value);
    state.recordRun({ ...run('alerts', T0, true), alertsPageSize: 500 });
    state.recordRun(run('vitals', T0 + 1_000, true));
    state.recordRun(run('devices', T0 + 2_000, true));
    expect(state.view(T0 + 2_000, 5_000).cycle?.alertsPageSize).toBe(500);
    expect(pageSize()).toEqual([500]);
    state.recordRun({ ...run('alerts', T0 + 60_000, true), alertsPageSize: 0 });
    expect(pageSize()).toEqual([0]);
  });

  it('keeps the last /alerts page size when a later one-shot run of every source did not page /alerts', () => {
    const state = new PortalState('acme');
    const runs = (at: number, alerts: SourceRun) => [run('vitals', at, true), alerts, run('devices', at, true)];
    state.record(cycleOf('acme', runs(T0, { ...run('alerts', T0, true), alertsPageSize: 250 })));
    state.record(cycleOf('acme', runs(T0 + 60_000, run('alerts', T0 + 60_000, false))));
    expect(state.view(T0 + 60_000, 5_000).cycle?.alertsPageSize).toBe(250);
  });
});

describe('PortalState staleness on the monotonic clock', () => {
  const DAY = 86_400_000;
  const MINUTE = 60_000;

  /** A run that ended at monotonic `mono` while the wall clock read `mono + wallOffset` (stepped by NTP or an operator). */
  function runAt(source: Source, mono: number, wallOffset: number, ok: boolean): SourceRun {
    return { ...run(source, mono + wallOffset, ok), finishedMonotonic: mono } as SourceRun;
  }

  it.each([
    ['a day ahead', DAY],
    ['10 minutes behind', -10 * MINUTE],
  ])('keeps a failed source for its limit after its last success counted on the monotonic clock, the wall clock %s at that success', (_, offset) => {
    const state = new PortalState('acme');
    const limit = { vitals: 1, alerts: 1, devices: 2 * MINUTE };
    state.recordRun(runAt('devices', T0, offset, true));
    state.recordRun(runAt('devices', T0 + MINUTE, offset, false));
    // Kept through the limit, monotonic time since the success...
    for (const now of [T0 + MINUTE, T0 + 2 * MINUTE]) expect(state.view(now, limit).devices.value, `${now - T0} ms after`).toBe(VALUES.devices);
    // ...dropped just past it, whatever the wall clock read.
    expect(state.view(T0 + 2 * MINUTE + 1, limit).devices.value).toBeUndefined();
    expect(state.view(T0 + DAY, limit).devices.value).toBeUndefined();
    // The last-success timestamp is the wall reading of the success.
    expect(state.view(T0 + 2 * MINUTE + 1, limit).devices.lastSuccessAt).toBe(T0 + offset);
  });
});
