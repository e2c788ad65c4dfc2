/**
 * The resolved-alerts pass: `/alerts?filter=resolved`, streamed and paged exactly as the open
 * alerts are (src/sources/alerts/run.ts: the same reader and record limits, the page size from the
 * plan, the total checked across pages, a page cap learned), with its own total remembered.
 */
import { ListMismatchError } from '../../errors.js';
import { alertsLimit, oneShotLeftSeconds, resolvedPagesAllowed } from '../../schedule/plan.js';
import { request, type PortalMemory, type RunContext } from '../../schedule/request.js';
import { PRIORITY } from '../../schedule/scheduler.js';
import { ResolvedSink, ResolvedTally, type ResolvedAggregate } from './fold.js';

/** What the pass remembers of a portal between passes, beside what the open alerts remember (the page cap is the one /alerts has). */
export interface ResolvedMemory extends PortalMemory {
  /** Resolved alerts at the last complete pass. */
  resolvedAlertsTotal?: number;
}

/** The endpoint and filter of the pass (spec 4.4). */
const ENDPOINT = '/alerts';
const FILTER = 'resolved';

/**
 * One pass: reads every resolved alert, page by page, and folds them against the wall time at its
 * start. Throws on failure (the pass then has no value: never a partial count).
 */
export async function runResolvedAlerts(ctx: RunContext & { readonly memory: ResolvedMemory }, onPageSize: (limit: number) => void = () => {}): Promise<ResolvedAggregate> {
  const { portal, memory, logger } = ctx;
  const nowSeconds = ctx.clock.now() / 1000;
  const tally = new ResolvedTally(nowSeconds);
  let offset = 0;
  let total: number | undefined;
  let pages = 0;
  let pageSize: number | undefined;
  for (;;) {
    // Before the first page the last pass's total is the best guess of what is left.
    const remaining = total === undefined ? memory.resolvedAlertsTotal : total - offset;
    // What the window leaves beside the other sources and the open alerts' pages.
    const pagesAllowed = resolvedPagesAllowed({ requestsPerMinute: ctx.scheduler.share.effective, pageSize: portal.pageSize, vitalsTags: portal.vitalsTags, pageCap: memory.pageCap }, memory.alertsTotal);
    const limit = alertsLimit({ pageSize: portal.pageSize, remaining, pagesAllowed: Math.max(1, pagesAllowed - pages), pageCap: memory.pageCap });
    if (limit !== portal.pageSize && limit !== memory.pageCap) logger.info('planned a larger page of resolved alerts to fit the rate budget', { pageSize: portal.pageSize, limit, offset, total: total ?? memory.resolvedAlertsTotal });
    pageSize = limit === 0 || pageSize === 0 ? 0 : Math.max(pageSize ?? 0, limit);
    onPageSize(pageSize);
    const at = offset;
    const res = await request(ctx, () => ({ endpoint: ENDPOINT, query: { filter: FILTER, offset: at, limit } }), () => new ResolvedSink(nowSeconds, logger, at), pages === 0 ? PRIORITY.resolved : PRIORITY.continuation);
    pages++;
    if (total !== undefined && res.total !== total) {
      throw new ListMismatchError(ENDPOINT, total, res.total, `/alerts?filter=resolved changed while it was being paged (total ${total}, then ${res.total}): the response times would be off, so this pass is dropped; a larger POSTURE_PAGE_SIZE avoids it.`);
    }
    total = res.total;
    tally.add(res.result);
    offset += res.received;
    if (offset >= total) break;
    if (res.received === 0) break;
    if (res.received > (memory.pageCap ?? Infinity)) delete memory.pageCap;
    // As for the open alerts: a page shorter than asked whose limit says what came back is a cap.
    if ((limit === 0 || res.received < limit) && res.limit === res.received) {
      memory.pageCap = res.limit;
      logger.info('the portal caps /alerts pages: paging by what it returns', { asked: limit, cap: res.limit, total, filter: FILTER });
    }
    // A one-shot run may take as long as the remaining pages need.
    const perPage = memory.pageCap ?? (limit === 0 ? total : limit);
    const left = Math.ceil((total - offset) / Math.max(1, perPage));
    const seconds = oneShotLeftSeconds({ requests: left, share: ctx.scheduler.share.effective, maxRetries: ctx.maxRetries, maxRetryAfterSeconds: ctx.scheduler.maxRetryAfterMs / 1000, windowInUse: true });
    ctx.deadline.extendTo(ctx.clock.monotonic() + seconds * 1000);
  }
  if (offset !== total) {
    throw new ListMismatchError(ENDPOINT, total, offset, `/alerts?filter=resolved returned ${offset} records but its total says ${total}: the list was truncated or moved while paged.`);
  }
  memory.resolvedAlertsTotal = total;
  return tally.finish(portal.alertSlas);
}
