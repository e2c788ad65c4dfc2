/**
 * The jobs of one portal: a run of each source is a short sequence of requests (Vitals and one per
 * tag; device totals; the /alerts pages), each of which takes its slot from the portal's scheduler,
 * retries included. The folds that turn records into aggregates stay pure in src/collect/.
 */
import type { PortalConfig } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { equalJitterBackoffMs, fullJitterBackoffMs, retry, type RetryDecision } from '../core/retry.js';
import { AlertsSink, mergeAlerts, type AlertsAggregate } from '../sources/alerts/fold.js';
import type { DevicesTotals } from '../sources/devices.js';
import { VitalsSink, type VitalsList } from '../sources/vitals.js';
import { LateError, ListMismatchError, NetworkError, PortalUnreachableError, RateLimitedError, TimeoutError, TruncatedBodyError, UpstreamHttpError } from '../errors.js';
import type { Source } from '../domain.js';
import { PortalReader, type ListRequest, type ListResult, type RecordSink } from '../upstream/reader.js';
import { alertsLimit, alertsPagesAllowed, runSeconds } from './plan.js';
import { PRIORITY, WINDOW_MS, type Permit, type PortalScheduler } from './scheduler.js';

/** What the jobs remember of a portal between runs, to plan the next one. */
export interface PortalMemory {
  /** Unresolved alerts at the last complete /alerts run. */
  alertsTotal?: number;
  /** The largest page the portal returned when asked for more (it caps pages). */
  pageCap?: number;
}

const MAX_TIMER_MS = 2_147_483_647;

/** A run's deadline: fixed in `serve` (the source's next run), extendable in one-shot runs as the plan learns the list sizes. */
export class Deadline {
  /** Cancels the pending wait for the deadline (re-armed when it moves). */
  private timer: AbortController | undefined;
  private readonly controller = new AbortController();
  private readonly unlink: () => void;

  /**
   * @param at ms on `clock.monotonic()`
   * @param cap the latest it may be extended to (undefined: fixed)
   */
  constructor(
    private atMs: number,
    private readonly clock: Clock,
    private readonly cap: number | undefined,
    outer?: AbortSignal,
  ) {
    // Once aborted, from outside or at the deadline, nothing waits for the deadline any more.
    this.controller.signal.addEventListener('abort', () => this.timer?.abort(), { once: true });
    const onOuter = () => this.controller.abort(outer?.reason);
    if (outer?.aborted) onOuter();
    outer?.addEventListener('abort', onOuter, { once: true });
    this.unlink = () => outer?.removeEventListener('abort', onOuter);
    this.arm();
  }

  get at(): number {
    return this.atMs;
  }

  /** Aborted when the deadline passes (reason: a TimeoutError DOMException) or the outer signal aborts. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Moves the deadline later, up to the cap; returns whether it moved. */
  extendTo(at: number): boolean {
    if (this.cap === undefined) return false;
    const next = Math.min(at, this.cap);
    if (next <= this.atMs) return false;
    this.atMs = next;
    this.arm();
    return true;
  }

  /** Ends the deadline's timer (the run is over). */
  close(): void {
    this.timer?.abort();
    this.unlink();
  }

  // A wait on the run's own clock (real time in production, the fake clock in tests): this cuts a
  // request still in flight when the deadline passes. Slots after the deadline are refused by the
  // scheduler on the same clock.
  private arm(): void {
    this.timer?.abort();
    this.timer = undefined;
    if (this.controller.signal.aborted) return;
    const ms = Math.max(0, this.atMs - this.clock.monotonic());
    // No deadline (backfill), or one beyond what a timer can hold (about 24.8 days): no wait.
    if (ms > MAX_TIMER_MS) return;
    const timer = (this.timer = new AbortController());
    this.clock.sleep(ms, timer.signal).then(
      () => {
        if (this.timer === timer) this.controller.abort(new DOMException('the deadline passed', 'TimeoutError'));
      },
      () => {},
    );
  }
}

/** Everything a run needs. */
export interface RunContext {
  readonly portal: PortalConfig;
  readonly scheduler: PortalScheduler;
  readonly reader: PortalReader;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly deadline: Deadline;
  readonly maxRetries: number;
  readonly random: () => number;
  readonly memory: PortalMemory;
  /** Requests sent by this run, by `endpoint\u0000code`. */
  readonly requests: Map<string, number>;
  /** Called after a 429: one-shot runs of the portal move their deadlines to what the lowered share needs. */
  readonly replan?: () => void;
}

const BACKOFF = { baseMs: 1_000, maxMs: 30_000 };
/**
 * A 429 without Retry-After: the spec asks for exponential backoff, and the portal counts 60 s
 * windows, so the pause starts at 10 s and doubles up to the window, with equal jitter (never
 * less than half) so it never comes back at once into a window that is still full.
 */
const RATE_LIMITED_BACKOFF = { baseMs: 10_000, maxMs: 60_000 };
/** A portal that could not be reached: a few quick tries (it may be restarting), no long waits. */
const UNREACHABLE_BACKOFF = { baseMs: 500, maxMs: 4_000 };

/** The request is late, not broken: its next attempt could start only at `slotAt`, past the run's deadline. */
function lateError(ctx: RunContext, endpoint: string, slotAt: number, cause: unknown, why: string | undefined): LateError {
  return new LateError(endpoint, slotAt, ctx.deadline.at, ctx.scheduler.share.effective, ctx.scheduler.window.windowMs, { cause, why });
}

/** A retry the deadline did not leave time for: the request is late, not broken. */
interface Abandoned {
  at?: number;
  why?: string;
}

/** When to send a failed request again: what the spec calls temporary, and what the scheduler allows. */
function classifier(ctx: RunContext, endpoint: () => string, abandoned: Abandoned): (err: unknown, n: number) => RetryDecision {
  let serverErrors = 0;
  return (err, n) => {
    const now = ctx.clock.monotonic();
    const status = err instanceof UpstreamHttpError ? err.status : err instanceof PortalUnreachableError ? err.code : err instanceof Error ? err.name : 'error';
    let decision: RetryDecision = { retry: false };
    if (err instanceof RateLimitedError) {
      if (err.retryAfterMs !== undefined && err.retryAfterMs > ctx.scheduler.maxRetryAfterMs) {
        ctx.logger.warn('the portal asked to wait longer than POSTURE_MAX_RETRY_AFTER_SECONDS: this run of the source is deferred to its next run', {
          endpoint: endpoint(),
          retryAfterMs: err.retryAfterMs,
          maxRetryAfterMs: ctx.scheduler.maxRetryAfterMs,
        });
        return decision;
      }
      // The scheduler paused the whole portal; the retry waits for the pause, then for its slot.
      decision = { retry: true, waitMs: Math.max(0, ctx.scheduler.pausedUntilMs - now), reason: '429' };
    } else if (err instanceof UpstreamHttpError) {
      // 500 is not called temporary by the spec: once, so a persistent one does not burn the budget.
      if (err.status === 500 && serverErrors++ < 1) decision = { retry: true, waitMs: backoff(ctx, n), reason: '500' };
      else if (err.status === 502 || err.status === 503 || err.status === 504) decision = { retry: true, waitMs: backoff(ctx, n), reason: String(err.status) };
    } else if (err instanceof PortalUnreachableError) {
      decision = { retry: true, waitMs: fullJitterBackoffMs(n, { ...UNREACHABLE_BACKOFF, random: ctx.random }), reason: err.code };
    } else if (err instanceof TruncatedBodyError || (err instanceof NetworkError && !(err instanceof TimeoutError && err.phase === 'deadline'))) {
      decision = { retry: true, waitMs: backoff(ctx, n), reason: err.name };
    }
    if (!decision.retry) return decision;
    if (n >= ctx.maxRetries) {
      ctx.logger.warn('upstream request failed, retries used up', { endpoint: endpoint(), status, attempt: n + 1 });
    } else if (now + decision.waitMs > ctx.deadline.at) {
      ctx.logger.warn('upstream request failed, no time left to retry before the deadline', { endpoint: endpoint(), status, attempt: n + 1, waitMs: Math.round(decision.waitMs) });
      // No portal was reached: the run fails as unreachable, never as late.
      if (err instanceof PortalUnreachableError) return { retry: false };
      abandoned.at = now + decision.waitMs;
      abandoned.why = `a retry after ${status}`;
      return { retry: false };
    } else {
      ctx.logger.warn('upstream request failed, retrying', { endpoint: endpoint(), status, attempt: n + 1, waitMs: Math.round(decision.waitMs) });
    }
    return decision;
  };
}

/** A failure before any connection was made (refused, unresolvable, connect timeout): the portal saw no request. */
function reachedNoPortal(err: unknown): boolean {
  return err instanceof PortalUnreachableError || (err instanceof TimeoutError && err.phase === 'connect');
}

/** The reason a Deadline aborts with when its time passes (not an outer stop). */
function isDeadline(reason: unknown): boolean {
  return reason instanceof DOMException && reason.name === 'TimeoutError';
}

function backoff(ctx: RunContext, attempt: number): number {
  return fullJitterBackoffMs(attempt, { ...BACKOFF, random: ctx.random });
}

/**
 * One request through the scheduler: waits for its slot (retries first in line), reads it, tells the
 * scheduler what the portal said, and sends again when the classifier allows.
 */
export function request<T>(ctx: RunContext, req: (attempt: number) => ListRequest, newSink: () => RecordSink<T>, priority: number): Promise<ListResult<T>> {
  const count = (endpoint: string, code: string) => {
    const key = `${endpoint}\u0000${code}`;
    ctx.requests.set(key, (ctx.requests.get(key) ?? 0) + 1);
  };
  let endpoint = '';
  let last: unknown;
  const abandoned: Abandoned = {};
  const classify = classifier(ctx, () => endpoint, abandoned);
  // The deadline may move (a one-shot run's plan grows): the classifier reads it per attempt.
  return retry(
    async (n) => {
      const r = req(n);
      endpoint = r.endpoint;
      let permit: Permit;
      try {
        permit = await ctx.scheduler.acquire({ endpoint: r.endpoint, priority: n > 0 ? PRIORITY.continuation : priority, deadline: () => ctx.deadline.at, signal: ctx.deadline.signal });
      } catch (err) {
        // A retry after a refused connection: the portal is unreachable, which says more than late.
        if (err instanceof LateError && last instanceof PortalUnreachableError) throw last;
        // A retry with no slot before the deadline: late, and the failure before it is the cause.
        if (err instanceof LateError && last !== undefined) {
          throw lateError(ctx, err.endpoint, err.slotAt, last, `a retry after ${PortalReader.codeOf(last)}`);
        }
        throw err;
      }
      const release = ctx.clock.hold?.();
      try {
        const res = await ctx.reader.read(r, newSink, ctx.deadline.signal);
        count(r.endpoint, '200');
        ctx.scheduler.answered();
        return res;
      } catch (err) {
        last = err;
        count(r.endpoint, PortalReader.codeOf(err));
        // No connection was made, so the portal counted nothing: the slot goes back to the budget.
        if (reachedNoPortal(err)) permit.refund();
        else if (err instanceof RateLimitedError) {
          ctx.scheduler.rateLimited(err.retryAfterMs, equalJitterBackoffMs(n, { ...RATE_LIMITED_BACKOFF, random: ctx.random }));
          // One-shot runs wait for as many windows as the lowered share needs.
          ctx.replan?.();
        }
        else if (err instanceof UpstreamHttpError) ctx.scheduler.answered();
        throw err;
      } finally {
        permit.done();
        release?.();
      }
    },
    { classify, maxRetries: ctx.maxRetries, clock: ctx.clock, signal: ctx.deadline.signal },
  ).catch((err: unknown) => {
    // Cut at the deadline: the attempt's own error (a deadline TimeoutError) says more than the signal's reason.
    if (err === ctx.deadline.signal.reason && last instanceof TimeoutError && last.phase === 'deadline') throw last;
    // Cut while waiting to retry a refused connection: unreachable, not late.
    if (last instanceof PortalUnreachableError && err === ctx.deadline.signal.reason && isDeadline(err)) throw last;
    if (abandoned.at === undefined) throw err;
    throw lateError(ctx, endpoint, abandoned.at, err, abandoned.why);
  });
}

/** Vitals: the whole portal, then each tag. */
export async function runVitals(ctx: RunContext): Promise<VitalsList[]> {
  const lists: VitalsList[] = [];
  const tags = [undefined, ...ctx.portal.vitalsTags];
  for (const [i, tag] of tags.entries()) {
    const res = await request(ctx, () => ({ endpoint: '/vitals', query: { tag } }), () => new VitalsSink(tag, ctx.logger), i === 0 ? PRIORITY.vitals : PRIORITY.continuation);
    if (res.received !== res.total) {
      throw new ListMismatchError('/vitals', res.total, res.received, `/vitals${tag === undefined ? '' : ` (tag ${tag})`} returned ${res.received} records but its total says ${res.total}: the list is incomplete.`);
    }
    lists.push(res.result);
  }
  return lists;
}

/** One day of the Vitals archive (`archiveDate`, spec 4.5), whole portal or one tag: backfill's job. */
export async function fetchArchive(ctx: RunContext, day: string, tag: string | undefined): Promise<VitalsList> {
  const res = await request(ctx, () => ({ endpoint: '/vitals', query: { archiveDate: day, tag } }), () => new VitalsSink(tag, ctx.logger), PRIORITY.backfill);
  if (res.received !== res.total) {
    throw new ListMismatchError('/vitals', res.total, res.received, `/vitals?archiveDate=${day}${tag === undefined ? '' : ` (tag ${tag})`} returned ${res.received} records but its total says ${res.total}: the list is incomplete.`);
  }
  return res.result;
}

/** Only the envelope's `total` counts for device totals: the one record asked for is ignored. */
const ignoreRecords = (): RecordSink<void> => ({ record() {}, finish() {} });

/** Device totals: `total` of `filter=active` and `filter=inactive`, one record each. */
export async function runDevices(ctx: RunContext): Promise<DevicesTotals> {
  const totals: Partial<Record<'active' | 'inactive', number>> = {};
  for (const [i, filter] of (['active', 'inactive'] as const).entries()) {
    const res = await request(ctx, () => ({ endpoint: '/devices', query: { filter, limit: 1 } }), ignoreRecords, i === 0 ? PRIORITY.devices : PRIORITY.continuation);
    totals[filter] = res.total;
  }
  return totals as DevicesTotals;
}

/** What an /alerts run returns beside the aggregate. */
export interface AlertsRun {
  readonly aggregate: AlertsAggregate;
  /** The largest `limit` asked (0 = all in one request). */
  readonly pageSize: number;
}

/**
 * Unresolved alerts, paged: the page size comes from the plan (the last run's total when known, the
 * pages the share leaves), the pages are read back to back, and a portal that caps its pages is
 * paged by what it returns. A one-shot run's deadline grows to what the pages need.
 */
export async function runAlerts(ctx: RunContext, onPageSize: (limit: number) => void): Promise<AlertsRun> {
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
    const res = await request(ctx, () => ({ endpoint: '/alerts', query: { filter: 'allunresolved', offset: at, limit } }), () => new AlertsSink(nowSeconds, logger, at), pages === 0 ? PRIORITY.alerts : PRIORITY.continuation);
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
    if (memory.pageCap !== undefined && res.received > memory.pageCap) delete memory.pageCap;
    const wanted = limit === 0 ? total - at : Math.min(limit, total - at);
    if (res.received < wanted && res.limit > 0 && res.limit === res.received && memory.pageCap !== res.limit) {
      // The portal returns at most this many whatever is asked: page by it, and plan with it from now on.
      memory.pageCap = res.limit;
      logger.info('the portal caps /alerts pages: paging by what it returns', { asked: limit, cap: res.limit, total });
    }
    // A one-shot run may take as long as the remaining pages need.
    const perPage = memory.pageCap ?? (limit === 0 ? total : limit);
    const left = Math.ceil((total - offset) / Math.max(1, perPage));
    ctx.deadline.extendTo(ctx.clock.monotonic() + (runSeconds(left + ctx.maxRetries, ctx.scheduler.share.effective) + WINDOW_MS / 1000 + 1 + 60) * 1000);
  }
  if (offset !== total) {
    throw new ListMismatchError('/alerts', total, offset, `/alerts returned ${offset} records but its total says ${total}: the list was truncated or moved while paged.`);
  }
  memory.alertsTotal = total;
  return { aggregate: aggregate!, pageSize: pageSize ?? portal.pageSize };
}

/** The run of each source. */
export const RUNS: Record<Source, (ctx: RunContext, onPageSize: (limit: number) => void) => Promise<unknown>> = {
  vitals: (ctx) => runVitals(ctx),
  devices: (ctx) => runDevices(ctx),
  alerts: async (ctx, onPageSize) => (await runAlerts(ctx, onPageSize)).aggregate,
};

export { LateError };
