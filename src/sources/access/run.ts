/**
 * The access run: the portal's accounts, roles and teams (`/settings/usermanagement/users`,
 * `/roles`, `/teams`), each list read whole in one request (paged by the portal's cap when it caps
 * its pages, the total checked across them), below every live source.
 */
import type { RunContext } from '../../schedule/request.js';
import { continuationOf, PRIORITY } from '../../schedule/scheduler.js';
import { pageList } from '../pager.js';
import { ACCESS_LISTS, AccessTally, type AccessAggregate, type AccessList } from './fold.js';

/**
 * One run: the three lists one after the other, the first request a slow source's, the others its
 * follow-ups. Throws on failure (a 403 on any of them fails the run: never a partial count).
 */
export async function runAccess(ctx: RunContext): Promise<AccessAggregate> {
  const { memory, logger } = ctx;
  const tally = new AccessTally(logger);
  const totals: Partial<Record<AccessList, number>> = { ...memory.accessTotals };
  for (const [i, { list, endpoint }] of ACCESS_LISTS.entries()) {
    await pageList(ctx, {
      endpoint,
      lastTotal: totals[list],
      // Everything in one request (limit=0), or the portal's cap a page.
      pagesAllowed: () => 1,
      sink: (offset) => tally.sink(list, offset),
      priority: i === 0 ? PRIORITY.slow : continuationOf(PRIORITY.slow),
      onPage: (page) => tally.add(page),
      onTotal: (total) => {
        totals[list] = total;
        memory.accessTotals = { ...totals };
      },
      onPageSize: () => {},
      changed: (total, then) => `${endpoint} changed while it was being paged (total ${total}, then ${then}): the counts would be off, so this run of the access settings is dropped.`,
      truncated: (received, total) => `${endpoint} returned ${received} records but its total says ${total}: the list was truncated or moved while paged.`,
    });
  }
  return tally.finish();
}
