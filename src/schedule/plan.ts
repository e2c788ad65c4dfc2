/**
 * The plan: how many requests each source needs per run and per hour, whether the intervals fit
 * the share, the smallest intervals that do, how large the /alerts pages should be, and how long a
 * one-shot run (`once`, Lambda) may take. Pure: numbers in, numbers out.
 */
import { SETTING_BY_KEY } from '../config/settings.js';
import { RESOLVED, SOURCES, type Job, type Source } from '../domain.js';
import { PRIORITY, WINDOW_MS } from './scheduler.js';
import { checkTimeline, type LateRun, type Timeline, type TimelineSource } from './timeline.js';
import { WINDOW_MARGIN_MS } from './window.js';

/** The longest interval a setting takes (POSTURE_*_INTERVAL_SECONDS, from the settings table): a suggestion beyond it could not be set. */
export const MAX_INTERVAL_SECONDS = SETTING_BY_KEY.interval_seconds.max!;

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
  /**
   * The sources whose interval is POSTURE_INTERVAL_SECONDS (no per-source setting): raising that one
   * setting moves all of them. Unset: none, so only per-source changes are suggested.
   */
  readonly inherited?: readonly Source[];
  /**
   * Seconds between resolved-alerts passes (resolved_alerts_interval_seconds): the pass is planned
   * beside the sources, its interval fixed (suggestions change the sources'). Unset: no pass.
   */
  readonly resolvedIntervalSeconds?: number;
  /** Resolved alerts at the last pass, when known. */
  readonly resolvedAlertsTotal?: number;
}

/** A change of interval settings that, applied alone, makes the plan fit. */
export interface IntervalChange {
  /** New per-source intervals (only the sources that change). */
  readonly sources: Partial<Record<Source, number>>;
  /** A new POSTURE_INTERVAL_SECONDS, for the sources that inherit it. */
  readonly interval?: number;
  /** Every source's interval once the change is applied. */
  readonly intervals: Readonly<Record<Source, number>>;
}

export interface SourcePlan {
  /** A source, or the resolved-alerts pass. */
  readonly source: Job;
  readonly requestsPerRun: number;
  readonly intervalSeconds: number;
  readonly requestsPerHour: number;
}

export interface PortalPlan {
  readonly sources: readonly SourcePlan[];
  readonly requestsPerHour: number;
  /** The share's capacity per hour. */
  readonly capacityPerHour: number;
  /**
   * Whether every source can run on its interval within the share: on average over the hour, and
   * minute by minute as `serve` runs them (the timeline: every run ends in time, HEADROOM_MS early).
   */
  readonly fits: boolean;
  /** When the hourly average fits but a run would end too late in `serve`: the first such run. */
  readonly late?: LateRun;
  /** Most requests `serve` starts in any 60 s (when the hourly average fits), and when (s from the start). */
  readonly busiest?: { readonly requests: number; readonly atSeconds: number };
  /**
   * When it does not fit: the smallest intervals that do, minimal in this sense: each is at least
   * its configured interval, a changed one is a whole multiple of 10 s, the plan fits, and none
   * can be lowered (by 10 s, or back to its configured value) with the plan still fitting. Of
   * those, the one reached by stretching every interval by the same factor and then lowering each
   * source as far as it goes, /alerts first (open alerts change by the minute), then Vitals, devices.
   * Unset when even the longest intervals do not fit.
   */
  readonly suggested?: Readonly<Record<Source, number>>;
  /**
   * When it does not fit: the change that changes least: the fewest sources, then the fewest
   * requests per hour given up; one source to the smallest multiple of 10 s that fits, or
   * POSTURE_INTERVAL_SECONDS when only it fixes the inheriting sources together; else `suggested`.
   */
  readonly change?: IntervalChange;
  /** When it does not fit and raising POSTURE_INTERVAL_SECONDS alone fixes it: the smallest such value (a multiple of 10 s). */
  readonly intervalAlone?: number;
}

/** Requests a run of /vitals needs: the whole portal plus one per tag. */
const vitalsRequests = (tags: readonly string[]): number => 1 + tags.length;
/** Requests a run of device totals needs: active and inactive, `limit=1` each. */
const DEVICES_REQUESTS = 2;

/**
 * /alerts pages a run may use: what the share leaves in one window beside the other sources, at
 * least 1. `withPass`: a one-shot run whose window also holds the resolved-alerts pass leaves it
 * one request, so that the pass (one request of everything while its total is unknown) need not
 * wait a window for the open alerts' pages.
 */
export function alertsPagesAllowed(input: Pick<PlanInput, 'requestsPerMinute' | 'vitalsTags'>, withPass = false): number {
  return Math.max(1, input.requestsPerMinute - vitalsRequests(input.vitalsTags) - DEVICES_REQUESTS - (withPass ? 1 : 0));
}

/** Requests a run of /alerts needs for `total` alerts (1 when unknown); `withPass` as alertsPagesAllowed. */
function alertsRequests(input: Pick<PlanInput, 'pageSize' | 'requestsPerMinute' | 'vitalsTags' | 'pageCap'>, total: number | undefined, withPass = false): number {
  if (total === undefined) return 1;
  const limit = alertsLimit({ pageSize: input.pageSize, remaining: total, pagesAllowed: alertsPagesAllowed(input, withPass), pageCap: input.pageCap });
  // limit=0 (everything in one request) only when no cap applies; none left still takes a request.
  const perPage = limit === 0 ? total : limit;
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
  if (pageCap === undefined || pageCap <= 0) return limit;
  return limit === 0 ? pageCap : Math.min(limit, pageCap);
}

/**
 * Resolved-alerts pages a pass may use: what one window leaves beside the other sources and the
 * open alerts' pages, at least 1; so a one-shot run of a small portal reads everything in the
 * share's one window (1: the whole list in one request, `limit=0`). (Open alerts paged to leave the
 * pass a request, alertsPagesAllowed's `withPass`, leave it as many: the same when they fit in
 * fewer pages, and 1 when they fill the window either way.)
 */
export function resolvedPagesAllowed(input: Pick<PlanInput, 'requestsPerMinute' | 'pageSize' | 'vitalsTags' | 'pageCap'>, alertsTotal: number | undefined): number {
  return Math.max(1, alertsPagesAllowed(input) - alertsRequests(input, alertsTotal));
}

/** Requests of a resolved-alerts pass: the pages of the resolved list (1 while its total is unknown). */
function resolvedRequests(input: Pick<PlanInput, 'requestsPerMinute' | 'pageSize' | 'vitalsTags' | 'pageCap' | 'alertsTotal' | 'resolvedAlertsTotal'>): number {
  const total = input.resolvedAlertsTotal;
  if (total === undefined) return 1;
  const limit = alertsLimit({ pageSize: input.pageSize, remaining: total, pagesAllowed: resolvedPagesAllowed(input, input.alertsTotal), pageCap: input.pageCap });
  return Math.max(1, Math.ceil(total / (limit === 0 ? total : limit)));
}

/** The pass of a plan input, when it has one: its requests per pass and interval (s). */
function passOf(input: Pick<PlanInput, 'requestsPerMinute' | 'pageSize' | 'vitalsTags' | 'pageCap' | 'alertsTotal' | 'resolvedAlertsTotal' | 'resolvedIntervalSeconds'>): Pass | undefined {
  return input.resolvedIntervalSeconds === undefined ? undefined : { requests: resolvedRequests(input), intervalSeconds: input.resolvedIntervalSeconds };
}

/** The resolved-alerts pass as the plan runs it. */
export interface Pass {
  readonly requests: number;
  readonly intervalSeconds: number;
}

/** Requests per run of each source. */
function requestsPerRun(input: Pick<PlanInput, 'requestsPerMinute' | 'pageSize' | 'vitalsTags' | 'alertsTotal' | 'pageCap'>): Record<Source, number> {
  return { vitals: vitalsRequests(input.vitalsTags), alerts: alertsRequests(input, input.alertsTotal), devices: DEVICES_REQUESTS };
}

/** The plan of one portal in `serve`. */
export function planPortal(input: PlanInput): PortalPlan {
  const perRun = requestsPerRun(input);
  const pass = passOf(input);
  const seen = new Map<string, Evaluation>();
  const at = (intervals: Readonly<Record<Source, number>>): Evaluation => {
    const key = SOURCES.map((s) => intervals[s]).join();
    let e = seen.get(key);
    if (!e) seen.set(key, (e = evaluate(perRun, intervals, input.requestsPerMinute, pass)));
    return e;
  };
  const { sources, requestsPerHour, capacityPerHour, fits, late, busiest } = at(input.intervals);
  const minute = { ...(late && { late }), ...(busiest && { busiest }) };
  if (fits) return { sources, requestsPerHour, capacityPerHour, fits, ...minute };
  const suggested = smallestThatFit(input.intervals, at, (s) => runSeconds(perRun[s], input.requestsPerMinute));
  const inherited = SOURCES.filter((s) => input.inherited?.includes(s));
  const intervalAlone = inherited.length ? smallestFitting(Math.max(...inherited.map((s) => input.intervals[s])), (v) => at(withValue(input.intervals, inherited, v))) : undefined;
  // One-setting changes: each source alone, or POSTURE_INTERVAL_SECONDS for the sources that inherit it.
  const candidates: IntervalChange[] = [];
  for (const s of SOURCES) {
    const v = smallestFitting(input.intervals[s], (x) => at(withValue(input.intervals, [s], x)));
    if (v !== undefined) candidates.push({ sources: { [s]: v }, intervals: withValue(input.intervals, [s], v) });
  }
  if (intervalAlone !== undefined) candidates.push({ sources: {}, interval: intervalAlone, intervals: withValue(input.intervals, inherited, intervalAlone) });
  const changed = (c: IntervalChange) => SOURCES.filter((s) => c.intervals[s] !== input.intervals[s]).length;
  candidates.sort((a, b) => changed(a) - changed(b) || at(b.intervals).requestsPerHour - at(a.intervals).requestsPerHour);
  const fallback = suggested && { sources: Object.fromEntries(SOURCES.filter((s) => suggested[s] !== input.intervals[s]).map((s) => [s, suggested[s]])), intervals: suggested };
  const change = candidates[0] ?? fallback;
  return { sources, requestsPerHour, capacityPerHour, fits, ...minute, ...(suggested && { suggested }), ...(change && { change }), ...(intervalAlone !== undefined && { intervalAlone }) };
}

type Evaluation = Pick<PortalPlan, 'sources' | 'requestsPerHour' | 'capacityPerHour' | 'fits' | 'late' | 'busiest'>;

/** Requests per hour of each source at `intervals`, and whether they fit the share (every suggestion is checked with this). */
function evaluate(perRun: Readonly<Record<Source, number>>, intervals: Readonly<Record<Source, number>>, requestsPerMinute: number, pass?: Pass): Evaluation {
  const sources: SourcePlan[] = SOURCES.map((source) => {
    const intervalSeconds = intervals[source];
    return { source, requestsPerRun: perRun[source], intervalSeconds, requestsPerHour: (perRun[source] * 3600) / intervalSeconds };
  });
  if (pass) sources.push({ source: RESOLVED, requestsPerRun: pass.requests, intervalSeconds: pass.intervalSeconds, requestsPerHour: (pass.requests * 3600) / pass.intervalSeconds });
  // Rounded to 1e-9: whole requests over whole-second intervals that load the share exactly must not
  // come out a float error above it (3600/70 + 3600/700 + 7200/2100 is 60.00000000000001). A real
  // excess that small (at least 3600 / 86400³, under a request in a million years) counts as none.
  const requestsPerHour = Math.round(sources.reduce((n, s) => n + s.requestsPerHour, 0) * 1e9) / 1e9;
  const capacityPerHour = (requestsPerMinute * 3_600_000) / WINDOW_MS;
  // A run must also end before the source is due again.
  if (!(requestsPerHour <= capacityPerHour && sources.every((s) => runSeconds(s.requestsPerRun, requestsPerMinute) < s.intervalSeconds))) return { sources, requestsPerHour, capacityPerHour, fits: false };
  // And minute by minute, as serve runs them, every run ends in time.
  const { timeline } = servePlan([{ name: '', perRun, intervals, ...(pass && { pass }) }], requestsPerMinute);
  const busiest = { requests: timeline.busiest.requests, atSeconds: timeline.busiest.at / 1000 };
  return { sources, requestsPerHour, capacityPerHour, fits: timeline.late.length === 0, ...(timeline.late[0] && { late: timeline.late[0] }), busiest };
}

/** What `serve` runs of one entry of a portal: each source's requests per run and interval (s). */
export interface EntryRuns {
  readonly name: string;
  readonly perRun: Readonly<Record<Source, number>>;
  readonly intervals: Readonly<Record<Source, number>>;
  /** The resolved-alerts pass, when the entry runs it. */
  readonly pass?: Pass;
}

/**
 * The sources of the entries of one portal as `serve` starts them: all at once, or, with `phased`,
 * staggered so that not every source is due at once: Vitals of every entry first, then device
 * totals, then /alerts, then the resolved-alerts pass of the entries that run it (the scheduler's
 * priorities), their first runs spread evenly over the shortest interval, in whole seconds.
 */
function timelineOf(entries: readonly EntryRuns[], phased: boolean): TimelineSource[] {
  const order = [...SOURCES].sort((a, b) => PRIORITY[a] - PRIORITY[b]);
  const runs = (entry: EntryRuns, job: Job): { requests: number; intervalSeconds: number } =>
    job === RESOLVED ? entry.pass! : { requests: entry.perRun[job], intervalSeconds: entry.intervals[job] };
  const pairs = [...order.flatMap((job: Job) => entries.map((entry) => ({ entry, job }))), ...entries.filter((e) => e.pass).map((entry) => ({ entry, job: RESOLVED as Job }))];
  const shortest = Math.min(...pairs.map(({ entry, job }) => runs(entry, job).intervalSeconds));
  return pairs.map(({ entry, job }, i) => ({
    name: entries.length > 1 ? `${entry.name}/${job}` : job,
    priority: PRIORITY[job],
    requests: runs(entry, job).requests,
    intervalMs: runs(entry, job).intervalSeconds * 1000,
    phaseMs: phased ? Math.floor((i * shortest) / pairs.length) * 1000 : 0,
  }));
}

/**
 * How `serve` runs the entries of one portal, and its timeline: every source started at once when
 * that runs on time, else staggered (timelineOf). `serve` starts each source at the phase chosen
 * here, so what the check accepts is what runs.
 */
export function servePlan(entries: readonly EntryRuns[], share: number): { sources: TimelineSource[]; timeline: Timeline } {
  const together = timelineOf(entries, false);
  const first = checkTimeline(together, share);
  if (first.late.length === 0) return { sources: together, timeline: first };
  const phased = timelineOf(entries, true);
  return { sources: phased, timeline: checkTimeline(phased, share) };
}

/** What `serve` runs of one entry, for timelineOf. */
export function entryRuns(name: string, input: Pick<PlanInput, 'requestsPerMinute' | 'pageSize' | 'vitalsTags' | 'intervals' | 'alertsTotal' | 'pageCap' | 'resolvedIntervalSeconds' | 'resolvedAlertsTotal'>): EntryRuns {
  const pass = passOf(input);
  return { name, perRun: requestsPerRun(input), intervals: input.intervals, ...(pass && { pass }) };
}

function withValue(intervals: Readonly<Record<Source, number>>, which: readonly Source[], value: number): Record<Source, number> {
  const out = { ...intervals };
  for (const s of which) out[s] = value;
  return out;
}

/**
 * The smallest value at least `current` that fits: `current` itself, else the smallest multiple of
 * 10 s above it, up to MAX_INTERVAL_SECONDS; undefined when none does. Fitting only gets easier as
 * the value grows, so the first that fits is the smallest.
 */
function smallestFitting(current: number, fitsWith: (value: number) => Evaluation): number | undefined {
  if (fitsWith(current).fits) return current;
  // The multiples of 10 s above `current`: the first few one by one (how the sources line up
  // minute by minute changes with the interval, so a longer one does not always fit when a shorter
  // one does), then by bisection when the top one, 86400, fits.
  let lo = Math.floor(current / 10) + 1;
  for (const end = lo + LINEAR_STEPS; lo < end && lo < MAX_INTERVAL_SECONDS / 10; lo++) if (fitsWith(lo * 10).fits) return lo * 10;
  if (!fitsWith(MAX_INTERVAL_SECONDS).fits) return undefined;
  let hi = MAX_INTERVAL_SECONDS / 10;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (fitsWith(mid * 10).fits) hi = mid;
    else lo = mid + 1;
  }
  return lo * 10;
}

/** Multiples of 10 s smallestFitting tries one by one before it bisects. */
const LINEAR_STEPS = 30;

/** `suggested` of PortalPlan (see there for the sense in which it is smallest). */
function smallestThatFit(current: Readonly<Record<Source, number>>, at: (intervals: Readonly<Record<Source, number>>) => Evaluation, run: (s: Source) => number): Record<Source, number> | undefined {
  const longest = withValue(current, SOURCES, MAX_INTERVAL_SECONDS);
  if (!at(longest).fits) return undefined;
  const now = at(current);
  const factor = now.requestsPerHour / now.capacityPerHour;
  // Same proportions, whole 10 s, never below the configured value (the factor is below 1 when only a
  // run's length is the problem): at most the share's load (a value clamped at the longest interval may not be).
  const out = Object.fromEntries(SOURCES.map((s) => [s, Math.min(MAX_INTERVAL_SECONDS, Math.max(current[s], Math.ceil((current[s] * factor) / 10) * 10))])) as Record<Source, number>;
  // A run that outlasts its interval needs that source longer still (the next multiple of 10 s past the run).
  for (const s of SOURCES) if (run(s) >= out[s]) out[s] = Math.min(MAX_INTERVAL_SECONDS, (Math.floor(run(s) / 10) + 1) * 10);
  // Minute by minute the same proportions may still be late: 10 s longer each, a few times, before the longest.
  for (let step = 0; step < LINEAR_STEPS && !at(out).fits; step++) for (const s of SOURCES) out[s] = Math.min(MAX_INTERVAL_SECONDS, out[s] + 10);
  if (!at(out).fits) Object.assign(out, longest);
  // Lowering one source adds load, but also moves where the runs line up minute by minute, so a
  // source lowered earlier may go lower still once the others have: again until none moves.
  for (let round = 0, moved = true; moved && round < 5; round++) {
    moved = false;
    for (const s of ['alerts', 'vitals', 'devices'] as const) {
      const cap = out[s];
      out[s] = Math.min(cap, smallestFitting(current[s], (v) => at({ ...out, [s]: Math.min(v, cap) })) ?? cap);
      moved ||= out[s] !== cap;
    }
  }
  return out;
}

/** Seconds a run of `requests` takes at least at `share` per window: one window less than the windows it spans. */
export function runSeconds(requests: number, share: number): number {
  return (Math.ceil(requests / share) - 1) * ((WINDOW_MS + WINDOW_MARGIN_MS) / 1000);
}

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
 * What a one-shot run plans with of one entry of a portal; `withPass`: the run includes the
 * resolved-alerts pass (its pages, as resolvedAlertsTotal says).
 */
type OneShotInput = Pick<PlanInput, 'requestsPerMinute' | 'pageSize' | 'vitalsTags' | 'alertsTotal' | 'pageCap' | 'resolvedAlertsTotal'> & { readonly withPass?: boolean };

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
  const requests = entries.reduce((n, e) => n + vitalsRequests(e.vitalsTags) + DEVICES_REQUESTS + alertsRequests(e, e.alertsTotal, e.withPass) + (e.withPass ? resolvedRequests(e) : 0), 0);
  return oneShotLeftSeconds({ requests, share: entries[0]!.requestsPerMinute, maxRetries: maxRetries * entries.length, maxRetryAfterSeconds });
}
