import { DEFAULT_ALERT_SLAS, type AlertSlas } from '../../config/alert-slas.js';
import type { Logger } from '../../core/log.js';
import { asWritten } from '../../core/utf8.js';
import { SEVERITIES } from '../../domain.js';
import { checkAlertRecord } from '../../upstream/schemas.js';
import { Floats } from '../floats.js';
import { InvalidRecords } from '../invalid.js';
import { WINDOW_COUNT, WINDOW_SECONDS } from '../resolved/windows.js';
import { parseApiTimestamp } from '../../upstream/timestamps.js';
import { Interned, MAX_IDS, ROW_FLOATS, ROW_INTS, Slot, Time, type AlertScan } from '../../upstream/alert-scan.js';

/** A scan's timestamp: NaN is the unset one. */
function orNull(seconds: number): number | null {
  return seconds === seconds ? seconds : null;
}

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
/** ALERT_AGES' seconds. */
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
  /**
   * Per severity, the acknowledged open alerts whose acknowledgedTime is set, at or after their
   * creation and within the longest response window (as of this fold's collection time): for the
   * response-time families of the resolved-alerts pass (src/sources/resolved/). Absent when there is none.
   */
  readonly acknowledgements?: Readonly<Record<string, AcknowledgementDurations>>;
}

/**
 * Acknowledgements of one severity, per response window (RESPONSE_WINDOWS' order): how long after
 * creation (s) each alert acknowledged in that window, and in no shorter one, was acknowledged. A
 * window's acknowledgements are its own and the shorter windows'. Kept as durations only, 8 bytes an
 * alert (a million open alerts made 28 MB more peak RSS with each acknowledgement's time kept too).
 */
export type AcknowledgementDurations = readonly Float64Array[];

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

/** Distinct inputs a sink remembers the labels of; past it, labels are computed afresh (same result, slower). */
const LABEL_CACHE_LIMIT = 10_000;

/** Severity labels by their index while folding: the severities with an SLA (red, amber, green), then unknown. */
const SEVERITY_LABELS: readonly string[] = [...SEVERITIES, 'unknown'];
/** Type labels by their index while folding. */
const TYPE_LABELS: readonly string[] = [...KNOWN_TYPES, 'unknown'];
const SEVERITY_COUNT = SEVERITY_LABELS.length;
const AGE_COUNT = ALERT_AGES.length;

// Where each count of a severity index s sits in AlertsSink's one array of counts.
const OPEN = 0;
const UNACKNOWLEDGED = SEVERITY_COUNT;
const UNASSIGNED = 2 * SEVERITY_COUNT;
const SNOOZED = 3 * SEVERITY_COUNT;
const OVER_SLA = 4 * SEVERITY_COUNT;
/** The age buckets: ALERT_AGES' counts of severity s from OLDER_THAN + s * AGE_COUNT. */
const OLDER_THAN = 5 * SEVERITY_COUNT;
const COUNT_SLOTS = OLDER_THAN + SEVERITY_COUNT * AGE_COUNT;
// The oldest creation times: of any alert, then of an unacknowledged one (Infinity: none yet).
const OLDEST = 0;
const OLDEST_UNACKNOWLEDGED = SEVERITY_COUNT;

/** Slots of the product cache of Labels (a power of two). */
const PRODUCT_SLOTS = 256;

/** The cache slot of `product`: from its length and three of its characters (not a hash of all of them). */
// Stryker disable all: any slot is correct (even NaN, an array property): it only decides which product the cache remembers.
function productSlot(product: string): number {
  const n = product.length;
  if (n === 0) return 0;
  return (Math.imul(n, 0x9e3779b1) ^ Math.imul(product.charCodeAt(n - 1), 0x85ebca6b) ^ Math.imul(product.charCodeAt(n >> 1), 0xc2b2ae35) ^ product.charCodeAt(0)) >>> 24;
}
// Stryker restore all

/**
 * Remembers the labels of the values seen so far, as indexes: a list of 100,000 alerts has a few
 * dozen distinct `state`/`product`/`status` values, and computing the labels and finding their
 * count per alert (lower-casing, trimming, lookups by label) showed in the CPU profile.
 */
class Labels {
  private readonly severities = new Map<string, number>();
  private readonly types = new Map<string, number>();
  /** product → the open counts of its integration. */
  private readonly products = new Map<string, Float64Array>();
  /**
   * A direct-mapped cache in front of `products`, by productSlot: each alert's product is a new
   * string, and a Map lookup hashes every character of it (most of the cost of finding the counts,
   * in the CPU profile); comparing with the product last seen in its slot reads a few.
   */
  // Stryker disable next-line ArrayDeclaration,StringLiteral: a cache: an empty array grows, and a slot's product is read only once its counts are set.
  private readonly recentProducts = new Array<string>(PRODUCT_SLOTS).fill('');
  // Stryker disable next-line ArrayDeclaration: a cache: an empty array grows.
  private readonly recentCounts = new Array<Float64Array | undefined>(PRODUCT_SLOTS).fill(undefined);
  private size = 0;

  /** `integrations`: integration label → its open counts, by type index × SEVERITY_COUNT + severity index. */
  constructor(private readonly integrations: Map<string, Float64Array>) {}

  /** The severity index of `state`. */
  severity(state: string): number {
    return this.index(this.severities, state, SEVERITY_LABELS, severityOf);
  }

  /** The type index of `status`. */
  type(status: string): number {
    return this.index(this.types, status, TYPE_LABELS, typeOf);
  }

  /** The index in `labels` of `raw`'s label, through `cache` (the caches share one limit). */
  private index(cache: Map<string, number>, raw: string, labels: readonly string[], labelOf: (raw: string) => string): number {
    let i = cache.get(raw);
    // Stryker disable next-line ConditionalExpression: a cache: computing the label on a hit too gives the same index.
    if (i === undefined) {
      i = labels.indexOf(labelOf(raw));
      // Stryker disable next-line ConditionalExpression,EqualityOperator,UpdateOperator: the cache's limit: caching more or fewer labels gives the same ones.
      if (this.size++ < LABEL_CACHE_LIMIT) cache.set(raw, i);
    }
    return i;
  }

  /** The open counts of the integration of `product`. */
  counts(product: string): Float64Array {
    const slot = productSlot(product);
    const recent = this.recentCounts[slot];
    // Stryker disable next-line ConditionalExpression: a cache: looking up on a hit too finds the same counts.
    if (recent !== undefined && this.recentProducts[slot] === product) return recent;
    let counts = this.products.get(product);
    // Stryker disable next-line ConditionalExpression: a cache: computing the integration on a hit too finds the same counts.
    if (counts === undefined) {
      const integration = integrationOf(product);
      counts = this.integrations.get(integration);
      if (counts === undefined) this.integrations.set(integration, (counts = new Float64Array(TYPE_LABELS.length * SEVERITY_COUNT)));
      // Stryker disable next-line ConditionalExpression,EqualityOperator,UpdateOperator: the cache's limit: caching more or fewer labels gives the same ones.
      if (this.size++ < LABEL_CACHE_LIMIT) this.products.set(product, counts);
    }
    this.recentProducts[slot] = product;
    this.recentCounts[slot] = counts;
    return counts;
  }
}

/**
 * Folds a stream of alert records (one page or one whole list) into an AlertsAggregate. While
 * folding, the counts are indexed by number (severity index, then age or type), not by label: a
 * lookup by a label that varies per alert is a generic (megamorphic) property load or a hash lookup;
 * finish() gives them their labels.
 */
export class AlertsSink {
  /** Every count per severity, at the offsets above. */
  private readonly counts = new Float64Array(COUNT_SLOTS);
  private readonly oldest = new Float64Array(2 * SEVERITY_COUNT).fill(Infinity);
  /** SLA seconds by severity index; unknown has none (Infinity: never over it). */
  private readonly slaSeconds: Float64Array;
  private readonly byIntegration = new Map<string, Float64Array>();
  private readonly invalid: InvalidRecords;
  private readonly labels = new Labels(this.byIntegration);
  /** Records seen so far (valid or not): the next one's index within this page. */
  private seen = 0;
  /** Per severity index, the acknowledgements kept (acknowledgementOf): their times and durations. */
  /** Per severity index, then window (its shortest): the acknowledgements' durations (acknowledgementOf). */
  private readonly toAcknowledge = Array.from({ length: SEVERITY_COUNT * WINDOW_COUNT }, () => new Floats());
  // Labels by the ids of a scan's strings (scanned()), -1 or absent until first seen.
  private generation = -1;
  private readonly severityById = new Int8Array(MAX_IDS).fill(-1);
  private readonly typeById = new Int8Array(MAX_IDS).fill(-1);
  // Every slot held from the start (null until seen): an array filled at random ids grew holes, then
  // turned into a dictionary, and TurboFan's code for scanned() was thrown away (wrong map).
  private readonly countsById: Array<Float64Array | null> = Array.from({ length: MAX_IDS }, () => null);

  /** `nowSeconds`: the collection time, against which snoozes and ages are judged; `slas`: seconds per severity. */
  constructor(
    private readonly nowSeconds: number,
    logger?: Logger,
    private readonly offset = 0,
    slas: AlertSlas = DEFAULT_ALERT_SLAS,
  ) {
    this.invalid = new InvalidRecords('alerts', logger);
    this.slaSeconds = Float64Array.from(SEVERITY_LABELS, (sev) => (slas as Readonly<Record<string, number | undefined>>)[sev] ?? Infinity);
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
    // The acknowledgement time is read only where it counts (acknowledgementOf).
    const text = a.acknowledged && created !== null ? (raw as { acknowledgedTime?: unknown }).acknowledgedTime : undefined;
    const acknowledgedAt = typeof text === 'string' ? parseApiTimestamp(text) : null;
    const sev = this.labels.severity(a.state);
    this.add(sev, this.labels.counts(a.product), this.labels.type(a.status), a.acknowledged, a.ownerName === '', created, until, acknowledgedAt);
  }

  /**
   * Rows `[from, to)` of a scan (src/upstream/alert-scan.ts): the same as record() of each record,
   * which the scanner found valid for this fold (every field of its type, its timestamps in the
   * portal's form). Their strings come as ids of their bytes, each decoded once and its label kept by id.
   */
  scanned(scan: AlertScan, from: number, to: number): void {
    if (scan.generation !== this.generation) this.forgetIds(scan.generation);
    const ints = scan.ints;
    const times = scan.floats;
    this.seen += to - from;
    for (let row = from; row < to; row++) {
      const at = row * ROW_INTS;
      if (ints[at + Slot.Resolved] === 1) continue;
      const stateId = ints[at + Slot.State]!;
      let sev = this.severityById[stateId]!;
      if (sev < 0) sev = this.severityById[stateId] = this.labels.severity(scan.text(Interned.State, stateId));
      const productId = ints[at + Slot.Product]!;
      const counts = (this.countsById[productId] ??= this.labels.counts(scan.text(Interned.Product, productId)));
      const statusId = ints[at + Slot.Status]!;
      let type = this.typeById[statusId]!;
      if (type < 0) type = this.typeById[statusId] = this.labels.type(scan.text(Interned.Status, statusId));
      const t = row * ROW_FLOATS;
      const acknowledged = ints[at + Slot.Acknowledged] === 1;
      // NaN: the unset timestamp (null from parseApiTimestamp).
      const created = orNull(times[t + Time.Created]!);
      const acknowledgedAt = acknowledged && created !== null && ints[at + Slot.AcknowledgedSet] === 1 ? orNull(times[t + Time.Acknowledged]!) : null;
      this.add(sev, counts, type, acknowledged, ints[at + Slot.OwnerEmpty] === 1, created, orNull(times[t + Time.Until]!), acknowledgedAt);
    }
  }

  /** The labels kept by id are of an earlier generation of ids: they name other strings now. */
  private forgetIds(generation: number): void {
    this.generation = generation;
    this.severityById.fill(-1);
    this.typeById.fill(-1);
    this.countsById.fill(null);
  }

  /**
   * Counts one open alert: severity index `sev`, its integration's counts, type index `type`, when
   * it was created, snoozed until and acknowledged (Unix s; null: unset; undefined: not a timestamp).
   */
  private add(sev: number, integration: Float64Array, type: number, acknowledged: boolean, unassigned: boolean, created: number | null, until: number | null, acknowledgedAt: number | null | undefined): void {
    const counts = this.counts;
    // Every count is added as 0 or 1 and every oldest time is a minimum taken, for each alert, not
    // under a condition: the first alert that takes a branch (past its SLA, unassigned, snoozed,
    // acknowledged outside the shortest window...) often comes thousands of records in, after
    // TurboFan compiled this function without that branch, and reaching it threw the compiled code
    // away and compiled it again (docs/performance.md, "Deoptimizations").
    counts[OPEN + sev]++;
    counts[UNACKNOWLEDGED + sev] += acknowledged ? 0 : 1;
    counts[UNASSIGNED + sev] += unassigned ? 1 : 0;
    // An unset time (null) is never after now.
    const snoozed = (until ?? -Infinity) > this.nowSeconds;
    counts[SNOOZED + sev] += snoozed ? 1 : 0;
    if (created !== null) {
      const oldest = this.oldest;
      oldest[OLDEST + sev] = Math.min(oldest[OLDEST + sev]!, created);
      oldest[OLDEST_UNACKNOWLEDGED + sev] = Math.min(oldest[OLDEST_UNACKNOWLEDGED + sev]!, acknowledged ? Infinity : created);
      const age = this.nowSeconds - created;
      const buckets = OLDER_THAN + sev * AGE_COUNT;
      // Stryker disable next-line EqualityOperator: equivalent, one step more compares with undefined (false) and adds 0.
      for (let i = 0; i < AGE_COUNT; i++) counts[buckets + i] += age > AGE_SECONDS[i]! ? 1 : 0;
      counts[OVER_SLA + sev] += !snoozed && age > this.slaSeconds[sev]! ? 1 : 0;
      if (acknowledged) this.acknowledgementOf(acknowledgedAt, created, sev);
    }
    integration[type * SEVERITY_COUNT + sev]++;
  }

  /**
   * Keeps the acknowledgement of an acknowledged alert created at `created`, acknowledged at `at`:
   * how long after creation, in the shortest window it is in. None when acknowledgedTime is unset,
   * not a timestamp (the open counts do not read it, so the alert is not invalid for them), before
   * the creation or older than every window.
   */
  private acknowledgementOf(at: number | null | undefined, created: number, sev: number): void {
    if (at === null || at === undefined || at < created) return;
    // Windows ascend, so the windows `at` is not in are the shortest ones: their count is the index
    // of the shortest it is in (WINDOW_COUNT: none). Counted over every window, whatever `at`, so
    // that TurboFan never compiles this before it has seen an older acknowledgement (see add()).
    let w = 0;
    for (let k = 0; k < WINDOW_COUNT; k++) w += at > this.nowSeconds - WINDOW_SECONDS[k]! ? 0 : 1;
    if (w < WINDOW_COUNT) this.toAcknowledge[sev * WINDOW_COUNT + w]!.push(at - created);
  }

  finish(): AlertsAggregate {
    const counts = this.counts;
    const oldest = this.oldest;
    /** The counts from `at` by severity: red, amber and green always, unknown when there is one. */
    const named = (at: number): Counts => {
      const out: Counts = {};
      SEVERITY_LABELS.forEach((sev, s) => {
        if (s < SEVERITIES.length || counts[at + s]! > 0) out[sev] = counts[at + s]!;
      });
      return out;
    };
    /** The times from `at` by severity, where there is one. */
    const times = (at: number): Record<string, number> => {
      const out: Record<string, number> = {};
      SEVERITY_LABELS.forEach((sev, s) => {
        if (oldest[at + s] !== Infinity) out[sev] = oldest[at + s]!;
      });
      return out;
    };
    const olderThan: Record<string, number[]> = {};
    SEVERITY_LABELS.forEach((sev, s) => {
      const from = OLDER_THAN + s * AGE_COUNT;
      // Every alert older than the shortest age counts in the first bucket.
      if (counts[from]! > 0) olderThan[sev] = Array.from(counts.subarray(from, from + AGE_COUNT));
    });
    const overSla: Counts = {};
    SEVERITIES.forEach((sev, s) => (overSla[sev] = counts[OVER_SLA + s]!));
    const byIntegration = new Map<string, Map<string, Map<string, number>>>();
    for (const [integration, open] of this.byIntegration) {
      const bySeverity = new Map<string, Map<string, number>>();
      SEVERITY_LABELS.forEach((sev, s) => {
        const types = new Map<string, number>();
        TYPE_LABELS.forEach((type, t) => {
          const n = open[t * SEVERITY_COUNT + s]!;
          if (n > 0) types.set(type, n);
        });
        if (types.size > 0) bySeverity.set(sev, types);
      });
      // Every integration here counted an open alert.
      byIntegration.set(integration, bySeverity);
    }
    const acknowledgements: Record<string, AcknowledgementDurations> = {};
    SEVERITY_LABELS.forEach((sev, s) => {
      const windows = this.toAcknowledge.slice(s * WINDOW_COUNT, (s + 1) * WINDOW_COUNT);
      // Views, not copies: the sink is done with them (a copy was 8 bytes more an acknowledgement at the peak).
      if (windows.some((d) => d.length > 0)) acknowledgements[sev] = windows.map((d) => d.view());
    });
    return {
      open: named(OPEN),
      unacknowledged: named(UNACKNOWLEDGED),
      unassigned: named(UNASSIGNED),
      snoozed: named(SNOOZED),
      oldest: times(OLDEST),
      olderThan,
      overSla,
      oldestUnacknowledged: times(OLDEST_UNACKNOWLEDGED),
      byIntegration,
      invalid: this.invalid.count,
      ...(Object.keys(acknowledgements).length > 0 ? { acknowledgements } : {}),
    };
  }
}

/** The acknowledgements of two pages together (absent when neither has any). */
function mergeAcknowledgements(a: AlertsAggregate['acknowledgements'], b: AlertsAggregate['acknowledgements']): Pick<AlertsAggregate, 'acknowledgements'> {
  if (!a || !b) return a ?? b ? { acknowledgements: (a ?? b)! } : {};
  const out: Record<string, AcknowledgementDurations> = { ...a };
  for (const [sev, theirs] of Object.entries(b)) {
    const mine = out[sev];
    out[sev] = mine
      ? mine.map((durations, w) => {
          const both = new Floats(durations.length + theirs[w]!.length);
          both.append(durations);
          both.append(theirs[w]!);
          return both.view();
        })
      : theirs;
  }
  return { acknowledgements: out };
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
    for (const [k, v] of Object.entries(y)) out[k] = Math.min(out[k] ?? Infinity, v);
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
    ...mergeAcknowledgements(a.acknowledgements, b.acknowledgements),
  };
}

/** Folds plain records (tests, fixtures) as the sink does. */
export function foldAlerts(records: Iterable<unknown>, nowSeconds: number, logger?: Logger, slas?: AlertSlas): AlertsAggregate {
  const sink = new AlertsSink(nowSeconds, logger, 0, slas);
  for (const r of records) sink.record(r);
  return sink.finish();
}
