// The access settings and the directory in real time, as a user runs them: the built CLI's `once` against the
// simulated portal (npm run build first). Its accounts, roles and teams and its directory users are read and
// counted as a naive reading of the same JSON says, and no username, name, surname or email of them appears
// in anything the run wrote. Its other tests run on a FakeClock (test/integration/access-directory.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runBuiltCli } from '../support/cli.js';

const KEY = 'sim-access-once-key-0123456789abcd';

describe('the built once with the access settings and the directory', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ keys: [{ key: KEY }], rateLimit: false, moving: false });
  });
  afterAll(() => sim.close());

  /** A list as the portal serves it. */
  async function list(path: string): Promise<Array<Record<string, unknown>>> {
    const res = await fetch(`${sim.baseUrl}${path}`, { headers: { 'X-Service-ApiKey': KEY } });
    return ((await res.json()) as { data: Array<Record<string, unknown>> }).data;
  }

  it('counts the portal accounts by their labels and the directory users, and writes no personal data', async () => {
    const [accounts, directory] = await Promise.all([list('/settings/usermanagement/users'), list('/users?filter=all')]);
    // The whole share: a first run's 9 requests fit one window.
    const once = await runBuiltCli(['once'], { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'p', POSTURE_REQUESTS_PER_MINUTE: '10' });
    expect(once.code, once.stderr).toBe(0);
    const counts = new Map<string, number>();
    for (const a of accounts) {
      const key = `posture_portal_users{portal="p",role="${String(a.roleid)}",enabled="${String(a.enabled)}",mfa="${String(a.mfastatus)}",sso="${String(a.ssostatus)}"}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const got = new Map(once.stdout.split('\n').filter((l) => l.startsWith('posture_portal_users{')).map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]));
    expect(got).toEqual(counts);
    expect(once.stdout).toContain(`posture_directory_users{portal="p"} ${directory.length}`);
    const personal = [...accounts.flatMap((a) => [a.username, a.name, a.surname]), ...directory.flatMap((u) => [u.name, u.email])].filter((w): w is string => typeof w === 'string' && w.length > 3);
    expect(personal.length).toBeGreaterThan(accounts.length);
    for (const word of personal) expect(once.stdout + once.stderr, word).not.toContain(word);
  });
});
