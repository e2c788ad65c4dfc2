/**
 * The BUILT Lambda bundle fanned out: three fresh Node processes, started at once, each invoking
 * `dist/lambda/index.mjs`'s handler with `{"shard": i, "totalShards": 3}` (what the Step Functions
 * Map of serverless.yml delivers), over a simulated fleet of 30 portals on real time, the portal
 * list in a config file, pushing to Debian's Pushgateway. Every portal exactly once, values exact,
 * none over its budget.
 */
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalIdentity } from '../../src/config/identity.js';
import { ownsPortal } from '../../src/config/shard.js';
import { startFleet, type Fleet } from '../../src/simulator/fleet.js';
import { runProcess } from '../support/cli.js';
import { startPushgateway, type Peer } from '../support/peers.js';
import { expectedFromPortal, familiesOf, pushgatewayGroups, seriesKey, type ReadSample } from './support.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const RUNNER = join(ROOT, 'test/lambda/invoke-bundle.mjs');
const FAMILIES = ['posture_alerts_open', 'posture_devices', 'posture_vitals_health_ratio', 'posture_collection_success'];
const TOTAL = 3;

let work: string;
let bundle: string;
let pgw: Peer;
let fleet: Fleet;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'lambda-bundle-shards-'));
  for (const entry of ['src', 'scripts', 'node_modules', 'tsconfig.json']) symlinkSync(join(ROOT, entry), join(work, entry));
  copyFileSync(join(ROOT, 'package.json'), join(work, 'package.json'));
  const built = runProcess('npm', ['run', 'build', '--silent'], { cwd: work, env: { PATH: process.env.PATH ?? '' } });
  // Real time: each portal's 10-per-60 s window runs on the clock the child processes see.
  [pgw, fleet] = await Promise.all([startPushgateway(), startFleet({ portals: 30, moving: false })]);
  const { code, stderr } = await built;
  if (code !== 0) throw new Error(`npm run build failed:\n${stderr}`);
  bundle = join(work, 'dist/lambda/index.mjs');
}, 120_000);

afterAll(async () => {
  await Promise.all([fleet?.close(), pgw?.stop()]);
  if (work) rmSync(work, { recursive: true, force: true });
});

interface Summary {
  portals: Array<{ portal: string; sources: Record<string, string> }>;
  sinks: Array<{ sink: string; ok: boolean }>;
  shard?: { shard: number; totalShards: number; portals: number };
}

async function invokeShard(env: Record<string, string>, event: unknown): Promise<{ code: number | null; result: { ok: true; summary: Summary } | { ok: false; error: { name: string; message: string } }; stdout: string }> {
  const { code, stdout, stderr } = await runProcess(process.execPath, [RUNNER, bundle, '60000', JSON.stringify(event)], { cwd: work, env: { PATH: process.env.PATH ?? '', ...env } });
  const last = stdout.split('\n').filter((l) => l !== '').at(-1) ?? '';
  if (!last.startsWith('INVOCATION_RESULT ')) throw new Error(`the runner did not finish (exit ${code}):\n${stderr.slice(-2000)}`);
  return { code, result: JSON.parse(last.slice('INVOCATION_RESULT '.length)) as never, stdout };
}

describe('the built Lambda bundle, fanned out over three shards', () => {
  it('three processes at once, one per shard, push every portal exactly once, exact, none over budget', async () => {
    const at = Date.now();
    const file = join(work, 'portals.json');
    writeFileSync(file, JSON.stringify({ portals: fleet.names.map((name) => ({ portal: name, base_url: fleet.baseUrl(name), api_key: fleet.apiKey(name) })) }));
    const env = { POSTURE_CONFIG_FILE: file, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: pgw.url };
    const runs = await Promise.all([0, 1, 2].map((shard) => invokeShard(env, { shard, totalShards: TOTAL })));

    const collected: string[] = [];
    for (const [shard, run] of runs.entries()) {
      expect(run.code, `shard ${shard}`).toBe(0);
      if (!run.result.ok) throw new Error(`shard ${shard} failed: ${run.result.error.message}`);
      const mine = fleet.names.filter((n) => ownsPortal(portalIdentity(fleet.baseUrl(n)), shard, TOTAL));
      expect(run.result.summary.shard).toEqual({ shard, totalShards: TOTAL, portals: mine.length });
      expect(run.result.summary.portals.map((p) => p.portal).sort()).toEqual(mine);
      expect(run.result.summary.sinks).toEqual([expect.objectContaining({ sink: 'pushgateway', ok: true })]);
      collected.push(...run.result.summary.portals.map((p) => p.portal));
      for (const name of fleet.names) expect(run.stdout).not.toContain(fleet.apiKey(name));
    }
    // The union of the shards is the fleet, each portal once.
    expect(collected.sort()).toEqual([...fleet.names]);
    expect(fleet.overBudget()).toEqual([]);

    const groups = await pushgatewayGroups(pgw.url);
    for (const name of fleet.names) {
      const samples: ReadSample[] = [];
      for (const g of groups.values()) if (g.labels.portal === name) samples.push(...g.samples);
      const e = expectedFromPortal(fleet.portal(name), at);
      const want = new Map<string, number>();
      for (const map of [e.alerts, e.devices, e.vitals]) for (const [k, v] of map) if (FAMILIES.some((f) => k.startsWith(`${f}{`))) want.set(k, v);
      for (const source of ['vitals', 'alerts', 'devices']) want.set(seriesKey('posture_collection_success', { source }), 1);
      expect(familiesOf(samples, FAMILIES), name).toEqual(want);
    }
  }, 120_000);
});
