/**
 * The state directory is the exporter's own, as a user runs the built CLI: created 0700 inside a
 * directory anyone may write (Kubernetes' emptyDir is root's and 0777), and refused, exit 2 before
 * any request, when others may write it or another user owns it. Run as nobody (uid 65534) when
 * the tests run as root, as CI does.
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { unprivilegedCli, type UnprivilegedCli } from '../support/unprivileged.js';

let cli: UnprivilegedCli;
let sim: Simulator;
let root: string;
beforeAll(async () => {
  cli = unprivilegedCli();
  sim = await startSimulator({ alerts: 10, moving: false });
  root = mkdtempSync(join(tmpdir(), 'state-ownership-'));
  chmodSync(root, 0o755);
});
afterAll(async () => {
  cli?.remove();
  await sim?.close();
  rmSync(root, { recursive: true, force: true });
});

/** `once` as the unprivileged user, with POSTURE_STATE_DIR; its exit code and what it said. */
function once(stateDir: string): Promise<{ code: number | null; stderr: string }> {
  const [cmd, args] = cli.command(['once']);
  const child = spawn(cmd, args, { cwd: cli.cwd ?? '/', env: { PATH: process.env.PATH, ...cli.env, POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: sim.apiKey, POSTURE_STATE_DIR: stateDir, POSTURE_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })));
}

describe('the state directory, as the exporter\'s own', () => {
  it('is created 0700, with nothing others can read, inside a directory anyone may write (an emptyDir)', async () => {
    const emptyDir = join(root, 'emptydir');
    mkdirSync(emptyDir);
    chmodSync(emptyDir, 0o777);
    const r = await once(join(emptyDir, 'state'));
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(join(emptyDir, 'state')).mode & 0o777).toBe(0o700);
    const inside = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => [join(dir, e.name), ...(e.isDirectory() ? inside(join(dir, e.name)) : [])]);
    const all = inside(join(emptyDir, 'state'));
    expect(all.length).toBeGreaterThan(0);
    for (const path of all) expect(statSync(path).mode & 0o077, path).toBe(0);
  });

  /** Runs `once` on `dir`: exit 2, one line naming the setting and `problem`, no request to the portal. */
  async function expectRefused(dir: string, problem: RegExp): Promise<void> {
    const before = sim.requests.length;
    const r = await once(dir);
    expect(r.code).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^config error: POSTURE_STATE_DIR \(--state-dir\) /);
    expect(lines[0]).toMatch(problem);
    expect(sim.requests.length).toBe(before);
  }

  it('is refused when others may write it, though the user\'s own: exit 2, one line naming the setting, no request to the portal', async () => {
    const dir = join(root, 'open');
    mkdirSync(dir);
    // The user the CLI runs as owns it (nobody, when the tests run as root).
    chownSync(dir, cli.uid, cli.uid);
    chmodSync(dir, 0o777);
    await expectRefused(dir, /is writable by its group \(mode 0777\)/);
  });

  it('is refused when another user owns it (root\'s /): exit 2, one line naming the setting, no request to the portal', async () => {
    await expectRefused('/', /is owned by uid 0, not by this user/);
  });
});
