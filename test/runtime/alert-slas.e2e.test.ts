/**
 * Alert ages and SLAs through the built CLI (`npm run build` first): `once --format json` with
 * `alert_slas` against the simulated portal, every value of posture_alerts_open_older_than,
 * posture_alerts_over_sla and posture_alerts_oldest_unacknowledged_timestamp_seconds exact against
 * a count over the alert list the portal served (test/lambda/support.ts, expectedAlertAges). The CLI
 * reads the wall clock, so the portal serves a frozen list whose alerts cross no age, SLA or snooze
 * boundary from minutes before the CLI starts to minutes after it may end, and each count is made
 * at both ends of the run: the values only grow with time on a frozen list, so equal counts at both
 * ends are the values at the moment the CLI collected.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import type { AlertRecord } from '../../src/simulator/records.js';
import { runBuiltCli } from '../support/cli.js';
import { AGE_FAMILIES, alertAgeChanges, expectedAlertAges, familiesOf, seriesKey, type ReadSample } from '../lambda/support.js';

const KEY = 'sim-alert-slas-key-0123456789';
const H = 3600;
const D = 86_400;
/** How long the CLI may take: no value may change within this long of its start. */
const RUN_WINDOW_MS = 120_000;
/** No value may change within this long before the run window, nor after it (seconds). */
const MARGIN_S = 60;
const UNSET_PREFIX = '0001-';

let sim: Simulator;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator({ keys: [{ key: KEY }], rateLimit: false, seed: 11, alerts: 400 });
  dir = mkdtempSync(join(tmpdir(), 'alert-slas-'));
});

afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `once --format json`: its samples, and the wall-clock bounds (ms) within which it collected. */
async function once(env: Record<string, string>): Promise<{ samples: ReadSample[]; startedAt: number; endedAt: number }> {
  const startedAt = Date.now();
  const r = await runBuiltCli(['once', '--format', 'json', '--log-level', 'warn'], { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'acme', ...env });
  const endedAt = Date.now();
  expect(r.code, r.stderr.slice(-2000)).toBe(0);
  expect(endedAt - startedAt, 'the CLI outlasted the window in which no value could change').toBeLessThan(RUN_WINDOW_MS);
  return { samples: (JSON.parse(r.stdout) as { samples: ReadSample[] }).samples, startedAt, endedAt };
}

/** The counts at both ends of a run, which must agree: then they are the counts at any instant between. */
function expectedOverRun(alerts: AlertRecord[], run: { startedAt: number; endedAt: number }, slas: Readonly<Record<string, number>>): Map<string, number> {
  const atStart = expectedAlertAges(alerts, run.startedAt / 1000, slas);
  expect(expectedAlertAges(alerts, run.endedAt / 1000, slas), 'a value changed while the CLI ran').toEqual(atStart);
  return atStart;
}

/** An API timestamp (`yyyy-MM-ddTHH:mm:ss.fffffff`, UTC) `seconds` later, its fraction kept; an unset one stays unset. */
function shifted(ts: string, seconds: number): string {
  if (ts.startsWith(UNSET_PREFIX)) return ts;
  const [whole, frac] = ts.split('.');
  const moved = new Date(Date.parse(`${whole}Z`) + seconds * 1000).toISOString().slice(0, 19);
  return frac === undefined ? moved : `${moved}.${frac}`;
}

/**
 * `alerts` with every time moved back by the fewest whole seconds that leave no instant at which a
 * value changes (alertAgeChanges) between MARGIN_S before `fromSeconds` and MARGIN_S after the run
 * window that starts then; the shift is returned too.
 */
function quietCopy(alerts: readonly AlertRecord[], fromSeconds: number, slas: Readonly<Record<string, number>>): { alerts: AlertRecord[]; shift: number } {
  const lo = fromSeconds - MARGIN_S;
  const hi = fromSeconds + RUN_WINDOW_MS / 1000 + MARGIN_S;
  const changes = alertAgeChanges(alerts, slas);
  const quiet = (shift: number) => changes.every((t) => t + shift < lo || t + shift > hi);
  // The latest quiet shift is 0 or puts some change just before the window.
  const shift = [0, ...changes.map((t) => Math.ceil(lo - t) - 1)].filter((d) => d <= 0).sort((a, b) => b - a).find(quiet);
  if (shift === undefined) throw new Error('no shift leaves the run window quiet');
  const move = (ts: string) => shifted(ts, shift);
  return {
    shift,
    alerts: alerts.map((a) => ({ ...a, timestamp: move(a.timestamp), acknowledgedTime: move(a.acknowledgedTime), assignedTime: move(a.assignedTime), resolvedTime: move(a.resolvedTime), inactiveUntil: move(a.inactiveUntil) })),
  };
}

describe('alert ages and SLAs through once', () => {
  it('matches a plain count over the simulated portal\'s alerts with the SLAs of a config file', async () => {
    const slas = { red: 2 * H, amber: 12 * H, green: D };
    const config = join(dir, 'slas.yaml');
    writeFileSync(config, 'alert_slas:\n  red: 2h\n  amber: 12h\n  green: 1d\n');
    // The simulator's alerts of now, frozen and moved back just enough that no value changes while
    // the CLI runs: with 400 alerts of up to 70 h, some age, SLA or snooze boundary passes every two or three minutes.
    const { alerts, shift } = quietCopy([...sim.data().alerts()], Date.now() / 1000, slas);
    expect(shift, 'a shift of a few hours at most keeps the ages of the simulated portal').toBeGreaterThan(-6 * H);
    sim.setFixture({ alerts });
    let run: Awaited<ReturnType<typeof once>>;
    try {
      run = await once({ POSTURE_CONFIG_FILE: config });
    } finally {
      sim.setFixture(null);
    }
    const { samples } = run;
    const want = expectedOverRun(alerts, run, slas);
    expect(familiesOf(samples, AGE_FAMILIES)).toEqual(want);
    // The same list the counts came from.
    const open = (sev: string) => alerts.filter((a) => !a.resolved && a.state.toLowerCase() === sev).length;
    for (const severity of ['red', 'amber', 'green']) expect(familiesOf(samples, ['posture_alerts_open']).get(seriesKey('posture_alerts_open', { severity }))).toBe(open(severity));
    // Not vacuous: every severity has alerts over its SLA and under it, and the buckets differ.
    for (const severity of ['red', 'amber', 'green']) {
      const over = want.get(seriesKey('posture_alerts_over_sla', { severity }))!;
      expect(over, severity).toBeGreaterThan(0);
      expect(over, severity).toBeLessThan(open(severity));
    }
    expect(want.get(seriesKey('posture_alerts_open_older_than', { severity: 'red', age: '1d' }))).toBeLessThan(want.get(seriesKey('posture_alerts_open_older_than', { severity: 'red', age: '1h' }))!);
    expect(alerts.some((a) => !a.resolved && a.timestamp.startsWith(UNSET_PREFIX)), 'the portal serves an unset creation time').toBe(true);
  }, 180_000);

  it('is exact on alerts of known ages, states, snoozes and acknowledgements, with red\'s SLA from the environment', async () => {
    const now = Date.now() / 1000;
    const at = (ageSeconds: number) => `${new Date((now - ageSeconds) * 1000).toISOString().slice(0, 19)}.0000000`;
    const UNSET = '0001-01-01T00:00:00.0000000';
    const alert = (state: string, age: number | null, over: Partial<AlertRecord> = {}): AlertRecord => ({
      state, product: 'CrowdStrike Falcon, Detection', status: 'Incident', item: 'host-1', issue: 'x', details: '', itemEntityType: 'device', ownerName: '',
      timestamp: age === null ? UNSET : at(age), acknowledgedTime: UNSET, assignedTime: UNSET, resolved: false, acknowledged: false, resolvedBy: '',
      resolvedTime: UNSET, itemId: '0b7a3a54-5a3b-4d7e-9a8e-0e3e4c1c2d11', inactiveUntil: UNSET, hasLinkedDevice: true, ...over,
    });
    // Every age at least 20 minutes from a boundary of the buckets and of the SLAs (red 12h, amber 7d, green 30d).
    const alerts = [
      alert('Red', 30 * 60),
      alert('Red', 11 * H, { acknowledged: true }),
      alert('Red', 13 * H),
      alert('Red', 2 * D, { inactiveUntil: at(-3 * H) }), // snoozed for 3 more hours
      alert('Red', 3 * D, { inactiveUntil: at(H), acknowledged: true }), // snooze ended an hour ago
      alert('Red', null),
      alert('Amber', 8 * D),
      alert('Amber', 6 * D, { acknowledged: true }),
      alert('Amber', 95 * D, { resolved: true }),
      alert('Green', 31 * D, { inactiveUntil: at(-D) }),
      alert('Green', 100 * D, { acknowledged: true }),
      alert('Green', null, { inactiveUntil: at(-D) }),
      alert('Purple', 40 * D),
      alert('Purple', 2 * H, { acknowledged: true }),
    ];
    sim.setFixture({ alerts });
    try {
      const run = await once({ POSTURE_ALERT_SLAS: 'red=12h' });
      const got = familiesOf(run.samples, AGE_FAMILIES);
      expect(got).toEqual(expectedOverRun(alerts, run, { red: 12 * H, amber: 7 * D, green: 30 * D }));
      // Worked out by hand from the list above.
      const v = (name: string, labels: Record<string, string>) => got.get(seriesKey(name, labels));
      expect(['1h', '1d', '7d', '30d', '90d'].map((age) => v('posture_alerts_open_older_than', { severity: 'red', age }))).toEqual([4, 2, 0, 0, 0]);
      expect(['1h', '1d', '7d', '30d', '90d'].map((age) => v('posture_alerts_open_older_than', { severity: 'amber', age }))).toEqual([2, 2, 1, 0, 0]);
      expect(['1h', '1d', '7d', '30d', '90d'].map((age) => v('posture_alerts_open_older_than', { severity: 'green', age }))).toEqual([2, 2, 2, 2, 1]);
      expect(['1h', '1d', '7d', '30d', '90d'].map((age) => v('posture_alerts_open_older_than', { severity: 'unknown', age }))).toEqual([2, 1, 1, 1, 0]);
      expect(['red', 'amber', 'green', 'unknown'].map((severity) => v('posture_alerts_over_sla', { severity }))).toEqual([2, 1, 1, undefined]);
      const oldest = (severity: string) => v('posture_alerts_oldest_unacknowledged_timestamp_seconds', { severity });
      expect([oldest('red'), oldest('amber'), oldest('green'), oldest('unknown')]).toEqual([now - 2 * D, now - 8 * D, now - 31 * D, now - 40 * D].map(Math.floor));
    } finally {
      sim.setFixture(null);
    }
  }, 180_000);
});
