/**
 * The fold of `/alerts?filter=resolved`: per severity and window, the alerts resolved, how long
 * each took to resolve and, for those acknowledged, to acknowledge. Each duration is kept once, 8
 * bytes in a DurationList of its severity and of the shortest window that holds its time (a
 * window's figures are read from its own list and the shorter windows', statsByWindow), in chunks
 * that never copy as they grow, and every page's sink writes straight into the pass's lists; the
 * records themselves are dropped as they are read. So the exact figures of n resolved alerts hold
 * about 8 bytes per duration, n of them to resolve and one per acknowledged alert: measured
 * (bench/resolved.ts), a first `once` whose pass reads 1,020,000 resolved alerts, all within the
 * last day, beside 1,600,000 open ones, peaks at 90 MB RSS, 74 MB of it without the pass (before:
 * 173 MB, with each duration kept once per window in arrays that doubled and were copied per page).
 */
import { DEFAULT_ALERT_SLAS, type AlertSlas } from '../../config/alert-slas.js';
import type { Logger } from '../../core/log.js';
import { SEVERITIES } from '../../domain.js';
import { isRecord, recordProblems } from '../../upstream/schemas.js';
import { parseApiTimestamp } from '../../upstream/timestamps.js';
import type { AlertsAggregate } from '../alerts/fold.js';
import { severityOf } from '../alerts/fold.js';
import { InvalidRecords } from '../invalid.js';
import { DurationList, statsByWindow, WINDOW_COUNT, WINDOW_SECONDS, type DurationStats } from './windows.js';

/** Severity labels by index while folding: the severities with an SLA, then unknown. */
const SEVERITY_LABELS: readonly string[] = [...SEVERITIES, 'unknown'];
const SEVERITY_COUNT = SEVERITY_LABELS.length;
const UNKNOWN = SEVERITY_COUNT - 1;
/** Distinct `state` values whose severity index is remembered. */
const STATE_CACHE_LIMIT = 1000;

/** What the families say of one severity's resolved alerts in one window. */
export interface ResolutionStats extends DurationStats {
  /** Alerts whose resolvedTime lies in the window, a creation time or not. */
  readonly resolved: number;
}

/** Per severity, one entry per window (RESPONSE_WINDOWS order). */
type BySeverity<T> = Readonly<Record<string, readonly T[]>>;

/** Durations in sorted parts, part i in the window `windows[i]` (the shortest that holds it) and every longer one. */
export interface WindowedParts {
  readonly parts: readonly Float64Array[];
  readonly windows: readonly number[];
}

/** What one resolved-alerts pass learned. */
export interface ResolvedAggregate {
  /** The pass's wall time (Unix s): the windows end here. */
  readonly nowSeconds: number;
  /** Red, amber and green always; unknown when it has an alert resolved in the longest window. */
  readonly resolution: BySeverity<ResolutionStats>;
  /**
   * How long the resolved alerts took to be acknowledged, per severity (those that have any, in
   * the longest window): sorted parts, each in its shortest window. Open alerts are added by
   * withOpenAlerts, which drops these.
   */
  readonly resolvedAcknowledgements: Readonly<Record<string, WindowedParts>>;
  /**
   * The acknowledgement statistics of open and resolved alerts together (withOpenAlerts); absent
   * until then, and then the acknowledgement families are not written (never half of them).
   */
  readonly acknowledgement?: BySeverity<DurationStats>;
  /** Malformed records skipped, resolved alerts with an unset resolvedTime among them. */
  readonly invalid: number;
}

/** A resolved alert as this fold reads it (spec 2.6); other fields are not looked at. */
type ResolvedRecord = {
  readonly state: string;
  readonly timestamp: string;
  readonly resolved: boolean;
  readonly acknowledged: boolean;
  readonly acknowledgedTime: string;
  readonly resolvedTime: string;
};

const FIELDS = [
  ['state', 'string'],
  ['timestamp', 'string'],
  ['resolved', 'boolean'],
  ['acknowledged', 'boolean'],
  ['acknowledgedTime', 'string'],
  ['resolvedTime', 'string'],
] as const;

/** The record typed, or why it is not one (at most three fields). */
function checkResolvedRecord(raw: unknown): ResolvedRecord | string {
  if (!isRecord(raw)) return recordProblems(raw, FIELDS);
  const r = raw;
  // The usual case read by name: a read by a computed name is a dictionary lookup each (see checkAlertRecord).
  if (
    typeof r.state === 'string' &&
    typeof r.timestamp === 'string' &&
    typeof r.resolved === 'boolean' &&
    typeof r.acknowledged === 'boolean' &&
    typeof r.acknowledgedTime === 'string' &&
    typeof r.resolvedTime === 'string'
  ) {
    return r as ResolvedRecord;
  }
  return recordProblems(raw, FIELDS);
}

/** The first 40 characters of a value, quoted, for the log. */
const quoted = (s: string) => JSON.stringify(s.slice(0, 40));

/** Index of a list: severity × WINDOW_COUNT + the shortest window that holds the time. */
const listOf = (severity: number, window: number): number => severity * WINDOW_COUNT + window;

/** The shortest window (index) that holds `at` as of `nowSeconds`, or -1 for none. */
function shortestWindow(at: number, nowSeconds: number): number {
  for (let w = 0; w < WINDOW_COUNT; w++) if (at > nowSeconds - WINDOW_SECONDS[w]!) return w;
  return -1;
}

/**
 * Folds the records of one page (one attempt of one request) into its tally's lists (tally.sink):
 * each duration once, in the shortest window that holds its time. The page's counts stay here until
 * the tally adds the page; an attempt that fails leaves nothing, as the next sink starts from what
 * the pages added (a retry gets a fresh sink, so nothing is counted twice).
 */
export class ResolvedSink {
  /** Resolved alerts by listOf(severity, shortest window). */
  readonly resolved = new Float64Array(SEVERITY_COUNT * WINDOW_COUNT);
  private readonly invalidRecords: InvalidRecords;
  private readonly severities = new Map<string, number>();
  /** Records seen so far (valid or not): the next one's index within this page. */
  private seen = 0;

  /** `tally`: whose lists the durations go to, and whose time ends the windows; `offset`: the page's first record in the whole list. */
  constructor(
    private readonly tally: ResolvedTally,
    logger?: Logger,
    private readonly offset = 0,
  ) {
    this.invalidRecords = new InvalidRecords('resolved', logger);
  }

  get invalid(): number {
    return this.invalidRecords.count;
  }

  private severity(state: string): number {
    let s = this.severities.get(state);
    if (s === undefined) {
      s = SEVERITY_LABELS.indexOf(severityOf(state));
      // Stryker disable next-line ConditionalExpression,EqualityOperator: the cache's limit: caching more or fewer states gives the same severities.
      if (this.severities.size < STATE_CACHE_LIMIT) this.severities.set(state, s);
    }
    return s;
  }

  record(raw: unknown): void {
    const index = this.offset + this.seen++;
    const a = checkResolvedRecord(raw);
    if (typeof a === 'string') return this.invalidRecords.add(index, a);
    // The list asked for resolved alerts; one not flagged resolved is open, and the open pass counts it.
    if (!a.resolved) return;
    const created = parseApiTimestamp(a.timestamp);
    if (created === undefined) return this.invalidRecords.add(index, `timestamp: not an API timestamp (${quoted(a.timestamp)})`);
    const resolvedAt = parseApiTimestamp(a.resolvedTime);
    if (resolvedAt === undefined) return this.invalidRecords.add(index, `resolvedTime: not an API timestamp (${quoted(a.resolvedTime)})`);
    // Resolved, yet no time it was resolved at: it cannot be placed in any window.
    if (resolvedAt === null) return this.invalidRecords.add(index, 'resolvedTime: unset (the minimum date) on a resolved alert');
    const acknowledgedAt = parseApiTimestamp(a.acknowledgedTime);
    if (acknowledgedAt === undefined) return this.invalidRecords.add(index, `acknowledgedTime: not an API timestamp (${quoted(a.acknowledgedTime)})`);
    const severity = this.severity(a.state);
    const now = this.tally.nowSeconds;
    const w = shortestWindow(resolvedAt, now);
    if (w >= 0) {
      this.resolved[listOf(severity, w)]!++;
      // An unset creation time, or one after the resolution: resolved, but no duration.
      if (created !== null && resolvedAt >= created) this.tally.toResolve[listOf(severity, w)]!.push(resolvedAt - created);
    }
    if (a.acknowledged && acknowledgedAt !== null && created !== null && acknowledgedAt >= created) {
      const v = shortestWindow(acknowledgedAt, now);
      if (v >= 0) this.tally.toAcknowledge[listOf(severity, v)]!.push(acknowledgedAt - created);
    }
  }

  finish(): ResolvedSink {
    return this;
  }
}

/**
 * The counts and durations of the pages of one list, in any order: per severity and shortest
 * window, one DurationList of the times to resolve and one of the times to acknowledge, which the
 * pages' sinks fill (sink), and the counts of the pages added.
 */
export class ResolvedTally {
  /** Durations to resolve by listOf(severity, shortest window of the resolution). */
  readonly toResolve: DurationList[] = Array.from({ length: SEVERITY_COUNT * WINDOW_COUNT }, () => new DurationList());
  /** Durations to acknowledge by listOf(severity, shortest window of the acknowledgement). */
  readonly toAcknowledge: DurationList[] = Array.from({ length: SEVERITY_COUNT * WINDOW_COUNT }, () => new DurationList());
  private readonly resolved = new Float64Array(SEVERITY_COUNT * WINDOW_COUNT);
  /** Each list's length once the last page was added: what an attempt that failed is cut back to. */
  private readonly kept = { resolve: new Float64Array(SEVERITY_COUNT * WINDOW_COUNT), acknowledge: new Float64Array(SEVERITY_COUNT * WINDOW_COUNT) };
  private invalid = 0;

  /** `nowSeconds`: the pass's wall time (Unix s), where the windows end. */
  constructor(readonly nowSeconds: number) {}

  /** The sink of the page starting at `offset`, after whatever an attempt that failed left is dropped. */
  sink(logger?: Logger, offset = 0): ResolvedSink {
    this.dropUnadded();
    return new ResolvedSink(this, logger, offset);
  }

  /** Adds a page whose records `page` (this tally's sink) read. */
  add(page: ResolvedSink): void {
    for (let i = 0; i < page.resolved.length; i++) {
      this.resolved[i]! += page.resolved[i]!;
      this.kept.resolve[i] = this.toResolve[i]!.length;
      this.kept.acknowledge[i] = this.toAcknowledge[i]!.length;
    }
    this.invalid += page.invalid;
  }

  private dropUnadded(): void {
    for (let i = 0; i < this.toResolve.length; i++) {
      this.toResolve[i]!.truncate(this.kept.resolve[i]!);
      this.toAcknowledge[i]!.truncate(this.kept.acknowledge[i]!);
    }
  }

  /** The aggregate: statistics per severity and window, over-SLA against `slas`. */
  finish(slas: AlertSlas = DEFAULT_ALERT_SLAS): ResolvedAggregate {
    this.dropUnadded();
    const resolution: Record<string, ResolutionStats[]> = {};
    const resolvedAcknowledgements: Record<string, WindowedParts> = {};
    SEVERITY_LABELS.forEach((severity, s) => {
      const sla = s === UNKNOWN ? Infinity : slas[severity as keyof AlertSlas];
      // Resolved in each window: those whose shortest window is it or a shorter one.
      const counts = WINDOW_SECONDS.map((_, w) => WINDOW_SECONDS.reduce((n, __, b) => n + (b <= w ? this.resolved[listOf(s, b)]! : 0), 0));
      if (s !== UNKNOWN || counts[WINDOW_COUNT - 1]! > 0) {
        const { parts, windows } = windowedParts(this.toResolve, s);
        const stats = statsByWindow(parts, windows, sla);
        resolution[severity] = stats.map((st, w) => ({ resolved: counts[w]!, ...st }));
      }
      if (WINDOW_SECONDS.some((_, b) => this.toAcknowledge[listOf(s, b)]!.length > 0)) resolvedAcknowledgements[severity] = windowedParts(this.toAcknowledge, s);
    });
    return { nowSeconds: this.nowSeconds, resolution, resolvedAcknowledgements, invalid: this.invalid };
  }
}

/** The durations of severity `s` in `lists`, sorted chunk by chunk, each chunk with its shortest window. */
function windowedParts(lists: readonly DurationList[], s: number): WindowedParts {
  const parts: Float64Array[] = [];
  const windows: number[] = [];
  WINDOW_SECONDS.forEach((_, w) => {
    for (const part of lists[listOf(s, w)]!.sorted()) {
      parts.push(part);
      windows.push(w);
    }
  });
  return { parts, windows };
}

/**
 * The pass's aggregate with the acknowledgement statistics of its resolved alerts and of the open
 * alerts of `open` (an /alerts fold, read at about the same time) together: each open alert
 * acknowledged in a window counts there once, its windows as of the open alerts' own collection
 * (their fold keeps only durations, by window; sorted here, in place). Drops the durations once used.
 */
export function withOpenAlerts(resolved: ResolvedAggregate, open: Pick<AlertsAggregate, 'acknowledgements'>): ResolvedAggregate {
  const acknowledgement: Record<string, DurationStats[]> = {};
  for (const severity of SEVERITY_LABELS) {
    const own = resolved.resolvedAcknowledgements[severity];
    // The open alerts' acknowledgements by their shortest window: a window takes its own and the shorter ones'.
    const shortest = open.acknowledgements?.[severity];
    // Every window's durations are read by merging the sorted parts, not copied together (a million
    // alerts' durations are megabytes).
    shortest?.forEach((d) => d.sort());
    const parts = [...(own?.parts ?? []), ...(shortest ?? [])];
    const windows = [...(own?.windows ?? []), ...(shortest ? WINDOW_SECONDS.map((_, w) => w) : [])];
    // (No part is empty: a list's chunks hold a duration each, and the open alerts have a severity only when one of its windows holds one.)
    if (severity !== 'unknown' || parts.length > 0) acknowledgement[severity] = statsByWindow(parts, windows, Infinity);
  }
  return { ...resolved, resolvedAcknowledgements: {}, acknowledgement };
}

/** Folds plain records (tests, fixtures) as a pass does, in pages of `pageSize` (all at once by default). */
export function foldResolved(records: readonly unknown[], nowSeconds: number, options: { logger?: Logger; slas?: AlertSlas; pageSize?: number } = {}): ResolvedAggregate {
  const tally = new ResolvedTally(nowSeconds);
  // Stryker disable next-line MethodExpression: equivalent, pages of one give the same aggregate (and no page is read of no record)
  const size = options.pageSize ?? Math.max(1, records.length);
  for (let offset = 0; offset < records.length; offset += size) {
    const sink = tally.sink(options.logger, offset);
    for (const r of records.slice(offset, offset + size)) sink.record(r);
    tally.add(sink.finish());
  }
  return tally.finish(options.slas);
}
