// The resolved-alerts pass as the user runs it: `serve` runs it on its own loop and serves its
// families (checked against a count of the simulated portal's own records, made here); `once` runs
// it when its interval has passed since the last pass, claimed in the state directory, and gives a
// failed pass back.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startServe } from '../../src/runtime/serve.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { parseApiTimestamp } from '../../src/upstream/timestamps.js';
import { runMain } from '../support/cli.js';
import { portalWithConfig, serveAfterEach, T0 } from './support.js';

const KEY = 'sim-resolved-pass-key-0123456789';
const { closing, stopping } = serveAfterEach();
const DAY = 86_400;
const MINUTE = 60_000;

/** The value of one series in a Prometheus text exposition, or undefined when absent. */
function valueIn(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The resolved-alerts requests the portal answered. */
const passRequests = (sim: Simulator) => sim.requests.filter((q) => q.path === '/alerts' && q.query.filter === 'resolved');
/** The passes the portal saw: their first pages. */
const passes = (sim: Simulator) => passRequests(sim).filter((q) => (q.query.offset ?? '0') === '0');

/** Resolved alerts per severity whose resolvedTime is later than `nowSeconds` − `days`, counted from the portal's records. */
function resolvedWithin(sim: Simulator, nowSeconds: number, days = 1): Record<string, number> {
  const out: Record<string, number> = { red: 0, amber: 0, green: 0 };
  let nearEdge = 0;
  for (const a of sim.data().alerts()) {
    if (!a.resolved) continue;
    const at = parseApiTimestamp(a.resolvedTime);
    if (at === null || at === undefined) continue;
    if (Math.abs(at - (nowSeconds - days * DAY)) < 2) nearEdge++;
    if (at > nowSeconds - days * DAY) out[a.state.toLowerCase()] = (out[a.state.toLowerCase()] ?? 0) + 1;
  }
  // `nowSeconds` is the pass's start to a millisecond or so: no record may lie that close to the window's edge.
  expect(nearEdge).toBe(0);
  return out;
}

describe('the resolved-alerts pass in serve', () => {
  it('runs on its own loop and serves posture_alerts_resolved equal to the portal\'s count, with its self-health series', async () => {
    const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { alerts: 60, moving: false }, { POSTURE_INTERVAL_SECONDS: '60', POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_LISTEN: '127.0.0.1:0' });
    const serving = stopping(await startServe(config, { clock, logger }));
    // Its first run is at its phase, in the first minute (every job at once when that is on time).
    while (passRequests(sim).length === 0 || clock.monotonic() < T0 + MINUTE) await serving.nextCycle();
    const text = await (await request(`${serving.url}/metrics`)).body.text();
    // The pass's windows end where it started: its end less its duration (its first request may wait for a slot).
    const at = valueIn(text, 'posture_collection_last_success_timestamp_seconds{portal="test",source="resolved"}')! - valueIn(text, 'posture_collection_duration_seconds{portal="test",source="resolved"}')!;
    const expected = resolvedWithin(sim, at);
    expect(Object.values(expected).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    // The simulated portal keeps 35 days of history by default: the month holds more than the week, of every severity.
    const week = resolvedWithin(sim, at, 7);
    const month = resolvedWithin(sim, at, 30);
    for (const severity of ['red', 'amber', 'green']) {
      expect(valueIn(text, `posture_alerts_resolved{portal="test",severity="${severity}",window="1d"}`), severity).toBe(expected[severity]);
      expect(valueIn(text, `posture_alerts_resolved{portal="test",severity="${severity}",window="7d"}`), severity).toBe(week[severity]);
      expect(valueIn(text, `posture_alerts_resolved{portal="test",severity="${severity}",window="30d"}`), severity).toBe(month[severity]);
      expect(month[severity], severity).toBeGreaterThan(week[severity]!);
    }
    expect(valueIn(text, 'posture_collection_success{portal="test",source="resolved"}')).toBe(1);
    expect(valueIn(text, 'posture_collection_duration_seconds{portal="test",source="resolved"}')).toBeGreaterThanOrEqual(0);
    // The acknowledgement families join the open alerts served beside the pass.
    expect(text).toContain('posture_alerts_time_to_acknowledge_alerts{portal="test",severity="red",window="30d"}');
    // Hourly: no second pass within the first ten minutes.
    while (clock.monotonic() < T0 + 10 * MINUTE) await serving.nextCycle();
    expect(passes(sim)).toHaveLength(1);
  });
});

describe('the resolved-alerts pass in once', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'posture-passes-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('runs on the first once, skips it within its interval (no families on stdout), and runs it again once the interval has passed', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = closing(await startSimulator({ clock, keys: [{ key: KEY }], moving: false, alerts: 40 }));
    // The portal's whole share: every slow source fits the run's window beside the live ones, so each runs when due.
    const once = () => runMain(['once'], { env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'test', POSTURE_STATE_DIR: join(dir, 'state'), POSTURE_REQUESTS_PER_MINUTE: '10' }, clock });

    const first = await once();
    expect(first.code, first.stderr).toBe(0);
    expect(passRequests(sim)).toHaveLength(1);
    expect(first.stdout).toContain('posture_alerts_resolved{portal="test",severity="red",window="1d"}');
    expect(first.stdout).toContain('posture_collection_success{portal="test",source="resolved"} 1');
    // Claimed in a file of its own, the entry's first: 0600 in 0700 folders; one folder per slow source (the pass, the
    // access settings, the directory), each run for the first time.
    const passes = join(dir, 'state', 'passes');
    expect(statSync(passes).mode & 0o777).toBe(0o700);
    const entries = readdirSync(passes).map((e) => join(passes, e));
    expect(entries).toHaveLength(3);
    for (const entry of entries) {
      expect(statSync(entry).mode & 0o777).toBe(0o700);
      expect(readdirSync(entry)).toEqual(['p000000000001']);
      expect(statSync(join(entry, 'p000000000001')).mode & 0o777).toBe(0o600);
    }

    // Ten minutes later, within the default 3600 s: the sources run, the pass does not.
    clock.advance(10 * MINUTE);
    const second = await once();
    expect(second.code, second.stderr).toBe(0);
    expect(passRequests(sim)).toHaveLength(1);
    expect(second.stdout).toContain('posture_collection_success{portal="test",source="alerts"} 1');
    expect(second.stdout).not.toContain('posture_alerts_resolved');
    // Of the pass's series, only its configured interval.
    expect(second.stdout.split('\n').filter((l) => l.includes('source="resolved"'))).toEqual(['posture_collection_interval_seconds{portal="test",source="resolved"} 3600']);

    // An hour after the first: it runs again.
    clock.advance(51 * MINUTE);
    const third = await once();
    expect(third.code, third.stderr).toBe(0);
    expect(passRequests(sim)).toHaveLength(2);
    expect(third.stdout).toContain('posture_alerts_resolved{portal="test",severity="red",window="1d"}');
    // The pass and the access settings (hourly) ran again, and each claim pruned the record before it; the directory (daily) did not.
    expect(entries.map((e) => readdirSync(e).join()).sort()).toEqual(['p000000000001', 'p000000000002', 'p000000000002']);
  });

  it('fits the pass in the first run\'s window: the open alerts leave it a request, so nothing waits for the next window', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    // More open alerts than a page of 50, where the default share of 5 leaves two requests beside Vitals and the device totals.
    const sim = closing(await startSimulator({ clock, keys: [{ key: KEY }], moving: false, alerts: 150 }));
    const open = [...sim.data(T0).alerts()].filter((a) => !a.resolved).length;
    expect(open).toBeGreaterThan(50);
    const once = (extra: Record<string, string> = {}) => runMain(['once'], { env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'test', POSTURE_STATE_DIR: join(dir, 'state'), POSTURE_PAGE_SIZE: '50', ...extra }, clock });
    const first = await once();
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('posture_collection_success{portal="test",source="resolved"} 1');
    // Vitals, the two device totals, the open alerts in one request of everything, and the pass: the share's 5, all in the
    // run's first window; the other slow sources (the access settings' 3 requests, the directory's 1) do not fit beside
    // them and are given back for a later run.
    const unresolved = sim.requests.filter((q) => q.path === '/alerts' && q.query.filter === 'allunresolved');
    expect(unresolved.map((q) => q.query.limit)).toEqual(['0']);
    expect(sim.requests).toHaveLength(5);
    expect(Math.max(...sim.requests.map((q) => q.time)) - T0).toBeLessThan(MINUTE);
    const sum = ['red', 'amber', 'green'].reduce((n, s) => n + (valueIn(first.stdout, `posture_alerts_open{portal="test",severity="${s}"}`) ?? NaN), 0);
    expect(sum).toBe(open);

    // Within the pass's interval the access settings given back by the first run are due: the open alerts leave them a
    // request and are read in one (a run with no slow source pages them by the two requests the share leaves them).
    clock.advance(10 * MINUTE);
    const before = sim.requests.length;
    const second = await once();
    expect(second.code, second.stderr).toBe(0);
    expect(sim.requests.slice(before).filter((q) => q.path === '/alerts').map((q) => [q.query.filter, q.query.limit])).toEqual([['allunresolved', '0']]);
  });

  it('gives a failed pass back: the next once tries again', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = closing(await startSimulator({ clock, keys: [{ key: KEY }], moving: false, alerts: 40 }));
    const once = () => runMain(['once'], { env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'test', POSTURE_STATE_DIR: join(dir, 'state'), POSTURE_MAX_RETRIES: '0' }, clock });
    // The portal refuses both reads of /alerts of the first run: the open alerts' page and the pass's.
    sim.addFault({ path: '/alerts', times: 2, fault: { kind: 'status', status: 400 } });
    const first = await once();
    expect(first.code).toBe(1);
    expect(first.stdout).toContain('posture_collection_success{portal="test",source="resolved"} 0');
    // A minute later, well within the interval: the failed pass was given back, so it runs.
    clock.advance(MINUTE);
    const second = await once();
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('posture_collection_success{portal="test",source="resolved"} 1');
    expect(passRequests(sim).map((r) => r.status)).toEqual([400, 200]);
  });

  it('runs the pass on every once when there is no state directory to remember it in', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = closing(await startSimulator({ clock, keys: [{ key: KEY }], moving: false, alerts: 40 }));
    // A path under a file cannot be created: the directory is not writable.
    const once = () => runMain(['once'], { env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_STATE_DIR: join('/dev/null', 'state') }, clock });
    expect((await once()).code).toBe(0);
    clock.advance(MINUTE);
    expect((await once()).code).toBe(0);
    expect(passRequests(sim)).toHaveLength(2);
  });
});
