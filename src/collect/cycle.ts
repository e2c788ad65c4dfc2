import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { PortalConfig } from '../config/load.js';
import { AuthenticationError, ListMismatchError } from '../errors.js';
import { PortalClient, type PortalClientOptions } from '../upstream/client.js';
import type { RateLimiter } from '../upstream/limiter.js';
import { planAlertsLimit } from '../upstream/planner.js';
import { AlertsSink, mergeAlerts, type AlertsAggregate } from './alerts.js';
import { CountOnlySink, type DevicesTotals } from './devices.js';
import { VitalsSink, type VitalsList } from './vitals.js';

/** The outcome of collecting one source. */
export type SourceResult<T> =
  | { readonly ok: true; readonly value: T; readonly invalid: number }
  | { readonly ok: false; readonly error: Error; readonly invalid?: number };

/** Everything one cycle learned about one portal. */
export interface CycleResult {
  readonly portal: string;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly vitals: SourceResult<VitalsList[]>;
  readonly alerts: SourceResult<AlertsAggregate>;
  readonly devices: SourceResult<DevicesTotals>;
  /** Requests sent, by `endpoint\u0000code`. */
  readonly requests: ReadonlyMap<string, number>;
  /** The /alerts page size used (0 = all in one request); absent when /alerts was not asked. */
  readonly alertsPageSize?: number;
}

/** What a portal's collector needs from outside. */
export interface CollectorDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly limiter: RateLimiter;
  readonly apiKey: string;
  /** Client options besides base URL, key, limiter, clock and logger (timeouts, dispatcher, retries). */
  readonly client?: Partial<Omit<PortalClientOptions, 'baseUrl' | 'apiKey' | 'limiter' | 'clock' | 'logger' | 'onResponse'>>;
}

/** Time a planned request is assumed to take when judging whether it still fits before the deadline. */
const REQUEST_RESERVE_MS = 2_000;

/**
 * Collects one portal once: Vitals (1 request, +1 per tag), device totals (2 requests) and
 * unresolved alerts (paged to fit the budget). A failing source never stops the others.
 */
export async function collectPortal(
  portal: PortalConfig,
  deps: CollectorDeps,
  options: { deadline: number; signal?: AbortSignal },
): Promise<CycleResult> {
  const { clock, limiter } = deps;
  const logger = deps.logger.child({ portal: portal.name });
  const requests = new Map<string, number>();
  const client = new PortalClient({
    ...deps.client,
    baseUrl: portal.baseUrl,
    apiKey: deps.apiKey,
    apiKeyHeader: portal.apiKeyHeader,
    limiter,
    clock,
    logger,
    onResponse: (endpoint, code) => {
      const key = `${endpoint}\u0000${code}`;
      requests.set(key, (requests.get(key) ?? 0) + 1);
    },
  });
  const startedAt = clock.now();
  const { deadline, signal } = options;
  let authFailure: Error | undefined;
  const guard = async <T>(source: string, fn: () => Promise<T>): Promise<SourceResult<T>> => {
    if (authFailure) return { ok: false, error: authFailure };
    try {
      const value = await fn();
      return { ok: true, value, invalid: invalidOf(value) };
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      // A rejected key fails every source alike: do not spend budget proving it again.
      if (error instanceof AuthenticationError) authFailure = error;
      logger.error(`collecting ${source} failed`, { source, err: error });
      return { ok: false, error };
    }
  };

  const vitals = await guard('vitals', async () => {
    const lists: VitalsList[] = [];
    for (const tag of [undefined, ...portal.vitalsTags]) {
      const res = await client.list({ endpoint: '/vitals', query: { tag } }, () => new VitalsSink(tag, logger), { deadline, signal });
      if (res.received !== res.total) {
        throw new ListMismatchError('/vitals', res.total, res.received, `/vitals${tag === undefined ? '' : ` (tag ${tag})`} returned ${res.received} records but its total says ${res.total}: the list is incomplete.`);
      }
      lists.push(res.result);
    }
    return lists;
  });

  const devices = await guard('devices', async () => {
    const totals: Partial<Record<'active' | 'inactive', number>> = {};
    for (const filter of ['active', 'inactive'] as const) {
      const res = await client.list({ endpoint: '/devices', query: { filter, limit: 1 } }, () => new CountOnlySink(), { deadline, signal });
      totals[filter] = res.total;
    }
    return totals as DevicesTotals;
  });

  let alertsPageSize: number | undefined;
  const alerts = await guard('alerts', async () => {
    const nowSeconds = clock.now() / 1000;
    let offset = 0;
    let total: number | undefined;
    let aggregate: AlertsAggregate | undefined;
    for (;;) {
      let limit = portal.pageSize;
      const res = await client.list(
        () => {
          limit = planAlertsLimit({ pageSize: portal.pageSize, remaining: total === undefined ? undefined : total - offset, available: limiter.availableBy(deadline, REQUEST_RESERVE_MS) });
          if (limit !== portal.pageSize) {
            logger.info('grew the /alerts page size to fit the rate budget and deadline', { pageSize: portal.pageSize, limit, offset, total });
          }
          alertsPageSize = limit === 0 || alertsPageSize === 0 ? 0 : Math.max(alertsPageSize ?? 0, limit);
          return { endpoint: '/alerts', query: { filter: 'allunresolved', offset, limit } };
        },
        () => new AlertsSink(nowSeconds, logger, offset),
        { deadline, signal },
      );
      if (total !== undefined && res.total !== total) {
        throw new ListMismatchError('/alerts', total, res.total, `/alerts changed while it was being paged (total ${total}, then ${res.total}): the counts would be off, so this cycle's alerts are dropped; a larger POSTURE_PAGE_SIZE avoids it.`);
      }
      total = res.total;
      aggregate = aggregate ? mergeAlerts(aggregate, res.result) : res.result;
      offset += res.received;
      if (limit === 0 || res.received < limit || offset >= total) break;
    }
    if (offset !== total) {
      throw new ListMismatchError('/alerts', total!, offset, `/alerts returned ${offset} records but its total says ${total}: the list was truncated or moved while paged.`);
    }
    return aggregate!;
  });

  return { portal: portal.name, startedAt, finishedAt: clock.now(), vitals, alerts, devices, requests, alertsPageSize };
}

function invalidOf(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, l: VitalsList) => n + l.invalid, 0);
  if (value && typeof value === 'object' && 'invalid' in value) return (value as { invalid: number }).invalid;
  return 0;
}
