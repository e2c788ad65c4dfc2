// The resolved-alerts pass's memory target (docs/performance.md, "The resolved-alerts pass"): a
// first `once` of the built CLI against a portal holding 1,000,000 resolved alerts, all resolved
// within the last day, at most 128 MB peak RSS, and every figure of the pass exact: per severity and
// window the resolved count, the count of durations, p50 and p90 (nearest rank), the mean and the
// durations over the SLA, against a count made here from the portal's own records (its own parser
// of the timestamps, its own windows, quantiles by sorting). The portal is the simulated one on
// 127.0.0.1 in this process, its clock 10 minutes ahead of the CLI's so that every resolution of its
// day of history lies within the pass's 1d window. `npm run bench` runs it (part `resolved`); alone:
// `npm run build && BENCH_ONLY=resolved node --import tsx bench/run.ts` (RESOLVED_ALERTS=n for another size).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../src/core/clock.js';
import { startSimulator, type Simulator } from '../src/simulator/index.js';
import { runMeasured } from './measured.js';

type Check = (name: string, target: string, measured: string, ok: boolean) => void;
interface Sample { name: string; labels: Record<string, string>; value: number }

const CLI = new URL('../dist/cli.js', import.meta.url).pathname;
const KEY = 'sim-bench-key-0123456789abcdef';
const WANTED = Number(process.env.RESOLVED_ALERTS ?? 1_000_000);
const PEAK_RSS_MB = 128;
/** Resolved alerts a day per alert open at a time: the simulated portal's alerts live 38 h on average. */
const RESOLVED_PER_OPEN_A_DAY = 24 / 38;
const WINDOWS = [['1d', 86_400], ['7d', 7 * 86_400], ['30d', 30 * 86_400]] as const;
/** The default SLAs (POSTURE_ALERT_SLAS). */
const SLAS: Record<string, number> = { red: 86_400, amber: 7 * 86_400, green: 30 * 86_400 };

/** An API timestamp as Unix seconds, read here on its own: null when unset (year 1). */
function seconds(ts: string): number | null {
  if (ts.startsWith('0001-')) return null;
  return Date.parse(`${ts.slice(0, 19)}Z`) / 1000 + Number(`0.${ts.slice(20)}`);
}

const severityOf = (state: string) => {
  const s = state.trim().toLowerCase();
  return s === 'red' || s === 'amber' || s === 'green' ? s : 'unknown';
};

/** The figures of one severity and window, from its durations sorted ascending. */
function figures(resolved: number, sorted: Float64Array, sla: number) {
  const n = sorted.length;
  const nth = (q: number) => sorted[Math.max(1, Math.ceil(q * n - 1e-9)) - 1]!;
  let sum = 0;
  for (const d of sorted) sum += d;
  return { resolved, count: n, p50: n ? nth(0.5) : undefined, p90: n ? nth(0.9) : undefined, mean: n ? sum / n : undefined, overSla: sorted.filter((d) => d > sla).length };
}

/** The pass's figures as `once --format json` prints them (the summary's names, or the gauges' that replace them). */
function read(samples: readonly Sample[], severity: string, window: string) {
  const get = (name: string, more: Record<string, string> = {}) => samples.find((s) => s.name === name && s.labels.severity === severity && s.labels.window === window && Object.entries(more).every(([k, v]) => s.labels[k] === v))?.value;
  const base = 'posture_alerts_time_to_resolve_seconds';
  const count = get(`${base}_count`) ?? get('posture_alerts_time_to_resolve_alerts');
  const sum = get(`${base}_sum`);
  return {
    resolved: get('posture_alerts_resolved'),
    count,
    p50: get(base, { quantile: '0.5' }) ?? get(base, { percentile: '50' }),
    p90: get(base, { quantile: '0.9' }) ?? get(base, { percentile: '90' }),
    mean: get('posture_alerts_time_to_resolve_mean_seconds') ?? (sum !== undefined && count ? sum / count : undefined),
    overSla: get('posture_alerts_resolved_over_sla'),
  };
}

/** Whether two durations are one (the same timestamps read by two parsers), to a microsecond. */
const same = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? a === b : Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)));

/** Every mismatch of the pass's figures against the portal's records, as `severity window field: got, want`. */
function mismatches(sim: Simulator, samples: readonly Sample[], nowSeconds: number): { wrong: string[]; resolved: number } {
  const durations = new Map<string, number[]>();
  const counted = new Map<string, number>();
  let resolved = 0;
  for (const a of sim.data().alerts()) {
    if (!a.resolved) continue;
    resolved++;
    const done = seconds(a.resolvedTime);
    const created = seconds(a.timestamp);
    if (done === null) continue;
    for (const [w, s] of WINDOWS) {
      if (!(done > nowSeconds - s)) continue;
      const key = `${severityOf(a.state)} ${w}`;
      counted.set(key, (counted.get(key) ?? 0) + 1);
      if (created === null || done < created) continue;
      let list = durations.get(key);
      if (!list) durations.set(key, (list = []));
      list.push(done - created);
    }
  }
  const wrong: string[] = [];
  for (const severity of ['red', 'amber', 'green']) {
    for (const [w] of WINDOWS) {
      const key = `${severity} ${w}`;
      const want = figures(counted.get(key) ?? 0, Float64Array.from(durations.get(key) ?? []).sort(), SLAS[severity]!);
      const got = read(samples, severity, w);
      for (const field of ['resolved', 'count', 'overSla'] as const) if (got[field] !== want[field]) wrong.push(`${key} ${field}: ${got[field]}, want ${want[field]}`);
      for (const field of ['p50', 'p90', 'mean'] as const) if (!same(got[field], want[field])) wrong.push(`${key} ${field}: ${got[field]}, want ${want[field]}`);
    }
  }
  return { wrong, resolved };
}

/** Peak RSS and exactness of a first `once` whose pass reads WANTED resolved alerts, all within the last day. */
export async function resolvedBench(check: Check, cli = CLI): Promise<void> {
  // The portal's data stands at its clock, 10 minutes ahead of the CLI's: its day of history all lies within the pass's 1d window.
  const clock = new FakeClock(Date.now() + 10 * 60_000);
  const sim = await startSimulator({ clock, keys: [{ key: KEY }], rateLimit: false, moving: false, alerts: Math.ceil((1.02 * WANTED) / RESOLVED_PER_OPEN_A_DAY), devices: 1_000, seed: 3, resolvedHistoryDays: 1 });
  const stateDir = mkdtempSync(join(tmpdir(), 'bench-resolved-'));
  try {
    const run = await runMeasured([cli, 'once', '--format', 'json'], { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_STATE_DIR: stateDir, POSTURE_LOG_LEVEL: 'warn' });
    const peakMb = run.peakRssKb / 1024;
    const cpuS = run.cpuUs / 1e6;
    if (run.code !== 0) process.stderr.write(run.stderr.slice(-2000));
    const samples = run.code === 0 ? (JSON.parse(run.stdout) as { samples: Sample[] }).samples : [];
    // The pass's windows end at its start: its end less its duration.
    const value = (name: string) => samples.find((s) => s.name === name && s.labels.source === 'resolved')?.value ?? NaN;
    const startedAt = value('posture_collection_last_success_timestamp_seconds') - value('posture_collection_duration_seconds');
    const { wrong, resolved } = mismatches(sim, samples, startedAt);
    const oneDay = ['red', 'amber', 'green'].reduce((n, s) => n + (read(samples, s, '1d').resolved ?? 0), 0);
    console.log(`\nThe resolved-alerts pass: ${resolved.toLocaleString('en')} resolved alerts, ${oneDay.toLocaleString('en')} of them counted in 1d; peak RSS ${peakMb.toFixed(1)} MB, CPU ${cpuS.toFixed(2)} s${wrong.length ? `; wrong: ${wrong.slice(0, 5).join('; ')}` : ''}\n`);
    check('resolved alerts: exit code of once', '0', String(run.code), run.code === 0);
    check(`resolved alerts: ${WANTED.toLocaleString('en')} in the portal, all in the 1d window`, `≥ ${WANTED.toLocaleString('en')}, all in 1d`, `${resolved.toLocaleString('en')}, ${oneDay.toLocaleString('en')} in 1d`, resolved >= WANTED && oneDay === resolved);
    check('resolved alerts: every figure exact (count, p50, p90, mean, over SLA per severity and window)', 'exact', wrong.length ? `${wrong.length} wrong` : 'exact', run.code === 0 && wrong.length === 0);
    check('resolved alerts: peak RSS of once', `≤ ${PEAK_RSS_MB} MB`, `${peakMb.toFixed(1)} MB`, peakMb <= PEAK_RSS_MB);
    check('resolved alerts: CPU of once, per thousand resolved alerts', '(reported)', `${((cpuS * 1e6) / resolved).toFixed(2)} ms`, true);
  } finally {
    await sim.close();
    rmSync(stateDir, { recursive: true, force: true });
  }
}
