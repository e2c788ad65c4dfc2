/**
 * The resolved-alerts pass: `/alerts?filter=resolved`, streamed and paged exactly as the open
 * alerts are (src/sources/alerts/run.ts: the same reader and record limits, the page size from the
 * plan, the total checked across pages, a page cap learned), with its own total remembered.
 */
import { slowPagesAllowed } from '../../schedule/plan.js';
import type { PortalMemory, RunContext } from '../../schedule/request.js';
import { PRIORITY } from '../../schedule/scheduler.js';
import { pageList } from '../pager.js';
import { ResolvedTally, type ResolvedAggregate } from './fold.js';

/** What the pass remembers of a portal between passes (resolvedAlertsTotal), beside what the open alerts remember (the page cap is the one /alerts has). */
export type ResolvedMemory = PortalMemory;

/** The filter of the pass on /alerts (spec 4.4). */
const FILTER = 'resolved';

/**
 * One pass: reads every resolved alert, page by page (src/sources/pager.ts), and folds them against
 * the wall time at its start. Throws on failure (the pass then has no value: never a partial count).
 */
export async function runResolvedAlerts(ctx: RunContext & { readonly memory: ResolvedMemory }, onPageSize: (limit: number) => void = () => {}): Promise<ResolvedAggregate> {
  const { portal, memory, logger } = ctx;
  const nowSeconds = ctx.clock.now() / 1000;
  const tally = new ResolvedTally(nowSeconds);
  await pageList(ctx, {
    endpoint: '/alerts',
    query: { filter: FILTER },
    lastTotal: memory.resolvedAlertsTotal,
    // One request while its total is unknown, then what the window leaves beside the other sources and the open alerts' pages; in serve no more than the plan leaves it.
    pagesAllowed: () => Math.min(ctx.pagesPlanned?.().slow ?? Infinity, slowPagesAllowed({ requestsPerMinute: ctx.scheduler.share.effective, pageSize: portal.pageSize, vitalsTags: portal.vitalsTags, pageCap: memory.pageCap }, memory.alertsTotal, memory.resolvedAlertsTotal)),
    sink: (offset) => tally.sink(logger, offset),
    // A slow source: its pages go after every live source's requests.
    priority: PRIORITY.slow,
    onPage: (result) => tally.add(result),
    // The first pass reads in one request while the total is unknown; its other pages (a portal that caps them) as planned from it.
    onTotal: (total) => (memory.resolvedAlertsTotal = total),
    onPageSize,
    largerPage: 'planned a larger page of resolved alerts to fit the rate budget',
    capFields: { filter: FILTER },
    changed: (total, then) => `/alerts?filter=resolved changed while it was being paged (total ${total}, then ${then}): the response times would be off, so this pass is dropped; a larger POSTURE_PAGE_SIZE avoids it.`,
    truncated: (received, total) => `/alerts?filter=resolved returned ${received} records but its total says ${total}: the list was truncated or moved while paged.`,
  });
  return tally.finish(portal.alertSlas);
}
