/**
 * The state directory on a real full file system (a 256 KB tmpfs, mounted by the test, as root, and
 * unmounted after it), with the built CLI and real time. `once` on the full disk sends nothing and
 * ends with one line naming the directory and the disk; `serve` whose disk fills after its first
 * cycle sends nothing more, keeps answering /metrics with its last values while they are fresh and
 * /healthz with why collection stopped, and keeps running. The portal's own arrival log is the
 * oracle for what was sent.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { portalIdentity } from '../../src/config/identity.js';
import { folderOf } from '../../src/state/portal-folder.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { BUILT_CLI, runBuiltCli } from '../support/cli.js';
import { freePort } from '../support/peers.js';
import { until } from '../support/processes.js';
import { maxInAnyWindow } from '../support/window.js';

const KEY = 'sim-full-disk-key-0123456789abcd';

let mount: string;
let sim: Simulator;
let serving: ChildProcess | undefined;
beforeAll(() => {
  mount = mkdtempSync(join(tmpdir(), 'full-disk-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mount], { encoding: 'utf8' });
  if (mounted.status !== 0) throw new Error(`mount -t tmpfs failed (the test runs as root, as CI does): ${mounted.stderr}`);
});
afterAll(() => {
  spawnSync('umount', [mount]);
  rmSync(mount, { recursive: true, force: true });
});
beforeEach(async () => {
  sim = await startSimulator({ keys: [{ key: KEY }], moving: false });
});
afterEach(async () => {
  serving?.kill('SIGKILL');
  serving = undefined;
  await sim?.close();
  for (const name of ['filler', 'state']) rmSync(join(mount, name), { recursive: true, force: true });
});

/** Fills the tmpfs with a file of zeros until no byte more fits. */
function fill(): void {
  const fd = openSync(join(mount, 'filler'), 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(4096));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}

const env = (more: Record<string, string> = {}) => ({ POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_STATE_DIR: join(mount, 'state'), POSTURE_LOG_LEVEL: 'warn', ...more });

/** What the ledger says when it cannot record a claim of this portal's requests. */
const full = () =>
  `${join(mount, 'state', 'sends', folderOf(portalIdentity(sim.baseUrl)))} in the state directory cannot record a claim: its disk is full (ENOSPC); no request goes to the portal until one can be recorded: free space on that file system, or give POSTURE_STATE_DIR a directory on another`;

describe('the state directory on a full disk', () => {
  it('once sends nothing, and ends with exit 1 and one line naming the directory and the disk', async () => {
    mkdirSync(join(mount, 'state'), { mode: 0o700 });
    fill();
    const r = await runBuiltCli(['once'], env());
    expect(r.code).toBe(1);
    expect(sim.requests).toEqual([]);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`posture-exporter: collection failed for: vitals, alerts, devices, resolved: ${full()}`);
  });

  it('serve, its disk full after its first cycle, sends nothing more, serves its last values while fresh, says why on /healthz, and runs on', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    serving = spawn(process.execPath, [BUILT_CLI, 'serve', '--listen', `127.0.0.1:${port}`], {
      env: { PATH: process.env.PATH, ...env({ POSTURE_VITALS_INTERVAL_SECONDS: '40', POSTURE_DEVICES_INTERVAL_SECONDS: '120', POSTURE_ALERTS_INTERVAL_SECONDS: '120' }) },
      stdio: 'ignore',
    });
    const text = async (path: string) => (await fetch(`${url}${path}`)).text();
    // The first cycle: Vitals, the two device totals, /alerts and the resolved-alerts pass.
    await until('the first cycle', async () => ((await text('/healthz').catch(() => '')) === 'ok\n' ? true : undefined), 30_000);
    const sent = sim.requests.length;
    expect(sent).toBe(5);
    fill();
    // Vitals runs again 40 s after its first run, and claims its slot when the first cycle's five have left the window (61 s): the claim cannot be recorded.
    const healthz = await until('/healthz to say collection stopped', async () => ((await text('/healthz')).includes('collection stopped') ? text('/healthz') : undefined), 80_000);
    expect(healthz).toBe(`ok (collection stopped: ${full()})\n`);
    const metrics = await text('/metrics');
    expect(metrics).toMatch(/^posture_devices\{/m);
    expect(metrics).toMatch(/^posture_vitals_health_ratio\{/m);
    expect(metrics).toMatch(/^posture_collection_success\{portal="127\.0\.0\.1",source="vitals"\} 0$/m);
    expect(serving.exitCode).toBeNull();
    expect(sim.requests).toHaveLength(sent);
    expect(maxInAnyWindow(sim.requests.map((q) => q.time))).toBeLessThanOrEqual(5);
    unlinkSync(join(mount, 'filler'));
  }, 120_000);
});
