// Sources of their own interval beside the live ones, as `serve` runs them on the fake clock against
// the simulated portal: the resolved-alerts pass (a slow source) never outranks a live source, so a
// long pass makes none late; the open alerts' pages are fitted to the plan check-config accepted, so
// what check-config counts is what serve sends; and what the portal teaches (a total, a page cap)
// that makes the plan late is said once. The oracles are the portal's own request log and records.
import { describe, expect, it } from 'vitest';
import { startServe } from '../../src/runtime/serve.js';
import { explainPlan } from '../../src/schedule/explain.js';
import { checkServeConfig, planOf, type Learned } from '../../src/schedule/fit.js';
import type { SimRequest, Simulator } from '../../src/simulator/index.js';
import { maxInAnyWindow } from '../support/window.js';
import { portalWithConfig, serveAfterEach, T0 } from './support.js';

const KEY = 'sim-slow-sources-key-0123456789ab';
const { closing, stopping } = serveAfterEach();
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The requests of one list, `/alerts?filter=<filter>`. */
const listed = (sim: Simulator, filter: string): SimRequest[] => sim.requests.filter((q) => q.path === '/alerts' && q.query.filter === filter);
/** The runs of a list: its requests grouped at each first page (offset 0). */
function runsOf(requests: readonly SimRequest[]): SimRequest[][] {
  const runs: SimRequest[][] = [];
  for (const q of requests) {
    if ((q.query.offset ?? '0') === '0') runs.push([]);
    runs.at(-1)!.push(q);
  }
  return runs;
}

/**
 * Every live source ran every 300 s in the first 3 h: 36 runs, the first at the start (Vitals 1
 * request a run, devices 2, the open alerts one list a run); every answer a 200, and no more than
 * the share's 5 requests in any window.
 */
function expectLiveOnTimeFor3Hours(sim: Simulator): void {
  const inFirstHours = sim.requests.filter((q) => q.time < T0 + 3 * HOUR);
  expect(inFirstHours.filter((q) => q.path === '/vitals')).toHaveLength(36);
  expect(inFirstHours.filter((q) => q.path === '/devices')).toHaveLength(72);
  expect(runsOf(inFirstHours.filter((q) => q.path === '/alerts' && q.query.filter === 'allunresolved'))).toHaveLength(36);
  expect(sim.requests.every((q) => q.status === 200)).toBe(true);
  expect(maxInAnyWindow(sim.requests.map((q) => q.time))).toBeLessThanOrEqual(5);
}

describe('a slow source beside the live ones in serve', () => {
  it('runs the default configuration for 3 h against a portal that caps pages at 200 with 30 days of resolved history: a pass of 29 pages, and no late run', async () => {
    // Frozen data: a list that moves while a pass of 29 pages is read is dropped (the pages would not add up), which is not what this test is about.
    const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { maxPageSize: 200, resolvedHistoryDays: 30, alerts: 300, moving: false }, { POSTURE_LISTEN: '127.0.0.1:0' });
    expect(checkServeConfig(config)).toEqual([]);
    let resolved = 0;
    for (const a of sim.data().alerts()) if (a.resolved) resolved++;
    const serving = stopping(await startServe(config, { clock, logger }));
    while (clock.monotonic() < T0 + 3 * HOUR) await serving.nextCycle();

    // Every pass read the whole list, 200 a page: 29 pages of the 5,676 resolved alerts (ceil(5676 / 200) = 29).
    expect(Math.ceil(resolved / 200)).toBe(29);
    const passes = runsOf(listed(sim, 'resolved'));
    expect(passes.length).toBeGreaterThanOrEqual(3);
    for (const pass of passes.slice(0, 3)) expect(pass).toHaveLength(29);
    // No late run, and no failed one: not a warning or an error logged.
    expect(logger.records().filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    expectLiveOnTimeFor3Hours(sim);
  }, 60_000);

  it('runs the default configuration for 3 h beside 20,000 directory users in pages capped at 200: the directory read whole once, the access settings hourly, and no late run', async () => {
    const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { maxPageSize: 200, alerts: 300, moving: false }, { POSTURE_LISTEN: '127.0.0.1:0' });
    const day = (d: number) => `${new Date(T0 - d * 86_400_000).toISOString().slice(0, 23)}0000`;
    sim.setFixture({ directoryUsers: Array.from({ length: 20_000 }, (_, i) => ({ name: 'n', email: 'e', lastActivity: day(i % 365), lastFailedLogin: { lastLoginTime: day(i % 9) } })) });
    expect(checkServeConfig(config)).toEqual([]);
    const serving = stopping(await startServe(config, { clock, logger }));
    while (clock.monotonic() < T0 + 3 * HOUR) await serving.nextCycle();
    // No late run, and no failed one: not a warning or an error logged.
    expect(logger.records().filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    // The directory (daily): one run in 3 h, every user once in 100 pages of 200.
    const users = sim.requests.filter((q) => q.path === '/users');
    expect(runsOf(users)).toHaveLength(1);
    expect(users.map((q) => Number(q.query.offset ?? 0)).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i * 200));
    // The access settings (hourly): each list three times in 3 h, at the start and every hour.
    for (const list of ['users', 'roles', 'teams']) expect(sim.requests.filter((q) => q.path === `/settings/usermanagement/${list}`), list).toHaveLength(3);
    expectLiveOnTimeFor3Hours(sim);
    const scraped = serving.exporter.samples();
    expect(scraped.find((x) => x.name === 'posture_directory_users')?.value).toBe(20_000);
  }, 60_000);

  it('runs POSTURE_INTERVAL_SECONDS=60 with 1,000 open alerts on time: check-config counts the one /alerts request a run then sends', async () => {
    const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { alerts: 1_000, moving: false }, { POSTURE_LISTEN: '127.0.0.1:0', POSTURE_INTERVAL_SECONDS: '60' });
    const open = [...sim.data().alerts()].filter((a) => !a.resolved).length;
    expect(open).toBeGreaterThan(500);
    // Accepted, counting /alerts as 1 request a run: Vitals 1, devices 2 and /alerts 2 pages of 500 would be 5
    // requests a minute where 5 can start per 61 s; with everything in one request, 4 a minute fit.
    expect(checkServeConfig(config)).toEqual([]);
    expect(planOf(config.portals[0]!).sources.find((s) => s.source === 'alerts')!.requestsPerRun).toBe(1);
    expect(explainPlan(config)).toContain('  alerts  every    60 s: 1 request(s) per run (page 500, grown so one run uses at most 1 request(s) once the total is known, 2 in a once/Lambda run (1 in one that runs a slow source (the resolved-alerts pass, access, directory))), 60 per hour');
    const serving = stopping(await startServe(config, { clock, logger }));
    while (clock.monotonic() < T0 + HOUR) await serving.nextCycle();

    const runs = runsOf(listed(sim, 'allunresolved'));
    expect(runs.length).toBeGreaterThanOrEqual(60);
    // Each run sent the one request check-config counted: everything at once.
    for (const run of runs) expect(run.map((q) => q.query.limit)).toEqual(['0']);
    expect(logger.records().filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
    expect(maxInAnyWindow(sim.requests.map((q) => q.time))).toBeLessThanOrEqual(5);
  }, 60_000);

  it('says once when what the portal taught makes the plan late: 1,000 open alerts in pages capped at 200 every 60 s, with the intervals that fit', async () => {
    const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { alerts: 1_000, moving: false, maxPageSize: 200 }, { POSTURE_LISTEN: '127.0.0.1:0', POSTURE_INTERVAL_SECONDS: '60' });
    const open = [...sim.data().alerts()].filter((a) => !a.resolved).length;
    const pages = Math.ceil(open / 200);
    expect(pages).toBeGreaterThanOrEqual(5);
    // As configured (nothing learned yet) the plan fits.
    expect(checkServeConfig(config)).toEqual([]);
    const serving = stopping(await startServe(config, { clock, logger }));
    while (clock.monotonic() < T0 + 10 * MINUTE) await serving.nextCycle();
    // Learned: the total and the cap. Vitals 1, devices 2 and /alerts `pages` every 60 s cannot run at 5 per 61 s.
    const said = logger.records().filter((l) => typeof l.msg === 'string' && l.msg.startsWith("what the portal's answers taught"));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ level: 'warn', share: 5, learned: [{ portal: 'test', alertsTotal: open, pageCap: 200 }] });
    // 60 runs an hour of 1 + 2 + `pages` requests, the resolved-alerts pass's 1, the access settings' 3 and the directory's
    // 1 a day, against the share's 300.
    expect(said[0]!.msg).toContain(`the intervals need ${Math.ceil(60 * (3 + pages) + 1 + 3 + 1 / 24)} requests per hour but the share allows 300 (5/min): set `);
    // Each way out it names fits with what was learned, as check-config would plan it; the plan as configured does not.
    const p = config.portals[0]!;
    // What was learned, as said: the open alerts' total and the cap, and the totals of the slow sources' lists.
    const { portal: _, ...learned } = (said[0]!.learned as Array<Learned & { portal: string }>)[0]!;
    expect(learned).toMatchObject({ alertsTotal: open, pageCap: 200 });
    expect(planOf(p, learned).fits).toBe(false);
    const named = (re: RegExp) => Number(re.exec(said[0]!.msg as string)?.[1]);
    // /alerts alone cannot fit beside the slow sources' first requests: the shared interval, or the share.
    expect(said[0]!.msg).toMatch(/: set POSTURE_INTERVAL_SECONDS=\d+, or raise POSTURE_REQUESTS_PER_MINUTE to \d+\.$/);
    const every = named(/POSTURE_INTERVAL_SECONDS=(\d+)/);
    const share = named(/raise POSTURE_REQUESTS_PER_MINUTE to (\d+)/);
    expect(planOf({ ...p, intervals: { vitals: every, alerts: every, devices: every } }, learned).fits).toBe(true);
    expect(planOf({ ...p, requestsPerMinute: share }, learned).fits).toBe(true);
    expect(planOf({ ...p, requestsPerMinute: share - 1 }, learned).fits).toBe(false);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
  }, 60_000);
});
