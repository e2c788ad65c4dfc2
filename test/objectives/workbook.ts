/**
 * The SRE workbook's multiwindow, multi-burn-rate alerts, written out a second time for tests and
 * applied naively to per-minute samples: which alerts should fire at a minute, counted sample by
 * sample. Nothing here comes from src/: the expected firing is not the code under test.
 */

/** Minutes of the objective windows the tests use. */
const WINDOW_MINUTES: Readonly<Record<string, number>> = { '1d': 1440, '7d': 7 * 1440, '28d': 28 * 1440, '30d': 30 * 1440 };

/** One alerting pair: the burn rate above `factor` over both windows (minutes). */
interface Pair {
  readonly severity: 'critical' | 'warning';
  readonly factor: number;
  readonly long: number;
  readonly short: number;
}

/**
 * The workbook's table 5-8 for a 30-day window, scaled: pages at 14.4 over 1h and 6 over 6h,
 * tickets at 3 over 1d and 1 over 3d; at another window the same factors over the same share of
 * it (1h is 1/720 of 30d), each short window a twelfth of its long one, and none under 5 minutes.
 */
function workbookPairs(window: string): Pair[] {
  const w = WINDOW_MINUTES[window];
  if (w === undefined) throw new Error(`no window ${window} in the table`);
  const floor = (m: number) => Math.max(5, m);
  const pair = (severity: Pair['severity'], factor: number, share: number): Pair => ({ severity, factor, long: floor(w * share), short: floor((w * share) / 12) });
  return [pair('critical', 14.4, 1 / 720), pair('critical', 6, 1 / 120), pair('warning', 3, 1 / 30), pair('warning', 1, 1 / 10)];
}

/**
 * The error ratio at minute `t` over the last `minutes`, from per-minute samples of the share of
 * devices non-compliant (`bad[i]` at minute i, the same number of devices eligible in each): the
 * mean over the samples from t - minutes to t, both included, or over those there are. At a `t`
 * between the minutes no sample is on either end, and Prometheus 2 and 3 select the same samples
 * (on the minute, 3 leaves out the one on the left end).
 */
function errorRatio(bad: readonly number[], t: number, minutes: number): number {
  let sum = 0;
  let n = 0;
  for (let i = Math.max(0, Math.ceil(t - minutes)); i <= t && i < bad.length; i++) {
    sum += bad[i]!;
    n++;
  }
  return sum / n;
}

/** The severities firing at minute `t` for an objective with `budget` over `window`, and whether a burn rate is within 1e-9 of a factor (too close to call). */
export function firingAt(bad: readonly number[], t: number, window: string, budget: number): { severities: Set<Pair['severity']>; tooClose: boolean } {
  const severities = new Set<Pair['severity']>();
  let tooClose = false;
  for (const p of workbookPairs(window)) {
    const rates = [p.long, p.short].map((m) => errorRatio(bad, t, m) / budget);
    if (rates.some((r) => Math.abs(r - p.factor) < 1e-9)) tooClose = true;
    if (rates.every((r) => r > p.factor)) severities.add(p.severity);
  }
  return { severities, tooClose };
}
