/**
 * The BUILT Lambda bundle fanned out: fresh Node processes, started at once, each invoking
 * `dist/lambda/index.mjs`'s handler as the Lambda runtime would (test/lambda/invoke-bundle.mjs),
 * with the events serverless.yml delivers: `{"shard": i, "totalShards": n}` from the Step Functions
 * Map, or a scheduled event. Simulated fleets on real time, the portal list in a config file,
 * pushing to Debian's Pushgateway; Debian's Prometheus reads the shard rules over it. Every portal
 * exactly once, values exact, none over its budget; a malformed event contacts nobody.
 */
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalIdentity } from '../../src/config/identity.js';
import { ownsPortal } from '../../src/config/shard.js';
import { startFleet, type Fleet } from '../../src/simulator/fleet.js';
import { closeAfterEach } from '../support/closing.js';
import { runProcess } from '../support/cli.js';
import { queryPrometheusApi, startPrometheus, startPushgateway, type Peer } from '../support/peers.js';
import { loadRuleExpressions } from '../infra/support.js';
import { expectedFromPortal, familiesOf, pushgatewayGroups, seriesKey, type ReadSample } from './support.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const RUNNER = join(ROOT, 'test/lambda/invoke-bundle.mjs');
const FAMILIES = ['posture_alerts_open', 'posture_devices', 'posture_vitals_health_ratio', 'posture_collection_success'];
const TOTAL = 3;
/** The push concurrency each process runs with (POSTURE_PUSH_CONCURRENCY's default). */
const CONCURRENCY = 8;

let work: string;
let bundle: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'lambda-bundle-shards-'));
  for (const entry of ['src', 'scripts', 'node_modules', 'tsconfig.json']) symlinkSync(join(ROOT, entry), join(work, entry));
  copyFileSync(join(ROOT, 'package.json'), join(work, 'package.json'));
  const { code, stderr } = await runProcess('npm', ['run', 'build', '--silent'], { cwd: work, env: { PATH: process.env.PATH ?? '' } });
  if (code !== 0) throw new Error(`npm run build failed:\n${stderr}`);
  bundle = join(work, 'dist/lambda/index.mjs');
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const closing = closeAfterEach();

/** A Pushgateway for one test, stopped after it. */
async function pushgateway(extraArgs?: string[]): Promise<Peer> {
  const pgw = await startPushgateway({ extraArgs });
  closing({ close: () => pgw.stop() });
  return pgw;
}

/** A fleet for one test (real time), closed after it, and its portal list in a config file. */
async function fleetOf(portals: number): Promise<{ fleet: Fleet; file: string }> {
  const fleet = closing(await startFleet({ portals, moving: false }));
  const file = join(work, `portals-${portals}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ portals: fleet.names.map((name) => ({ portal: name, base_url: fleet.baseUrl(name), api_key: fleet.apiKey(name) })) }));
  return { fleet, file };
}

/** A loopback proxy to `target` that records the most requests it ever had in flight at once. */
async function inFlightProxy(target: string): Promise<{ url: string; most: () => number }> {
  const to = new URL(target);
  let inFlight = 0;
  let most = 0;
  const server: Server = createServer((req, res) => {
    most = Math.max(most, ++inFlight);
    const upstream = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
      up.on('end', () => inFlight--);
    });
    upstream.on('error', () => {
      inFlight--;
      res.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, most: () => most };
}

interface Summary {
  portals: Array<{ portal: string; sources: Record<string, string> }>;
  sinks: Array<{ sink: string; ok: boolean; error?: string }>;
  shard?: { shard: number; totalShards: number; portals: number };
}

type Result = { ok: true; summary: Summary } | { ok: false; error: { name: string; message: string } };

/** One invocation of the built bundle in a fresh process, `remainingMs` before it times out; `event` undefined sends a scheduled event. */
async function invoke(env: Record<string, string>, event?: unknown, remainingMs = 60_000): Promise<{ code: number | null; result: Result; stdout: string }> {
  const args = [RUNNER, bundle, String(remainingMs), ...(event === undefined ? [] : [JSON.stringify(event)])];
  const { code, stdout, stderr } = await runProcess(process.execPath, args, { cwd: work, env: { PATH: process.env.PATH ?? '', ...env } });
  const last = stdout.split('\n').filter((l) => l !== '').at(-1) ?? '';
  if (!last.startsWith('INVOCATION_RESULT ')) throw new Error(`the runner did not finish (exit ${code}):\n${stderr.slice(-2000)}`);
  return { code, result: JSON.parse(last.slice('INVOCATION_RESULT '.length)) as Result, stdout };
}

/** The portal's checked families as the Pushgateway holds them equal what the portal holds at `at`. */
function expectExact(fleet: Fleet, groups: Awaited<ReturnType<typeof pushgatewayGroups>>, at: number): void {
  for (const name of fleet.names) {
    const samples: ReadSample[] = [];
    for (const g of groups.values()) if (g.labels.portal === name) samples.push(...g.samples);
    const e = expectedFromPortal(fleet.portal(name), at);
    const want = new Map<string, number>();
    for (const map of [e.alerts, e.devices, e.vitals]) for (const [k, v] of map) if (FAMILIES.some((f) => k.startsWith(`${f}{`))) want.set(k, v);
    // Every invocation here is a fresh process: each portal's resolved-alerts pass runs (no record of one).
    for (const source of ['vitals', 'alerts', 'devices', 'resolved']) want.set(seriesKey('posture_collection_success', { source }), 1);
    expect(familiesOf(samples, FAMILIES), name).toEqual(want);
  }
}

/** Runs the three shards at once; checks each ran its own portals, all sinks ok, no key in the output. */
async function threeShards(fleet: Fleet, env: Record<string, string>, remainingMs?: number): Promise<void> {
  const runs = await Promise.all([0, 1, 2].map((shard) => invoke(env, { shard, totalShards: TOTAL }, remainingMs)));
  const collected: string[] = [];
  for (const [shard, run] of runs.entries()) {
    expect(run.code, `shard ${shard}`).toBe(0);
    if (!run.result.ok) throw new Error(`shard ${shard} failed: ${run.result.error.message}`);
    const mine = fleet.names.filter((n) => ownsPortal(portalIdentity(fleet.baseUrl(n)), shard, TOTAL));
    expect(run.result.summary.shard).toEqual({ shard, totalShards: TOTAL, portals: mine.length });
    expect(run.result.summary.portals.map((p) => p.portal).sort()).toEqual(mine);
    for (const p of run.result.summary.portals) expect(p.sources, p.portal).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
    expect(run.result.summary.sinks).toEqual([expect.objectContaining({ sink: 'pushgateway', ok: true })]);
    collected.push(...run.result.summary.portals.map((p) => p.portal));
    for (const name of fleet.names) expect(run.stdout).not.toContain(fleet.apiKey(name));
  }
  // The union of the shards is the fleet, each portal once.
  expect(collected.sort()).toEqual([...fleet.names]);
  expect(fleet.overBudget()).toEqual([]);
}

/** The shard groups at the Pushgateway: `shard=i` → { ordinal, total }. */
function shardGauges(groups: Awaited<ReturnType<typeof pushgatewayGroups>>): Record<string, Record<string, number>> {
  return Object.fromEntries(
    [...groups.entries()].filter(([k]) => k.startsWith('shard=')).map(([k, g]) => [k, Object.fromEntries(g.samples.map((s) => [s.name, s.value]))]),
  );
}

/** Polls `query` on Prometheus until `done` holds for its result (or 20 s pass), and returns that result. */
async function until(prom: Peer, query: string, done: (rows: Awaited<ReturnType<typeof queryPrometheusApi>>) => boolean) {
  const started = Date.now();
  for (;;) {
    const rows = await queryPrometheusApi(prom.url, query);
    if (done(rows) || Date.now() - started > 20_000) return rows;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('the built Lambda bundle, fanned out', () => {
  it('refuses a misspelt shard event and a shard given twice before any request, pushing nothing', async () => {
    const pgw = await pushgateway();
    const { fleet, file } = await fleetOf(6);
    const env = { POSTURE_CONFIG_FILE: file, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: pgw.url };
    const [misspelt, doubled] = await Promise.all([invoke(env, { Shard: 1, TotalShards: 3 }), invoke({ ...env, POSTURE_SHARD: '1', POSTURE_TOTAL_SHARDS: '3' }, { shard: 1, totalShards: 3 })]);
    for (const run of [misspelt, doubled]) {
      expect(run.code).toBe(1);
      expect(run.result.ok).toBe(false);
    }
    const message = (r: Result) => (r.ok ? '' : `${r.error.name}: ${r.error.message}`);
    expect(message(misspelt.result)).toBe(
      'InvocationFailedError: invalid event: the event has unknown fields "Shard", "TotalShards" (did you mean "shard", "totalShards"?): the handler takes an EventBridge scheduled event or an empty event {} (every portal), or {"shard": i, "totalShards": n} (one shard of a fan-out)',
    );
    expect(message(doubled.result)).toMatch(/^InvocationFailedError: invalid event: the shard is given twice: the event names shard 1 of 3, and POSTURE_SHARD and POSTURE_TOTAL_SHARDS name shard 1 of 3: /);
    for (const name of fleet.names) expect(fleet.requests(name), name).toEqual([]);
    expect((await pushgatewayGroups(pgw.url)).size).toBe(0);
  }, 60_000);

  it('collects every portal on a scheduled event, unsharded', async () => {
    const pgw = await pushgateway();
    const { fleet, file } = await fleetOf(12);
    const at = Date.now();
    const run = await invoke({ POSTURE_CONFIG_FILE: file, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: pgw.url });
    expect(run.result).toMatchObject({ ok: true });
    const { summary } = run.result as Extract<Result, { ok: true }>;
    expect(summary.shard).toBeUndefined();
    expect(summary.portals.map((p) => p.portal).sort()).toEqual([...fleet.names]);
    expect(fleet.overBudget()).toEqual([]);
    const groups = await pushgatewayGroups(pgw.url);
    expectExact(fleet, groups, at);
    expect(shardGauges(groups)).toEqual({ 'shard=0': { posture_exporter_shard_ordinal: 0, posture_exporter_total_shards: 1 } });
  }, 60_000);

  it('three processes at once, one per shard, push every portal exactly once and gauges 0, 1 and 2 of 3, which the shard rules see', async () => {
    const pgw = await pushgateway();
    const { fleet, file } = await fleetOf(30);
    const at = Date.now();
    await threeShards(fleet, { POSTURE_CONFIG_FILE: file, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: pgw.url });
    const groups = await pushgatewayGroups(pgw.url);
    expectExact(fleet, groups, at);
    expect(shardGauges(groups)).toEqual(Object.fromEntries([0, 1, 2].map((i) => [`shard=${i}`, { posture_exporter_shard_ordinal: i, posture_exporter_total_shards: TOTAL }])));

    // Prometheus scraping the Pushgateway (honor_labels, as docs/push.md says) with the shard rules:
    // no shard missing; when shard 2's group goes away, one is.
    const rules = loadRuleExpressions().filter((r) => r.name === 'PostureShardMissing' || r.name === 'PostureShardsDisagree');
    const missing = rules.find((r) => r.name === 'PostureShardMissing')!.expr;
    const disagree = rules.find((r) => r.name === 'PostureShardsDisagree')!.expr;
    const prom = await startPrometheus({
      config: ['global:', '  scrape_interval: 1s', 'scrape_configs:', '  - job_name: pushgateway', '    honor_labels: true', '    static_configs:', `      - targets: ['127.0.0.1:${pgw.port}']`, ''].join('\n'),
    });
    closing({ close: () => prom.stop() });
    const ordinals = await until(prom, 'posture_exporter_shard_ordinal', (rows) => rows.length === 3);
    expect(ordinals.map((r) => [r.metric.job, r.metric.shard, r.value[1]]).sort()).toEqual([0, 1, 2].map((i) => ['posture-exporter', String(i), String(i)]));
    expect(await queryPrometheusApi(prom.url, missing)).toEqual([]);
    expect(await queryPrometheusApi(prom.url, disagree)).toEqual([]);
    const deleted = await fetch(`${pgw.url}/metrics/job/posture-exporter/shard/2`, { method: 'DELETE' });
    expect(deleted.status).toBe(202);
    const after = await until(prom, missing, (rows) => rows.length > 0);
    expect(after.map((r) => [r.metric.job, r.value[1]])).toEqual([['posture-exporter', '1']]);
  }, 120_000);

  it('300 portals over three shards at once all land in the Pushgateway, exact, a bounded number of PUTs at a time', async () => {
    // Without its consistency check: the Pushgateway checks each PUT against every series it holds,
    // so 1,500 groups (each first run's resolved-alerts pass adds a fifth per portal, about as many
    // series as the other four) cost it time growing with the square of the fleet, and on two shared
    // cores beside the suite the last pushes outran the function's timeout. What this test checks is
    // the fan-out (every group, exact, at most 8 PUTs in flight per process); the check's verdict on
    // what the exporter pushes is tested with it on (test/lambda/bundle.e2e.test.ts, test/sinks/).
    const pgw = await pushgateway(['--push.disable-consistency-check']);
    const proxy = await inFlightProxy(pgw.url);
    const { fleet, file } = await fleetOf(300);
    const at = Date.now();
    // The function's own timeout (serverless.yml: 240 s): a Pushgateway checks every PUT against every
    // series it holds, so the push takes time that grows with the square of what is pushed. Each portal's
    // fifth group, the resolved-alerts pass's (every fresh process makes it), holds about as many series
    // as its other four together: alone on a shared 2-core machine the three pushes took 75 to 106 s,
    // and beside the rest of the suite more than the 180 s this test gave them before the pass.
    await threeShards(fleet, { POSTURE_CONFIG_FILE: file, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: proxy.url, POSTURE_LOG_LEVEL: 'warn' }, 240_000);
    const groups = await pushgatewayGroups(pgw.url);
    // Five groups a portal (three sources, the resolved-alerts pass of a fresh process, and its own) and one a shard: all there.
    expect(groups.size).toBe(300 * 5 + TOTAL);
    expectExact(fleet, groups, at);
    // At most CONCURRENCY PUTs of each of the three processes at once.
    expect(proxy.most()).toBeGreaterThan(1);
    expect(proxy.most()).toBeLessThanOrEqual(TOTAL * CONCURRENCY);
  }, 300_000);
});
