/**
 * How long a one-shot run (`once`, Lambda) may take: the windows its requests and retries need at
 * the share, a 429 pause, and time to read the last answers; counted as the plan counts each
 * source's requests (./plan.ts). Pure: numbers in, numbers out.
 */
import { WINDOW_MS } from './scheduler.js';
import { alertsRequests, DEVICES_REQUESTS, runSeconds, slowRequests, vitalsRequests, type PlanInput, type SlowSource } from './plan.js';
import { WINDOW_MARGIN_MS } from './window.js';

/** The longest 429 pause a one-shot run allows for: the portal's window (a pause stops every request at once, so pauses overlap). */
const ONE_SHOT_PAUSE_SECONDS = 60;
/** Time for reading the last answers after the last request starts. */
const ONE_SHOT_READING_SECONDS = 30;

/** What a one-shot run still has to send, and the settings that bound its waits. */
export interface OneShotLeft {
  /** Requests still to send (retries aside). */
  readonly requests: number;
  /** The share in force, requests per window. */
  readonly share: number;
  /** POSTURE_MAX_RETRIES: each request may take this many more slots in all. */
  readonly maxRetries: number;
  /** POSTURE_MAX_RETRY_AFTER_SECONDS: no 429 pause waited is longer. */
  readonly maxRetryAfterSeconds: number;
  /** Whether the run has sent requests in the current window already: its first request left may wait for the window to slide. */
  readonly windowInUse?: boolean;
}

/**
 * Seconds a one-shot run (`once`, Lambda) may still take: the windows its requests and the retries
 * allowed need at the share (one more when the current window is in use), one 429 pause of up to
 * POSTURE_MAX_RETRY_AFTER_SECONDS but at most 60 s, and 30 s for reading the answers. The pause is
 * counted even with no retries: another source's 429 pauses every request of the portal.
 */
export function oneShotLeftSeconds(left: OneShotLeft): number {
  const windows = runSeconds(left.requests + left.maxRetries, left.share) + (left.windowInUse ? (WINDOW_MS + WINDOW_MARGIN_MS) / 1000 : 0);
  return windows + Math.min(left.maxRetryAfterSeconds, ONE_SHOT_PAUSE_SECONDS) + ONE_SHOT_READING_SECONDS;
}

/**
 * What a one-shot run plans with of one entry of a portal: `slow`, the slow sources the run
 * includes (those due), each counted as the plan counts it; the open alerts leave the first of
 * them a request in the window (alertsPagesAllowed's `withPass`).
 */
export type OneShotInput = Pick<PlanInput, 'requestsPerMinute' | 'pageSize' | 'vitalsTags' | 'alertsTotal' | 'pageCap'> & { readonly slow?: readonly SlowSource[] };

/**
 * How long a one-shot run (`once`, Lambda) of a portal may take by default: oneShotLeftSeconds for
 * every request of every source, from an unused window. A run learns the /alerts total on its first
 * page and extends its deadline to the pages it needs (up to an explicit cap).
 */
export function oneShotSeconds(input: OneShotInput, maxRetries: number, maxRetryAfterSeconds: number): number {
  return portalOneShotSeconds([input], maxRetries, maxRetryAfterSeconds);
}

/**
 * oneShotSeconds of a portal read by several entries (one per key), all on the portal's one share:
 * every entry's requests and retries queue on it.
 */
export function portalOneShotSeconds(entries: readonly OneShotInput[], maxRetries: number, maxRetryAfterSeconds: number): number {
  if (entries.length === 0) throw new RangeError('portalOneShotSeconds: a portal has at least one entry');
  return oneShotLeftSeconds({ requests: oneShotRequests(entries), share: entries[0]!.requestsPerMinute, maxRetries: maxRetries * entries.length, maxRetryAfterSeconds });
}

/** Requests a one-shot run of a portal's entries sends when nothing fails: every source's, and the slow sources' it includes. */
function oneShotRequests(entries: readonly OneShotInput[]): number {
  return entries.reduce((n, e) => {
    const slow = e.slow ?? [];
    return n + vitalsRequests(e.vitalsTags) + DEVICES_REQUESTS + alertsRequests(e, e.alertsTotal, slow.length > 0) + slow.reduce((m, s) => m + slowRequests(e, s), 0);
  }, 0);
}

/**
 * Seconds a one-shot run of a portal's entries takes at the least: the windows its requests span at
 * the share when nothing fails or waits. A run with less time cannot finish them.
 */
export function portalOneShotLeastSeconds(entries: readonly OneShotInput[]): number {
  return runSeconds(oneShotRequests(entries), entries[0]!.requestsPerMinute);
}
