/**
 * The shipped dashboards against a real Prometheus scraping a healthy exporter: Debian's
 * Prometheus 2.42 (which negotiates OpenMetrics) and Prometheus 3 (built from its Go module,
 * scripts/ensure-tools.sh) once in each exposition format, OpenMetrics and the Prometheus text
 * format, each with 1 s scrapes and rule evaluations and the shipped rules unmodified, scrape the
 * built CLI's `serve` against the simulated portal, and every panel and variable query of the
 * committed dashboard JSON, its Grafana variables substituted, must return at least one series. A
 * healthy exporter's panels show values, never "No data" (a count that is 0 shows 0). Prometheus
 * 3's metadata API must give each family the catalogue's type and help.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardQueries, substituteVariables, unresolvedVariables, type DashboardQuery } from '../../infra/grafana/src/queries.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import { ruleFiles } from '../infra/support.js';
import { BUILT_CLI, runBuiltCli, withOwnState } from '../support/cli.js';
import { goTool } from '../support/go-tools.js';
import { freePort, queryPrometheusApi, startPrometheus, type Peer, type PrometheusVersion } from '../support/peers.js';
import { until } from '../support/processes.js';

const PORTAL = 'dash';
const TAG = 'laptops';
const KEY = 'sim-dashboards-e2e-0123456789abcdef';
const SIM = { devices: 300, alerts: 100, integrations: 8, seed: 7 } as const;
const DASHBOARD_DIR = new URL('../../infra/grafana/dashboards/', import.meta.url).pathname;

/**
 * Panels that a pull-mode Prometheus (scraping `serve`) cannot fill, with the reason. Every other
 * panel must return data; a panel listed here that no dashboard has any more fails the test.
 */
const PUSH_ONLY: Readonly<Record<string, string>> = {
  'posture-exporter-health / Push success per sink (push mode)': 'posture_push_success is sent only with pushes (Lambda, once --push); serve never pushes',
  'posture-exporter-health / Push duration per sink (push mode)': 'posture_push_duration_seconds is sent only with pushes (Lambda, once --push); serve never pushes',
};

/** Panels that compare with a day earlier; the test gives Prometheus that day (see seedDayOld). */
const NEEDS_A_DAY = new Set(['posture-overview / Health ratio change against 24 hours earlier']);

function committedDashboards(): DashboardQuery[] {
  const files = readdirSync(DASHBOARD_DIR).filter((f) => f.endsWith('.json')).sort();
  expect(files.length).toBeGreaterThanOrEqual(2);
  return files.flatMap((f) => dashboardQueries(JSON.parse(readFileSync(join(DASHBOARD_DIR, f), 'utf8'))));
}

const serveSaid = () => `serve said:\n${serveLog.slice(-2000)}`;
const key = (q: DashboardQuery) => `${q.dashboard} / ${q.source}`;

/** The Prometheus servers that scrape `serve`: each its own data directory, seeded with the same day. */
const SCRAPERS: ReadonlyArray<{ name: string; version: PrometheusVersion; protocols?: readonly string[] }> = [
  { name: 'Prometheus 2.42 (OpenMetrics negotiated)', version: 2 },
  { name: 'Prometheus 3, OpenMetrics', version: 3, protocols: ['OpenMetricsText1.0.0'] },
  { name: 'Prometheus 3, Prometheus text format 0.0.4', version: 3, protocols: ['PrometheusText0.0.4'] },
];

let sim: Simulator;
const proms = new Map<string, Peer>();
let serve: ChildProcess | undefined;
let serveLog = '';
let work: string;

/**
 * A Prometheus that has scraped the exporter for a day holds yesterday's samples; a fresh one does
 * not. So the exporter's own output (`once --format openmetrics` against a twin of the portal, so
 * the live portal's budget is untouched) is stamped every 30 s from 24 h 30 min to 23 h 30 min ago
 * and loaded with each version's `promtool tsdb create-blocks-from openmetrics` into each data
 * directory before its Prometheus starts. Nothing of it falls within the last hour, which every
 * other panel reads.
 */
async function seedDayOld(dataDirs: ReadonlyArray<{ dir: string; version: PrometheusVersion }>): Promise<void> {
  const twin = await startSimulator({ keys: [{ key: KEY }], ...SIM });
  try {
    const once = await runBuiltCli(['once', '--format', 'openmetrics'], {
      POSTURE_BASE_URL: twin.baseUrl,
      POSTURE_API_KEY: KEY,
      POSTURE_PORTAL: PORTAL,
      POSTURE_VITALS_TAGS: TAG,
      POSTURE_REQUESTS_PER_MINUTE: '10',
    });
    expect(once.stderr.split('\n').filter((l) => l.includes('"level":"error"'))).toEqual([]);
    expect(once.code).toBe(0);
    const now = Math.floor(Date.now() / 1000);
    const stamps: number[] = [];
    for (let t = now - 24 * 3600 - 1800; t <= now - 23 * 3600 - 1800; t += 30) stamps.push(t);
    const out: string[] = [];
    for (const line of once.stdout.split('\n')) {
      if (line === '' || line === '# EOF') continue;
      if (line.startsWith('#')) out.push(line);
      else for (const t of stamps) out.push(`${line} ${t}`);
    }
    out.push('# EOF', '');
    const file = join(work, 'day-old.om');
    writeFileSync(file, out.join('\n'));
    for (const { dir, version } of dataDirs) {
      const r = spawnSync(version === 3 ? goTool('promtool3') : 'promtool', ['tsdb', 'create-blocks-from', 'openmetrics', file, dir], { encoding: 'utf8' });
      expect(r.stderr + r.stdout).not.toMatch(/error/i);
      expect(r.status).toBe(0);
    }
  } finally {
    await twin.close();
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'dashboards-e2e-'));
  const dataDirs = SCRAPERS.map((s, i) => ({ dir: join(work, `tsdb-${i}`), version: s.version }));
  await seedDayOld(dataDirs);

  // The portal keeps its real rate limit: a healthy exporter stays within it, so no 429 arrives.
  sim = await startSimulator({ keys: [{ key: KEY }], ...SIM });
  const port = await freePort();
  const rules = ruleFiles();
  expect(rules.length).toBeGreaterThan(0);
  const rulesFiles = Object.fromEntries(rules.map((f) => [f.split('/').pop()!, readFileSync(f, 'utf8')]));
  const started = await Promise.all(
    SCRAPERS.map((scraper, i) =>
      startPrometheus({
        version: scraper.version,
        config: [
          'global:',
          '  scrape_interval: 1s',
          '  evaluation_interval: 1s',
          `rule_files: [${Object.keys(rulesFiles).join(', ')}]`,
          'scrape_configs:',
          '  - job_name: posture-exporter',
          ...(scraper.protocols ? [`    scrape_protocols: [${scraper.protocols.join(', ')}]`] : []),
          '    static_configs:',
          `      - targets: ['127.0.0.1:${port}']`,
          '',
        ].join('\n'),
        rulesFiles,
        storagePath: dataDirs[i]!.dir,
      }),
    ),
  );
  SCRAPERS.forEach((scraper, i) => proms.set(scraper.name, started[i]!));

  // The smallest interval check-config accepts for 5 requests per run at the whole share beside the
  // resolved-alerts pass's hourly request (every 30 s is the share exactly, which falls behind minute
  // by minute and leaves no room for the pass: docs/budget.md).
  serve = spawn(process.execPath, [BUILT_CLI, 'serve'], {
    env: withOwnState({
      PATH: process.env.PATH,
      POSTURE_BASE_URL: sim.baseUrl,
      POSTURE_API_KEY: KEY,
      POSTURE_PORTAL: PORTAL,
      POSTURE_VITALS_TAGS: TAG,
      POSTURE_REQUESTS_PER_MINUTE: '10',
      POSTURE_INTERVAL_SECONDS: '40',
      POSTURE_LISTEN: `127.0.0.1:${port}`,
    }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  serve.stderr!.setEncoding('utf8').on('data', (d: string) => (serveLog += d));

  for (const [name, prom] of proms) {
    await until(`${name} to scrape a successful collection of every source and of each slow one (the resolved-alerts pass, access, directory)`, async () => {
      const rows = await queryPrometheusApi(prom.url, `posture_collection_success{portal="${PORTAL}"} == 1`);
      return rows.length === 6 ? rows : undefined;
    }, 30_000, serveSaid);
    // A couple more scrapes and rule evaluations after the first complete one.
    const after = Date.now() / 1000 + 2.5;
    await until(`two rule evaluations of ${name} after the first complete scrape`, async () => {
      const body = (await (await fetch(`${prom.url}/api/v1/rules`)).json()) as { data: { groups: Array<{ lastEvaluation: string }> } };
      return body.data.groups.length > 0 && body.data.groups.every((g) => Date.parse(g.lastEvaluation) / 1000 > after) ? true : undefined;
    }, 15_000, serveSaid);
  }
}, 120_000);

afterAll(async () => {
  if (serve && serve.exitCode === null) {
    const exited = new Promise((r) => serve!.once('exit', r));
    serve.kill('SIGTERM');
    await exited;
  }
  await Promise.all([...proms.values()].map((p) => p.stop()));
  await sim?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the panels the test leaves out or seeds', () => {
  it('lists only push-only panels that the dashboards have', () => {
    const panels = new Set(committedDashboards().filter((q) => q.kind === 'panel').map(key));
    for (const listed of [...Object.keys(PUSH_ONLY), ...NEEDS_A_DAY]) expect(panels).toContain(listed);
  });
});

describe.each(SCRAPERS)('the shipped dashboards on a healthy serve, scraped by $name with the rules loaded', ({ name }) => {
  const prom = () => proms.get(name)!;
  const queries = committedDashboards();
  const variants = [
    { name: 'all portals, whole portal (the defaults)', values: {} },
    { name: `portal ${PORTAL}, tag ${TAG}`, values: { portal: PORTAL, tag: TAG } },
  ] as const;

  it.each(variants)('shows data in every pull-mode panel and variable ($name)', async ({ values }) => {
    const empty: string[] = [];
    let ran = 0;
    for (const q of queries) {
      // Annotations mark firing alerts: a healthy portal has none to mark.
      if (q.kind === 'annotation' || Object.hasOwn(PUSH_ONLY, key(q))) continue;
      const promql = substituteVariables(q.expr, values);
      expect(unresolvedVariables(promql), `${key(q)} ${q.refId}`).toEqual([]);
      const rows = await queryPrometheusApi(prom().url, promql);
      ran++;
      if (rows.length === 0) empty.push(`${key(q)} ${q.refId}: ${promql}`);
    }
    expect(empty).toEqual([]);
    expect(ran).toBeGreaterThan(30);
  });

  it('shows 0, not "No data", for the 429 panels of an exporter the portal never rate-limited', async () => {
    expect(sim.requests.filter((r) => r.status === 429)).toEqual([]);
    for (const title of ['Rate-limited requests (429) per run', '429s in the time range']) {
      const q = queries.find((x) => x.dashboard === 'posture-exporter-health' && x.source === title);
      expect(q, title).toBeDefined();
      const rows = await queryPrometheusApi(prom().url, substituteVariables(q!.expr, { portal: PORTAL }));
      expect(rows.length, title).toBeGreaterThan(0);
      for (const row of rows) expect(row.value[1], title).toBe('0');
    }
  });

  it('draws the objectives\' SLI and burn rates as the recorded error ratios and the target say', async () => {
    // A moment ago, so every recording read comes from one finished evaluation of the objective's group.
    const at = Date.now() / 1000 - 3;
    const expr = (source: string, refId: string) => substituteVariables(queries.find((q) => q.dashboard === 'posture-objectives' && q.source === source && q.refId === refId)!.expr);
    const byIntegration = async (promql: string) => new Map((await queryPrometheusApi(prom().url, promql, at)).map((r) => [`${r.metric.portal} · ${r.metric.integration}`, Number(r.value[1])]));
    const target = await queryPrometheusApi(prom().url, expr('Compliance over the objective\'s window', 'B'), at);
    expect(target.map((r) => [r.metric.objective, Number(r.value[1])])).toEqual([['configuration', 0.95]]);
    // The SLI comes from the budget left and the target; the 28d error ratio is recorded directly.
    const sli = await byIntegration(expr('Compliance over the objective\'s window', 'A'));
    const direct = await byIntegration('1 - posture:objective_error_ratio:rate28d{objective="configuration"}');
    expect(sli.size).toBeGreaterThan(0);
    expect([...sli.keys()].sort()).toEqual([...direct.keys()].sort());
    for (const [k, v] of sli) expect(v, k).toBeCloseTo(direct.get(k)!, 9);
    const burn = await byIntegration(expr('Burn rate over the alert windows', 'A'));
    const ratio = await byIntegration('posture:objective_error_ratio:rate1h{objective="configuration"}');
    expect([...burn.keys()].sort()).toEqual([...ratio.keys()].sort());
    for (const [k, v] of burn) expect(v, k).toBeCloseTo(ratio.get(k)! / 0.05, 9);
  });

  it('still leaves the push-only panels empty in pull mode (their reason holds)', async () => {
    for (const q of queries.filter((x) => Object.hasOwn(PUSH_ONLY, key(x)))) {
      expect(await queryPrometheusApi(prom().url, substituteVariables(q.expr)), key(q)).toEqual([]);
    }
  });
});

/** Families serve never has: the push outcome goes out with pushes only (Lambda, once --push). */
const NOT_SERVED = new Set(['posture_push_success', 'posture_push_duration_seconds']);

describe.each(SCRAPERS.filter((s) => s.version === 3))('the metadata $name keeps of serve\'s families', ({ name, protocols }) => {
  it('gives every family the catalogue\'s type and help', async () => {
    const body = (await (await fetch(`${proms.get(name)!.url}/api/v1/metadata`)).json()) as { data: Record<string, Array<{ type: string; help: string; unit: string }>> };
    const openMetrics = protocols!.some((p) => p.startsWith('OpenMetrics'));
    const expected: Record<string, Array<{ type: string; help: string; unit: string }>> = {};
    for (const def of CATALOGUE.filter((m) => !NOT_SERVED.has(m.name))) {
      // OpenMetrics names a counter's family without the `_total` its samples carry.
      const family = openMetrics && def.type === 'counter' ? def.name.replace(/_total$/, '') : def.name;
      expected[family] = [{ type: def.type, help: def.help, unit: '' }];
    }
    const posture = Object.fromEntries(Object.entries(body.data).filter(([k]) => k.startsWith('posture_')));
    expect(posture).toEqual(expected);
  });
});
