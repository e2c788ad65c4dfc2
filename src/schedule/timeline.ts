/**
 * The plan as `serve` runs it, minute by minute: every source of every entry of one portal started
 * on its grid (its phase, then every interval), each run's requests through a model of the
 * portal's scheduler (src/schedule/scheduler.ts): one request in flight, the share in any window
 * of 60 s and its 1 s margin counted from when each request could last have reached the portal
 * (the end of its time in flight, as the ledger counts it), the highest priority first (a run's follow-up requests before new
 * runs of its band, a slow source's after every live request), then in arrival order. Whether
 * every run ends in time is what check-config, `serve`, `once` and the Lambda all check
 * (src/schedule/fit.ts), so a plan they accept runs with no late source: including the first
 * cycle, where every source is due, and each common multiple of the intervals. Pure: numbers in,
 * numbers out.
 */
import { WINDOW_MARGIN_MS } from './window.js';
import { HEADROOM_MS, makesLiveLate, YIELD_FLIGHT_MS, YIELD_LOOKAHEAD_MS, YIELD_REQUEST_MS, type Due } from './yield.js';

const WINDOW_MS = 60_000;

/**
 * How long the model holds a request in flight: the next request of the portal waits for it, and
 * the request counts in the window from the end of it (its answer may begin as late as that).
 */
const MODEL_REQUEST_MS = 1_000;
/** The shortest stretch the model runs: an hour. */
const MIN_HORIZON_MS = 3_600_000;
/** The longest common multiple of the intervals the model runs through whole: 4 hours. */
const MAX_HORIZON_MS = 4 * 3_600_000;

/** One source of one entry, as the timeline runs it. */
export interface TimelineSource {
  /** For what the timeline reports, e.g. `acme/alerts`. */
  readonly name: string;
  /** The scheduler's priority of a run's first request (PRIORITY). */
  readonly priority: number;
  /** The priority of the run's other requests (continuationOf): 0 unless set (a slow source's go after every live request). */
  readonly continuationPriority?: number;
  /** Requests of one run. */
  readonly requests: number;
  readonly intervalMs: number;
  /** When its first run starts, after the others' (ms). */
  readonly phaseMs: number;
  /** A slow source: each of its requests yields to the live runs it would make late (./yield.ts). */
  readonly slow?: boolean;
}

/** A run that would end too late. */
export interface LateRun {
  readonly name: string;
  /** When the run started (ms from the start). */
  readonly startsAt: number;
  /** When its last request could go, or Infinity when it never could before its deadline. */
  readonly lastAt: number;
  readonly deadline: number;
}

export interface Timeline {
  /** The first run that would not end HEADROOM_MS before its deadline (none: the plan runs). */
  readonly late: readonly LateRun[];
  /** Most requests that reached the portal in any 60 s, and when the first such window starts (ms from the start). */
  readonly busiest: { readonly requests: number; readonly at: number };
  /** How long the model ran (ms). */
  readonly horizonMs: number;
}

interface Pending {
  readonly source: number;
  readonly priority: number;
  readonly arrival: number;
  readonly seq: number;
  readonly startsAt: number;
  readonly deadline: number;
  left: number;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** The intervals' common multiple (ms), or undefined past MAX_HORIZON_MS. */
function commonMultiple(sources: readonly TimelineSource[]): number | undefined {
  let lcm = 1_000;
  for (const s of sources) {
    lcm = (lcm / gcd(lcm, s.intervalMs)) * s.intervalMs;
    if (lcm > MAX_HORIZON_MS) return undefined;
  }
  return lcm;
}

/**
 * Runs `sources` as `serve` runs them. When the intervals repeat within 4 hours, the timeline
 * covers their common multiple (at least an hour) and every run of it: every way the runs line up
 * is seen. When they
 * do not, the runs drift through every alignment over the days, so the timeline also runs them
 * with every source due at once, the first cycle of an unphased start, besides 4 hours as phased.
 */
export function checkTimeline(sources: readonly TimelineSource[], share: number): Timeline {
  // A slow source slower than the horizon (the directory, daily) runs once in it, at its phase, beside every way the
  // others line up: they repeat within it, and would run through a day for nothing more. A live source that slow still
  // counts (its runs meet the others' in every way over the days), so no interval escapes the check by its length.
  const repeating = sources.filter((s) => !s.slow || s.intervalMs <= MAX_HORIZON_MS);
  const longest = Math.max(...(repeating.length ? repeating : sources).map((s) => Math.min(s.intervalMs, MAX_HORIZON_MS)));
  const phases = Math.max(0, ...sources.map((s) => s.phaseMs));
  const lcm = commonMultiple(repeating);
  // At least an hour: a plan at the edge of the share falls behind a little every cycle (the 1 s margin of each window).
  const phased = runTimeline(sources, share, Math.max(lcm ?? MAX_HORIZON_MS, MIN_HORIZON_MS) + phases + longest);
  if (lcm !== undefined || phased.late.length > 0) return phased;
  const together = runTimeline(
    sources.map((s) => ({ ...s, phaseMs: 0 })),
    share,
    2 * longest,
  );
  return together.late.length > 0 ? together : phased;
}

/** Runs `sources` on one portal's share from an empty window, every run that starts before `horizonMs`. */
function runTimeline(sources: readonly TimelineSource[], share: number, horizonMs: number): Timeline {
  // Run starts in time order (ties: the order of `sources`).
  const starts: Array<{ source: number; at: number }> = [];
  sources.forEach((s, i) => {
    for (let at = s.phaseMs; at < horizonMs; at += s.intervalMs) starts.push({ source: i, at });
  });
  starts.sort((a, b) => a.at - b.at || a.source - b.source);
  const queue: Pending[] = [];
  /** When each granted request could last have reached the portal: what the window counts. */
  const arrivals: number[] = [];
  const late: LateRun[] = [];
  let next = 0;
  let seq = 0;
  let now = 0;
  let busyUntil = 0;
  const admit = (until: number) => {
    for (; next < starts.length && starts[next]!.at <= until; next++) {
      const { source, at } = starts[next]!;
      const s = sources[source]!;
      queue.push({ source, priority: s.priority, arrival: at, seq: seq++, startsAt: at, deadline: at + s.intervalMs, left: s.requests });
    }
  };
  const head = (): Pending | undefined => {
    let best: Pending | undefined;
    for (const p of queue) if (p.arrival <= now && (!best || p.priority < best.priority || (p.priority === best.priority && p.seq < best.seq))) best = p;
    return best;
  };
  /**
   * When a slow request that could go at `now` makes a live run due before it leaves the window
   * late, as the scheduler sees it: when to look again (a request leaves the window, or a live
   * run starts); undefined when it may go.
   */
  const yieldUntil = (now: number): number | undefined => {
    const cutoff = now - WINDOW_MS - WINDOW_MARGIN_MS;
    let first = arrivals.length;
    while (first > 0 && arrivals[first - 1]! > cutoff) first--;
    const due: Due[] = [];
    let nextLive = Infinity;
    for (let i = next; i < starts.length && starts[i]!.at <= now + YIELD_LOOKAHEAD_MS; i++) {
      const s = sources[starts[i]!.source]!;
      if (s.slow) continue;
      nextLive = Math.min(nextLive, starts[i]!.at);
      due.push({ at: starts[i]!.at, by: starts[i]!.at + s.intervalMs - HEADROOM_MS, priority: s.priority, requests: s.requests });
    }
    if (!makesLiveLate(arrivals.slice(first), now + YIELD_FLIGHT_MS, now + MODEL_REQUEST_MS, due, { share, windowMs: WINDOW_MS, marginMs: WINDOW_MARGIN_MS, requestMs: YIELD_REQUEST_MS })) return undefined;
    return Math.min(first < arrivals.length ? arrivals[first]! + WINDOW_MS + WINDOW_MARGIN_MS : Infinity, nextLive);
  };
  // The first late run decides: the plan does not fit.
  while (late.length === 0) {
    now = Math.max(now, busyUntil);
    admit(now);
    let p = head();
    if (!p) {
      const arrivals = queue.map((q) => q.arrival);
      if (next < starts.length) arrivals.push(starts[next]!.at);
      if (arrivals.length === 0) break;
      now = Math.max(now, Math.min(...arrivals));
      continue;
    }
    // The window (and its margin) after the start `share` places back (the scheduler's nextStart).
    const slot = arrivals.length >= share ? Math.max(now, arrivals[arrivals.length - share]! + WINDOW_MS + WINDOW_MARGIN_MS) : now;
    if (slot > now) {
      // Waiting for the window: whatever arrives meanwhile competes for the slot.
      now = slot;
      admit(now);
      p = head()!;
    }
    if (now > p.deadline) {
      // The scheduler refuses the slot: the run fails as late.
      late.push({ name: sources[p.source]!.name, startsAt: p.startsAt, lastAt: Infinity, deadline: p.deadline });
      break;
    }
    if (sources[p.source]!.slow) {
      const wait = yieldUntil(now);
      if (wait !== undefined) {
        now = wait;
        continue;
      }
    }
    busyUntil = now + MODEL_REQUEST_MS;
    arrivals.push(busyUntil);
    p.left--;
    if (p.left > 0) {
      // Its next request (page, tag) follows when this one has been read, ahead of new runs of its band.
      queue.splice(queue.indexOf(p), 1);
      queue.push({ ...p, priority: sources[p.source]!.continuationPriority ?? 0, arrival: busyUntil, seq: seq++ });
    } else {
      queue.splice(queue.indexOf(p), 1);
      if (now + HEADROOM_MS > p.deadline) late.push({ name: sources[p.source]!.name, startsAt: p.startsAt, lastAt: now, deadline: p.deadline });
    }
  }
  return { late, busiest: busiestOf(arrivals), horizonMs };
}

/** Most arrivals in any 60 s window (one 60 s after another is outside its window), and where. */
function busiestOf(arrivals: readonly number[]): { requests: number; at: number } {
  let best = { requests: 0, at: 0 };
  let j = 0;
  for (let i = 0; i < arrivals.length; i++) {
    while (arrivals[i]! - arrivals[j]! >= WINDOW_MS) j++;
    if (i - j + 1 > best.requests) best = { requests: i - j + 1, at: arrivals[j]! };
  }
  return best;
}
