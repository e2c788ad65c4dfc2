/**
 * The resolved-alerts pass: `/alerts?filter=resolved`, streamed and paged exactly as the open
 * alerts are (src/sources/alerts/run.ts: the same reader and record limits, the page size from the
 * plan, the total checked across pages, a page cap learned), with its own total remembered.
 */
import type { PortalMemory, RunContext } from '../../schedule/request.js';
import { pageSlowList, type SlowList } from '../pager.js';
import { ResolvedTally, type ResolvedAggregate } from './fold.js';

/** What the pass remembers of a portal between passes (resolvedAlertsTotal), beside what the open alerts remember (the page cap is the one /alerts has). */
export type ResolvedMemory = PortalMemory;

/** The filter of the pass on /alerts (spec 4.4). */
const FILTER = 'resolved';

/** The list of the pass, its total remembered as resolvedAlertsTotal. */
const RESOLVED: SlowList = { endpoint: '/alerts', filter: FILTER, total: 'resolvedAlertsTotal', records: 'resolved alerts', dropped: 'the response times would be off, so this pass is dropped', capFields: { filter: FILTER } };

/**
 * One pass: reads every resolved alert, page by page (src/sources/pager.ts), and folds them against
 * the wall time at its start. Throws on failure (the pass then has no value: never a partial count).
 */
export async function runResolvedAlerts(ctx: RunContext & { readonly memory: ResolvedMemory }, onPageSize: (limit: number) => void = () => {}): Promise<ResolvedAggregate> {
  const tally = new ResolvedTally(ctx.clock.now() / 1000);
  await pageSlowList(ctx, RESOLVED, tally, onPageSize);
  return tally.finish(ctx.portal.alertSlas);
}
