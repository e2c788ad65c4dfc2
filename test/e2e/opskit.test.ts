/**
 * The operations kit against a real Prometheus: Debian's Prometheus scrapes the exporter (in-process
 * `serve`) on a moving simulated portal; every PromQL expression of the dashboards and of the rules
 * runs through `/api/v1/query`; a Vitals regression injected in the portal makes
 * PostureVitalsHealthRegression's expression (with shortened windows) true.
 *
 * No test depends on another's order: the regression goes into a second portal (its own simulator
 * and exporter, scraped by the same Prometheus) that no other test reads, so the dashboard tests
 * compare the first portal's unchanged data whether they run before or after it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDashboardQueries, substituteVariables, unresolvedVariables, type DashboardQuery } from '../../infra/grafana/src/queries.js';
import { loadConfig } from '../../src/config/load.js';
import { systemClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { startServe, type ServeHandle } from '../../src/runtime/serve.js';
import { startSimulator, type Simulator, type VitalsRecord } from '../../src/simulator/index.js';
import { loadRuleExpressions, ruleFiles, type RuleExpression } from '../infra/support.js';
import { freePort, queryPrometheusApi, startPrometheus, type Peer } from '../support/peers.js';
import { until } from '../support/processes.js';

const PORTAL = 'opskit';
/** The portal the regression test injects its regression into, and only it. */
const REGRESSED = 'opskit-regression';
const TAG = 'laptops';
const KEY = 'sim-opskit-e2e-0123456789abcdef';
const REGRESSED_KEY = 'sim-opskit-e2e-regression-0123456789';
const DEVICES = 300;

/**
 * The regression test cannot wait 24 h and 30 min, so Prometheus loads a copy of the rules with
 * every window token replaced (whole tokens only: `last15m`, `change24h` and other rule names keep
 * their text): `24h` (the "earlier" of the comparisons) → 10s, `30m` (the alerts' `for`) → 3s,
 * `15m` (the push-gap bridge of the level recordings, and PostureRedAlertsOpen's window) → 5s.
 * Thresholds, `1h`, `1d` and the rule names stay as shipped. Once the regressed value is scraped,
 * the shortened expression holds until "10 s earlier" reaches it too: about 10 s, enough for the
 * 3 s `for` at a 1 s evaluation interval.
 */
const SHORTENED: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b24h\b/g, '10s'],
  [/\b30m\b/g, '3s'],
  [/\b15m\b/g, '5s'],
];

function shortenRules(text: string): string {
  let out = text;
  for (const [token, replacement] of SHORTENED) {
    const before = out;
    out = out.replace(token, replacement);
    // A rule file without the token would silently test the shipped windows.
    if (out === before) throw new Error(`the rules no longer contain ${String(token)}: update the substitution in test/e2e/opskit.test.ts`);
  }
  return out;
}

let sim: Simulator;
let regressedSim: Simulator;
let prom: Peer;
let serves: ServeHandle[] = [];
/** The rules as Prometheus loaded them (shortened windows). */
let shortenedRules: RuleExpression[];
let shortenedDir: string | undefined;
const logger = memoryLogger({ secrets: [KEY, REGRESSED_KEY] });

const query = (promql: string) => queryPrometheusApi(prom.url, promql);

beforeAll(async () => {
  // Data moves with the wall clock (no rate limit: the exporter's own limiter is the budget).
  sim = await startSimulator({ keys: [{ key: KEY }], devices: DEVICES, alerts: 100, integrations: 8, rateLimit: false });
  regressedSim = await startSimulator({ seed: 2, keys: [{ key: REGRESSED_KEY }], devices: DEVICES, alerts: 100, integrations: 8, rateLimit: false });
  const port = await freePort();
  const regressedPort = await freePort();
  // The portal rules only: the sharding rules (posture-shards.rules.yml) need shard gauges this run has not.
  const portalRules = ruleFiles().filter((f) => f.endsWith('/posture.rules.yml'));
  expect(portalRules).toHaveLength(1);
  const rules = shortenRules(readFileSync(portalRules[0]!, 'utf8'));
  shortenedDir = mkdtempSync(join(tmpdir(), 'opskit-rules-'));
  writeFileSync(join(shortenedDir, 'posture.rules.yml'), rules);
  shortenedRules = loadRuleExpressions([join(shortenedDir, 'posture.rules.yml')]);
  prom = await startPrometheus({
    config: [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'rule_files: [posture.rules.yml]',
      'scrape_configs:',
      '  - job_name: posture-exporter',
      '    static_configs:',
      `      - targets: ['127.0.0.1:${port}', '127.0.0.1:${regressedPort}']`,
      '',
    ].join('\n'),
    rulesFiles: { 'posture.rules.yml': rules },
  });
  // serve collects every source every 40 s at a share of 10, a plan check-config accepts (every source at once, the
  // busiest 60 s 10 of 10), so every run succeeds: a cycle is 5 requests (Vitals whole + tag, 2 device totals, 1 alerts
  // page), and the slow sources' 5 (the resolved-alerts pass 1, access 3, directory 1, each below the live sources)
  // fill the first window; the second cycle, due at +40 s, sends as the first window's requests leave it (about
  // +62 s), 10 s and more before its deadline at +80 s. Until then the counters hold the first cycle's requests.
  // The long staleness keeps the last values served while a cycle waits for the window.
  const configOf = (portal: Simulator, key: string, name: string, listen: number) =>
    loadConfig({
      env: {
        POSTURE_BASE_URL: portal.baseUrl,
        POSTURE_API_KEY: key,
        POSTURE_PORTAL: name,
        POSTURE_VITALS_TAGS: TAG,
        POSTURE_INTERVAL_SECONDS: '40',
        POSTURE_REQUESTS_PER_MINUTE: '10',
        POSTURE_MAX_STALENESS_SECONDS: '600',
        POSTURE_LISTEN: `127.0.0.1:${listen}`,
      },
    });
  serves = await Promise.all([
    startServe(configOf(sim, KEY, PORTAL, port), { clock: systemClock, logger }),
    startServe(configOf(regressedSim, REGRESSED_KEY, REGRESSED, regressedPort), { clock: systemClock, logger }),
  ]);
  await Promise.all(serves.map((s) => s.nextCycle()));
  // Every source of both portals: the 3 live ones and the 3 slow ones each.
  await until('Prometheus to scrape the first collection of both portals', async () => {
    const rows = await query(`posture_collection_success{portal=~"${PORTAL}|${REGRESSED}"} == 1`);
    return rows.length === 12 ? rows : undefined;
  }, 20_000);
}, 60_000);

afterAll(async () => {
  regressedSim?.clearRegression();
  await Promise.all(serves.map((s) => s.stop()));
  await prom?.stop();
  await sim?.close();
  await regressedSim?.close();
  if (shortenedDir) rmSync(shortenedDir, { recursive: true, force: true });
});

/** Vitals-enabled integrations with eligible devices (those that have a health ratio). */
function withHealth(records: VitalsRecord[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of records) {
    if (r.vitalsEnabled && (r.agentDeployedPossibleCompliant ?? 0) > 0) out.set(r.key, r.configurationCompliant! / r.agentDeployedPossibleCompliant!);
  }
  return out;
}

function find(queries: DashboardQuery[], dashboard: string, title: string, refId = 'A'): DashboardQuery {
  const q = queries.find((x) => x.dashboard === dashboard && x.source === title && x.refId === refId);
  if (!q) throw new Error(`no panel "${title}" (${refId}) in dashboard ${dashboard}: update the key panels of this test`);
  return q;
}

describe('dashboards and rules against Prometheus fed by the exporter', () => {
  const queries = allDashboardQueries();
  const variants = [
    { name: 'whole portal', values: { portal: PORTAL }, tag: undefined },
    { name: `tag ${TAG}`, values: { portal: PORTAL, tag: TAG }, tag: TAG },
  ] as const;

  it.each(variants)('runs every dashboard query without an error ($name)', async ({ values }) => {
    expect(queries.length).toBeGreaterThan(20);
    const failures: string[] = [];
    for (const q of queries) {
      const promql = substituteVariables(q.expr, values);
      const left = unresolvedVariables(promql);
      if (left.length) {
        failures.push(`${q.dashboard} / ${q.source} ${q.refId}: unresolved ${left.join(', ')}`);
        continue;
      }
      await query(promql).catch((err: Error) => failures.push(`${q.dashboard} / ${q.source} ${q.refId}: ${err.message}`));
    }
    expect(failures).toEqual([]);
  });

  it.each(variants)('returns the portal\'s Vitals in the health and funnel panels ($name)', async ({ values, tag }) => {
    const run = (title: string, refId = 'A') => query(substituteVariables(find(queries, 'posture-overview', title, refId).expr, values));
    const expected = withHealth(sim.data().vitals(tag));
    expect(expected.size).toBeGreaterThan(2);

    const health = await run('Health ratio per integration');
    expect(new Set(health.map((r) => r.metric.integration))).toEqual(new Set(expected.keys()));
    for (const row of health) {
      expect(row.metric.portal).toBe(PORTAL);
      // The portal's noise moves the ratio a little between 5-minute buckets.
      expect(Number(row.value[1])).toBeCloseTo(expected.get(row.metric.integration!)!, 1);
    }

    // A to F: eligible and compliant at deployment, function, configuration.
    const funnel = await Promise.all(['A', 'B', 'C', 'D', 'E', 'F'].map((refId) => run('Funnel: $integration', refId)));
    const byIntegration = funnel.map((rows) => new Map(rows.map((r) => [r.metric.integration!, Number(r.value[1])])));
    for (const integration of expected.keys()) {
      const [eligibleDeploy, compliantDeploy, eligibleFunction, compliantFunction, eligibleConfig, compliantConfig] = byIntegration.map((m) => m.get(integration));
      expect(eligibleDeploy).toBeGreaterThan(0);
      // The funnel rule holds all the way through the exporter and Prometheus.
      expect(eligibleFunction).toBe(compliantDeploy);
      expect(eligibleConfig).toBe(compliantFunction);
      expect(compliantConfig! / eligibleDeploy!).toBeCloseTo(Number(health.find((r) => r.metric.integration === integration)!.value[1]), 6);
    }
  });

  it('returns open alerts by severity, devices and exporter health', async () => {
    const values = { portal: PORTAL };
    const run = (dashboard: string, title: string) => query(substituteVariables(find(queries, dashboard, title).expr, values));

    const open = await run('posture-overview', 'Open alerts by severity');
    const severities = Object.fromEntries(open.map((r) => [r.metric.severity!, Number(r.value[1])]));
    expect(Object.keys(severities)).toEqual(expect.arrayContaining(['red', 'amber', 'green']));
    const unresolved = [...sim.data().alerts()].filter((a) => !a.resolved).length;
    // Alerts open and close with the clock; a few may have moved since the collection.
    expect(Math.abs(Object.values(severities).reduce((a, b) => a + b, 0) - unresolved)).toBeLessThanOrEqual(3);

    for (const title of ['Active and inactive devices', 'Devices now']) {
      const devices = await run('posture-overview', title);
      expect(new Set(devices.map((r) => r.metric.activity))).toEqual(new Set(['active', 'inactive']));
      expect(devices.reduce((n, r) => n + Number(r.value[1]), 0)).toBe(DEVICES);
    }

    const success = await run('posture-exporter-health', 'Collection success per source');
    // The live sources and the slow ones (the resolved-alerts pass, access, directory), each of whose first runs succeeded.
    expect(Object.fromEntries(success.map((r) => [r.metric.source, r.value[1]]))).toEqual({ vitals: '1', alerts: '1', devices: '1', resolved: '1', access: '1', directory: '1' });
    const age = await run('posture-exporter-health', 'Age of the last successful collection');
    expect(age.map((r) => r.metric.source).sort()).toEqual(['access', 'alerts', 'devices', 'directory', 'resolved', 'vitals']);
    for (const row of age) expect(Number(row.value[1])).toBeGreaterThanOrEqual(0);
    for (const row of age) expect(Number(row.value[1])).toBeLessThan(60);
    // The panel reads serve's counter (the last run's gauge until the counter has two samples): every endpoint answered 200.
    const perMinute = await run('posture-exporter-health', 'API requests per minute');
    expect(perMinute.filter((r) => r.metric.code === '200').map((r) => r.metric.endpoint).sort()).toEqual(['/alerts', '/devices', '/settings/usermanagement/roles', '/settings/usermanagement/teams', '/settings/usermanagement/users', '/users', '/vitals']);
    for (const row of perMinute) expect(Number(row.value[1])).toBeGreaterThanOrEqual(0);
    // serve's counters from the start (the first cycle and the slow sources' first runs): 200s counted, 429s at 0.
    // /alerts twice: the open alerts' page and the resolved-alerts pass's (1 request while its total is unknown);
    // the access settings 1 each of /settings/usermanagement/users, /roles and /teams; the directory 1 of /users.
    const counted = await query(`posture_api_requests_total{portal="${PORTAL}"}`);
    expect(Object.fromEntries(counted.map((r) => [`${r.metric.endpoint} ${r.metric.code}`, Number(r.value[1])]))).toEqual({
      '/alerts 200': 2,
      '/alerts 429': 0,
      '/devices 200': 2,
      '/devices 429': 0,
      '/vitals 200': 2,
      '/vitals 429': 0,
      '/settings/usermanagement/users 200': 1,
      '/settings/usermanagement/users 429': 0,
      '/settings/usermanagement/roles 200': 1,
      '/settings/usermanagement/roles 429': 0,
      '/settings/usermanagement/teams 200': 1,
      '/settings/usermanagement/teams 429': 0,
      '/users 200': 1,
      '/users 429': 0,
    });
    // The last run of each source by endpoint, exactly: 2 Vitals (whole portal and one tag), 2 device totals, /alerts'
    // 1 page and the pass's 1, and the slow sources' 1 request per list.
    const lastRun = await query(`posture_collection_api_requests{portal="${PORTAL}",code="200"}`);
    expect(Object.fromEntries(lastRun.map((r) => [r.metric.endpoint!, Number(r.value[1])]))).toEqual({
      '/vitals': 2,
      '/devices': 2,
      '/alerts': 2,
      '/settings/usermanagement/users': 1,
      '/settings/usermanagement/roles': 1,
      '/settings/usermanagement/teams': 1,
      '/users': 1,
    });
  });

  it('runs every rule expression without an error, and the rules see the whole-portal series', async () => {
    const rules = loadRuleExpressions(ruleFiles().filter((f) => f.endsWith('/posture.rules.yml')));
    expect(rules.length).toBeGreaterThan(5);
    const failures: string[] = [];
    for (const rule of rules) await query(rule.expr).catch((err: Error) => failures.push(`${rule.name}: ${err.message}`));
    expect(failures).toEqual([]);

    const level = rules.find((r) => r.name === 'portal_integration:posture_vitals_health_ratio:last15m')!;
    const rows = (await query(level.expr)).filter((r) => r.metric.portal === PORTAL);
    // tag="" keeps the per-tag series out: one series per integration, the whole-portal value.
    expect(rows.map((r) => r.metric.integration).sort()).toEqual([...withHealth(sim.data().vitals()).keys()].sort());

    // Prometheus loaded every rule (the shortened copy) and evaluates each without an error.
    const expected = rules.map((r) => `${r.kind} ${r.name}: ok`).sort();
    let states: string[] = [];
    await until('every rule to be evaluated', async () => {
      const loaded = (await (await fetch(`${prom.url}/api/v1/rules`)).json()) as { data: { groups: Array<{ rules: Array<{ type: string; name: string; health: string; lastError?: string }> }> } };
      states = loaded.data.groups.flatMap((g) => g.rules).map((r) => `${r.type === 'alerting' ? 'alert' : 'record'} ${r.name}: ${r.health}${r.lastError ? ` ${r.lastError}` : ''}`).sort();
      return states.every((x) => x.endsWith(': ok')) ? states : undefined;
    }, 10_000).catch(() => undefined);
    expect(states).toEqual(expected);
  });
});

describe('a Vitals regression injected in the portal', () => {
  it('makes PostureVitalsHealthRegression (windows shortened) true for that integration, and it fires', async () => {
    const before = withHealth(regressedSim.data().vitals());
    // The integration with the most eligible devices: the clearest ratio.
    const target = [...regressedSim.data().vitals()]
      .filter((r) => before.has(r.key))
      .sort((a, b) => b.agentDeployedPossibleCompliant! - a.agentDeployedPossibleCompliant!)[0]!.key;
    regressedSim.injectRegression({ integration: target, fraction: 0.3 });
    const after = withHealth(regressedSim.data().vitals());
    const drop = before.get(target)! - after.get(target)!;
    expect(drop).toBeGreaterThan(0.1);

    const healthRegression = shortenedRules.find((r) => r.name === 'PostureVitalsHealthRegression')!;
    const stageRegression = shortenedRules.find((r) => r.name === 'PostureVitalsStageRegression')!;
    expect(loadRuleExpressions().find((r) => r.name === healthRegression.name)!.for).toBe('30m');
    expect(healthRegression.for).toBe('3s');

    // The next Vitals run carries it: due 40 s after the first, it sends as the first window's requests leave it (about 62 s after the start).
    const ofTarget = (x: { metric: Record<string, string | undefined> }) => x.metric.portal === REGRESSED && x.metric.integration === target;
    const rows = await until(`${healthRegression.name} to return ${target}`, async () => {
      const r = await query(healthRegression.expr);
      return r.some(ofTarget) ? r : undefined;
    }, 70_000);
    const row = rows.find(ofTarget)!;
    // The other portal, whose data did not move, stays out of it.
    expect(rows.filter((x) => x.metric.portal === PORTAL)).toEqual([]);
    // The value is the drop in ratio points; the portal's noise moves it a little.
    expect(Number(row.value[1])).toBeGreaterThanOrEqual(0.05);
    expect(Number(row.value[1])).toBeCloseTo(drop, 1);

    // Only configurationCompliant fell: the stage alert names the configuration stage.
    const stages = await query(stageRegression.expr);
    expect(stages.filter(ofTarget).map((x) => x.metric.stage)).toEqual(['configuration']);

    // With `for` shortened to 3 s, Prometheus turns it into a firing alert while the comparison holds.
    const alert = await until('the alert to fire', async () => {
      const res = (await (await fetch(`${prom.url}/api/v1/alerts`)).json()) as { data: { alerts: Array<{ labels: Record<string, string>; annotations: Record<string, string>; state: string }> } };
      return res.data.alerts.find((a) => a.labels.alertname === 'PostureVitalsHealthRegression' && a.labels.portal === REGRESSED && a.labels.integration === target && a.state === 'firing');
    }, 10_000);
    expect(alert.labels).toMatchObject({ portal: REGRESSED, integration: target, severity: 'warning' });
    expect(alert.annotations.description).toContain(target);
    expect(alert.annotations.description).toContain(REGRESSED);
    // The shipped rules carry no runbook_url unless written with a template (npm run rules, POSTURE_RUNBOOK_URL).
    expect(alert.annotations.runbook_url).toBeUndefined();
  }, 85_000);

  it('never shows the API key in the exporter\'s logs or in Prometheus', async () => {
    expect(logger.lines.length).toBeGreaterThan(0);
    const series = await query(`{portal=~"${PORTAL}|${REGRESSED}"}`);
    expect(series.length).toBeGreaterThan(0);
    for (const key of [KEY, REGRESSED_KEY]) {
      expect(logger.lines.join('\n').includes(key), 'a key in the logs').toBe(false);
      expect(prom.logs().includes(key), 'a key in the Prometheus logs').toBe(false);
      expect(JSON.stringify(series).includes(key), 'a key in the series').toBe(false);
    }
  });
});
