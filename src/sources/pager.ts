/**
 * Paging of a list (the open alerts, the resolved-alerts pass, the access settings' lists, the
 * directory's users): the page size from the plan (the last total when known, the pages the share
 * leaves), the pages read back to back, the total checked across pages, a page cap the portal shows
 * learned (one for the portal: it caps every list alike), and a one-shot run's deadline grown to
 * what the pages left need. The slow sources' lists (pageSlowList) are paged alike.
 */
import { ListMismatchError } from '../errors.js';
import { oneShotLeftSeconds } from '../schedule/one-shot.js';
import type { Logger } from '../core/log.js';
import { alertsLimit, slowPagesAllowed } from '../schedule/plan.js';
import { request, type RunContext } from '../schedule/request.js';
import { continuationOf, PRIORITY } from '../schedule/scheduler.js';
import type { RecordSink } from '../upstream/reader.js';

/** One list as a source pages it. */
export interface PagedList<T> {
  /** The endpoint, e.g. `/alerts`. */
  readonly endpoint: string;
  /** Its query besides `offset` and `limit`, e.g. `{ filter: 'resolved' }` (spec 4.4). */
  readonly query?: Readonly<Record<string, string>>;
  /** The list's total at the last complete run, if known. */
  readonly lastTotal: number | undefined;
  /** The pages the share leaves this list in one window (read per page: a 429 cuts the share). */
  pagesAllowed(): number;
  /** The sink of the page starting at `offset`. */
  sink(offset: number): RecordSink<T>;
  /** The priority of the list's first page (later pages continue at its band's continuation: continuationOf). */
  readonly priority: number;
  /** Takes each page's result. */
  onPage(result: T): void;
  /** Takes the list's total as soon as a page says it: the plan counts the next runs' pages from it, even when this run goes no further. */
  onTotal(total: number): void;
  /** The size asked for, as it grows (0: everything). */
  onPageSize(limit: number): void;
  /** The log line when the plan asks for a larger page than POSTURE_PAGE_SIZE (none for a list always read whole), and fields the cap's line adds. */
  readonly largerPage?: string;
  readonly capFields?: Record<string, unknown>;
  /** The messages of a total that changed between pages, and of records that fell short of it. */
  changed(total: number, then: number): string;
  truncated(received: number, total: number): string;
}

/** Reads every page of `list`; the total. Throws ListMismatchError when the pages do not add up to one list. */
export async function pageList<T>(ctx: RunContext, list: PagedList<T>): Promise<number> {
  const { endpoint } = list;
  const { portal, memory, logger } = ctx;
  let offset = 0;
  let total: number | undefined;
  let pages = 0;
  let pageSize: number | undefined;
  for (;;) {
    // Before the first page the last run's total is the best guess of what is left.
    const remaining = total === undefined ? list.lastTotal : total - offset;
    const limit = alertsLimit({ pageSize: portal.pageSize, remaining, pagesAllowed: Math.max(1, list.pagesAllowed() - pages), pageCap: memory.pageCap });
    if (list.largerPage !== undefined && limit !== portal.pageSize && limit !== memory.pageCap) logger.info(list.largerPage, { pageSize: portal.pageSize, limit, offset, total: total ?? list.lastTotal });
    pageSize = limit === 0 || pageSize === 0 ? 0 : Math.max(pageSize ?? 0, limit);
    list.onPageSize(pageSize);
    const at = offset;
    const res = await request(ctx, () => ({ endpoint, query: { ...list.query, offset: at, limit } }), () => list.sink(at), pages === 0 ? list.priority : continuationOf(list.priority));
    pages++;
    if (total !== undefined && res.total !== total) throw new ListMismatchError(endpoint, total, res.total, list.changed(total, res.total));
    total = res.total;
    list.onTotal(total);
    list.onPage(res.result);
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
      logger.info(`the portal caps ${endpoint} pages: paging by what it returns`, { asked: limit, cap: res.limit, total, ...list.capFields });
    }
    // A one-shot run may take as long as the remaining pages need.
    const perPage = memory.pageCap ?? (limit === 0 ? total : limit);
    const left = Math.ceil((total - offset) / Math.max(1, perPage));
    const seconds = oneShotLeftSeconds({ requests: left, share: ctx.scheduler.share.effective, maxRetries: ctx.maxRetries, maxRetryAfterSeconds: ctx.scheduler.maxRetryAfterMs / 1000, windowInUse: true });
    ctx.deadline.extendTo(ctx.clock.monotonic() + seconds * 1000);
  }
  if (offset !== total) throw new ListMismatchError(endpoint, total, offset, list.truncated(offset, total));
  return total;
}

/** A slow source's list, read whole on the source's own interval (the resolved-alerts pass, the directory). */
export interface SlowList {
  /** The endpoint and the filter it is read with, e.g. `/alerts` and `resolved` (spec 4.4). */
  readonly endpoint: string;
  readonly filter: string;
  /** Where the portal's memory keeps the list's total between runs. */
  readonly total: 'resolvedAlertsTotal' | 'directoryUsersTotal';
  /** Its records, as the log line of a larger page names them (`resolved alerts`). */
  readonly records: string;
  /** What a list that changed between pages costs the run, e.g. `the counts would be off, so this read is dropped`. */
  readonly dropped: string;
  /** Fields the line of a page cap learned adds. */
  readonly capFields?: Record<string, unknown>;
}

/** Folds a list's pages: the sink of the page starting at `offset`, and each page's result. */
interface Tally<T> {
  sink(logger: Logger, offset: number): RecordSink<T>;
  add(page: T): void;
}

/**
 * Reads every page of a slow source's list into `tally`, after every live source's requests: one
 * request while its total is unknown, then what a window leaves beside the live sources and the open
 * alerts' pages (in serve no more than the plan leaves the slow sources); the total remembered as
 * soon as a page says it, so that the next runs are planned from it. The total.
 */
export async function pageSlowList<T>(ctx: RunContext, list: SlowList, tally: Tally<T>, onPageSize: (limit: number) => void = () => {}): Promise<number> {
  const { portal, memory, logger } = ctx;
  const path = `${list.endpoint}?filter=${list.filter}`;
  return pageList(ctx, {
    endpoint: list.endpoint,
    query: { filter: list.filter },
    lastTotal: memory[list.total],
    pagesAllowed: () => Math.min(ctx.pagesPlanned?.().slow ?? Infinity, slowPagesAllowed({ requestsPerMinute: ctx.scheduler.share.effective, pageSize: portal.pageSize, vitalsTags: portal.vitalsTags, pageCap: memory.pageCap }, memory.alertsTotal, memory[list.total])),
    sink: (offset) => tally.sink(logger, offset),
    priority: PRIORITY.slow,
    onPage: (page) => tally.add(page),
    onTotal: (total) => (memory[list.total] = total),
    onPageSize,
    largerPage: `planned a larger page of ${list.records} to fit the rate budget`,
    capFields: list.capFields,
    changed: (total, then) => `${path} changed while it was being paged (total ${total}, then ${then}): ${list.dropped}; a larger POSTURE_PAGE_SIZE avoids it.`,
    truncated: (received, total) => `${path} returned ${received} records but its total says ${total}: the list was truncated or moved while paged.`,
  });
}
