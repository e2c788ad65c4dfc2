/**
 * The plan: how many requests each source needs per run and per hour, whether the intervals fit
 * the share, the smallest intervals that do, and how large the /alerts pages should be (how long a
 * one-shot run may take: ./one-shot.ts). Pure: numbers in, numbers out.
 */
import { SETTING_BY_KEY } from '../config/settings.js';
import { SOURCES, type Source } from '../domain.js';
import { PRIORITY, WINDOW_MS } from './scheduler.js';
import { checkTimeline, type LateRun, type Timeline, type TimelineSource } from './timeline.js';
import { WINDOW_MARGIN_MS } from './window.js';

/** The longest interval a setting takes (POSTURE_*_INTERVAL_SECONDS, from the settings table): a suggestion beyond it could not be set. */
export const MAX_INTERVAL_SECONDS = SETTING_BY_KEY.interval_seconds.max!;

/**
 * A source on its own interval that runs below the live sources (PRIORITY.slow): its requests,
 * first and follow-up, take only what the live sources leave, so it never makes one late by
 * outranking it: the resolved-alerts pass (hourly), the access settings (hourly, three lists read
 * whole) and the directory's users (daily, a list paged by the plan).
 */
export interface SlowSource {
  /** Its name in the plan and the timeline, e.g. `resolved`. */
  readonly job: string;
  readonly intervalSeconds: number;
  /**
   * Requests of one run: a fixed number; a list paged as the open alerts are (alertsLimit, the
   * portal's page cap): one request while its total is unknown, then the pages its last total
   * needs at what one window leaves beside the live sources (slowPagesAllowed); or lists each read
   * whole, one request each but for the pages of a portal that caps them.
   */
  readonly requests: number | PagedList | WholeLists;
}

/** A list read page by page; `total` as at its last complete run, when known. */
export interface PagedList {
  readonly paged: true;
  readonly total?: number;
}

/** Lists each read whole in one request (`limit=0`), or by the portal's cap a page; each one's total as at its last run, when known. */
export interface WholeLists {
  readonly whole: readonly (number | undefined)[];
}

/** What the plan needs to know of a portal entry. */
export interface PlanInput {
  /** The share: requests per window (as configured, or in force after 429s). */
  readonly requestsPerMinute: number;
  readonly pageSize: number;
  readonly vitalsTags: readonly string[];
  /** Seconds between runs of each live source (serve). */
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
  /** The slow sources, each on its own interval, fixed (suggestions change the live sources'). */
  readonly slow?: readonly SlowSource[];
  /**
   * The pages the paged lists may use in a run, when decided for every entry of the portal
   * together (plannedPages); unset: decided for this entry alone.
   */
  readonly pages?: PlannedPages;
}

/**
 * The pages the paged lists of an entry may use in one run of `serve` (plannedPages): the open
 * alerts', and each slow source's list's. At most what one window leaves each (alertsPagesAllowed,
 * slowPagesAllowed); 1 is everything in one request (`limit=0`), or the cap's pages.
 */
export interface PlannedPages {
  readonly alerts: number;
  readonly slow: number;
}

/** The fewest pages: every list in one request (a portal that caps its pages aside). */
const FEWEST: PlannedPages = { alerts: 1, slow: 1 };

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
  /** A live source, or a slow one (SlowSource's `job`). */
  readonly source: string;
  readonly requestsPerRun: number;
  readonly intervalSeconds: number;
  readonly requestsPerHour: number;
}

export interface PortalPlan {
  /** The live sources, then the slow ones; the open alerts at the pages a run may use (`alertsPages`). */
  readonly sources: readonly SourcePlan[];
  readonly requestsPerHour: number;
  /** The share's capacity per hour. */
  readonly capacityPerHour: number;
  /**
   * Whether every source can run on its interval within the share: on average over the hour, and
   * minute by minute as `serve` runs them (the timeline: every run ends in time, HEADROOM_MS early).
   */
  readonly fits: boolean;
  /**
   * The pages the paged lists may use in one run of `serve` (plannedPages): at most what one
   * window leaves them, and no more than keeps every run on time; 1 each when the plan does not fit.
   */
  readonly pages: PlannedPages;
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
export const vitalsRequests = (tags: readonly string[]): number => 1 + tags.length;
/** Requests a run of device totals needs: active and inactive, `limit=1` each. */
export const DEVICES_REQUESTS = 2;

/**
 * /alerts pages a run may use at most: what the share leaves in one window beside the other
 * sources, at least 1 (serve uses fewer when the plan needs it: plannedAlertsPages). `withPass`: a
 * one-shot run whose window also holds the resolved-alerts pass leaves it one request, so that the
 * pass (one request of everything while its total is unknown) need not wait a window for the open
 * alerts' pages.
 */
export function alertsPagesAllowed(input: Pick<PlanInput, 'requestsPerMinute' | 'vitalsTags'>, withPass = false): number {
  return Math.max(1, input.requestsPerMinute - vitalsRequests(input.vitalsTags) - DEVICES_REQUESTS - (withPass ? 1 : 0));
}

/** Requests of a list of `total` records read in at most `pagesAllowed` pages (alertsLimit), the portal's cap aside: at least 1. */
function listRequests(input: Pick<PlanInput, 'pageSize' | 'pageCap'>, total: number, pagesAllowed: number): number {
  const limit = alertsLimit({ pageSize: input.pageSize, remaining: total, pagesAllowed, pageCap: input.pageCap });
  // limit=0 (everything in one request) only when no cap applies; none left still takes a request.
  return Math.max(1, Math.ceil(total / (limit === 0 ? total : limit)));
}

/** Requests a one-shot run of /alerts needs for `total` alerts (1 when unknown: the run extends its deadline once it knows); `withPass` as alertsPagesAllowed. */
export function alertsRequests(input: Pick<PlanInput, 'pageSize' | 'requestsPerMinute' | 'vitalsTags' | 'pageCap'>, total: number | undefined, withPass = false): number {
  return total === undefined ? 1 : listRequests(input, total, alertsPagesAllowed(input, withPass));
}

/**
 * Requests a run of /alerts in `serve` may send when it may use `pages` pages (at most what one
 * window leaves): the pages its last total needs, or `pages` while the total is unknown (its first
 * page is the page size, the rest grown to fit).
 */
function servedAlertsRequests(input: Pick<PlanInput, 'pageSize' | 'requestsPerMinute' | 'vitalsTags' | 'pageCap' | 'alertsTotal'>, pages: number): number {
  const allowed = Math.min(pages, alertsPagesAllowed(input));
  return input.alertsTotal === undefined ? allowed : listRequests(input, input.alertsTotal, allowed);
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
 * Pages a run of a slow source's list may use: 1 (everything in one request, `limit=0`) while its
 * total is unknown, so that its first run takes the one request the plan counts; then what one
 * window leaves beside the live sources and the open alerts' pages, at least 1, so a one-shot run
 * of a small portal reads everything in the share's one window. (Open alerts paged to leave the
 * pass a request, alertsPagesAllowed's `withPass`, leave it as many: the same when they fit in
 * fewer pages, and 1 when they fill the window either way.)
 */
export function slowPagesAllowed(input: Pick<PlanInput, 'requestsPerMinute' | 'pageSize' | 'vitalsTags' | 'pageCap'>, alertsTotal: number | undefined, lastTotal: number | undefined): number {
  return lastTotal === undefined ? 1 : Math.max(1, alertsPagesAllowed(input) - alertsRequests(input, alertsTotal));
}

/**
 * Requests of one run of a slow source: its number, or its list's pages (1 while the total is
 * unknown) at what one window leaves it, or at most `pages` (serve: plannedPages).
 */
export function slowRequests(input: Pick<PlanInput, 'requestsPerMinute' | 'pageSize' | 'vitalsTags' | 'pageCap' | 'alertsTotal'>, source: SlowSource, pages = Infinity): number {
  const r = source.requests;
  if (typeof r === 'number') return r;
  // A list read whole: one request, or its cap's pages once its total and the cap are known.
  if ('whole' in r) return r.whole.reduce<number>((n, total) => n + (total === undefined || input.pageCap === undefined || input.pageCap <= 0 ? 1 : Math.max(1, Math.ceil(total / input.pageCap))), 0);
  return r.total === undefined ? 1 : listRequests(input, r.total, Math.min(pages, slowPagesAllowed(input, input.alertsTotal, r.total)));
}

/** What `serve` runs of one entry of a portal: each source's requests per run and interval (s). */
export interface EntryRuns {
  readonly name: string;
  readonly perRun: Readonly<Record<Source, number>>;
  readonly intervals: Readonly<Record<Source, number>>;
  /** Its slow sources: each's requests per run and interval. */
  readonly slow: readonly { readonly job: string; readonly requests: number; readonly intervalSeconds: number }[];
}

/** What an entry's runs are planned from: a plan input and the entry's name. */
export type EntryInput = Omit<PlanInput, 'inherited' | 'pages'> & { readonly name: string };

/** What `serve` runs of one entry when its lists may use `pages` pages (default: the fewest). */
export function entryRuns(input: EntryInput, pages: PlannedPages = FEWEST): EntryRuns {
  const perRun = { vitals: vitalsRequests(input.vitalsTags), alerts: servedAlertsRequests(input, pages.alerts), devices: DEVICES_REQUESTS };
  const slow = (input.slow ?? []).map((s) => ({ job: s.job, requests: slowRequests(input, s, pages.slow), intervalSeconds: s.intervalSeconds }));
  return { name: input.name, perRun, intervals: input.intervals, slow };
}

/** Whether the entries of one portal run on time at `share`, and how: by the hour, each run's length, and minute by minute. */
interface Evaluation {
  readonly requestsPerHour: number;
  readonly capacityPerHour: number;
  readonly fits: boolean;
  readonly late?: LateRun;
  readonly busiest?: { readonly requests: number; readonly atSeconds: number };
  /** Whether serve staggers the sources' first runs (servePlan); set when the hourly average fits. */
  readonly phased?: boolean;
}

/** Requests per hour of a run of `requests` every `intervalSeconds`. */
const perHour = (requests: number, intervalSeconds: number): number => (requests * 3600) / intervalSeconds;

/** Each run of an entry: its requests and interval, the live sources then the slow ones. */
function runsOf(entry: EntryRuns): { requests: number; intervalSeconds: number }[] {
  return [...SOURCES.map((s) => ({ requests: entry.perRun[s], intervalSeconds: entry.intervals[s] })), ...entry.slow];
}

/**
 * Requests per hour of the entries of one portal and whether they fit the share: by the hour, each
 * run shorter than its interval, and minute by minute as serve runs them, staggered as `phased`
 * says (unset: as servePlan chooses). Every suggestion is checked with this.
 */
function evaluate(entries: readonly EntryRuns[], share: number, phased?: boolean): Evaluation {
  const runs = entries.flatMap(runsOf);
  // Rounded to 1e-9: whole requests over whole-second intervals that load the share exactly must not
  // come out a float error above it (3600/70 + 3600/700 + 7200/2100 is 60.00000000000001). A real
  // excess that small (at least 3600 / 86400³, under a request in a million years) counts as none.
  const requestsPerHour = Math.round(runs.reduce((n, r) => n + perHour(r.requests, r.intervalSeconds), 0) * 1e9) / 1e9;
  const capacityPerHour = (share * 3_600_000) / WINDOW_MS;
  // A run must also end before the source is due again.
  if (!(requestsPerHour <= capacityPerHour && runs.every((r) => runSeconds(r.requests, share) < r.intervalSeconds))) return { requestsPerHour, capacityPerHour, fits: false };
  // And minute by minute, as serve runs them, every run ends in time.
  const plan = servePlan(entries, share, phased);
  const { timeline } = plan;
  const busiest = { requests: timeline.busiest.requests, atSeconds: timeline.busiest.at / 1000 };
  return { requestsPerHour, capacityPerHour, fits: timeline.late.length === 0, ...(timeline.late[0] && { late: timeline.late[0] }), busiest, phased: plan.phased };
}

/**
 * The pages the paged lists of the entries of one portal may use in a run of `serve` at `share`:
 * the most, up to what one window leaves each (alertsPagesAllowed, slowPagesAllowed), with which
 * every run of every entry still ends on time, the sources started as `phased` says (unset: as
 * with the fewest pages, servePlan); the open alerts' first (they change by the minute), then the
 * slow sources' lists. The fewest (each list in one request) when even they do not run on time.
 * So a plan that fits with one request a list fits as served, however long the lists are (a
 * portal that caps its pages aside: its pages are counted once learned).
 */
export function plannedPages(entries: readonly EntryInput[], share: number, phased?: boolean): PlannedPages {
  const inputs = entries.map((e) => ({ ...e, requestsPerMinute: share }));
  const fewest = evaluate(inputs.map((e) => entryRuns(e)), share, phased);
  if (!fewest.fits) return FEWEST;
  const fits = (pages: PlannedPages) => evaluate(inputs.map((e) => entryRuns(e, pages)), share, fewest.phased).fits;
  const most = (limit: number, with_: (n: number) => PlannedPages) => {
    for (let n = limit; n > 1; n--) if (fits(with_(n))) return n;
    return 1;
  };
  const alerts = most(Math.max(...inputs.map((e) => alertsPagesAllowed(e))), (n) => ({ alerts: n, slow: 1 }));
  // Only a slow list paged by the plan whose total is known is read in more than one request.
  const known = inputs.filter((e) => e.slow?.some((s) => typeof s.requests !== 'number' && 'paged' in s.requests && s.requests.total !== undefined));
  const slow = known.length ? most(Math.max(...known.map((e) => slowPagesAllowed(e, e.alertsTotal, 0))), (n) => ({ alerts, slow: n })) : 1;
  return { alerts, slow };
}

/**
 * Whether the entries of one portal fit their one share together with the fewest pages of each
 * list (the pages served are fitted to the rest: plannedPages), started as `phased` says (unset:
 * as servePlan chooses), and their requests per hour.
 */
export function portalFits(entries: readonly EntryInput[], share: number, phased?: boolean): Pick<Evaluation, 'requestsPerHour' | 'capacityPerHour' | 'fits' | 'late' | 'phased'> {
  return evaluate(entries.map((e) => entryRuns({ ...e, requestsPerMinute: share })), share, phased);
}

/** The plan of one portal entry in `serve`. */
export function planPortal(input: PlanInput): PortalPlan {
  const entryAt = (intervals: Readonly<Record<Source, number>>, pages: PlannedPages = FEWEST) => entryRuns({ ...input, name: '', intervals }, pages);
  const seen = new Map<string, Evaluation>();
  const at = (intervals: Readonly<Record<Source, number>>): Evaluation => {
    const key = SOURCES.map((s) => intervals[s]).join();
    let e = seen.get(key);
    if (!e) seen.set(key, (e = evaluate([entryAt(intervals)], input.requestsPerMinute)));
    return e;
  };
  const fewest = at(input.intervals);
  const described = (pages: PlannedPages, e: Evaluation) => {
    const entry = entryAt(input.intervals, pages);
    const sources: SourcePlan[] = [
      ...SOURCES.map((source) => ({ source, requestsPerRun: entry.perRun[source], intervalSeconds: entry.intervals[source], requestsPerHour: perHour(entry.perRun[source], entry.intervals[source]) })),
      ...entry.slow.map((s) => ({ source: s.job, requestsPerRun: s.requests, intervalSeconds: s.intervalSeconds, requestsPerHour: perHour(s.requests, s.intervalSeconds) })),
    ];
    // Whether it fits is decided with the fewest pages (the pages served are fitted to it).
    const { requestsPerHour, capacityPerHour, busiest } = e;
    const { fits, late } = fewest;
    return { sources, requestsPerHour, capacityPerHour, fits, pages, ...(late && { late }), ...(busiest && { busiest }) };
  };
  if (fewest.fits) {
    // As served: the lists at the pages the plan leaves them.
    const pages = input.pages ?? plannedPages([{ ...input, name: '' }], input.requestsPerMinute);
    return described(pages, evaluate([entryAt(input.intervals, pages)], input.requestsPerMinute, fewest.phased));
  }
  const run = (s: Source) => runSeconds(entryAt(input.intervals).perRun[s], input.requestsPerMinute);
  const suggested = smallestThatFit(input.intervals, at, run);
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
  return { ...described(FEWEST, fewest), ...(suggested && { suggested }), ...(change && { change }), ...(intervalAlone !== undefined && { intervalAlone }) };
}

/** A source of the timeline with what it is: its entry (index) and its job. */
export type ServedSource = TimelineSource & { readonly entry: number; readonly job: string };

/**
 * The sources of the entries of one portal as `serve` starts them: all at once, or, with `phased`,
 * staggered so that not every source is due at once: Vitals of every entry first, then device
 * totals, then /alerts, then each entry's slow sources (the scheduler's priorities), their first
 * runs spread evenly over the shortest interval, in whole seconds. A slow source's requests all
 * queue below the live sources' (PRIORITY.slow, its follow-ups PRIORITY.slowContinuation).
 */
function timelineOf(entries: readonly EntryRuns[], phased: boolean): ServedSource[] {
  const order = [...SOURCES].sort((a, b) => PRIORITY[a] - PRIORITY[b]);
  type Item = { entry: number; job: string; requests: number; intervalSeconds: number; priority: number; continuation: number };
  const items: Item[] = [
    ...order.flatMap((s) => entries.map((e, entry) => ({ entry, job: s, requests: e.perRun[s], intervalSeconds: e.intervals[s], priority: PRIORITY[s], continuation: PRIORITY.continuation }))),
    ...entries.flatMap((e, entry) => e.slow.map((s) => ({ entry, job: s.job, requests: s.requests, intervalSeconds: s.intervalSeconds, priority: PRIORITY.slow, continuation: PRIORITY.slowContinuation }))),
  ];
  const shortest = Math.min(...items.map((i) => i.intervalSeconds));
  return items.map((item, i) => ({
    name: entries.length > 1 ? `${entries[item.entry]!.name}/${item.job}` : item.job,
    entry: item.entry,
    job: item.job,
    priority: item.priority,
    continuationPriority: item.continuation,
    ...(item.priority === PRIORITY.slow && { slow: true }),
    requests: item.requests,
    intervalMs: item.intervalSeconds * 1000,
    phaseMs: phased ? Math.floor((i * shortest) / items.length) * 1000 : 0,
  }));
}

/**
 * How `serve` runs the entries of one portal, and its timeline: every source started at once when
 * that runs on time, else staggered (timelineOf); as `phased` says when set. `serve` starts each
 * source at the phase chosen here, so what the check accepts is what runs.
 */
export function servePlan(entries: readonly EntryRuns[], share: number, phased?: boolean): { sources: ServedSource[]; timeline: Timeline; phased: boolean } {
  if (phased !== undefined) {
    const sources = timelineOf(entries, phased);
    return { sources, timeline: checkTimeline(sources, share), phased };
  }
  const together = timelineOf(entries, false);
  const first = checkTimeline(together, share);
  if (first.late.length === 0) return { sources: together, timeline: first, phased: false };
  const staggered = timelineOf(entries, true);
  return { sources: staggered, timeline: checkTimeline(staggered, share), phased: true };
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
  // Minute by minute the same proportions may still be late: the next multiple of 10 s each, a few times, before the
  // longest (a value kept as configured, such as 15 s, goes to 20 s, then 30 s).
  for (let step = 0; step < LINEAR_STEPS && !at(out).fits; step++) for (const s of SOURCES) out[s] = Math.min(MAX_INTERVAL_SECONDS, (Math.floor(out[s] / 10) + 1) * 10);
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
