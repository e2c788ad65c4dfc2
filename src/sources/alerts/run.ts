/**
 * The /alerts run: unresolved alerts, paged by a size the plan fits to the share, the total checked
 * across pages, and what the portal taught (its total, its page cap) remembered for the next run.
 */
import { alertsPagesAllowed } from '../../schedule/plan.js';
import type { RunContext } from '../../schedule/request.js';
import { PRIORITY } from '../../schedule/scheduler.js';
import { pageList } from '../pager.js';
import { AlertsSink, mergeAlerts, type AlertsAggregate } from './fold.js';

/**
 * Unresolved alerts, paged (src/sources/pager.ts): the page size comes from the plan (the last
 * run's total when known; in `serve` the pages the plan leaves, so every run stays on time; in a
 * one-shot run the pages one window leaves, one left to the resolved-alerts pass when the run
 * includes it), and a portal that caps its pages is paged by what it returns. A one-shot run's
 * deadline grows to what the pages need.
 */
export async function runAlerts(ctx: RunContext, onPageSize: (limit: number) => void): Promise<AlertsAggregate> {
  const { portal, memory, logger } = ctx;
  const nowSeconds = ctx.clock.now() / 1000;
  let aggregate: AlertsAggregate | undefined;
  await pageList(ctx, {
    endpoint: '/alerts',
    query: { filter: 'allunresolved' },
    lastTotal: memory.alertsTotal,
    // serve: what the plan leaves them; a one-shot run: what one window leaves them.
    pagesAllowed: () => ctx.pagesPlanned?.().alerts ?? alertsPagesAllowed({ requestsPerMinute: ctx.scheduler.share.effective, vitalsTags: portal.vitalsTags }, ctx.withPass),
    sink: (offset) => new AlertsSink(nowSeconds, logger, offset, portal.alertSlas),
    priority: PRIORITY.alerts,
    onPage: (result) => (aggregate = aggregate ? mergeAlerts(aggregate, result) : result),
    onTotal: (total) => (memory.alertsTotal = total),
    onPageSize,
    largerPage: 'planned a larger /alerts page to fit the rate budget',
    changed: (total, then) => `/alerts changed while it was being paged (total ${total}, then ${then}): the counts would be off, so this run's alerts are dropped; a larger POSTURE_PAGE_SIZE avoids it.`,
    truncated: (received, total) => `/alerts returned ${received} records but its total says ${total}: the list was truncated or moved while paged.`,
  });
  return aggregate!;
}
