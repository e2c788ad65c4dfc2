/**
 * The directory run: `/users?filter=all`, paged as the open alerts are (src/sources/pager.ts: the
 * page size from the plan, the total checked across pages, a page cap learned), below every live
 * source, counted against the wall time at its start.
 */
import { slowPagesAllowed } from '../../schedule/plan.js';
import type { RunContext } from '../../schedule/request.js';
import { PRIORITY } from '../../schedule/scheduler.js';
import { pageList } from '../pager.js';
import { DirectoryTally, type DirectoryAggregate } from './fold.js';

/** One read of every directory user, page by page. Throws on failure (a 403 fails it: never a partial count). */
export async function runDirectory(ctx: RunContext): Promise<DirectoryAggregate> {
  const { portal, memory, logger } = ctx;
  const tally = new DirectoryTally(ctx.clock.now() / 1000, portal.directoryInactiveDays);
  await pageList(ctx, {
    endpoint: '/users',
    query: { filter: 'all' },
    lastTotal: memory.directoryUsersTotal,
    // One request while the total is unknown, then what a window leaves beside the live sources; in serve no more than the plan leaves it.
    pagesAllowed: () => Math.min(ctx.pagesPlanned?.().slow ?? Infinity, slowPagesAllowed({ requestsPerMinute: ctx.scheduler.share.effective, pageSize: portal.pageSize, vitalsTags: portal.vitalsTags, pageCap: memory.pageCap }, memory.alertsTotal, memory.directoryUsersTotal)),
    sink: (offset) => tally.sink(logger, offset),
    priority: PRIORITY.slow,
    onPage: (page) => tally.add(page),
    onTotal: (total) => (memory.directoryUsersTotal = total),
    onPageSize: () => {},
    largerPage: 'planned a larger page of directory users to fit the rate budget',
    changed: (total, then) => `/users?filter=all changed while it was being paged (total ${total}, then ${then}): the counts would be off, so this read of the directory is dropped; a larger POSTURE_PAGE_SIZE avoids it.`,
    truncated: (received, total) => `/users?filter=all returned ${received} records but its total says ${total}: the list was truncated or moved while paged.`,
  });
  return tally.finish();
}
