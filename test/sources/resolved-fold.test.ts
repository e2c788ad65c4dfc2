// The resolved-alerts fold (/alerts?filter=resolved, spec 2.6 and 4.4) and the acknowledgements of
// open alerts it is joined with: first a handful of alerts worked out by hand, then 2,000 resolved
// alerts over 40 days and 400 open ones checked against a naive count written here (its own
// timestamp parser, its own windows, quantiles by their definition). No generated time lies within
// 10 minutes of a window's edge or of an SLA, so the oracle cannot disagree by rounding.
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../src/core/log.js';
import { foldAlerts } from '../../src/sources/alerts/fold.js';
import { foldResolved, ResolvedTally, withOpenAlerts, type ResolvedAggregate } from '../../src/sources/resolved/fold.js';
import { ago, apiTime, DAY, HOUR, MINUTE, NOW, UNSET } from '../support/api-time.js';
import { mulberry32 } from '../support/prng.js';

const SLAS = { red: 12 * HOUR, amber: 3 * DAY, green: 14 * DAY };

interface Alert {
  state: string;
  timestamp: string;
  acknowledged: boolean;
  acknowledgedTime: string;
  resolved: boolean;
  resolvedTime: string;
  [k: string]: unknown;
}
const alert = (state: string, created: string, resolvedAt: string, acknowledgedAt = UNSET, resolved = true): Alert => ({
  state, product: 'Okta, Identity', status: 'Incident', ownerName: '', inactiveUntil: UNSET,
  timestamp: created, acknowledged: acknowledgedAt !== UNSET, acknowledgedTime: acknowledgedAt, resolved, resolvedTime: resolvedAt,
});

describe('the resolved-alerts fold, by hand', () => {
  // Red, resolved 2h ago after 10h (acknowledged 30 min after creation); resolved 3 d ago after 20h
  // (over the 12h SLA); resolved 10 d ago after 1h; amber resolved 5h ago, created at an unset time;
  // green resolved 40 d ago (in no window); one Red with an unset resolvedTime (invalid); one
  // listed but not resolved (the open pass counts it).
  const records = [
    alert('Red', ago(12 * HOUR), ago(2 * HOUR), ago(11.5 * HOUR)), // r0
    alert('Red', ago(3 * DAY + 20 * HOUR), ago(3 * DAY)), // r1
    alert(' red ', ago(10 * DAY + HOUR), ago(10 * DAY), ago(10 * DAY + 0.5 * HOUR)), // r2: ack 30 min, 10 d ago
    alert('Amber', UNSET, ago(5 * HOUR)), // a0
    alert('Green', ago(41 * DAY), ago(40 * DAY)), // g0
    alert('Red', ago(2 * HOUR), UNSET), // invalid
    alert('Red', ago(2 * HOUR), UNSET, UNSET, false), // open
  ];

  it('counts, sums, quantiles and over-SLA per severity and window', () => {
    const logger = memoryLogger();
    const a = foldResolved(records, NOW, { logger, slas: SLAS });
    // Red: 1d {r0}, 7d {r0, r1}, 30d {r0, r1, r2}. Durations 10h, 20h, 1h.
    expect(a.resolution.red).toEqual([
      { resolved: 1, count: 1, sum: 10 * HOUR, quantiles: [10 * HOUR, 10 * HOUR], overSla: 0 },
      // n = 2: 0.5·2 = 1 → the 1st smallest (10h); 0.9·2 = 1.8 → the 2nd (20h).
      { resolved: 2, count: 2, sum: 30 * HOUR, quantiles: [10 * HOUR, 20 * HOUR], overSla: 1 },
      // n = 3, sorted 1h, 10h, 20h: 0.5·3 = 1.5 → 2nd (10h); 0.9·3 = 2.7 → 3rd (20h).
      { resolved: 3, count: 3, sum: 31 * HOUR, quantiles: [10 * HOUR, 20 * HOUR], overSla: 1 },
    ]);
    // Amber: resolved in every window, but no creation time, so no duration.
    const noDuration = (resolved: number) => ({ resolved, count: 0, sum: 0, quantiles: [], overSla: 0 });
    expect(a.resolution.amber).toEqual([noDuration(1), noDuration(1), noDuration(1)]);
    // Green: its only alert is older than every window.
    expect(a.resolution.green).toEqual([noDuration(0), noDuration(0), noDuration(0)]);
    expect(a.resolution.unknown).toBeUndefined();
    // Acknowledged: r0 (30 min, 11.5h ago: every window) and r2 (30 min, 10 d ago: 30d only), each kept once, in its shortest window.
    expect(a.resolvedAcknowledgements).toEqual({ red: { parts: [new Float64Array([30 * MINUTE]), new Float64Array([30 * MINUTE])], windows: [0, 2] } });
    expect(a.acknowledgement).toBeUndefined();
    expect(a.invalid).toBe(1);
    expect(logger.records().map((r) => [r.source, r.index, r.reason])).toEqual([['resolved', 5, 'resolvedTime: unset (the minimum date) on a resolved alert']]);
  });

  it('joins the acknowledgements of open alerts acknowledged in each window, once each', () => {
    const open = [
      alert('Red', ago(3 * HOUR), UNSET, ago(2 * HOUR), false), // 1h, 2h ago: every window
      alert('Red', ago(9 * DAY), UNSET, ago(8 * DAY), false), // 1 d, 8 d ago: 30d only
      alert('Green', ago(HOUR), UNSET, ago(2 * HOUR), false), // acknowledged before creation: none
      alert('Purple', ago(2 * DAY), UNSET, ago(2 * DAY - 15 * MINUTE), false), // unknown: 15 min, 7d and 30d
    ];
    const a = withOpenAlerts(foldResolved(records, NOW, { slas: SLAS }), foldAlerts(open, NOW));
    expect(a.acknowledgement!.red).toEqual([
      // 30 min (r0) and 1h: n = 2, p50 the 1st, p90 the 2nd.
      { count: 2, sum: 1.5 * HOUR, quantiles: [30 * MINUTE, HOUR], overSla: 0 },
      { count: 2, sum: 1.5 * HOUR, quantiles: [30 * MINUTE, HOUR], overSla: 0 },
      // 30 min (r0), 30 min (r2), 1h, 1 d: 0.5·4 = 2 → 2nd (30 min); 0.9·4 = 3.6 → 4th (1 d).
      { count: 4, sum: 2 * HOUR + DAY, quantiles: [30 * MINUTE, DAY], overSla: 0 },
    ]);
    const none = { count: 0, sum: 0, quantiles: [], overSla: 0 };
    expect(a.acknowledgement!.amber).toEqual([none, none, none]);
    expect(a.acknowledgement!.green).toEqual([none, none, none]);
    const one = { count: 1, sum: 15 * MINUTE, quantiles: [15 * MINUTE, 15 * MINUTE], overSla: 0 };
    expect(a.acknowledgement!.unknown).toEqual([none, one, one]);
    // The durations are dropped once used: what is kept is the statistics.
    expect(a.resolvedAcknowledgements).toEqual({});
  });

  it('gives the same aggregate whatever the pages', () => {
    const whole = foldResolved(records, NOW, { slas: SLAS });
    for (const pageSize of [1, 2, 3, 5]) expect(foldResolved(records, NOW, { slas: SLAS, pageSize })).toEqual(whole);
  });

  it('keeps nothing of an attempt that failed: the next page\'s sink starts from the pages added', () => {
    const tally = new ResolvedTally(NOW);
    const first = tally.sink(undefined, 0);
    for (const r of records.slice(0, 3)) first.record(r);
    tally.add(first.finish());
    // An attempt at the rest that ends halfway (a cut body): its sink is never added.
    const cut = tally.sink(undefined, 3);
    for (const r of records.slice(3, 5)) cut.record(r);
    cut.record(records[0]);
    const retry = tally.sink(undefined, 3);
    for (const r of records.slice(3)) retry.record(r);
    tally.add(retry.finish());
    expect(tally.finish(SLAS)).toEqual(foldResolved(records, NOW, { slas: SLAS }));
  });

  it('skips a record whose fields are missing or whose times are not API timestamps, saying which', () => {
    const logger = memoryLogger();
    const long = `2026-11-20T10:00:00.0000000${'9'.repeat(60)}`;
    const a = foldResolved([{ state: 'Red' }, alert('Red', long, ago(HOUR)), alert('Red', ago(2 * HOUR), 'yesterday'), alert('Red', ago(2 * HOUR), ago(HOUR), 'soon'), 'text', alert('Red', ago(2 * HOUR), ago(HOUR))], NOW, { logger });
    expect(a.invalid).toBe(5);
    expect(a.resolution.red![0]).toEqual({ resolved: 1, count: 1, sum: HOUR, quantiles: [HOUR, HOUR], overSla: 0 });
    expect(logger.records().map((r) => [r.index, r.reason])).toEqual([
      [0, 'timestamp: expected string, received undefined; resolved: expected boolean, received undefined; acknowledged: expected boolean, received undefined'],
      [1, `timestamp: not an API timestamp (${JSON.stringify(long.slice(0, 40))})`],
      [2, 'resolvedTime: not an API timestamp ("yesterday")'],
      [3, 'acknowledgedTime: not an API timestamp ("soon")'],
      [4, '(record): expected object, received string'],
    ]);
  });
});

// ---------------------------------------------------------------- generated data, naive oracle

const STATES = ['Red', 'Red', 'Amber', 'Amber', 'Amber', 'Green', 'Green', 'green ', 'Purple'];
const WINDOWS: Array<[string, number]> = [['1d', DAY], ['7d', 7 * DAY], ['30d', 30 * DAY]];

/** Whether `t` (seconds ago) is within 10 minutes of a window's edge. */
const nearEdge = (age: number) => WINDOWS.some(([, w]) => Math.abs(age - w) < 10 * MINUTE);
/** Whether a duration is within 10 minutes of an SLA. */
const nearSla = (d: number) => Object.values(SLAS).some((s) => Math.abs(d - s) < 10 * MINUTE);

/** `n` alerts: resolved ones over the last 40 days (a few with unset creation or resolution), or open ones; about half acknowledged. */
function generate(seed: number, n: number, resolved: boolean): Alert[] {
  const rand = mulberry32(seed);
  const out: Alert[] = [];
  // Whole seconds plus 7 fractional digits, as the portal writes them.
  const time = (s: number) => Math.floor(s) + Math.floor(rand() * 1e7) / 1e7;
  while (out.length < n) {
    const state = STATES[Math.floor(rand() * STATES.length)]!;
    const end = resolved ? time(NOW - rand() * 40 * DAY) : NOW;
    const took = time(rand() < 0.7 ? rand() * 2 * DAY : rand() * 20 * DAY);
    const created = end - took;
    const acknowledged = rand() < 0.55;
    const ackAfter = time(rand() * took);
    const ackAt = created + ackAfter;
    if (nearEdge(NOW - end) || nearSla(took) || nearEdge(NOW - ackAt) || nearEdge(NOW - created)) continue;
    const unsetCreated = rand() < 0.02;
    const unsetResolved = resolved && rand() < 0.015;
    out.push(alert(state, unsetCreated ? UNSET : apiTime(created), resolved && !unsetResolved ? apiTime(end) : UNSET, acknowledged ? apiTime(ackAt) : UNSET, resolved));
  }
  return out;
}

/** The oracle's reading of an API timestamp: Unix seconds, null when unset (year 1). */
function naiveTime(s: string): number | null {
  if (s.startsWith('0001-')) return null;
  return Date.parse(s.slice(0, 19) + 'Z') / 1000 + Number('0.' + s.slice(20));
}

const naiveSeverity = (state: string) => {
  const s = state.trim().toLowerCase();
  return ['red', 'amber', 'green'].includes(s) ? s : 'unknown';
};

/** The smallest d among `xs` with at least q·n of them ≤ d, by trying each in turn. */
function naiveQuantile(xs: number[], q: number): number {
  const n = xs.length;
  let best = Infinity;
  for (const d of xs) {
    const atMost = xs.filter((x) => x <= d).length;
    if (atMost >= q * n - 1e-9 && d < best) best = d;
  }
  return best;
}

interface Expected {
  resolved: number;
  durations: number[];
}

describe('the resolved-alerts fold against a naive count', () => {
  const resolved = generate(32, 2000, true);
  const open = generate(320, 400, false);
  const nowSeconds = NOW;

  /** Per severity and window: resolved count and durations to resolve; and durations to acknowledge over both lists. */
  function naive(): { resolve: Map<string, Expected>; acknowledge: Map<string, number[]>; invalid: number } {
    const resolve = new Map<string, Expected>();
    const acknowledge = new Map<string, number[]>();
    let invalid = 0;
    for (const sev of ['red', 'amber', 'green', 'unknown']) {
      for (const [w] of WINDOWS) {
        resolve.set(`${sev} ${w}`, { resolved: 0, durations: [] });
        acknowledge.set(`${sev} ${w}`, []);
      }
    }
    for (const a of [...resolved, ...open]) {
      const sev = naiveSeverity(a.state);
      const created = naiveTime(a.timestamp);
      const done = naiveTime(a.resolvedTime);
      const ack = naiveTime(a.acknowledgedTime);
      if (a.resolved && done === null) {
        invalid++;
        continue;
      }
      for (const [w, seconds] of WINDOWS) {
        if (a.resolved && done! > nowSeconds - seconds) {
          const e = resolve.get(`${sev} ${w}`)!;
          e.resolved++;
          if (created !== null) e.durations.push(done! - created);
        }
        if (a.acknowledged && ack !== null && created !== null && ack >= created && ack > nowSeconds - seconds) acknowledge.get(`${sev} ${w}`)!.push(ack - created);
      }
    }
    return { resolve, acknowledge, invalid };
  }

  it('has data that exercises every case', () => {
    const { resolve, acknowledge, invalid } = naive();
    expect(invalid).toBeGreaterThan(5);
    expect(resolved.filter((a) => a.timestamp === UNSET).length).toBeGreaterThan(10);
    for (const sev of ['red', 'amber', 'green', 'unknown']) {
      expect(resolve.get(`${sev} 1d`)!.durations.length, sev).toBeGreaterThan(0);
      expect(resolve.get(`${sev} 7d`)!.durations.length, sev).toBeGreaterThan(5);
      expect(acknowledge.get(`${sev} 1d`)!.length, sev).toBeGreaterThan(0);
      expect(acknowledge.get(`${sev} 7d`)!.length, sev).toBeGreaterThan(5);
    }
    // Some durations lie above their SLA, most below.
    const red = resolve.get('red 30d')!.durations;
    expect(red.filter((d) => d > SLAS.red).length).toBeGreaterThan(10);
    expect(red.filter((d) => d <= SLAS.red).length).toBeGreaterThan(10);
  });

  it('gives every count, sum, quantile and over-SLA figure of the naive count', () => {
    const { resolve, acknowledge, invalid } = naive();
    const got: ResolvedAggregate = withOpenAlerts(foldResolved(resolved, nowSeconds, { slas: SLAS, pageSize: 500 }), foldAlerts(open, nowSeconds));
    expect(got.invalid).toBe(invalid);
    for (const sev of ['red', 'amber', 'green', 'unknown']) {
      WINDOWS.forEach(([w], i) => {
        const want = resolve.get(`${sev} ${w}`)!;
        const stats = got.resolution[sev]![i]!;
        const at = `${sev} ${w}`;
        expect(stats.resolved, at).toBe(want.resolved);
        expect(stats.count, at).toBe(want.durations.length);
        expect(stats.sum, at).toBeCloseTo(want.durations.reduce((x, y) => x + y, 0), 3);
        expect(stats.quantiles, at).toEqual([naiveQuantile(want.durations, 0.5), naiveQuantile(want.durations, 0.9)]);
        const sla = (SLAS as Record<string, number>)[sev] ?? Infinity;
        expect(stats.overSla, at).toBe(want.durations.filter((d) => d > sla).length);
        const acks = acknowledge.get(at)!;
        const ackStats = got.acknowledgement![sev]![i]!;
        expect(ackStats.count, at).toBe(acks.length);
        expect(ackStats.sum, at).toBeCloseTo(acks.reduce((x, y) => x + y, 0), 3);
        expect(ackStats.quantiles, at).toEqual([naiveQuantile(acks, 0.5), naiveQuantile(acks, 0.9)]);
      });
    }
  });
});

describe('the resolved-alerts fold of lists that span many chunks, against a sorted count', () => {
  // 20,000 resolved alerts over 40 days: a severity's durations fill several chunks of its lists
  // (256, 256, 512, 1,024 durations…), read through the heap merge.
  const resolved = generate(64, 20_000, true);

  /** The ⌈q·n⌉-th smallest of `sorted`, by counting from the start. */
  const rank = (sorted: number[], q: number) => sorted[Math.max(1, Math.ceil(q * sorted.length - 1e-9)) - 1]!;

  it('gives every count, sum, quantile and over-SLA figure', () => {
    const got = foldResolved(resolved, NOW, { slas: SLAS, pageSize: 700 });
    for (const sev of ['red', 'amber', 'green', 'unknown']) {
      WINDOWS.forEach(([w, seconds], i) => {
        const inWindow = resolved.filter((a) => naiveSeverity(a.state) === sev && naiveTime(a.resolvedTime) !== null && naiveTime(a.resolvedTime)! > NOW - seconds);
        const durations = inWindow.filter((a) => naiveTime(a.timestamp) !== null).map((a) => naiveTime(a.resolvedTime)! - naiveTime(a.timestamp)!).sort((x, y) => x - y);
        const stats = got.resolution[sev]![i]!;
        const at = `${sev} ${w}`;
        expect(stats.resolved, at).toBe(inWindow.length);
        expect(stats.count, at).toBe(durations.length);
        expect(stats.sum, at).toBeCloseTo(durations.reduce((x, y) => x + y, 0), 2);
        expect(stats.quantiles, at).toEqual([rank(durations, 0.5), rank(durations, 0.9)]);
        const sla = (SLAS as Record<string, number>)[sev] ?? Infinity;
        expect(stats.overSla, at).toBe(durations.filter((d) => d > sla).length);
      });
    }
    expect(got.resolution.red![2]!.count).toBeGreaterThan(3_000);
  });
});

