import { DEFAULT_ALERT_SLAS, type AlertSlas } from '../../config/alert-slas.js';
import type { Logger } from '../../core/log.js';
import { asWritten } from '../../core/utf8.js';
import { SEVERITIES } from '../../domain.js';
import { checkAlertRecord } from '../../upstream/schemas.js';
import { InvalidRecords } from '../invalid.js';
import { parseApiTimestamp } from '../../upstream/timestamps.js';

type Counts = Record<string, number>;

/** Counts by integration → severity → type. */
export type SeriesCounts = ReadonlyMap<string, ReadonlyMap<string, ReadonlyMap<string, number>>>;
/** A series' count while folding: one object per series, so counting an alert is one increment. */
interface Cell {
  n: number;
}
type Cells = Map<string, Map<string, Map<string, Cell>>>;

/** The cell of (integration, severity, type), created at 0 if new. */
function cellOf(cells: Cells, integration: string, severity: string, type: string): Cell {
  let bySeverity = cells.get(integration);
  if (!bySeverity) cells.set(integration, (bySeverity = new Map()));
  let types = bySeverity.get(severity);
  if (!types) bySeverity.set(severity, (types = new Map()));
  let cell = types.get(type);
  if (!cell) types.set(type, (cell = { n: 0 }));
  return cell;
}

/** Adds every count of `counts` to `cells`. */
function addCounts(cells: Cells, counts: SeriesCounts): void {
  for (const [integration, bySeverity] of counts) {
    for (const [severity, types] of bySeverity) {
      for (const [type, n] of types) cellOf(cells, integration, severity, type).n += n;
    }
  }
}

function countsOf(cells: Cells): SeriesCounts {
  return new Map([...cells].map(([integration, bySeverity]) => [integration, new Map([...bySeverity].map(([severity, types]) => [severity, new Map([...types].map(([type, cell]) => [type, cell.n]))]))]));
}

/** The `age` label values of posture_alerts_open_older_than and their seconds, shortest first. */
export const ALERT_AGES = [
  ['1h', 3600],
  ['1d', 86_400],
  ['7d', 7 * 86_400],
  ['30d', 30 * 86_400],
  ['90d', 90 * 86_400],
] as const;
const AGE_SECONDS: readonly number[] = ALERT_AGES.map(([, s]) => s);

/** Aggregates of unresolved alerts: everything the alert families need, in constant memory. */
export interface AlertsAggregate {
  readonly open: Counts;
  readonly unacknowledged: Counts;
  readonly unassigned: Counts;
  readonly snoozed: Counts;
  /** Oldest set creation time (Unix s) per severity, only where there is one. */
  readonly oldest: Readonly<Record<string, number>>;
  /** Per severity, alerts created more than each of ALERT_AGES before the collection (in that order); only severities with one. */
  readonly olderThan: Readonly<Record<string, readonly number[]>>;
  /** Unsnoozed alerts older than their severity's SLA (red, amber, green: a state outside them has no SLA). */
  readonly overSla: Counts;
  /** Oldest set creation time (Unix s) of an unacknowledged alert per severity, only where there is one. */
  readonly oldestUnacknowledged: Readonly<Record<string, number>>;
  /** Open alerts by integration, then severity, then type: nested, so no label value can reach another. */
  readonly byIntegration: SeriesCounts;
  readonly invalid: number;
}

const KNOWN_TYPES = new Set(['incident', 'warning', 'info']);

/** `state` → severity label: red, amber, green, else unknown. */
export function severityOf(state: string): string {
  const s = state.trim().toLowerCase();
  return (SEVERITIES as readonly string[]).includes(s) ? s : 'unknown';
}

/** `status` → type label: incident, warning, info, else unknown. */
export function typeOf(status: string): string {
  const s = status.trim().toLowerCase();
  return KNOWN_TYPES.has(s) ? s : 'unknown';
}

/**
 * `product` → integration label: the part before the first comma, trimmed, as UTF-8 writes it (a
 * lone surrogate becomes U+FFFD, so products written alike count as one); `unknown` when that is
 * empty (an empty or whitespace-only product, or one that starts with its comma).
 */
export function integrationOf(product: string): string {
  const comma = product.indexOf(',');
  const name = (comma === -1 ? product : product.slice(0, comma)).trim();
  return name === '' ? 'unknown' : asWritten(name);
}

const zeroCounts = (): Counts => ({ red: 0, amber: 0, green: 0 });

/** Distinct inputs a sink remembers the labels of; past it, labels are computed afresh (same result, slower). */
const LABEL_CACHE_LIMIT = 10_000;

/**
 * Remembers the labels of the values seen so far: a list of 100,000 alerts has a few dozen
 * distinct `state`/`product`/`status` values, and computing the labels and finding their count
 * per alert (lower-casing, trimming, three map lookups) showed in the CPU profile.
 */
class Labels {
  private readonly severities = new Map<string, string>();
  /** product → status → severity → the cell of its series. */
  private readonly cells = new Map<string, Map<string, Map<string, Cell>>>();
  private size = 0;

  constructor(private readonly counts: Cells) {}

  severity(state: string): string {
    let sev = this.severities.get(state);
    if (sev === undefined) {
      sev = severityOf(state);
      if (this.size++ < LABEL_CACHE_LIMIT) this.severities.set(state, sev);
    }
    return sev;
  }

  cell(product: string, sev: string, status: string): Cell {
    let byStatus = this.cells.get(product);
    let bySev = byStatus?.get(status);
    let cell = bySev?.get(sev);
    if (cell !== undefined) return cell;
    cell = cellOf(this.counts, integrationOf(product), sev, typeOf(status));
    if (this.size++ < LABEL_CACHE_LIMIT) {
      if (!byStatus) this.cells.set(product, (byStatus = new Map()));
      if (!bySev) byStatus.set(status, (bySev = new Map()));
      bySev.set(sev, cell);
    }
    return cell;
  }
}

/** Folds a stream of alert records (one page or one whole list) into an AlertsAggregate. */
export class AlertsSink {
  private readonly open = zeroCounts();
  private readonly unacknowledged = zeroCounts();
  private readonly unassigned = zeroCounts();
  private readonly snoozed = zeroCounts();
  private readonly oldest: Record<string, number> = {};
  private readonly olderThan: Record<string, number[]> = {};
  private readonly overSla = zeroCounts();
  private readonly oldestUnacknowledged: Record<string, number> = {};
  private readonly byIntegration: Cells = new Map();
  private readonly invalid: InvalidRecords;
  private readonly labels = new Labels(this.byIntegration);
  /** Records seen so far (valid or not): the next one's index within this page. */
  private seen = 0;

  /** `nowSeconds`: the collection time, against which snoozes and ages are judged; `slas`: seconds per severity. */
  constructor(
    private readonly nowSeconds: number,
    logger?: Logger,
    private readonly offset = 0,
    private readonly slas: AlertSlas = DEFAULT_ALERT_SLAS,
  ) {
    this.invalid = new InvalidRecords('alerts', logger);
  }

  record(raw: unknown): void {
    const index = this.offset + this.seen++;
    const a = checkAlertRecord(raw);
    if (typeof a === 'string') return this.invalid.add(index, a);
    // An unset creation time (spec 2.2: the minimum date, null here) is legal: the alert counts
    // as open everywhere but has no age (no oldest timestamp, no age bucket, never over its SLA).
    const created = parseApiTimestamp(a.timestamp);
    if (created === undefined) return this.invalid.add(index, `timestamp: not an API timestamp (${JSON.stringify(a.timestamp.slice(0, 40))})`);
    const until = parseApiTimestamp(a.inactiveUntil);
    if (until === undefined) return this.invalid.add(index, `inactiveUntil: not an API timestamp (${JSON.stringify(a.inactiveUntil.slice(0, 40))})`);
    // The list asked for unresolved alerts; one flagged resolved is not open, whatever the filter did.
    if (a.resolved) return;
    const sev = this.labels.severity(a.state);
    bump(this.open, sev);
    if (!a.acknowledged) bump(this.unacknowledged, sev);
    if (a.ownerName === '') bump(this.unassigned, sev);
    const snoozed = until !== null && until > this.nowSeconds;
    if (snoozed) bump(this.snoozed, sev);
    if (created !== null) {
      if (this.oldest[sev] === undefined || created < this.oldest[sev]!) this.oldest[sev] = created;
      if (!a.acknowledged && (this.oldestUnacknowledged[sev] === undefined || created < this.oldestUnacknowledged[sev]!)) this.oldestUnacknowledged[sev] = created;
      const age = this.nowSeconds - created;
      if (age > AGE_SECONDS[0]!) {
        const buckets = (this.olderThan[sev] ??= AGE_SECONDS.map(() => 0));
        // Ages ascend: an alert older than one is older than every shorter one.
        for (let i = 0; i < AGE_SECONDS.length && age > AGE_SECONDS[i]!; i++) buckets[i]!++;
      }
      const sla = this.slas[sev as keyof AlertSlas] as number | undefined;
      // Added as 0 or 1, not bumped under a condition: the first alert past its SLA often comes
      // thousands of records in, after TurboFan compiled this function without that branch, and
      // reaching it threw the compiled code away and compiled it again (docs/performance.md).
      // overSla holds red, amber and green from the start, the severities with an SLA.
      if (sla !== undefined) this.overSla[sev] = this.overSla[sev]! + (!snoozed && age > sla ? 1 : 0);
    }
    this.labels.cell(a.product, sev, a.status).n++;
  }

  finish(): AlertsAggregate {
    return {
      open: this.open,
      unacknowledged: this.unacknowledged,
      unassigned: this.unassigned,
      snoozed: this.snoozed,
      oldest: this.oldest,
      olderThan: this.olderThan,
      overSla: this.overSla,
      oldestUnacknowledged: this.oldestUnacknowledged,
      byIntegration: countsOf(this.byIntegration),
      invalid: this.invalid.count,
    };
  }
}

function bump(counts: Counts, key: string, by = 1): void {
  counts[key] = (counts[key] ?? 0) + by;
}

/** Combines the aggregates of several pages of one list. */
export function mergeAlerts(a: AlertsAggregate, b: AlertsAggregate): AlertsAggregate {
  const sum = (x: Counts, y: Counts): Counts => {
    const out: Counts = { ...x };
    for (const [k, v] of Object.entries(y)) bump(out, k, v);
    return out;
  };
  const earliest = (x: Readonly<Record<string, number>>, y: Readonly<Record<string, number>>): Record<string, number> => {
    const out: Record<string, number> = { ...x };
    for (const [k, v] of Object.entries(y)) if (out[k] === undefined || v < out[k]!) out[k] = v;
    return out;
  };
  const olderThan: Record<string, number[]> = Object.fromEntries(Object.entries(a.olderThan).map(([k, v]) => [k, [...v]]));
  for (const [k, v] of Object.entries(b.olderThan)) {
    const into = (olderThan[k] ??= v.map(() => 0));
    v.forEach((n, i) => (into[i]! += n));
  }
  const byIntegration: Cells = new Map();
  addCounts(byIntegration, a.byIntegration);
  addCounts(byIntegration, b.byIntegration);
  return {
    open: sum(a.open, b.open),
    unacknowledged: sum(a.unacknowledged, b.unacknowledged),
    unassigned: sum(a.unassigned, b.unassigned),
    snoozed: sum(a.snoozed, b.snoozed),
    oldest: earliest(a.oldest, b.oldest),
    olderThan,
    overSla: sum(a.overSla, b.overSla),
    oldestUnacknowledged: earliest(a.oldestUnacknowledged, b.oldestUnacknowledged),
    byIntegration: countsOf(byIntegration),
    invalid: a.invalid + b.invalid,
  };
}

/** Folds plain records (tests, fixtures) as the sink does. */
export function foldAlerts(records: Iterable<unknown>, nowSeconds: number, logger?: Logger, slas?: AlertSlas): AlertsAggregate {
  const sink = new AlertsSink(nowSeconds, logger, 0, slas);
  for (const r of records) sink.record(r);
  return sink.finish();
}
