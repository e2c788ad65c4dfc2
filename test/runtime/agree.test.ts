/**
 * check-config and the runtime agree: each configuration check-config refuses, `once` and `serve`
 * refuse at start too, with the same lines and exit 2, before any request reaches the portal.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from '../support/cli.js';
import { portalForAll } from '../support/closing.js';

const KEY = 'sim-agree-key-0123456789abcdef';
const sim = portalForAll({ keys: [{ key: KEY }], rateLimit: false, moving: false });
const dir = mkdtempSync(join(tmpdir(), 'agree-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A config file listing two portals of the simulated portal, the second's key file missing. */
function fleetWithMissingKey(): string {
  const present = join(dir, 'acme.key');
  writeFileSync(present, `${KEY}\n`);
  const file = join(dir, 'fleet.yaml');
  writeFileSync(file, `portals:\n  - portal: acme\n    base_url: ${sim().baseUrl}\n    api_key_file: ${present}\n  - portal: globex\n    base_url: ${sim().baseUrl}\n    api_key_file: ${join(dir, 'keys/globex')}\n`);
  return file;
}

const CASES: Array<{ what: string; env: () => Record<string, string>; args?: string[]; line: RegExp }> = [
  {
    what: 'a base URL without /public-api/v1',
    env: () => ({ POSTURE_BASE_URL: sim().baseUrl.replace('/public-api/v1', '/api'), POSTURE_API_KEY: KEY }),
    line: /^config error: POSTURE_BASE_URL=".*\/api" does not end in \/public-api\/v1: give https:\/\/<cloud_id>\.<host>\/public-api\/v1 \(the portal answers 404 elsewhere\)\.$/,
  },
  {
    what: "a portal's api_key_file that cannot be read",
    env: () => ({ POSTURE_CONFIG_FILE: fleetWithMissingKey() }),
    line: /^config error: cannot read the API key from config file .*fleet\.yaml: portals\[1\]\.api_key_file \(.*keys\/globex\) \(ENOENT\): check it exists and the process may read it\.$/,
  },
  {
    what: 'intervals that do not fit the share',
    env: () => ({ POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY, POSTURE_INTERVAL_SECONDS: '10' }),
    line: /^config error: the intervals need 1440 requests per hour but the share allows 300 \(5\/min\): set POSTURE_INTERVAL_SECONDS=50, or raise POSTURE_REQUESTS_PER_MINUTE\.$/,
  },
  {
    what: 'a web config file that cannot be read',
    env: () => ({ POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY, POSTURE_WEB_CONFIG_FILE: join(dir, 'no-web.yml') }),
    line: /^config error: POSTURE_WEB_CONFIG_FILE \(--web-config-file\): cannot read .*no-web\.yml \(ENOENT\)/,
  },
  {
    what: 'a shard that is not a shard',
    env: () => ({ POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY }),
    args: ['--shard', '-1', '--total-shards', '3'],
    line: /^config error: POSTURE_SHARD \(--shard\): '-1' is not a shard number: a shard is a whole number from 0 to 2 \(below the total of 3 shards\) or a StatefulSet pod name ending in -N \(e\.g\. posture-exporter-2\)$/,
  },
];

describe('check-config and the runtime agree', () => {
  it.each(CASES)('$what: check-config, once and serve each refuse with the same line, exit 2, no request', async ({ env, args = [], line }) => {
    const sent = sim().requests.length;
    const lines: string[][] = [];
    const stdouts: string[] = [];
    for (const command of ['check-config', 'once', 'serve']) {
      const r = await runMain([command, '--listen', '127.0.0.1:0', ...args], { env: { ...env() }, stopSignal: Promise.resolve() });
      expect(r.code, `${command}: ${r.stderr}`).toBe(2);
      const errors = r.stderr.split('\n').filter((l) => l.startsWith('config error'));
      expect(errors, command).toHaveLength(1);
      expect(errors[0], command).toMatch(line);
      lines.push(errors);
      stdouts.push(r.stdout);
    }
    // check-config may print the plan on stdout; the runtime prints nothing there.
    expect(stdouts.slice(1)).toEqual(['', '']);
    expect(lines[1]).toEqual(lines[0]);
    expect(lines[2]).toEqual(lines[0]);
    expect(sim().requests.length).toBe(sent);
  });

  it('and what check-config accepts, once runs', async () => {
    const env = { POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY };
    expect((await runMain(['check-config'], { env })).code).toBe(0);
    const once = await runMain(['once'], { env });
    expect(once.code, once.stderr).toBe(0);
    expect(once.stdout).toMatch(/^posture_devices\{/m);
  });
});
