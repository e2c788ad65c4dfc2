/**
 * The pure part of `backfill`: which days, which requests, what samples each day gives and how
 * progress reads. No I/O, no clock: "now" arrives as an argument.
 */
import { toSamples } from '../collect/samples.js';
import type { VitalsList } from '../sources/vitals.js';
import { ConfigError } from '../errors.js';
import { METRICS } from '../collect/catalogue.js';
import type { TimestampedSample } from '../metrics/openmetrics-timestamped.js';
import type { Sample } from '../metrics/sample.js';
import { VERSION } from '../version.js';

const DAY_MS = 86_400_000;
/** The longest span `--days` and `--from/--to` accept (ten years): a typo, not a plan, beyond it. */
const MAX_DAYS = 3660;

/** `yyyyMMdd` → Unix ms of that UTC day's start, or undefined when it is not a real date. */
export function parseDay(text: string): number | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})$/.exec(text);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 1970 || mo < 1 || mo > 12 || d < 1) return undefined;
  const t = Date.UTC(y, mo - 1, d);
  // Date.UTC rolls 20260230 over into March: a date that does not survive the round trip is not one.
  return formatDay(t) === text ? t : undefined;
}

/** Unix ms → the `yyyyMMdd` of its UTC day. */
function formatDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');
}

/**
 * The timestamp of a day's archive: 23:59:59 UTC of that day. The archive is the portal's
 * snapshot of the day as it ended, so it is stamped at the day's last whole second: a query at any
 * time of the next day with a lookback reaching back that far reads it as "the state yesterday",
 * and it never collides with the next day's live samples. Days are UTC days, as the portal's own
 * timestamps are UTC (spec 2.2): `archiveDate=20261101` is assumed to be 2026-11-01 00:00–24:00 UTC.
 */
export function dayTimestamp(day: string): number {
  const start = parseDay(day);
  if (start === undefined) throw new RangeError(`not a yyyyMMdd day: ${day}`);
  return start + DAY_MS - 1000;
}

/** What the command line said about the days. */
export interface DaysFlags {
  days?: string;
  from?: string;
  to?: string;
}

/**
 * The days to fetch, newest first (yesterday first, so the most useful history lands first).
 * `--days N`: the N full UTC days before today; `--from A --to B`: A to B, both included, all
 * before today (today's archive does not exist until the day is over). Throws a ConfigError whose
 * one-line message names the flag.
 */
export function daysToFetch(flags: DaysFlags, now: number): string[] {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const range = flags.from !== undefined || flags.to !== undefined;
  if (flags.days !== undefined && range) throw new ConfigError('--days', '--days cannot be combined with --from/--to: give either --days N or --from yyyyMMdd --to yyyyMMdd.');
  let first: number;
  let last: number;
  if (flags.days !== undefined) {
    if (!/^\d+$/.test(flags.days) || Number(flags.days) < 1 || Number(flags.days) > MAX_DAYS) {
      throw new ConfigError('--days', `--days=${JSON.stringify(flags.days)} is not valid: give a whole number of days from 1 to ${MAX_DAYS}.`);
    }
    last = today - DAY_MS;
    first = today - Number(flags.days) * DAY_MS;
  } else if (range) {
    if (flags.from === undefined) throw new ConfigError('--from', '--to needs --from: give both, --from yyyyMMdd --to yyyyMMdd (both days included).');
    if (flags.to === undefined) throw new ConfigError('--to', '--from needs --to: give both, --from yyyyMMdd --to yyyyMMdd (both days included).');
    const from = parseDay(flags.from);
    if (from === undefined) throw new ConfigError('--from', `--from=${JSON.stringify(flags.from)} is not a date: give yyyyMMdd, e.g. ${formatDay(today - 30 * DAY_MS)}.`);
    const to = parseDay(flags.to);
    if (to === undefined) throw new ConfigError('--to', `--to=${JSON.stringify(flags.to)} is not a date: give yyyyMMdd, e.g. ${formatDay(today - DAY_MS)}.`);
    if (to >= today) throw new ConfigError('--to', `--to=${flags.to} is today or later: a day is archived only once it is over (UTC); the latest is ${formatDay(today - DAY_MS)}.`);
    if (from > to) throw new ConfigError('--from', `--from=${flags.from} is after --to=${flags.to}: give the earlier day first.`);
    if ((to - from) / DAY_MS + 1 > MAX_DAYS) throw new ConfigError('--from', `--from=${flags.from} --to=${flags.to} spans more than ${MAX_DAYS} days: split it into several runs.`);
    first = from;
    last = to;
  } else {
    throw new ConfigError('--days', 'backfill needs the days to load: give --days N (the N days before today) or --from yyyyMMdd --to yyyyMMdd.');
  }
  const out: string[] = [];
  for (let t = last; t >= first; t -= DAY_MS) out.push(formatDay(t));
  return out;
}

/** The list keys of a portal's day, in request order: the whole portal (`''`), then each tag. */
export function listKeys(vitalsTags: readonly string[]): string[] {
  return ['', ...vitalsTags.map((t) => `tag:${t}`)];
}

/** A list key's tag (undefined for the whole portal). */
export function tagOfKey(key: string): string | undefined {
  return key === '' ? undefined : key.slice('tag:'.length);
}

/**
 * The Vitals samples of one portal's day: exactly the families, names, labels and rules of live
 * collection (absent health ratio when nothing is eligible, the funnel check), taken from the
 * same transform, stamped with the day's timestamp.
 */
export function samplesOfDay(portal: string, day: string, lists: readonly VitalsList[]): TimestampedSample[] {
  const timestampMs = dayTimestamp(day);
  const all: Sample[] = toSamples([{ portal, vitals: { value: lists, success: true }, alerts: { success: false }, devices: { success: false } }], { version: VERSION, runtime: 'once' });
  return all.filter((s) => METRICS[s.name]?.origin === 'vitals').map((s) => ({ ...s, timestampMs }));
}

/** Where a run stands. */
export interface ProgressSnapshot {
  daysDone: number;
  daysTotal: number;
  failed: number;
  /** Requests sent by this run. */
  requests: number;
  /** Requests still planned, per portal, with that portal's share (requests per minute). */
  left: ReadonlyArray<{ requests: number; perMinute: number }>;
}

/** Seconds still needed at the budget: portals run side by side, so the slowest one decides. */
export function etaSeconds(p: Pick<ProgressSnapshot, 'left'>): number {
  return Math.max(0, ...p.left.map((l) => Math.ceil((l.requests / l.perMinute) * 60)));
}

function humanDuration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The one-line progress bar for a terminal. */
export function progressBar(p: ProgressSnapshot, width = 24): string {
  const filled = p.daysTotal === 0 ? width : Math.round((p.daysDone / p.daysTotal) * width);
  const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
  const failed = p.failed ? ` · ${p.failed} failed` : '';
  return `backfill [${bar}] ${p.daysDone}/${p.daysTotal} days${failed} · ${p.requests} requests · ~${humanDuration(etaSeconds(p))} left`;
}
