/**
 * The directory run: `/users?filter=all`, paged as the open alerts are (src/sources/pager.ts: the
 * page size from the plan, the total checked across pages, a page cap learned), below every live
 * source, counted against the wall time at its start.
 */
import type { RunContext } from '../../schedule/request.js';
import { pageSlowList, type SlowList } from '../pager.js';
import { DirectoryTally, type DirectoryAggregate } from './fold.js';

/** The directory's users, its total remembered as directoryUsersTotal. */
const USERS: SlowList = { endpoint: '/users', filter: 'all', total: 'directoryUsersTotal', records: 'directory users', dropped: 'the counts would be off, so this read of the directory is dropped' };

/** One read of every directory user, page by page. Throws on failure (a 403 fails it: never a partial count). */
export async function runDirectory(ctx: RunContext): Promise<DirectoryAggregate> {
  const tally = new DirectoryTally(ctx.clock.now() / 1000, ctx.portal.directoryInactiveDays);
  await pageSlowList(ctx, USERS, tally);
  return tally.finish();
}
