/**
 * A shard that dies, on real time: three `serve` shards of one fleet scraped by Debian's Prometheus
 * with the shard rules loaded. Killing one (SIGKILL, as a crashed pod) leaves exactly its portals
 * uncollected: the other shards' portals stay with their values, the killed shard's series go
 * stale at the next failed scrape, and the rules name the missing shard and exactly its portals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalIdentity } from '../../src/config/identity.js';
import { shardOf } from '../../src/config/shard.js';
import { startFleet, type Fleet } from '../../src/simulator/fleet.js';
import { expectedFromPortal, seriesKey } from '../lambda/support.js';
import { BUILT_CLI, withOwnState } from '../support/cli.js';
import { freePort, queryPrometheusApi, startPrometheus, type Peer } from '../support/peers.js';
import { until } from '../support/processes.js';

const PORTALS = 60;
const SHARDS = 3;
const KILLED = 2;
/** The active-device total's key in expectedFromPortal, the oracle written from the spec. */
const ACTIVE = seriesKey('posture_devices', { activity: 'active' });
const RULES = new URL('../../infra/prometheus/rules/posture-shards.rules.yml', import.meta.url).pathname;

let fleet: Fleet;
let dir: string;
let prom: Peer;
const shards: Array<{ child: ChildProcess; port: number }> = [];

beforeAll(async () => {
  fleet = await startFleet({ portals: PORTALS, moving: false });
  dir = mkdtempSync(join(tmpdir(), 'shard-killed-'));
  const configFile = join(dir, 'portals.json');
  writeFileSync(configFile, JSON.stringify({ portals: fleet.names.map((name) => ({ portal: name, base_url: fleet.baseUrl(name), api_key: fleet.apiKey(name) })) }));
  for (let i = 0; i < SHARDS; i++) {
    const port = await freePort();
    const child = spawn(process.execPath, [BUILT_CLI, 'serve', '--shard', `posture-exporter-${i}`, '--total-shards', String(SHARDS), '--listen', `127.0.0.1:${port}`], {
      env: withOwnState({ PATH: process.env.PATH, POSTURE_CONFIG_FILE: configFile, POSTURE_INTERVAL_SECONDS: '300', POSTURE_LOG_LEVEL: 'warn' }),
      stdio: 'ignore',
    });
    shards.push({ child, port });
  }
  prom = await startPrometheus({
    config: [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'rule_files: [posture-shards.rules.yml]',
      'scrape_configs:',
      '  - job_name: posture-exporter',
      '    static_configs:',
      `      - targets: [${shards.map((s) => `'127.0.0.1:${s.port}'`).join(', ')}]`,
      '',
    ].join('\n'),
    rulesFiles: { 'posture-shards.rules.yml': readFileSync(RULES, 'utf8') },
  });
}, 60_000);

afterAll(async () => {
  for (const { child } of shards) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await prom?.stop();
  await fleet?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** portal → `shard ordinal:active devices`, as Prometheus has them now. */
async function collected(): Promise<Map<string, string>> {
  const rows = await queryPrometheusApi(prom.url, 'posture_devices{activity="active"}');
  const ordinals = await queryPrometheusApi(prom.url, 'posture_exporter_shard_ordinal');
  const ordinalOf = new Map(ordinals.map((r) => [r.metric.instance!, r.value[1]]));
  const out = new Map<string, string>();
  for (const r of rows) {
    const portal = r.metric.portal!;
    expect(out.has(portal), `${portal} exported twice`).toBe(false);
    out.set(portal, `${ordinalOf.get(r.metric.instance!)}:${r.value[1]}`);
  }
  return out;
}

describe('a shard killed', () => {
  it('leaves only its portals uncollected, and the rules name the shard and exactly those portals', async () => {
    const ownerOf = new Map(fleet.names.map((p) => [p, shardOf(portalIdentity(fleet.baseUrl(p)), SHARDS)]));
    const at = Date.now();
    const expected = new Map(fleet.names.map((p) => [p, `${ownerOf.get(p)}:${expectedFromPortal(fleet.portal(p), at).devices.get(ACTIVE)}`]));
    // All three shards up: every portal exactly once, by its shard, with the portal's own value.
    const before = await until('every portal in Prometheus', async () => ((await collected()).size === PORTALS ? collected() : undefined), 45_000);
    expect(before).toEqual(expected);

    const killed = shards[KILLED]!;
    killed.child.kill('SIGKILL');
    await until('the killed shard scraped as down', async () => {
      const up = await queryPrometheusApi(prom.url, `up{instance="127.0.0.1:${killed.port}"}`);
      return up[0]?.value[1] === '0' ? true : undefined;
    }, 20_000);

    // Its series went stale at the failed scrape; every other portal is still there, unchanged.
    const after = await collected();
    const survivors = new Map([...expected].filter(([p]) => ownerOf.get(p) !== KILLED));
    expect(after).toEqual(survivors);
    const orphans = fleet.names.filter((p) => ownerOf.get(p) === KILLED).sort();
    expect(orphans.length).toBeGreaterThan(0);

    // The rules see it: one shard missing, and exactly its portals collected by no shard (pending, as their `for` runs).
    const alerts = await until('the shard alerts pending', async () => {
      const res = (await (await fetch(`${prom.url}/api/v1/alerts`)).json()) as { data: { alerts: Array<{ labels: Record<string, string>; state: string; value: string }> } };
      const list = res.data.alerts;
      const uncollected = list.filter((a) => a.labels.alertname === 'PosturePortalUncollected');
      return list.some((a) => a.labels.alertname === 'PostureShardMissing') && uncollected.length === orphans.length ? list : undefined;
    }, 20_000);
    const missing = alerts.filter((a) => a.labels.alertname === 'PostureShardMissing');
    expect(missing).toHaveLength(1);
    expect(Number(missing[0]!.value)).toBe(1);
    expect(alerts.filter((a) => a.labels.alertname === 'PosturePortalUncollected').map((a) => a.labels.portal).sort()).toEqual(orphans);
    expect(alerts.filter((a) => a.labels.alertname === 'PosturePortalDuplicated' || a.labels.alertname === 'PostureShardsDisagree')).toEqual([]);
    expect(fleet.overBudget()).toEqual([]);
  }, 120_000);
});
