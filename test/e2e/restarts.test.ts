/**
 * The share across restarts, on real time through the built CLI: `serve` SIGKILLed a few seconds
 * after each start (a pod in a crash loop), then `once` twice back to back (cron), all with one
 * POSTURE_STATE_DIR. The portal's own request log is the oracle: no 60 s window holds more than
 * the share of 5.
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
    for (let i = 0; i < 2; i++) {
      const r = await runBuiltCli(['once', '--format', 'json'], env());
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      const samples = (JSON.parse(r.stdout) as { samples: Array<{ name: string; labels: Record<string, string>; value: number }> }).samples;
      const all = [...portal.sim.data().devices()].length;
      const devices = samples.filter((s) => s.name === 'posture_devices').reduce((n, s) => n + s.value, 0);
      expect(devices).toBe(all);
    }
    const log = portal.sim.requests;
    // Four source requests each, and the resolved-alerts pass once: the first once finds no record of
    // a pass in the state directory (serve keeps its passes in memory) and claims it for its hour.
    expect(log).toHaveLength(byServe + 9);
    expect(log.filter((q) => q.path === '/alerts' && q.query.filter === 'resolved' && q.time >= log[byServe]!.time)).toHaveLength(1);
    expect(log.every((q) => q.status === 200)).toBe(true);
    expect(maxInAnyWindow(log.map((q) => q.time))).toBeLessThanOrEqual(5);
  }, 240_000);
});
