// The /alerts run against the simulated portal (spec 4.4: filter=allunresolved; 4.0: offset and
// limit, 0 = everything): the pages it asks for, the aggregate of all of them, the total checked
// across pages, a portal that caps its pages, and what the run remembers for the next. Page sizes are
// worked out from docs/budget.md's rule: the configured size while the pages fit the share's pages
// (share 10 - 1 Vitals - 2 devices = 7 here), else larger pages, and one request when only one fits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { ListMismatchError } from '../../src/errors.js';
import { oneShotLeftSeconds } from '../../src/schedule/one-shot.js';
import { createPortal, listen, startSimulator, type AlertRecord, type Simulator } from '../../src/simulator/index.js';
import { alerts } from '../../src/sources/alerts/index.js';
import { runAlerts } from '../../src/sources/alerts/run.js';
import { runContexts, type RunSetup } from '../support/run-context.js';

const UNSET = '0001-01-01T00:00:00.0000000';

/** `n` open alerts: every third Amber, the others Red; products Okta and Jamf by turns. */
function openAlerts(n: number): AlertRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    state: i % 3 === 2 ? 'Amber' : 'Red', product: i % 2 === 0 ? 'Okta, Identity' : 'Jamf, MDM', status: 'Incident',
    item: `host-${i}`, issue: 'issue', details: 'details', itemEntityType: 'device', ownerName: '',
    timestamp: '2026-11-20T10:00:00.0000000', acknowledgedTime: UNSET, assignedTime: UNSET, resolved: false, acknowledged: false,
    resolvedBy: '', resolvedTime: UNSET, itemId: '00000000-0000-0000-0000-000000000000', inactiveUntil: UNSET, hasLinkedDevice: true,
  }) as AlertRecord);
}

describe('the /alerts run', () => {
  const setup = runContexts();
  let sim: Simulator;
  let capped: Simulator;
  /** A portal that answers every /alerts request with 6 records from `offset`, whatever `limit` asks; the limits asked. */
  let sixes: Simulator;
  const asked: number[] = [];
  const clock = new FakeClock();
  beforeAll(async () => {
    sim = await startSimulator({ rateLimit: false, moving: false, clock });
    capped = await startSimulator({ rateLimit: false, moving: false, clock, maxPageSize: 4 });
    const portal = createPortal({ rateLimit: false, moving: false, clock });
    const server = await listen((req, res) => {
      const url = new URL(req.url!, 'http://x');
      asked.push(Number(url.searchParams.get('limit')));
      url.searchParams.set('limit', '6');
      req.url = url.pathname + url.search;
      portal.handle(req, res);
    }, '127.0.0.1');
    sixes = { ...portal.control, baseUrl: `${server.origin}${new URL(sim.baseUrl).pathname}`, apiKey: portal.keys[0]!.key, close: () => server.close(() => portal.cancelTimers()) };
  });
  afterAll(async () => {
    await Promise.all([sim.close(), capped.close(), sixes.close()]);
  });

  /** Runs /alerts on `portal` with `alerts` served, returning the aggregate, the pages asked ([offset, limit]) and the page sizes reported. */
  async function run(portal: Simulator, alerts: AlertRecord[], options: RunSetup, memory: { alertsTotal?: number; pageCap?: number } = {}) {
    portal.setFixture({ alerts });
    const { ctx, logger } = setup(portal, clock, options);
    Object.assign(ctx.memory, memory);
    const from = portal.requests.length;
    const sizes: number[] = [];
    const aggregate = await runAlerts(ctx, (limit) => sizes.push(limit));
    const pages = portal.requests.slice(from).map((q) => {
      expect([q.path, q.query.filter]).toEqual(['/alerts', 'allunresolved']);
      return [Number(q.query.offset), Number(q.query.limit)];
    });
    return { aggregate, pages, sizes, memory: ctx.memory, logger };
  }

  it('reads every page of the configured size, adds them up and remembers the total', async () => {
    // 7 alerts: Red at 0, 1, 3, 4, 6; Amber at 2, 5.
    const { aggregate, pages, sizes, memory, logger } = await run(sim, openAlerts(7), { pageSize: 3 });
    expect(pages).toEqual([[0, 3], [3, 3], [6, 3]]);
    expect(sizes).toEqual([3, 3, 3]);
    expect(aggregate.open).toEqual({ red: 5, amber: 2, green: 0 });
    expect(aggregate.byIntegration.get('Okta')?.get('red')?.get('incident')).toBe(3); // 0, 4, 6
    expect(aggregate.byIntegration.get('Jamf')?.get('red')?.get('incident')).toBe(2); // 1, 3
    expect(memory.alertsTotal).toBe(7);
    expect(logger.records().filter((r) => r.level !== 'debug')).toEqual([]);
  });

  it('tells the exporter each page size through the source module\'s hooks', async () => {
    sim.setFixture({ alerts: openAlerts(7) });
    const sizes: number[] = [];
    const aggregate = await alerts.run(setup(sim, clock, { pageSize: 3 }).ctx, { onPageSize: (limit) => sizes.push(limit) });
    expect(sizes).toEqual([3, 3, 3]);
    expect(aggregate.open.red).toBe(5);
  });

  it('asks for everything in one request with a page size of 0', async () => {
    const { aggregate, pages, sizes, memory } = await run(sim, openAlerts(5), { pageSize: 0 });
    expect(pages).toEqual([[0, 0]]);
    expect(sizes).toEqual([0]);
    expect(aggregate.open.red).toBe(4);
    expect(memory.alertsTotal).toBe(5);
  });

  it('numbers a malformed record by its place in the whole list, across pages', async () => {
    const alerts = openAlerts(7);
    alerts[4] = { ...alerts[4]!, product: 42 } as unknown as AlertRecord;
    const { aggregate, logger } = await run(sim, alerts, { pageSize: 3 });
    expect(aggregate.invalid).toBe(1);
    expect(logger.records().filter((r) => r.level === 'warn').map((r) => [r.source, r.index])).toEqual([['alerts', 4]]);
    expect(aggregate.open.red).toBe(4);
  });

  it('plans larger pages when the configured ones would not fit the share, from the last run\'s total', async () => {
    // Share 5: 5 - 1 - 2 = 2 pages. 20 alerts known from the last run: pages of 10, then the rest in one request.
    const { pages, sizes, logger } = await run(sim, openAlerts(20), { pageSize: 2, share: 5 }, { alertsTotal: 20 });
    expect(pages).toEqual([[0, 10], [10, 0]]);
    expect(sizes).toEqual([10, 0]);
    expect(logger.records().filter((r) => r.msg === 'planned a larger /alerts page to fit the rate budget').map((r) => [r.pageSize, r.limit, r.offset, r.total])).toEqual([
      [2, 10, 0, 20],
      [2, 0, 10, 20],
    ]);
  });

  it('uses the configured size for the first page when no total is known yet', async () => {
    const { pages, sizes } = await run(sim, openAlerts(20), { pageSize: 2, share: 5 });
    expect(pages).toEqual([[0, 2], [2, 0]]);
    expect(sizes).toEqual([2, 0]);
  });

  it('pages by what a portal that caps its pages returns, and remembers the cap', async () => {
    const { aggregate, pages, sizes, memory, logger } = await run(capped, openAlerts(10), { pageSize: 5 });
    expect(pages).toEqual([[0, 5], [4, 4], [8, 4]]);
    expect(sizes).toEqual([5, 5, 5]);
    expect(memory).toEqual({ alertsTotal: 10, pageCap: 4 });
    expect(aggregate.open).toEqual({ red: 7, amber: 3, green: 0 });
    const info = logger.records().filter((r) => r.msg === 'the portal caps /alerts pages: paging by what it returns');
    expect(info.map((r) => [r.asked, r.cap, r.total])).toEqual([[5, 4, 10]]);
  });

  it('asks a portal whose cap it knows for no more than the cap, without logging it again', async () => {
    const { pages, memory, logger } = await run(capped, openAlerts(10), { pageSize: 5 }, { alertsTotal: 10, pageCap: 4 });
    expect(pages).toEqual([[0, 4], [4, 4], [8, 4]]);
    expect(memory.pageCap).toBe(4);
    expect(logger.records().filter((r) => r.level === 'info')).toEqual([]);
  });

  it('forgets a cap it learned when a page comes back larger than it', async () => {
    asked.length = 0;
    // Cap 4 known: the first page asks for 4 and gets 6. The 4 left fit one page of the configured 5.
    const { pages, memory, aggregate } = await run(sixes, openAlerts(10), { pageSize: 5 }, { alertsTotal: 10, pageCap: 4 });
    expect(asked).toEqual([4, 5]);
    expect(pages).toEqual([[0, 6], [6, 6]]);
    expect(memory).toEqual({ alertsTotal: 10 });
    expect(aggregate.open).toEqual({ red: 7, amber: 3, green: 0 });
  });

  it('drops the run when the total changes between pages', async () => {
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'total-mismatch', delta: 0 } });
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'total-mismatch', delta: 1 } });
    const err = await run(sim, openAlerts(7), { pageSize: 3 }).catch((e: unknown) => e);
    sim.clearFaults();
    expect(err).toBeInstanceOf(ListMismatchError);
    expect(err).toMatchObject({
      endpoint: '/alerts',
      expected: 7,
      received: 8,
      message: "/alerts changed while it was being paged (total 7, then 8): the counts would be off, so this run's alerts are dropped; a larger POSTURE_PAGE_SIZE avoids it.",
    });
  });

  it('fails when the pages end before the total', async () => {
    // The total says 10 on every page, but only 7 alerts exist: the page after them is empty.
    sim.addFault({ path: '/alerts', times: Infinity, fault: { kind: 'total-mismatch', delta: 3 } });
    const err = await run(sim, openAlerts(7), { pageSize: 5 }).catch((e: unknown) => e);
    sim.clearFaults();
    expect(err).toBeInstanceOf(ListMismatchError);
    expect(err).toMatchObject({ endpoint: '/alerts', expected: 10, received: 7, message: '/alerts returned 7 records but its total says 10: the list was truncated or moved while paged.' });
  });

  it('asks the rest with the configured size when it fits, counted from the first page\'s total', async () => {
    // Share 5: 2 pages. No total known: the first page asks 5; its total (7) leaves 2, which fit one page of 5.
    const { pages, sizes, logger } = await run(sim, openAlerts(7), { pageSize: 5, share: 5 });
    expect(pages).toEqual([[0, 5], [5, 5]]);
    expect(sizes).toEqual([5, 5]);
    expect(logger.records().filter((r) => r.level === 'info')).toEqual([]);
  });

  it('learns the cap of a portal asked for everything (limit 0), and reports the run\'s page size as 0', async () => {
    // Share 3: 3 - 1 - 2 leaves no page beside the other sources, so the 10 known alerts are asked in one
    // request (limit 0). The portal returns 4 and says limit 4: its cap, asked from then on.
    const { pages, sizes, memory, logger } = await run(capped, openAlerts(10), { pageSize: 2, share: 3 }, { alertsTotal: 10 });
    expect(pages).toEqual([[0, 0], [4, 4], [8, 2]]); // the last 2 fit the configured size
    expect(sizes).toEqual([0, 0, 0]);
    expect(memory).toEqual({ alertsTotal: 10, pageCap: 4 });
    const info = logger.records().filter((r) => r.msg === 'the portal caps /alerts pages: paging by what it returns');
    expect(info.map((r) => [r.asked, r.cap, r.total])).toEqual([[0, 4, 10]]);
  });

  /** A one-shot deadline for `requests` more requests from now, on a share of `share` without retries. */
  const leftMs = (requests: number, share: number) => oneShotLeftSeconds({ requests, share, maxRetries: 0, maxRetryAfterSeconds: 120, windowInUse: true }) * 1000;

  it('extends a one-shot run\'s deadline to the pages the total leaves after the first', async () => {
    // 30 alerts, no total known, share 5 (2 pages): the first page asks 3; the 27 left are 9 pages of 3
    // (2 windows of 5 requests), though the plan then asks them all in one request.
    sim.setFixture({ alerts: openAlerts(30) });
    const start = clock.monotonic();
    const { ctx } = setup(sim, clock, { pageSize: 3, share: 5, maxRetries: 0, deadline: start + 1000, cap: start + 86_400_000 });
    const from = sim.requests.length;
    await runAlerts(ctx, () => {});
    expect(sim.requests.slice(from).map((q) => [Number(q.query.offset), Number(q.query.limit)])).toEqual([[0, 3], [3, 0]]);
    expect(clock.monotonic()).toBe(start);
    expect(ctx.deadline.at).toBe(start + leftMs(9, 5));
    expect(leftMs(9, 5)).toBeGreaterThan(leftMs(5, 5));
    expect(leftMs(9, 5)).toBeLessThan(leftMs(11, 5));
  });

  it('learns no cap from a page shorter than asked whose limit says otherwise, and fails the run on the total', async () => {
    // The total says 12 but 7 alerts exist. Share 3 leaves one page: all asked (limit 0), 7 come back, limit 0:
    // no cap. The 5 the total leaves take one more request of everything; it comes back empty.
    sim.addFault({ path: '/alerts', times: Infinity, fault: { kind: 'total-mismatch', delta: 5 } });
    sim.setFixture({ alerts: openAlerts(7) });
    const start = clock.monotonic();
    const { ctx, logger } = setup(sim, clock, { pageSize: 2, share: 3, maxRetries: 0, deadline: start + 1000, cap: start + 86_400_000 });
    ctx.memory.alertsTotal = 12;
    const from = sim.requests.length;
    const err = await runAlerts(ctx, () => {}).catch((e: unknown) => e);
    sim.clearFaults();
    expect(err).toMatchObject({ endpoint: '/alerts', expected: 12, received: 7 });
    expect(sim.requests.slice(from).map((q) => [Number(q.query.offset), Number(q.query.limit)])).toEqual([[0, 0], [7, 0]]);
    expect(ctx.memory).toEqual({ alertsTotal: 12 });
    expect(logger.records().filter((r) => r.msg === 'the portal caps /alerts pages: paging by what it returns')).toEqual([]);
    expect(ctx.deadline.at).toBe(start + leftMs(1, 3));
    expect(leftMs(1, 3)).toBeLessThan(leftMs(5, 3));
  });

  it('ends on an empty list after one request', async () => {
    const { aggregate, pages, memory } = await run(sim, [], { pageSize: 3 });
    expect(pages).toEqual([[0, 3]]);
    expect(aggregate.open).toEqual({ red: 0, amber: 0, green: 0 });
    expect(memory.alertsTotal).toBe(0);
  });
});
