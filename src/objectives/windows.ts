/**
 * The burn-rate alerts of an objective, as the Google SRE workbook sets them for a 30-day window,
 * with the windows scaled to the objective's window and the factors kept: what the rules, their
 * file's header and `check-config` all say. Pure.
 */
import { durationMs, errorBudget, type Objective } from '../config/objectives.js';

/** No window is shorter than this: a few minutes of Vitals samples, whatever the objective's window. */
export const WINDOW_FLOOR = '5m';
const FLOOR_MS = durationMs(WINDOW_FLOOR)!;
/** Each short window is its long window divided by this (the workbook's 5m for 1h). */
const SHORT_DIVISOR = 12;

/** The burn-rate alerts: severity, then the two pairs of which either fires it, as factor and long window = objective window / divisor. */
const BURN_RATE_ALERTS = [
  { severity: 'critical', pairs: [{ factor: 14.4, divisor: 720 }, { factor: 6, divisor: 120 }] },
  { severity: 'warning', pairs: [{ factor: 3, divisor: 30 }, { factor: 1, divisor: 10 }] },
] as const;

/** One pair of a burn-rate alert: it fires while the burn rate is above `factor` over both windows. */
export interface BurnPair {
  readonly factor: number;
  /** Prometheus durations. */
  readonly long: string;
  readonly short: string;
  /** False when `factor` × the error budget is 1 or more: the burn rate can never get above `factor`. */
  readonly canFire: boolean;
}

/** One burn-rate alert of an objective: its severity and its two pairs. */
export interface BurnRateAlert {
  readonly severity: 'critical' | 'warning';
  readonly pairs: readonly [BurnPair, BurnPair];
}

const UNITS = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000], ['ms', 1]] as const;

/** Milliseconds as a Prometheus duration, largest units first (`2d19h12m`); 0 is `0s`. */
function formatDuration(ms: number): string {
  let left = Math.round(ms);
  let out = '';
  for (const [unit, size] of UNITS) {
    const n = Math.floor(left / size);
    if (n > 0) out += `${n}${unit}`;
    left -= n * size;
  }
  return out || '0s';
}

/** A window of `ms` (rounded to the second), at least the floor. */
function windowOf(ms: number): string {
  return formatDuration(Math.max(FLOOR_MS, Math.round(ms / 1000) * 1000));
}

/** The objective's burn-rate alerts: long windows of window/720 and /120 (page), /30 and /10 (ticket), each short window a twelfth of its long one. */
export function burnRateAlerts(o: Pick<Objective, 'target' | 'window'>): BurnRateAlert[] {
  const windowMs = durationMs(o.window)!;
  const budget = errorBudget(o);
  return BURN_RATE_ALERTS.map(({ severity, pairs }) => {
    const [a, b] = pairs.map(({ factor, divisor }): BurnPair => {
      const long = windowMs / divisor;
      return { factor, long: windowOf(long), short: windowOf(long / SHORT_DIVISOR), canFire: factor * budget < 1 };
    });
    return { severity, pairs: [a!, b!] };
  });
}

/** A number as people read it: at most 12 significant digits, no float noise. */
function shown(x: number): string {
  return String(Number(x.toPrecision(12)));
}

/**
 * What each burn-rate alert of `o` watches, in words: one line per severity, then one per pair
 * that can never fire. The rule file's header and `check-config` print them.
 */
export function burnRateLines(o: Pick<Objective, 'target' | 'window'>): string[] {
  const budget = errorBudget(o);
  const alerts = burnRateAlerts(o);
  const pair = (p: BurnPair) => `${shown(p.factor)} over ${p.long} and ${p.short} (error ratio above ${shown(p.factor * budget)})`;
  const lines = alerts.map((a) => `${a.severity === 'critical' ? 'page (critical)' : 'ticket (warning)'}: burn rate above ${pair(a.pairs[0])}, or above ${pair(a.pairs[1])}`);
  for (const p of alerts.flatMap((a) => a.pairs).filter((p) => !p.canFire)) {
    lines.push(`the pair ${shown(p.factor)} over ${p.long} and ${p.short} can never fire: the burn rate is at most 1 / ${shown(budget)} = ${shown(1 / budget)} (every device non-compliant); the other pairs still alert`);
  }
  return lines;
}
