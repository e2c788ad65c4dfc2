/**
 * The share across restarts, on real time through the built CLI: `serve` SIGKILLed a few seconds
 * after each start (a pod in a crash loop), then `once` twice back to back (cron), all with one
 * POSTURE_STATE_DIR. The portal's own request log is the oracle: no 60 s window holds more than
 * the share of 5, and the slow source the first once gives back (it does not fit beside the live
 * sources) is the one the second once runs.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BUILT_CLI, runBuiltCli } from '../support/cli.js';
import { freePort } from '../support/peers.js';
import { until } from '../support/processes.js';
import { simulatorWithStateDir } from '../support/sim-state.js';
import { maxInAnyWindow } from '../support/window.js';

const KEY = 'sim-restarts-key-0123456789abcdef';
const RESTARTS = 3;

const portal = simulatorWithStateDir(KEY, 'restarts-state-', 'all');

const env = () => ({ POSTURE_BASE_URL: portal.sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_REQUESTS_PER_MINUTE: '5', POSTURE_STATE_DIR: portal.stateDir, POSTURE_LOG_LEVEL: 'warn' });

/** `serve` started, left to run until it has been up `ms` and the portal has heard from it (or its window is full), then SIGKILLed. */
async function serveKilledAfter(ms: number): Promise<void> {
  const port = await freePort();
  const child = spawn(process.execPath, [BUILT_CLI, 'serve', '--listen', `127.0.0.1:${port}`], { env: { PATH: process.env.PATH, ...env() }, stdio: 'ignore' });
  try {
    await until('serve answering', async () => ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined), 15_000);
    await new Promise((r) => setTimeout(r, ms));
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }
}

describe('serve killed again and again, then once back to back, on one state directory', () => {
  it('never sends more than the share of 5 in any 60 s, and the onces still collect everything', async () => {
    for (let i = 0; i < RESTARTS; i++) await serveKilledAfter(2_000 + 500 * i);
    // A crash loop that started at once would have sent 4 requests each time: 12 by now.
    const byServe = portal.sim.requests.length;
    expect(byServe).toBeGreaterThanOrEqual(4);
    expect(byServe).toBeLessThanOrEqual(5);
    // What each once sent, as the portal logged it.
    const sentBy: Array<typeof portal.sim.requests> = [];
    for (let i = 0; i < 2; i++) {
      const before = portal.sim.requests.length;
      const r = await runBuiltCli(['once', '--format', 'json'], env());
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      const samples = (JSON.parse(r.stdout) as { samples: Array<{ name: string; labels: Record<string, string>; value: number }> }).samples;
      const all = [...portal.sim.data().devices()].length;
      const devices = samples.filter((s) => s.name === 'posture_devices').reduce((n, s) => n + s.value, 0);
      expect(devices).toBe(all);
      sentBy.push(portal.sim.requests.slice(before));
    }
    const log = portal.sim.requests;
    const slow = (sent: typeof log) => ({
      resolved: sent.filter((q) => q.path === '/alerts' && q.query.filter === 'resolved').length,
      access: sent.filter((q) => q.path.startsWith('/settings/usermanagement/')).map((q) => q.path).sort(),
      directory: sent.filter((q) => q.path === '/users').length,
    });
    // The first once finds no record of a slow source in the state directory (serve keeps them in
    // memory): all three are due; the first, the resolved-alerts pass (1 request while its total is
    // unknown), runs beside the four sources' 4 (Vitals 1, devices 2, /alerts 1), and the access
    // settings (3) and the directory (1) do not fit what the share of 5 leaves (5 - 4 - 1 = 0): given
    // back. The second once finds the pass made, so the access settings are its first due slow source
    // and run (4 + 3, over two windows); the directory does not fit beside them and is given back again.
    expect(sentBy.map((sent) => sent.length)).toEqual([4 + 1, 4 + 3]);
    expect(sentBy.map(slow)).toEqual([
      { resolved: 1, access: [], directory: 0 },
      { resolved: 0, access: ['/settings/usermanagement/roles', '/settings/usermanagement/teams', '/settings/usermanagement/users'], directory: 0 },
    ]);
    expect(log).toHaveLength(byServe + 5 + 7);
    expect(log.every((q) => q.status === 200)).toBe(true);
    expect(maxInAnyWindow(log.map((q) => q.time))).toBeLessThanOrEqual(5);
  }, 240_000);
});
