/**
 * The fold of `/alerts?filter=resolved`: per severity and window, the alerts resolved, how long
 * each took to resolve and, for those acknowledged, to acknowledge. Durations are kept in one
 * Float64Array per severity and window (8 bytes each), so the exact nearest-rank quantiles of a
 * month of resolved alerts cost a few MB whatever the size of the list, and the records themselves
 * are dropped as they are read.
 */
import { DEFAULT_ALERT_SLAS, type AlertSlas } from '../../config/alert-slas.js';
import type { Logger } from '../../core/log.js';
import { SEVERITIES } from '../../domain.js';
import { OversizedValue } from '../../upstream/limits.js';
import { parseApiTimestamp } from '../../upstream/timestamps.js';
import type { AlertsAggregate } from '../alerts/fold.js';
import { severityOf } from '../alerts/fold.js';
import { Floats } from '../floats.js';
import { InvalidRecords } from '../invalid.js';
import { statsOf, statsOfParts, WINDOW_COUNT, WINDOW_SECONDS, type DurationStats } from './windows.js';

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

/** What one resolved-alerts pass learned. */
export interface ResolvedAggregate {
  /** The pass's wall time (Unix s): the windows end here. */
  readonly nowSeconds: number;
  /** Red, amber and green always; unknown when it has an alert resolved in the longest window. */
  readonly resolution: BySeverity<ResolutionStats>;
  /**
   * How long the resolved alerts took to be acknowledged, per severity (those that have any, in
   * the longest window) and window: ascending seconds. Open alerts are added by withOpenAlerts.
   */
  readonly resolvedAcknowledgements: BySeverity<Float64Array>;
  /**
   * The acknowledgement statistics of open and resolved alerts together (withOpenAlerts); absent
   * until then, and then the acknowledgement families are not written (never half of them).
   */
  readonly acknowledgement?: BySeverity<DurationStats>;
  /** Malformed records skipped, resolved alerts with an unset resolvedTime among them. */
  readonly invalid: number;
}

/** A resolved alert as this fold reads it (spec 2.6); other fields are not looked at. */
interface ResolvedRecord {
  readonly state: string;
  readonly timestamp: string;
  readonly resolved: boolean;
  readonly acknowledged: boolean;
  readonly acknowledgedTime: string;
  readonly resolvedTime: string;
}

const FIELDS = [
  ['state', 'string'],
  ['timestamp', 'string'],
  ['resolved', 'boolean'],
  ['acknowledged', 'boolean'],
  ['acknowledgedTime', 'string'],
  ['resolvedTime', 'string'],
] as const;

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (v instanceof OversizedValue) return v.describe();
  return typeof v;
}

/** The record typed, or why it is not one (at most three fields). */
function checkResolvedRecord(raw: unknown): ResolvedRecord | string {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || raw instanceof OversizedValue) return `(record): expected object, received ${kindOf(raw)}`;
  const r = raw as Record<string, unknown>;
  // The usual case read by name: a read by a computed name is a dictionary lookup each (see checkAlertRecord).
  if (
    typeof r.state === 'string' &&
    typeof r.timestamp === 'string' &&
    typeof r.resolved === 'boolean' &&
    typeof r.acknowledged === 'boolean' &&
    typeof r.acknowledgedTime === 'string' &&
    typeof r.resolvedTime === 'string'
  ) {
    return raw as ResolvedRecord;
  }
  const problems: string[] = [];
  for (const [field, type] of FIELDS) {
    if (problems.length === 3) break;
    if (typeof r[field] !== type) problems.push(`${field}: expected ${type}, received ${kindOf(r[field])}`);
  }
  return problems.join('; ');
}

/** The first 40 characters of a value, quoted, for the log. */
const quoted = (s: string) => JSON.stringify(s.slice(0, 40));

/**
 * Folds the records of one page (one attempt of one request: a retry gets a fresh sink, so nothing
 * is counted twice), keeping per severity and window the resolved count and the durations.
 */
export class ResolvedSink {
  /** Resolved alerts by severity × WINDOW_COUNT + window. */
  readonly resolved = new Float64Array(SEVERITY_COUNT * WINDOW_COUNT);
  /** Resolution durations by severity × WINDOW_COUNT + window. */
  readonly toResolve: Floats[] = Array.from({ length: SEVERITY_COUNT * WINDOW_COUNT }, () => new Floats());
  /** Acknowledgement durations by severity × WINDOW_COUNT + window. */
  readonly toAcknowledge: Floats[] = Array.from({ length: SEVERITY_COUNT * WINDOW_COUNT }, () => new Floats());
  private readonly invalidRecords: InvalidRecords;
  private readonly severities = new Map<string, number>();
  /** Records seen so far (valid or not): the next one's index within this page. */
  private seen = 0;

  /** `nowSeconds`: the pass's wall time, where the windows end; `offset`: the page's first record in the whole list. */
  constructor(
    private readonly nowSeconds: number,
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
    const at = this.severity(a.state) * WINDOW_COUNT;
    // An unset creation time, or one after the resolution: resolved, but no duration.
    const toResolve = created !== null && resolvedAt >= created ? resolvedAt - created : undefined;
    const from = this.nowSeconds;
    // Windows ascend: a time in one is in every longer one.
    for (let w = WINDOW_COUNT - 1; w >= 0 && resolvedAt > from - WINDOW_SECONDS[w]!; w--) {
      this.resolved[at + w]!++;
      if (toResolve !== undefined) this.toResolve[at + w]!.push(toResolve);
    }
    if (a.acknowledged && acknowledgedAt !== null && created !== null && acknowledgedAt >= created) {
      const toAcknowledge = acknowledgedAt - created;
      for (let w = WINDOW_COUNT - 1; w >= 0 && acknowledgedAt > from - WINDOW_SECONDS[w]!; w--) this.toAcknowledge[at + w]!.push(toAcknowledge);
    }
  }

  finish(): ResolvedSink {
    return this;
  }
}

/** Adds the counts and durations of the pages of one list, in any order. */
export class ResolvedTally {
  private readonly resolved = new Float64Array(SEVERITY_COUNT * WINDOW_COUNT);
  private readonly toResolve: Floats[] = Array.from({ length: SEVERITY_COUNT * WINDOW_COUNT }, () => new Floats());
  private readonly toAcknowledge: Floats[] = Array.from({ length: SEVERITY_COUNT * WINDOW_COUNT }, () => new Floats());
  private invalid = 0;

  constructor(private readonly nowSeconds: number) {}

  add(page: ResolvedSink): void {
    for (let i = 0; i < page.resolved.length; i++) {
      this.resolved[i]! += page.resolved[i]!;
      this.toResolve[i]!.append(page.toResolve[i]!);
      this.toAcknowledge[i]!.append(page.toAcknowledge[i]!);
    }
    this.invalid += page.invalid;
  }

  /** The aggregate: statistics per severity and window, over-SLA against `slas`. */
  finish(slas: AlertSlas = DEFAULT_ALERT_SLAS): ResolvedAggregate {
    const resolution: Record<string, ResolutionStats[]> = {};
    const resolvedAcknowledgements: Record<string, Float64Array[]> = {};
    const longest = WINDOW_COUNT - 1;
    SEVERITY_LABELS.forEach((severity, s) => {
      const at = s * WINDOW_COUNT;
      const sla = s === UNKNOWN ? Infinity : slas[severity as keyof AlertSlas];
      if (s !== UNKNOWN || this.resolved[at + longest]! > 0) {
        resolution[severity] = Array.from({ length: WINDOW_COUNT }, (_, w) => ({ resolved: this.resolved[at + w]!, ...statsOf(this.toResolve[at + w]!.toArray(), sla) }));
      }
      if (this.toAcknowledge[at + longest]!.length > 0) {
        resolvedAcknowledgements[severity] = Array.from({ length: WINDOW_COUNT }, (_, w) => this.toAcknowledge[at + w]!.toArray().sort());
      }
    });
    return { nowSeconds: this.nowSeconds, resolution, resolvedAcknowledgements, invalid: this.invalid };
  }
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
    // Each window's durations are its own and the shorter windows' open ones: read by merging the
    // sorted parts, not copied together (a million open alerts' durations are megabytes).
    shortest?.forEach((d) => d.sort());
    const perWindow = WINDOW_SECONDS.map((_, w) => [...(own ? [own[w]!] : []), ...(shortest ? shortest.slice(0, w + 1) : [])]);
    const longest = perWindow[WINDOW_COUNT - 1]!.reduce((n, d) => n + d.length, 0);
    if (severity !== 'unknown' || longest > 0) acknowledgement[severity] = perWindow.map((parts) => statsOfParts(parts, Infinity, false));
  }
  return { ...resolved, resolvedAcknowledgements: {}, acknowledgement };
}

/** Folds plain records (tests, fixtures) as a pass does, in pages of `pageSize` (all at once by default). */
export function foldResolved(records: readonly unknown[], nowSeconds: number, options: { logger?: Logger; slas?: AlertSlas; pageSize?: number } = {}): ResolvedAggregate {
  const tally = new ResolvedTally(nowSeconds);
  const size = options.pageSize ?? Math.max(1, records.length);
  for (let offset = 0; offset < records.length; offset += size) {
    const sink = new ResolvedSink(nowSeconds, options.logger, offset);
    for (const r of records.slice(offset, offset + size)) sink.record(r);
    tally.add(sink.finish());
  }
  return tally.finish(options.slas);
}
