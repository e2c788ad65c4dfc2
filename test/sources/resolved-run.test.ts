// The resolved-alerts pass against the simulated portal (spec 4.4: filter=resolved; 4.0: offset and
// limit, 0 = everything): the pages it asks for (the open alerts' page policy, docs/budget.md), the
// aggregate of all of them equal to the fold of the whole list, the total it remembers, a portal
// that caps its pages, and a list that changes while it is paged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { ListMismatchError } from '../../src/errors.js';
import { startSimulator, type AlertRecord, type Simulator } from '../../src/simulator/index.js';
import { SLOW_MODULES } from '../../src/sources/index.js';
import { foldResolved } from '../../src/sources/resolved/fold.js';
import { runResolvedAlerts, type ResolvedMemory } from '../../src/sources/resolved/run.js';
import { runContexts, type RunSetup } from '../support/run-context.js';

const UNSET = '0001-01-01T00:00:00.0000000';
const HOUR = 3600;

describe('the resolved-alerts pass', () => {
  const setup = runContexts();
  const clock = new FakeClock();
  const now = clock.now() / 1000;
  const at = (s: number) => `${new Date((now - s) * 1000).toISOString().slice(0, 19)}.0000000`;
  /** `n` resolved alerts: alert i created (i + 2) hours ago, resolved i hours ago; every third Amber; every other acknowledged an hour after creation. */
  const resolvedAlerts = (n: number): AlertRecord[] =>
    Array.from({ length: n }, (_, i) => ({
      state: i % 3 === 2 ? 'Amber' : 'Red', product: 'Okta, Identity', status: 'Incident', item: `host-${i}`, issue: 'issue', details: 'details', itemEntityType: 'device', ownerName: 'ann',
      timestamp: at((i + 2) * HOUR), acknowledgedTime: i % 2 === 0 ? at((i + 1) * HOUR) : UNSET, assignedTime: UNSET, resolved: true, acknowledged: i % 2 === 0,
      resolvedBy: 'ann', resolvedTime: at(i * HOUR), itemId: '00000000-0000-0000-0000-000000000000', inactiveUntil: UNSET, hasLinkedDevice: true,
    }) as AlertRecord);
  /** One open alert, which filter=resolved leaves out. */
  const openAlert = { ...resolvedAlerts(1)[0]!, resolved: false, resolvedTime: UNSET, resolvedBy: '' };
  let sim: Simulator;
  let capped: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ rateLimit: false, moving: false, clock });
    capped = await startSimulator({ rateLimit: false, moving: false, clock, maxPageSize: 4 });
  });
  afterAll(async () => {
    await Promise.all([sim.close(), capped.close()]);
  });

  async function run(portal: Simulator, alerts: AlertRecord[], options: RunSetup, memory: ResolvedMemory = {}) {
    portal.setFixture({ alerts });
    const { ctx, logger } = setup(portal, clock, options);
    Object.assign(ctx.memory, memory);
    const from = portal.requests.length;
    const aggregate = await runResolvedAlerts(ctx);
    const pages = portal.requests.slice(from).map((q) => {
      expect([q.path, q.query.filter]).toEqual(['/alerts', 'resolved']);
      return [Number(q.query.offset), Number(q.query.limit)];
    });
    return { aggregate, pages, memory: ctx.memory as ResolvedMemory, logger };
  }

  it('reads the whole list in one request while its total is unknown: the one request the plan counts for a first pass', async () => {
    const list = resolvedAlerts(7);
    const { aggregate, pages, memory } = await run(sim, [openAlert, ...list], { pageSize: 3 });
    expect(pages).toEqual([[0, 0]]);
    expect(aggregate).toEqual(foldResolved(list, now));
    expect(memory).toEqual({ resolvedAlertsTotal: 7 });
  });

  it('reads every page of filter=resolved once its last total is known, folds them as the whole list and remembers the total', async () => {
    // Share 10: 10 - 1 Vitals - 2 devices - 1 page of open alerts (total unknown) = 6 pages; 7 alerts in pages of 3 need 3.
    const list = resolvedAlerts(7);
    const { aggregate, pages, memory } = await run(sim, [openAlert, ...list], { pageSize: 3 }, { resolvedAlertsTotal: 5 });
    expect(pages).toEqual([[0, 3], [3, 3], [6, 3]]);
    expect(aggregate).toEqual(foldResolved(list, now));
    // Red at 0, 1, 3, 4, 6 (hours ago): 2 h each.
    expect(aggregate.resolution.red![0]).toEqual({ resolved: 5, count: 5, sum: 10 * HOUR, quantiles: [2 * HOUR, 2 * HOUR], overSla: 0 });
    expect(memory).toEqual({ resolvedAlertsTotal: 7 });
  });

  it('runs as the source module does, with no page size reported (that gauge is the open alerts\')', async () => {
    sim.setFixture({ alerts: resolvedAlerts(4) });
    const sizes: number[] = [];
    const aggregate = await SLOW_MODULES.resolved.run(setup(sim, clock, { pageSize: 0 }).ctx, { onPageSize: (limit) => sizes.push(limit) });
    expect(sizes).toEqual([]);
    expect(aggregate.resolution.red![0]!.resolved).toBe(3);
    expect(SLOW_MODULES.resolved.invalidOf(aggregate)).toBe(0);
  });

  it('plans larger pages from the last pass\'s total when the configured ones would not fit the share', async () => {
    // Share 6: 6 - 1 Vitals - 2 devices - 1 page of open alerts (2 known) = 2 pages;
    // 20 resolved alerts known: pages of 10, then the rest in one request.
    const { pages, logger } = await run(sim, resolvedAlerts(20), { pageSize: 2, share: 6 }, { resolvedAlertsTotal: 20, alertsTotal: 2 });
    expect(pages).toEqual([[0, 10], [10, 0]]);
    expect(logger.records().filter((r) => r.msg === 'planned a larger page of resolved alerts to fit the rate budget').map((r) => [r.limit, r.offset])).toEqual([[10, 0], [0, 10]]);
  });

  it('pages by what a portal that caps its pages returns, and remembers the cap with the open alerts\' memory', async () => {
    // At the default share of 5, the window leaves the pass 1 page beside Vitals, devices and /alerts: everything (limit=0) asked at first.
    const { aggregate, pages, memory, logger } = await run(capped, resolvedAlerts(10), { pageSize: 5 }, { alertsTotal: 99 });
    expect(pages).toEqual([[0, 0], [4, 4], [8, 4]]);
    expect(memory).toEqual({ alertsTotal: 99, resolvedAlertsTotal: 10, pageCap: 4 });
    // The cap's log line says which list of /alerts it was learned on.
    expect(logger.records().filter((r) => r.msg === 'the portal caps /alerts pages: paging by what it returns').map((r) => [r.filter, r.cap])).toEqual([['resolved', 4]]);
    expect(aggregate.resolution.amber![2]!.resolved).toBe(3);
  });

  it('numbers and counts a malformed record by its place in the whole list', async () => {
    const list = resolvedAlerts(7);
    list[4] = { ...list[4]!, resolvedTime: UNSET };
    const { aggregate, logger } = await run(sim, list, { pageSize: 3 });
    expect(aggregate.invalid).toBe(1);
    expect(logger.records().filter((r) => r.level === 'warn').map((r) => [r.source, r.index, r.reason])).toEqual([['resolved', 4, 'resolvedTime: unset (the minimum date) on a resolved alert']]);
  });

  it('drops the pass when the list changes while it is paged', async () => {
    // The first page's total says one more than the second's: the list moved between the pages.
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'total-mismatch', delta: 1 } });
    const err = await run(sim, resolvedAlerts(7), { pageSize: 3 }).catch((e: unknown) => e);
    sim.clearFaults();
    expect(err).toBeInstanceOf(ListMismatchError);
    expect(err).toMatchObject({ endpoint: '/alerts', expected: 8, received: 7, message: '/alerts?filter=resolved changed while it was being paged (total 8, then 7): the response times would be off, so this pass is dropped; a larger POSTURE_PAGE_SIZE avoids it.' });
  });

  it('fails when the pages end before the total', async () => {
    sim.addFault({ path: '/alerts', times: Infinity, fault: { kind: 'total-mismatch', delta: 3 } });
    const err = await run(sim, resolvedAlerts(7), { pageSize: 5 }).catch((e: unknown) => e);
    sim.clearFaults();
    expect(err).toMatchObject({ endpoint: '/alerts', expected: 10, received: 7, message: '/alerts?filter=resolved returned 7 records but its total says 10: the list was truncated or moved while paged.' });
  });
});
