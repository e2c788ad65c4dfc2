/**
 * Sources of their own interval below the live ones, in the plan: any such source plugs in (a few
 * requests hourly, a list read daily), its follow-up requests queue after every live request in
 * the plan's model of serve, and a list's pages in serve are the most that keep every run on time.
 * Figures worked by hand from docs/budget.md (share R per 61 s, 60 × R per hour).
 */
import { describe, expect, it } from 'vitest';
import { entryRuns, planPortal, servePlan, type PlanInput, type SlowSource } from '../../src/schedule/plan.js';
import { PRIORITY } from '../../src/schedule/scheduler.js';
import { checkTimeline } from '../../src/schedule/timeline.js';

const input = (over: Partial<PlanInput>): PlanInput => ({ requestsPerMinute: 5, pageSize: 500, vitalsTags: [], intervals: { vitals: 300, alerts: 300, devices: 300 }, ...over });
const perRun = (plan: ReturnType<typeof planPortal>) => Object.fromEntries(plan.sources.map((s) => [s.source, s.requestsPerRun]));
/** An access-posture source: 3 requests every hour. */
const ACCESS: SlowSource = { job: 'access', intervalSeconds: 3_600, requests: 3 };
/** A directory-users source: a list paged as /alerts, read daily. */
const users = (total?: number): SlowSource => ({ job: 'users', intervalSeconds: 86_400, requests: { paged: true, ...(total !== undefined && { total }) } });

describe('slow sources in the plan', () => {
  it('plugs in a source of 3 requests every hour and a list read daily beside the live sources', () => {
    // The live sources every 300 s at a share of 5: Vitals 1, devices 2, /alerts up to 5 − 1 − 2 = 2 pages: 60
    // per hour. Access 3 per hour; the users' list, 20,000 users: what one window leaves it beside the open
    // alerts (total unknown: 1 request) is 2 − 1 = 1 page, everything in one request, once a day: 1/24.
    const plan = planPortal(input({ slow: [ACCESS, users(20_000)] }));
    expect(plan.fits).toBe(true);
    expect(perRun(plan)).toEqual({ vitals: 1, alerts: 2, devices: 2, access: 3, users: 1 });
    expect(plan.requestsPerHour).toBeCloseTo(60 + 3 + 1 / 24, 9);
    expect(plan.sources.map((s) => [s.source, s.intervalSeconds])).toEqual([['vitals', 300], ['alerts', 300], ['devices', 300], ['access', 3_600], ['users', 86_400]]);
    // A portal that caps its pages at 500: 40 pages a day, 40/24 per hour.
    const capped = planPortal(input({ pageCap: 500, slow: [ACCESS, users(20_000)] }));
    expect(perRun(capped).users).toBe(40);
    expect(capped.requestsPerHour).toBeCloseTo(60 + 3 + 40 / 24, 9);
    expect(capped.fits).toBe(true);
    // While the list's total is unknown, its first run is one request (limit=0).
    expect(perRun(planPortal(input({ slow: [users()] }))).users).toBe(1);
  });

  it('queues a slow source\'s follow-up requests after every live request: 29 pages hourly make a Vitals run every 60 s late only as live follow-ups', () => {
    // Share 5: 29 requests span 6 windows. As follow-ups that go first (a live source's), Vitals due at
    // +60 s waits until the last of them, past its deadline at +120 s; as a slow source's, it goes first.
    const vitals = { name: 'vitals', priority: PRIORITY.vitals, requests: 1, intervalMs: 60_000, phaseMs: 0 };
    const pass = { name: 'pass', priority: PRIORITY.slow, requests: 29, intervalMs: 3_600_000, phaseMs: 0 };
    expect(checkTimeline([vitals, { ...pass, continuationPriority: PRIORITY.slowContinuation }], 5).late).toEqual([]);
    expect(checkTimeline([vitals, { ...pass, continuationPriority: PRIORITY.continuation }], 5).late[0]).toMatchObject({ name: 'vitals', startsAt: 60_000, deadline: 120_000 });
  });

  it('gives a slow list in serve the most pages one window leaves it, each page waiting for the gaps that make no live run late', () => {
    // Share 10, every live source every 300 s, 120 open alerts (1 page): one window leaves the resolved alerts
    // 10 − 1 − 2 − 1 = 6 pages; 2,650 of them in pages of 500 need 6, and 1 + 1 + 2 + 6 = 10 every 300 s run on time.
    const roomy = planPortal(input({ requestsPerMinute: 10, alertsTotal: 120, slow: [{ job: 'resolved', intervalSeconds: 3_600, requests: { paged: true, total: 2_650 } }] }));
    expect(roomy.pages.slow).toBe(6);
    expect(perRun(roomy).resolved).toBe(6);
    // Share 6, Vitals every 30 s (a run must start within 20 s of being due), devices every 70 s, /alerts every
    // 180 s with 30 open alerts: the window leaves 6 − 3 − 1 = 2 pages for 660 resolved alerts. A second page in
    // the first minute would fill the window a Vitals run due at +30 s needs (1 + 2 + 1 + 2 = 6): it waits until it
    // makes no live run late, so 2 pages run on time.
    const at = input({ requestsPerMinute: 6, alertsTotal: 30, intervals: { vitals: 30, alerts: 180, devices: 70 }, slow: [{ job: 'resolved', intervalSeconds: 3_600, requests: { paged: true, total: 660 } }] });
    const tight = planPortal(at);
    expect(tight.fits).toBe(true);
    expect(tight.pages.slow).toBe(2);
    expect(perRun(tight).resolved).toBe(2);
    const served = (slow: number) => servePlan([entryRuns({ ...at, name: '' }, { alerts: 1, slow })], 6).timeline.late;
    expect(served(1)).toEqual([]);
    expect(served(2)).toEqual([]);
  });
});
