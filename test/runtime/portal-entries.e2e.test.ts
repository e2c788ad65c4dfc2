/**
 * One portal read with two keys (a full one and a team-scoped one) beside 11 other portals, through
 * the built CLI on real time, over 4 `once` shards: both entries land on one shard, every entry is
 * collected exactly once, each entry's values are exact for its key, and the portal's own request
 * log never holds more than one share of 5 in any 60 s.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleet, type Fleet } from '../../src/simulator/fleet.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runBuiltCli } from '../support/cli.js';
import { maxInAnyWindow } from '../support/window.js';
import { seenBy } from '../support/seen-by.js';

const FULL = 'sim-entries-full-key-0123456789';
const FINANCE = 'sim-entries-finance-key-012345';
const SHARDS = 4;

let acme: Simulator;
let fleet: Fleet;
let dir: string;
let configFile: string;

beforeAll(async () => {
  acme = await startSimulator({ keys: [{ key: FULL }, { key: FINANCE, team: { name: 'Finance IT', tags: ['finance'] } }], moving: false, seed: 5, devices: 300 });
  fleet = await startFleet({ portals: 11, moving: false });
  dir = mkdtempSync(join(tmpdir(), 'portal-entries-'));
  configFile = join(dir, 'portals.json');
  const others = fleet.names.map((name) => ({ portal: name, base_url: fleet.baseUrl(name), api_key: fleet.apiKey(name) }));
  writeFileSync(
    configFile,
    JSON.stringify({
      requests_per_minute: 5,
      portals: [
        { portal: 'acme-all', base_url: acme.baseUrl, api_key: FULL },
        ...others.slice(0, 6),
        // The same portal, its base URL written with a trailing slash.
        { portal: 'acme-finance', base_url: `${acme.baseUrl}/`, api_key: FINANCE },
        ...others.slice(6),
      ],
    }),
  );
});

afterAll(async () => {
  await acme?.close();
  await fleet?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Samples = Array<{ name: string; labels: Record<string, string>; value: number }>;

/** What a key of acme sees (test/support/seen-by.ts), flat as valuesOf reads the samples. */
function seen(at: number, teamTags?: readonly string[]) {
  const { open, ...devices } = seenBy(acme, at, teamTags);
  return { ...devices, ...open };
}

function valuesOf(samples: Samples, portal: string) {
  const get = (name: string, labels: Record<string, string>) => samples.find((s) => s.name === name && s.labels.portal === portal && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
  return {
    active: get('posture_devices', { activity: 'active' }),
    inactive: get('posture_devices', { activity: 'inactive' }),
    red: get('posture_alerts_open', { severity: 'red' }),
    amber: get('posture_alerts_open', { severity: 'amber' }),
    green: get('posture_alerts_open', { severity: 'green' }),
  };
}

describe('two keys of one portal beside 11 other portals, over 4 once shards', () => {
  it('puts both entries on one shard, collects every entry once, each exact, never over one share at the portal', async () => {
    const runs = await Promise.all(
      Array.from({ length: SHARDS }, (_, i) => runBuiltCli(['once', '--format', 'json', '--shard', String(i), '--total-shards', String(SHARDS), '--log-level', 'warn'], { POSTURE_CONFIG_FILE: configFile })),
    );
    const owned = runs.map((r, i) => {
      expect(r.code, `shard ${i}: ${r.stderr.slice(-1500)}`).toBe(0);
      const samples = (JSON.parse(r.stdout) as { samples: Samples }).samples;
      return { samples, portals: new Set(samples.filter((s) => s.name === 'posture_devices').map((s) => s.labels.portal!)) };
    });
    const all = owned.flatMap((o) => [...o.portals]);
    expect(all.sort()).toEqual(['acme-all', 'acme-finance', ...fleet.names].sort());
    const withAcme = owned.filter((o) => o.portals.has('acme-all'));
    expect(withAcme).toHaveLength(1);
    expect(withAcme[0]!.portals.has('acme-finance')).toBe(true);

    const at = Date.now();
    const everything = seen(at);
    const team = seen(at, ['finance']);
    expect(team.active + team.inactive).toBeLessThan(everything.active + everything.inactive);
    expect(valuesOf(withAcme[0]!.samples, 'acme-all')).toEqual(everything);
    expect(valuesOf(withAcme[0]!.samples, 'acme-finance')).toEqual(team);

    // 5 requests per entry (its sources' 4, and its resolved-alerts pass: each shard is a first run) on one share of 5:
    // the second window was needed, and none held more than 5.
    expect(acme.requests.map((q) => q.keyIndex).sort()).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
    expect(acme.requests.every((q) => q.status === 200)).toBe(true);
    expect(maxInAnyWindow(acme.requests.map((q) => q.time))).toBe(5);
    for (const name of fleet.names) expect(fleet.requests(name)).toHaveLength(5);
    expect(fleet.overBudget()).toEqual([]);
  }, 180_000);
});
