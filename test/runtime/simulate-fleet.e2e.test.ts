/**
 * `simulate --portals N --write-config FILE` through the built CLI, as docs/sharding.md walks
 * through it: one process serves N portals on one port, each with its own key and data, and writes
 * the exporter's `portals` config with each key in a file of its own (mode 0600). Three `once`
 * shards over that config collect every portal exactly once, with the values the portal holds
 * (computed from the simulator's data with the spec's rules, not by the exporter).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { portalIdentity } from '../../src/config/identity.js';
import { shardOf } from '../../src/config/shard.js';
import { startFleet, type Fleet } from '../../src/simulator/fleet.js';
import { BUILT_CLI, runBuiltCli } from '../support/cli.js';
import { until } from '../support/processes.js';
import { CHECKED, expectedFromPortal, familiesOf, type ReadSample } from '../lambda/support.js';

const PORTALS = 9;
const SHARDS = 3;

let dir: string;
let configFile: string;
let child: ChildProcess;
let stdout = '';
/** The same fleet in this process (same seed and sizes): the data the oracle reads. */
let twin: Fleet;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'simulate-fleet-'));
  configFile = join(dir, 'fleet.yaml');
  child = spawn(process.execPath, [BUILT_CLI, 'simulate', '--portals', String(PORTALS), '--listen', '127.0.0.1:0', '--write-config', configFile], {
    env: { PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  await until('the fleet config written', () => (existsSync(configFile) && stdout.includes('POSTURE_CONFIG_FILE=') ? true : undefined), 15_000, () => stdout);
  twin = await startFleet({ portals: PORTALS });
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  await twin?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Entry {
  portal: string;
  base_url: string;
  api_key_file: string;
}

describe('simulate --portals N --write-config FILE', () => {
  it('writes a portals config of N portals on one port, each key in its own 0600 file, and says how to use it', () => {
    const config = parse(readFileSync(configFile, 'utf8')) as { portals: Entry[] };
    expect(Object.keys(config)).toEqual(['portals']);
    expect(config.portals.map((p) => p.portal)).toEqual(twin.names);
    const origins = new Set(config.portals.map((p) => new URL(p.base_url).origin));
    expect(origins.size).toBe(1);
    for (const p of config.portals) {
      expect(p.base_url).toBe(`${[...origins][0]}/p/${p.portal}/public-api/v1`);
      expect(statSync(p.api_key_file).mode & 0o777).toBe(0o600);
      // The same seed gives the same portal: the twin's key is this portal's key.
      expect(readFileSync(p.api_key_file, 'utf8').trim()).toBe(twin.apiKey(p.portal));
    }
    expect(new Set(config.portals.map((p) => readFileSync(p.api_key_file, 'utf8'))).size).toBe(PORTALS);
    expect(stdout).toContain(`simulated fleet: ${PORTALS} portal(s)`);
    expect(stdout).toContain(`POSTURE_CONFIG_FILE=${configFile} posture-exporter once`);
    // The keys are in files, not in the config or on stdout.
    for (const name of twin.names) {
      expect(readFileSync(configFile, 'utf8')).not.toContain(twin.apiKey(name));
      expect(stdout).not.toContain(twin.apiKey(name));
    }
  });

  it('check-config accepts it', async () => {
    const ran = await runBuiltCli(['check-config'], { POSTURE_CONFIG_FILE: configFile });
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(new RegExp(`^configuration is valid: ${PORTALS} portal\\(s\\)`));
  });

  it(`${SHARDS} once shards over it collect every portal exactly once, with the values each portal holds`, async () => {
    const before = Date.now();
    const runs = await Promise.all(
      Array.from({ length: SHARDS }, (_, i) => runBuiltCli(['once', '--format', 'json', '--log-level', 'warn', '--shard', String(i), '--total-shards', String(SHARDS)], { POSTURE_CONFIG_FILE: configFile })),
    );
    const after = Date.now();
    const collectedBy = new Map<string, number[]>();
    const samplesOf = new Map<string, ReadSample[]>();
    for (const [i, ran] of runs.entries()) {
      expect(ran.code, ran.stderr).toBe(0);
      const out = JSON.parse(ran.stdout) as { samples: ReadSample[] };
      for (const s of out.samples) {
        const portal = s.labels.portal;
        if (portal === undefined) continue;
        if (!collectedBy.get(portal)?.includes(i)) collectedBy.set(portal, [...(collectedBy.get(portal) ?? []), i]);
        samplesOf.set(portal, [...(samplesOf.get(portal) ?? []), s]);
      }
    }
    // Every portal, by exactly one shard: the one its identity (its base URL, as the config lists it) hashes to.
    const config = parse(readFileSync(configFile, 'utf8')) as { portals: Entry[] };
    const baseUrlOf = new Map(config.portals.map((p) => [p.portal, p.base_url]));
    expect([...collectedBy.keys()].sort()).toEqual([...twin.names]);
    for (const [portal, shards] of collectedBy) expect(shards, portal).toEqual([shardOf(portalIdentity(baseUrlOf.get(portal)!), SHARDS)]);
    // Exact values. The data moves with real time (Vitals every 5 minutes), so each series holds what
    // the portal held when the runs began or when they ended.
    for (const portal of twin.names) {
      const [early, late] = [expectedFromPortal(twin.portal(portal), before), expectedFromPortal(twin.portal(portal), after)];
      for (const source of ['alerts', 'devices', 'vitals'] as const) {
        const got = familiesOf(samplesOf.get(portal), CHECKED[source]);
        expect([...got.keys()].sort(), `${portal} ${source}`).toEqual([...early[source].keys()].sort());
        for (const [series, value] of got) expect([early[source].get(series), late[source].get(series)], `${portal} ${series}`).toContain(value);
      }
      expect(early.devices.size).toBe(2);
    }
  }, 60_000);
});
