/**
 * Shards on real time through the built CLI, against a simulated fleet of portals with their own
 * keys and budgets: `once --shard i --total-shards n` for every i partitions the portals exactly,
 * with the values an unsharded run gives and no portal over its budget; going from 3 to 4 shards
 * moves about a quarter; `serve --shard <pod name>` serves exactly its shard with the shard gauges.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalIdentity } from '../../src/config/identity.js';
import { shardOf as shardOfIdentity } from '../../src/config/shard.js';
import { startFleet, type Fleet } from '../../src/simulator/fleet.js';
import { BUILT_CLI, runProcess, withOwnState } from '../support/cli.js';
import { freePort } from '../support/peers.js';
import { until } from '../support/processes.js';

const PORTALS = 300;
/**
 * One run of every source sends a portal 4 requests, and the resolved-alerts pass 1 more: every process here has a
 * state directory of its own, so each is a first run, which always runs the pass. The test makes four passes over each portal.
 */
const PER_PASS = 5;
let fleet: Fleet;
let dir: string;
let configFile: string;
/** The shard of a portal of the fleet: its identity (base URL) hashed. */
const shardOf = (name: string, total: number) => shardOfIdentity(portalIdentity(fleet.baseUrl(name)), total);

beforeAll(async () => {
  // Each portal's own limit leaves room for the test's four passes, and no more.
  fleet = await startFleet({ portals: PORTALS, moving: false, rateLimit: { requests: 4 * PER_PASS, windowMs: 60_000 } });
  dir = mkdtempSync(join(tmpdir(), 'shards-'));
  configFile = join(dir, 'portals.json');
  writeFileSync(configFile, JSON.stringify({ portals: fleet.names.map((name) => ({ portal: name, base_url: fleet.baseUrl(name), api_key: fleet.apiKey(name) })) }));
});

afterAll(async () => {
  await fleet?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface JsonOut {
  samples: Array<{ name: string; labels: Record<string, string>; value: number }>;
}

/** One `once` as JSON: each portal's device totals and open alerts, by portal. */
async function once(args: string[]): Promise<Map<string, string>> {
  const ran = await runProcess(process.execPath, [BUILT_CLI, 'once', '--format', 'json', '--log-level', 'warn', ...args], { env: { PATH: process.env.PATH, POSTURE_CONFIG_FILE: configFile } });
  expect(ran.code, ran.stderr).toBe(0);
  const out = JSON.parse(ran.stdout) as JsonOut;
  const values = new Map<string, string[]>();
  for (const s of out.samples) {
    if (!['posture_devices', 'posture_alerts_open', 'posture_vitals_compliant_devices'].includes(s.name)) continue;
    const portal = s.labels.portal!;
    values.set(portal, [...(values.get(portal) ?? []), `${s.name}${JSON.stringify(s.labels)}=${s.value}`]);
  }
  return new Map([...values].map(([p, v]) => [p, v.sort().join('\n')]));
}

describe('shards of one fleet', () => {
  // Eight runs of 300 portals each through the built CLI, seven of them side by side on two cores:
  // about a minute and a half on a quiet machine.
  it('partitions the portals exactly over 3 shards, with the unsharded values, none over budget; 3 → 4 moves about a quarter', async () => {
    const sent = () => fleet.names.map((p) => fleet.requests(p).length);
    const whole = await once([]);
    expect(whole.size).toBe(PORTALS);
    const before = sent();
    const three = await Promise.all([0, 1, 2].map((i) => once(['--shard', String(i), '--total-shards', '3'])));
    // Each portal was asked by its one shard only: one run's requests, never twice.
    sent().forEach((n, i) => expect(n - before[i]!, fleet.names[i]).toBe(PER_PASS));
    const four = await Promise.all([0, 1, 2, 3].map((i) => once(['--shard', `posture-exporter-${i}`, '--total-shards', '4'])));
    for (const shards of [three, four]) {
      // Every portal in exactly one shard, the one the hash names, with the values of the unsharded run.
      const seen = shards.flatMap((m, i) => [...m.keys()].map((p) => [p, i] as const));
      expect(seen).toHaveLength(PORTALS);
      expect(new Set(seen.map(([p]) => p)).size).toBe(PORTALS);
      for (const [p, i] of seen) expect(shardOf(p, shards.length)).toBe(i);
      for (const [i, m] of shards.entries()) for (const [p, v] of m) expect(v, `${p} in shard ${i}`).toBe(whole.get(p));
      // Balanced: no shard below half its share. The identities hashed carry the fleet's port, a
      // new one each run: over 2,000 ports the smallest shard of 3 or 4 held 0.59 of its share,
      // and a bound of 0.7 failed about one run in 200.
      for (const m of shards) expect(m.size).toBeGreaterThan((PORTALS / shards.length) * 0.5);
    }
    const moved = fleet.names.filter((p) => shardOf(p, 3) !== shardOf(p, 4)).length;
    expect(moved / PORTALS).toBeLessThanOrEqual(0.35);
    expect(fleet.overBudget()).toEqual([]);
  }, 240_000);

  it('check-config lists the portals a shard owns', async () => {
    const ran = await runProcess(process.execPath, [BUILT_CLI, 'check-config', '--shard', '1', '--total-shards', '3'], { env: { PATH: process.env.PATH, POSTURE_CONFIG_FILE: configFile } });
    expect(ran.code, ran.stderr).toBe(0);
    const owned = fleet.names.filter((p) => shardOf(p, 3) === 1);
    expect(ran.stdout).toContain(`shard 1 of 3 owns ${owned.length} of ${PORTALS} portal(s): ${owned.join(', ')}`);
  });

  it('refuses a shard that is not below the total, and a total without a shard: one line each, exit 2', async () => {
    for (const [args, line] of [
      [['--shard', '3', '--total-shards', '3'], /POSTURE_SHARD \(--shard\).*0 to 2/],
      [['--total-shards', '3'], /POSTURE_SHARD \(--shard\) is not set/],
      [['--shard', 'posture-exporter-', '--total-shards', '3'], /not a shard number/],
    ] as const) {
      const ran = await runProcess(process.execPath, [BUILT_CLI, 'check-config', ...args], { env: { PATH: process.env.PATH, POSTURE_CONFIG_FILE: configFile } });
      expect(ran.code).toBe(2);
      expect(ran.stderr.trimEnd().split('\n').filter((l) => l.startsWith('config error'))).toHaveLength(1);
      expect(ran.stderr).toMatch(line);
    }
  });

  it('serve --shard posture-exporter-1 serves exactly that shard, with the two shard gauges', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [BUILT_CLI, 'serve', '--shard', 'posture-exporter-1', '--total-shards', '3', '--listen', `127.0.0.1:${port}`], {
      env: withOwnState({ PATH: process.env.PATH, POSTURE_CONFIG_FILE: configFile, POSTURE_INTERVAL_SECONDS: '300' }),
      stdio: 'ignore',
    });
    try {
      const owned = new Set(fleet.names.filter((p) => shardOf(p, 3) === 1));
      const text = await until(
        'every portal of shard 1 collected',
        async () => {
          const t = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
          const served = new Set([...t.matchAll(/^posture_devices\{portal="([^"]+)"/gm)].map((m) => m[1]!));
          return served.size === owned.size ? t : undefined;
        },
        30_000,
      );
      const portals = new Set([...text.matchAll(/^posture_\w+\{portal="([^"]+)"/gm)].map((m) => m[1]!));
      expect(portals).toEqual(owned);
      expect(text).toMatch(/^posture_exporter_shard_ordinal 1$/m);
      expect(text).toMatch(/^posture_exporter_total_shards 3$/m);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }, 60_000);

  it('a shard that owns no portal: serve serves its own series and is healthy, once says so and exits 0, neither sends anything', async () => {
    const portal = fleet.names[0]!;
    const total = 3;
    const other = (shardOf(portal, total) + 1) % total;
    const lonely = join(dir, 'lonely.json');
    writeFileSync(lonely, JSON.stringify({ portals: [{ portal, base_url: fleet.baseUrl(portal), api_key: fleet.apiKey(portal) }] }));
    const sentBefore = fleet.requests(portal).length;
    const port = await freePort();
    const child = spawn(process.execPath, [BUILT_CLI, 'serve', '--shard', String(other), '--total-shards', String(total), '--listen', `127.0.0.1:${port}`], {
      env: withOwnState({ PATH: process.env.PATH, POSTURE_CONFIG_FILE: lonely }),
      stdio: 'ignore',
    });
    try {
      const text = await until('the shard serving', async () => (await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined))?.text(), 15_000);
      expect(text).toMatch(new RegExp(`^posture_exporter_shard_ordinal ${other}$`, 'm'));
      expect(text).toMatch(/^posture_exporter_total_shards 3$/m);
      expect(text).not.toMatch(/portal="/);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      expect(fleet.requests(portal).length).toBe(sentBefore);
      // `once` on that shard: nothing to collect, said once, exit 0, no portal's series.
      const ran = await runProcess(process.execPath, [BUILT_CLI, 'once', '--shard', String(other), '--total-shards', String(total)], { env: { PATH: process.env.PATH, POSTURE_CONFIG_FILE: lonely } });
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout).not.toMatch(/portal="/);
      expect(ran.stderr).toContain('this shard owns no portal: nothing to collect');
      expect(fleet.requests(portal).length).toBe(sentBefore);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }, 30_000);
});
