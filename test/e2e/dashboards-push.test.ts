/**
 * The shipped dashboards in push mode: a real Prometheus (remote-write receiver on) fed at the
 * Lambda's cadence, and every panel and variable query of the committed dashboard JSON run against
 * it, range query by range query, between the resolved-alerts pass's runs.
 *
 * The Lambda handler runs in this process on a FakeClock that starts three hours ago, invoked every
 * 5 minutes of its time against the simulated portal on that clock: each invocation pushes the live
 * sources and every interval gauge, and the hourly pass's families only when it makes a pass (three
 * times). Prometheus takes those samples at their past timestamps in time order (it neither scrapes
 * nor evaluates rules, so nothing writes at the real now). No real hour passes.
 *
 * A panel shows data between passes when every series it draws is there from the start of the
 * checked span to its end with no gap longer than a time series spans (15 min, SPAN_NULLS_MS): a
 * raw query of the pass's families, which come once an hour, has gaps of 55 minutes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPAN_NULLS_MS } from '../../infra/grafana/src/common.js';
import { dashboardQueries, metricNames, substituteVariables, unresolvedVariables, type DashboardQuery } from '../../infra/grafana/src/queries.js';
import { FakeClock } from '../../src/core/clock.js';
import { createHandler, type InvocationSummary } from '../../src/runtime/lambda.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { loadRuleExpressions } from '../infra/support.js';
import { readingQueries } from '../metrics/reading.js';
import { queryPrometheusApi, startPrometheus, type Peer } from '../support/peers.js';

const PORTAL = 'dash';
const TAG = 'laptops';
const KEY = 'sim-dashboards-push-0123456789abcdef';
const DASHBOARD_DIR = new URL('../../infra/grafana/dashboards/', import.meta.url).pathname;
const MINUTE = 60_000;
/** The Lambda's schedule (serverless.yml's default rate). */
const EVERY = 5 * MINUTE;
/** Invocations: 2 h 55 min of pushes, under the 3 h a Prometheus head holds before it compacts. */
const INVOCATIONS = 36;
/** The step of the range queries, as a dashboard of a few hours draws them. */
const STEP_S = 60;

/** Panels that compare with a day earlier: three hours of pushes have no day before them. */
const NEEDS_A_DAY = new Set(['posture-overview / Health ratio change against 24 hours earlier']);

const key = (q: DashboardQuery) => `${q.dashboard} / ${q.source}`;

function committedDashboards(): DashboardQuery[] {
  return readdirSync(DASHBOARD_DIR).filter((f) => f.endsWith('.json')).sort().flatMap((f) => dashboardQueries(JSON.parse(readFileSync(join(DASHBOARD_DIR, f), 'utf8'))));
}

/** Series recorded by the shipped rules: this Prometheus evaluates no rules. */
const RECORDED = new Set(loadRuleExpressions().filter((r) => r.kind === 'record').map((r) => r.name));
const readsRecordings = (q: DashboardQuery) => metricNames(q.expr).some((n) => RECORDED.has(n));

type Matrix = Array<{ metric: Record<string, string>; values: Array<[number, string]> }>;

/** A range query through `/api/v1/query_range`, from `start` to `end` (Unix s) every STEP_S. */
async function queryRange(baseUrl: string, promql: string, start: number, end: number): Promise<Matrix> {
  const params = new URLSearchParams({ query: promql, start: String(start), end: String(end), step: String(STEP_S) });
  const res = await fetch(`${baseUrl}/api/v1/query_range?${params.toString()}`);
  const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: Matrix } };
  if (body.status !== 'success' || body.data?.resultType !== 'matrix') throw new Error(`query_range ${promql}: ${body.error ?? JSON.stringify(body).slice(0, 200)}`);
  return body.data.result;
}

/** What is wrong with a series drawn from `start` to `end`: a late start, an early end, or a gap longer than SPAN_NULLS_MS (nothing: ''). */
function gapsOf(times: readonly number[], start: number, end: number): string {
  const span = SPAN_NULLS_MS / 1000;
  const problems: string[] = [];
  if (times.length === 0) return 'no point';
  if (times[0]! - start > span) problems.push(`starts ${times[0]! - start} s late`);
  if (end - times.at(-1)! > span) problems.push(`ends ${end - times.at(-1)!} s early`);
  for (let i = 1; i < times.length; i++) if (times[i]! - times[i - 1]! > span) problems.push(`a gap of ${times[i]! - times[i - 1]!} s at ${times[i - 1]! - start} s`);
  return problems.join(', ');
}

let sim: Simulator;
let prom: Peer;
/** The pass's times (Unix s, as pushed), and the span checked: from the first push to the last. */
const passes: number[] = [];
let start = 0;
let end = 0;

beforeAll(async () => {
  prom = await startPrometheus({ config: 'global:\n  scrape_interval: 1m\n', extraArgs: ['--web.enable-remote-write-receiver'] });
  const clock = new FakeClock(Math.floor(Date.now() / MINUTE) * MINUTE - INVOCATIONS * EVERY - 5 * MINUTE, { autoAdvance: true });
  sim = await startSimulator({ clock, keys: [{ key: KEY }], devices: 300, alerts: 100, integrations: 8, seed: 7 });
  const handler = createHandler({
    clock,
    env: {
      POSTURE_BASE_URL: sim.baseUrl,
      POSTURE_API_KEY: KEY,
      POSTURE_PORTAL: PORTAL,
      POSTURE_VITALS_TAGS: TAG,
      POSTURE_PUSH: 'remote_write',
      POSTURE_REMOTE_WRITE_URL: `${prom.url}/api/v1/write`,
    },
    write: () => {},
  });
  const first = clock.now();
  for (let i = 0; i < INVOCATIONS; i++) {
    clock.set(first + i * EVERY);
    const summary = await handler({}, { awsRequestId: `push-${i}`, getRemainingTimeInMillis: () => 4 * MINUTE });
    const [{ sources }] = summary.portals as [InvocationSummary['portals'][number]];
    expect({ sources, sinks: summary.sinks.map((x) => x.ok) }).toEqual({ sources: expect.objectContaining({ vitals: 'ok', alerts: 'ok', devices: 'ok' }) as unknown, sinks: [true] });
    if (sources.resolved !== undefined) {
      expect(sources.resolved).toBe('ok');
      passes.push(clock.now() / 1000);
    }
  }
  start = first / 1000 + STEP_S;
  end = clock.now() / 1000;
}, 120_000);

afterAll(async () => {
  await prom?.stop();
  await sim?.close();
});

describe('the shipped dashboards in push mode, fed by remote write at the Lambda\'s cadence', () => {
  const queries = committedDashboards().filter((q) => q.kind !== 'annotation');

  it('made the hourly pass three times, so its samples came once an hour', async () => {
    expect(passes).toHaveLength(3);
    expect(passes[1]! - passes[0]!).toBeGreaterThanOrEqual(59 * 60);
    // The raw families of the pass have the gaps a panel must bridge, and the live sources' none.
    const raw = await queryRange(prom.url, `posture_alerts_resolved{portal="${PORTAL}",severity="red",window="7d"}`, start, end);
    expect(gapsOf(raw[0]!.values.map(([t]) => t), start, end)).toMatch(/a gap of \d+ s/);
    const live = await queryRange(prom.url, `posture_alerts_open{portal="${PORTAL}",severity="red"}`, start, end);
    expect(gapsOf(live[0]!.values.map(([t]) => t), start, end)).toBe('');
  });

  it('leaves out only what it must: the panels of recorded series (objectives, and the Access row\'s three that show what its rules record) and the day-old comparison', () => {
    const recorded = queries.filter(readsRecordings);
    expect(new Set(recorded.map((q) => q.dashboard))).toEqual(new Set(['posture-objectives', 'posture-overview']));
    expect(new Set(recorded.filter((q) => q.dashboard === 'posture-overview').map((q) => q.source))).toEqual(new Set(['Privileged accounts without MFA or SSO', 'Enabled superAdmins', 'Directory users inactive']));
    const panels = new Set(queries.map(key));
    for (const listed of NEEDS_A_DAY) expect(panels).toContain(listed);
  });

  it.each<{ name: string; values: Record<string, string> }>([
    { name: 'all portals, whole portal (the defaults)', values: {} },
    { name: `portal ${PORTAL}, tag ${TAG}`, values: { portal: PORTAL, tag: TAG } },
  ])('draws every series of every panel and variable without a gap between passes ($name)', async ({ values }) => {
    const problems: string[] = [];
    let ran = 0;
    for (const q of queries) {
      if (readsRecordings(q) || NEEDS_A_DAY.has(key(q))) continue;
      const promql = substituteVariables(q.expr, values);
      expect(unresolvedVariables(promql), `${key(q)} ${q.refId}`).toEqual([]);
      const series = await queryRange(prom.url, promql, start, end);
      ran++;
      if (series.length === 0) problems.push(`${key(q)} ${q.refId}: no data: ${promql}`);
      for (const s of series) {
        const wrong = gapsOf(s.values.map(([t]) => t), start, end);
        if (wrong) problems.push(`${key(q)} ${q.refId} ${JSON.stringify(s.metric)}: ${wrong}`);
      }
    }
    expect(problems).toEqual([]);
    expect(ran).toBeGreaterThan(30);
  });

  it('runs every query of docs/metrics.md\'s "Reading each family", each with data unless it is a filter or reads a counter (serve only)', async () => {
    const queries = readingQueries(readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8'));
    expect(queries.size).toBeGreaterThan(30);
    const empty: string[] = [];
    // Between passes: ten minutes before the last push, well after the last pass.
    for (const [family, promql] of queries) {
      const rows = await queryPrometheusApi(prom.url, promql, end - 10 * 60);
      const filter = /(== 0|> [01]|< on \(portal\) .*)$/.test(promql);
      if (rows.length === 0 && !filter && !/_total\b/.test(promql)) empty.push(`${family}: ${promql}`);
    }
    expect(empty).toEqual([]);
  });

  it('shows the last pass\'s figures between passes, as pushed', async () => {
    const between = end - 10 * 60;
    const last = passes.filter((t) => t <= between).at(-1)!;
    expect(between - last).toBeGreaterThan(15 * 60);
    const panel = (title: string, refId: string) => substituteVariables(queries.find((q) => q.source === title && q.refId === refId)!.expr);
    const p50 = await queryPrometheusApi(prom.url, panel('Time to resolve, last 7 days: p50 and p90', 'A'), between);
    const pushed = await queryPrometheusApi(prom.url, `posture_alerts_time_to_resolve_seconds{portal="${PORTAL}",window="7d",percentile="50"}`, last);
    expect(pushed.length).toBeGreaterThan(0);
    expect(new Map(p50.map((r) => [r.metric.severity, r.value[1]]))).toEqual(new Map(pushed.map((r) => [r.metric.severity, r.value[1]])));
    // And the raw family alone shows nothing there: its last sample is older than the 5-minute lookback.
    expect(await queryPrometheusApi(prom.url, `posture_alerts_time_to_resolve_seconds{portal="${PORTAL}"}`, between)).toEqual([]);
  });
});
