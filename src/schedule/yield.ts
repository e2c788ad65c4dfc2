/**
 * A slow source's request yields to the live runs due soon. Slow sources (the resolved-alerts
 * pass, the access settings, the directory) take only what the live sources leave: a slow request
 * goes when no live request waits, and only when it makes none of the live runs due before it
 * leaves the window late. Else a slow list of many pages, started just before a live run is due,
 * would fill the window and make the live run wait a minute. The scheduler
 * (./scheduler.ts) and the plan's timeline (./timeline.ts) decide it with the same function, so
 * the plan checks what runs. Pure: numbers in, numbers out.
 */
import { nextStart } from './ledger.js';

/**
 * How long after a slow request starts it is taken to reach the portal: it counts in the window
 * from then until a window and the margin later.
 */
export const YIELD_FLIGHT_MS = 5_000;
/**
 * How far ahead the live runs due are laid out: a slow request counts about one window, but a
 * live request it pushes back may push the next live run back in turn, so three windows (of 60 s
 * and the 1 s margin: ./window.ts imports this module, so the figure is written out).
 */
export const YIELD_LOOKAHEAD_MS = 3 * 61_000 + YIELD_FLIGHT_MS;
/** How long each live request is taken to hold the next back when the live runs due are laid out (the plan's model of a request). */
export const YIELD_REQUEST_MS = 1_000;
/**
 * How long before its deadline (the source due again) a run's last request must go out: time to
 * read it, and to retry it once at once (a 502, a cut body) when the window has a slot. A run that
 * leaves less is late whenever a response is slow.
 */
export const HEADROOM_MS = 10_000;

/**
 * The live runs a portal expects: `serve`'s grid of each live source (its phase, then every
 * interval). Monotonic ms.
 */
export interface LiveDemand {
  /** The live runs that start in (from, to], by start. */
  dueIn(from: number, to: number): Due[];
  /** The first start of a live run after `at` (Infinity when none). */
  nextAfter(at: number): number;
}

/** A live run due: when it starts, the latest its last request may start (its deadline less HEADROOM_MS), its priority (PRIORITY) and requests. */
export interface Due {
  readonly at: number;
  readonly by: number;
  readonly priority: number;
  readonly requests: number;
}

/** A live source's runs: the first at `startMs`, then every `everyMs`, each of `requests()` requests at `priority`. */
export interface LiveRuns {
  readonly startMs: number;
  readonly everyMs: number;
  readonly priority: number;
  readonly requests: () => number;
}

/** The live runs of several sources, each on its grid (LiveRuns). */
export class LiveGrid implements LiveDemand {
  constructor(private readonly runs: readonly LiveRuns[]) {}

  dueIn(from: number, to: number): Due[] {
    const out: Due[] = [];
    for (const r of this.runs) {
      // The runs k with from < start + k × every <= to.
      const first = Math.max(0, Math.floor((from - r.startMs) / r.everyMs) + 1);
      for (let k = first; r.startMs + k * r.everyMs <= to; k++) {
        const at = r.startMs + k * r.everyMs;
        out.push({ at, by: at + r.everyMs - HEADROOM_MS, priority: r.priority, requests: r.requests() });
      }
    }
    return out.sort((a, b) => a.at - b.at);
  }

  nextAfter(at: number): number {
    let next = Infinity;
    for (const r of this.runs) next = Math.min(next, r.startMs + Math.max(0, Math.floor((at - r.startMs) / r.everyMs) + 1) * r.everyMs);
    return next;
  }
}

/** The window the sends are checked against: the portal's, its margin, and how long the model holds a request in flight. */
export interface YieldWindow {
  readonly share: number;
  readonly windowMs: number;
  readonly marginMs: number;
  /** How long one request holds the next one back (one request in flight at a time). */
  readonly requestMs: number;
}

/**
 * When the last request of each run of `due` (by start) would start, as the scheduler serves them:
 * one request in flight at a time (`requestMs`, none before `busy`), a run's next request before any
 * other, else the highest priority then the earliest start, each when the window allows beside the
 * requests that count from `arrivals`.
 */
function lastStarts(arrivals: readonly number[], due: readonly Due[], w: YieldWindow, busy: number): number[] {
  const counted = [...arrivals];
  const left = due.map((d) => d.requests);
  const last = due.map(() => -Infinity);
  let current = -1;
  let t = Math.max(busy, Math.min(...due.map((d) => d.at)));
  for (let remaining = left.reduce((a, b) => a + b, 0); remaining > 0; ) {
    let pick = current;
    if (pick < 0) {
      for (let i = 0; i < due.length; i++) if (left[i]! > 0 && due[i]!.at <= t && (pick < 0 || due[i]!.priority < due[pick]!.priority)) pick = i;
    }
    if (pick < 0) {
      t = Math.min(...due.filter((_, i) => left[i]! > 0).map((d) => d.at));
      continue;
    }
    const slot = nextStart(counted, w.share, t, w.windowMs, w.marginMs);
    if (slot > t && current < 0) {
      // Waiting for the window: a run due meanwhile competes for the slot.
      t = slot;
      continue;
    }
    last[pick] = Math.max(t, slot);
    t = last[pick] + w.requestMs;
    counted.push(t);
    left[pick]!--;
    remaining--;
    current = left[pick]! > 0 ? pick : -1;
  }
  return last;
}

/**
 * Whether one more request that counts from `arrival` would make a live run late: push the last
 * request of one of the live runs `due` (by start) past its latest start, where without it the run
 * would end in time; beside the requests that count from `arrivals` (any order). The request holds
 * the next one back until `busy`.
 */
export function makesLiveLate(arrivals: readonly number[], arrival: number, busy: number, due: readonly Due[], w: YieldWindow): boolean {
  // Fewer requests than the share in all: nothing waits for the window, with it or without.
  if (arrivals.length + 1 + due.reduce((n, d) => n + d.requests, 0) <= w.share) return false;
  const without = lastStarts(arrivals, due, w, -Infinity);
  const withIt = lastStarts([...arrivals, arrival], due, w, busy);
  return withIt.some((t, i) => t > due[i]!.by && without[i]! <= due[i]!.by);
}
