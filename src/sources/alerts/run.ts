/**
 * The /alerts run: unresolved alerts, paged by a size the plan fits to the share, the total checked
 * across pages, and what the portal taught (its total, its page cap) remembered for the next run.
 */
import { ListMismatchError } from '../../errors.js';
import { alertsLimit, alertsPagesAllowed, oneShotLeftSeconds } from '../../schedule/plan.js';
import { request, type RunContext } from '../../schedule/request.js';
import { PRIORITY } from '../../schedule/scheduler.js';
import { AlertsSink, mergeAlerts, type AlertsAggregate } from './fold.js';

/**
 * Unresolved alerts, paged: the page size comes from the plan (the last run's total when known, the
 * pages the share leaves), the pages are read back to back, and a portal that caps its pages is
 * paged by what it returns. A one-shot run's deadline grows to what the pages need.
 */
export async function runAlerts(ctx: RunContext, onPageSize: (limit: number) => void): Promise<AlertsAggregate> {
  const { portal, memory, logger } = ctx;
  const nowSeconds = ctx.clock.now() / 1000;
  let offset = 0;
  let total: number | undefined;
  let aggregate: AlertsAggregate | undefined;
  let pages = 0;
  let pageSize: number | undefined;
  for (;;) {
    // Before the first page the last run's total is the best guess of what is left.
    const remaining = total === undefined ? memory.alertsTotal : total - offset;
    // Read per page: a 429 during the run cuts the share, and the pages left must fit the cut share.
    const pagesAllowed = alertsPagesAllowed({ requestsPerMinute: ctx.scheduler.share.effective, vitalsTags: portal.vitalsTags });
    const limit = alertsLimit({ pageSize: portal.pageSize, remaining, pagesAllowed: Math.max(1, pagesAllowed - pages), pageCap: memory.pageCap });
    if (limit !== portal.pageSize && limit !== memory.pageCap) logger.info('planned a larger /alerts page to fit the rate budget', { pageSize: portal.pageSize, limit, offset, total: total ?? memory.alertsTotal });
    pageSize = limit === 0 || pageSize === 0 ? 0 : Math.max(pageSize ?? 0, limit);
    onPageSize(pageSize);
    const at = offset;
    const res = await request(ctx, () => ({ endpoint: '/alerts', query: { filter: 'allunresolved', offset: at, limit } }), () => new AlertsSink(nowSeconds, logger, at, portal.alertSlas), pages === 0 ? PRIORITY.alerts : PRIORITY.continuation);
    pages++;
    if (total !== undefined && res.total !== total) {
      throw new ListMismatchError('/alerts', total, res.total, `/alerts changed while it was being paged (total ${total}, then ${res.total}): the counts would be off, so this run's alerts are dropped; a larger POSTURE_PAGE_SIZE avoids it.`);
    }
    total = res.total;
    aggregate = aggregate ? mergeAlerts(aggregate, res.result) : res.result;
    offset += res.received;
    if (offset >= total) break;
    if (res.received === 0) break;
    // A page larger than the cap learned earlier: the portal no longer caps (or caps higher).
    if (res.received > (memory.pageCap ?? Infinity)) delete memory.pageCap;
    // Here fewer records came back than the total leaves (else the loop ended), so a page is short
    // when it is smaller than asked (everything, with a limit of 0); and as a page asked for is never
    // larger than a cap already learned (alertsLimit), a short page whose limit says what came back is a new cap.
    if ((limit === 0 || res.received < limit) && res.limit === res.received) {
      // The portal returns at most this many whatever is asked: page by it, and plan with it from now on.
      memory.pageCap = res.limit;
      logger.info('the portal caps /alerts pages: paging by what it returns', { asked: limit, cap: res.limit, total });
    }
    // A one-shot run may take as long as the remaining pages need.
    const perPage = memory.pageCap ?? (limit === 0 ? total : limit);
    const left = Math.ceil((total - offset) / Math.max(1, perPage));
    const seconds = oneShotLeftSeconds({ requests: left, share: ctx.scheduler.share.effective, maxRetries: ctx.maxRetries, maxRetryAfterSeconds: ctx.scheduler.maxRetryAfterMs / 1000, windowInUse: true });
    ctx.deadline.extendTo(ctx.clock.monotonic() + seconds * 1000);
  }
  if (offset !== total) {
    throw new ListMismatchError('/alerts', total, offset, `/alerts returned ${offset} records but its total says ${total}: the list was truncated or moved while paged.`);
  }
  memory.alertsTotal = total;
  return aggregate!;
}

