/**
 * The plan: how many requests each source needs per run and per hour, whether the intervals fit
 * the share, the smallest intervals that do, how large the /alerts pages should be, and how long a
 * one-shot run (`once`, Lambda) may take. Pure: numbers in, numbers out.
 */
import type { Source } from '../metrics/catalogue.js';
import { WINDOW_MS } from './scheduler.js';

/** What the plan needs to know of a portal. */
export interface PlanInput {
  readonly requestsPerMinute: number;
  readonly pageSize: number;
  readonly vitalsTags: readonly string[];
  /** Seconds between runs of each source (serve). */
  readonly intervals: Readonly<Record<Source, number>>;
  /** Unresolved alerts at the last run, when known. */
  readonly alertsTotal?: number;
  /** The largest page the portal returns, when it caps pages. */
  readonly pageCap?: number;
}

export interface SourcePlan {
  readonly source: Source;
  readonly requestsPerRun: number;
  readonly intervalSeconds: number;
  readonly requestsPerHour: number;
}

export interface PortalPlan {
  readonly sources: readonly SourcePlan[];
  readonly requestsPerHour: number;
  /** The share's capacity per hour. */
  readonly capacityPerHour: number;
  /** Whether every source can run on its interval within the share. */
  readonly fits: boolean;
  /** When it does not fit: the smallest intervals (same proportions, whole 10 s) that do. */
  readonly suggested?: Readonly<Record<Source, number>>;
}

/** Requests a run of /vitals needs: the whole portal plus one per tag. */
export const vitalsRequests = (tags: readonly string[]): number => 1 + tags.length;
/** Requests a run of device totals needs: active and inactive, `limit=1` each. */
export const DEVICES_REQUESTS = 2;

/** /alerts pages a run may use: what the share leaves in one window beside the other sources, at least 1. */
export function alertsPagesAllowed(input: Pick<PlanInput, 'requestsPerMinute' | 'vitalsTags'>): number {
  return Math.max(1, input.requestsPerMinute - vitalsRequests(input.vitalsTags) - DEVICES_REQUESTS);
}

/** Requests a run of /alerts needs for `total` alerts (1 when unknown). */
export function alertsRequests(input: Pick<PlanInput, 'pageSize' | 'requestsPerMinute' | 'vitalsTags' | 'pageCap'>, total: number | undefined): number {
  if (total === undefined || total === 0) return 1;
  const limit = alertsLimit({ pageSize: input.pageSize, remaining: total, pagesAllowed: alertsPagesAllowed(input), pageCap: input.pageCap });
  const perPage = limit === 0 ? (input.pageCap ?? total) : limit;
  return Math.max(1, Math.ceil(total / perPage));
}

/**
 * The `limit` of the next /alerts request: the configured page size while the pages fit in the
 * pages allowed, a larger page when they would not, everything left (`limit=0`) when one request
 * must do. A portal that caps its pages is asked for at most its cap.
 */
export function alertsLimit(args: { pageSize: number; remaining: number | undefined; pagesAllowed: number; pageCap?: number }): number {
  const { pageSize, remaining, pagesAllowed, pageCap } = args;
  let limit: number;
  if (remaining !== undefined && remaining <= pageSize) limit = pageSize;
  else if (pagesAllowed <= 1) limit = 0;
  else if (remaining === undefined) limit = pageSize;
  else if (Math.ceil(remaining / pageSize) <= pagesAllowed) limit = pageSize;
  else limit = Math.ceil(remaining / pagesAllowed);
  if (pageCap !== undefined && pageCap > 0 && (limit === 0 || limit > pageCap)) return pageCap;
  return limit;
}

/** Requests per run of each source. */
export function requestsPerRun(input: PlanInput): Record<Source, number> {
  return { vitals: vitalsRequests(input.vitalsTags), alerts: alertsRequests(input, input.alertsTotal), devices: DEVICES_REQUESTS };
}

/** The plan of one portal in `serve`. */
export function planPortal(input: PlanInput): PortalPlan {
  const perRun = requestsPerRun(input);
  const sources = (['vitals', 'alerts', 'devices'] as const).map((source) => {
    const intervalSeconds = input.intervals[source];
    return { source, requestsPerRun: perRun[source], intervalSeconds, requestsPerHour: (perRun[source] * 3600) / intervalSeconds };
  });
  const requestsPerHour = sources.reduce((n, s) => n + s.requestsPerHour, 0);
  const capacityPerHour = (input.requestsPerMinute * 3_600_000) / WINDOW_MS;
  const runFits = (s: SourcePlan, interval: number) => runSeconds(s.requestsPerRun, input.requestsPerMinute) < interval;
  const fits = requestsPerHour <= capacityPerHour && sources.every((s) => runFits(s, s.intervalSeconds));
  if (fits) return { sources, requestsPerHour, capacityPerHour, fits };
  // Stretch every interval by the same factor (load), and each to fit its own run.
  const factor = Math.max(1, requestsPerHour / capacityPerHour);
  const suggested = Object.fromEntries(
    sources.map((s) => {
      let seconds = Math.max(10, Math.ceil((s.intervalSeconds * factor) / 10) * 10);
      while (!runFits(s, seconds)) seconds += 10;
      return [s.source, seconds];
    }),
  ) as Record<Source, number>;
  return { sources, requestsPerHour, capacityPerHour, fits, suggested };
}

/** Seconds a run of `requests` takes at least at `share` per window: one window less than the windows it spans. */
export function runSeconds(requests: number, share: number): number {
  return (Math.ceil(requests / share) - 1) * (WINDOW_MS / 1000 + 1);
}

/**
 * How long a one-shot run (`once`, Lambda) of a portal may take by default: the windows that its
 * requests and the retries allowed need at the share, one pause of up to POSTURE_MAX_RETRY_AFTER_SECONDS
 * but at most 60 s (a 429's Retry-After pauses every request at once, so pauses overlap), and 30 s for reading the
 * answers. A run learns the /alerts total on its first page and extends its deadline to the pages
 * it needs (up to an explicit cap).
 */
export function oneShotSeconds(input: Pick<PlanInput, 'requestsPerMinute' | 'pageSize' | 'vitalsTags' | 'alertsTotal' | 'pageCap'>, maxRetries: number, maxRetryAfterSeconds: number): number {
  const requests = vitalsRequests(input.vitalsTags) + DEVICES_REQUESTS + alertsRequests(input, input.alertsTotal) + maxRetries;
  return runSeconds(requests, input.requestsPerMinute) + (maxRetries > 0 ? Math.min(maxRetryAfterSeconds, 60) : 0) + 30;
}
