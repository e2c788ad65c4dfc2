/**
 * One request of a source's run through the portal's scheduler: each takes its slot (retries
 * included) and is sent again when the transport policy (src/upstream/retry-policy.ts) calls the
 * failure temporary and the budget allows: the deadline, the retries left, the pause after a 429.
 * The runs themselves (which requests, paging, totals) live with their sources in src/sources/.
 */
import type { PortalConfig } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { retry, type RetryDecision } from '../core/retry.js';
import { LateError, PortalUnreachableError, RateLimitedError, TimeoutError, UpstreamHttpError } from '../errors.js';
import { PortalReader, type ListRequest, type ListResult, type RecordSink } from '../upstream/reader.js';
import { rateLimitedBackoffMs, reachedNoPortal, transportRetry } from '../upstream/retry-policy.js';
import type { Deadline } from './deadline.js';
import type { PlannedPages } from './plan.js';
import { continuationOf, type Permit, type PortalScheduler } from './scheduler.js';

/** What the jobs remember of a portal entry between runs, to plan the next one (what the plan learned). */
export interface PortalMemory {
  /** Unresolved alerts as the last /alerts run's pages said (its `total`). */
  alertsTotal?: number;
  /** The largest page the portal returned when asked for more (it caps pages). */
  pageCap?: number;
  /** Resolved alerts as the last resolved-alerts pass's pages said (its `total`). */
  resolvedAlertsTotal?: number;
  /** The access settings' lists (accounts, roles, teams) as the last access run's pages said (each `total`). */
  accessTotals?: Readonly<Partial<Record<'users' | 'roles' | 'teams', number>>>;
  /** Directory users as the last directory run's pages said (its `total`). */
  directoryUsersTotal?: number;
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
  /** A one-shot run whose window also holds a slow job (the resolved-alerts pass, …): the open alerts leave it a request (alertsPagesAllowed). */
  readonly withPass?: boolean;
  /**
   * `serve`: the pages the plan leaves this entry's lists in a run (PortalPlanner), at the share in
   * force. Unset in one-shot runs, whose pages fit what one window leaves (alertsPagesAllowed).
   */
  readonly pagesPlanned?: () => PlannedPages;
  /** Requests sent by this run, by `endpoint\u0000code`. */
  readonly requests: Map<string, number>;
  /** Requests sent to the portal since the start, by `endpoint\u0000code` (serve's counters). */
  readonly totals?: Map<string, number>;
  /** Called after a 429: one-shot runs of the portal move their deadlines to what the lowered share needs. */
  readonly replan?: () => void;
}

/** The request is late, not broken: its next attempt could start only at `slotAt`, past the run's deadline. */
function lateError(ctx: RunContext, endpoint: string, slotAt: number, cause: unknown, why: string | undefined): LateError {
  return new LateError(endpoint, slotAt, ctx.deadline.at, ctx.clock, ctx.scheduler.share.effective, ctx.scheduler.window.windowMs, { cause, why });
}

/** A retry the deadline did not leave time for: the request is late, not broken. */
interface Abandoned {
  at?: number;
  why?: string;
}

/** When to send a failed request again: what the transport policy calls temporary (a 429 aside), and what the budget allows. */
function classifier(ctx: RunContext, endpoint: () => string, abandoned: Abandoned): (err: unknown, n: number) => RetryDecision {
  const policy = transportRetry(ctx.random);
  return (err, n) => {
    const now = ctx.clock.monotonic();
    const status = err instanceof UpstreamHttpError ? err.status : err instanceof PortalUnreachableError ? err.code : err instanceof Error ? err.name : 'error';
    let decision: RetryDecision;
    if (err instanceof RateLimitedError) {
      // Without a Retry-After the scheduler pauses for its own backoff, which it caps itself.
      if ((err.retryAfterMs ?? 0) > ctx.scheduler.maxRetryAfterMs) {
        ctx.logger.warn('the portal asked to wait longer than POSTURE_MAX_RETRY_AFTER_SECONDS: this run of the source is deferred to its next run', {
          endpoint: endpoint(),
          retryAfterMs: err.retryAfterMs,
          maxRetryAfterMs: ctx.scheduler.maxRetryAfterMs,
        });
        // Stryker disable next-line ObjectLiteral: the retry loop reads `retry` as a truth value, and {} has none either
        return { retry: false };
      }
      // The scheduler paused the whole portal; the retry waits for the pause, then for its slot.
      decision = { retry: true, waitMs: Math.max(0, ctx.scheduler.pausedUntilMs - now), reason: '429' };
    } else {
      decision = policy(err, n);
    }
    if (!decision.retry) return decision;
    if (n >= ctx.maxRetries) {
      ctx.logger.warn('upstream request failed, retries used up', { endpoint: endpoint(), status, attempt: n + 1 });
    } else if (now + decision.waitMs >= ctx.deadline.at) {
      // A wait that ends at the deadline ends as the deadline cuts the run: no retry could start.
      ctx.logger.warn('upstream request failed, no time left to retry before the deadline', { endpoint: endpoint(), status, attempt: n + 1, waitMs: Math.round(decision.waitMs) });
      // No portal was reached: the run fails as unreachable, never as late.
      // Stryker disable next-line ObjectLiteral: the retry loop reads `retry` as a truth value, and {} has none either
      if (err instanceof PortalUnreachableError) return { retry: false };
      abandoned.at = now + decision.waitMs;
      abandoned.why = `a retry after ${status}`;
      // Stryker disable next-line ObjectLiteral: the retry loop reads `retry` as a truth value, and {} has none either
      return { retry: false };
    } else {
      ctx.logger.warn('upstream request failed, retrying', { endpoint: endpoint(), status, attempt: n + 1, waitMs: Math.round(decision.waitMs) });
    }
    return decision;
  };
}

/** The reason a Deadline aborts with when its time passes (not an outer stop). */
function isDeadline(reason: unknown): boolean {
  return reason instanceof DOMException && reason.name === 'TimeoutError';
}

/**
 * One request through the scheduler: waits for its slot (retries first in line), reads it, tells the
 * scheduler what the portal said, and sends again when the classifier allows.
 */
export function request<T>(ctx: RunContext, req: (attempt: number) => ListRequest, newSink: () => RecordSink<T>, priority: number): Promise<ListResult<T>> {
  const count = (endpoint: string, code: string) => {
    const key = `${endpoint}\u0000${code}`;
    ctx.requests.set(key, (ctx.requests.get(key) ?? 0) + 1);
    ctx.totals?.set(key, (ctx.totals.get(key) ?? 0) + 1);
  };
  // Stryker disable next-line StringLiteral: every attempt sets it before anything reads it
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
        permit = await ctx.scheduler.acquire({ endpoint: r.endpoint, priority: n > 0 ? continuationOf(priority) : priority, deadline: () => ctx.deadline.at, signal: ctx.deadline.signal });
      } catch (err) {
        // A retry with no slot before the deadline: late, and the failure before it is the cause (a
        // refused connection is said as unreachable below, once the retries have ended).
        if (err instanceof LateError && last !== undefined && !(last instanceof PortalUnreachableError)) {
          throw lateError(ctx, err.endpoint, err.slotAt, last, `a retry after ${PortalReader.codeOf(last)}`);
        }
        throw err;
      }
      const release = ctx.clock.hold?.();
      try {
        // The portal has counted the request by the time its answer begins: it counts in the window from then (a 2xx body may take long).
        const sink = () => {
          permit.arrived();
          return newSink();
        };
        const res = await ctx.reader.read(r, sink, ctx.deadline.signal);
        count(r.endpoint, '200');
        ctx.scheduler.answered();
        return res;
      } catch (err) {
        last = err;
        count(r.endpoint, PortalReader.codeOf(err));
        // No connection was made, so the portal counted nothing: the slot goes back to the budget.
        if (reachedNoPortal(err)) permit.refund();
        else {
          // Otherwise it could have reached the portal until now.
          permit.arrived();
          if (err instanceof RateLimitedError) {
            ctx.scheduler.rateLimited(err.retryAfterMs, rateLimitedBackoffMs(n, ctx.random));
            // One-shot runs wait for as many windows as the lowered share needs.
            ctx.replan?.();
          } else if (err instanceof UpstreamHttpError) ctx.scheduler.answered();
        }
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
    // No slot, or cut while waiting, to retry a refused connection: unreachable, which says more than late.
    if (last instanceof PortalUnreachableError && (err instanceof LateError || (err === ctx.deadline.signal.reason && isDeadline(err)))) throw last;
    if (abandoned.at === undefined) throw err;
    throw lateError(ctx, endpoint, abandoned.at, err, abandoned.why);
  });
}
