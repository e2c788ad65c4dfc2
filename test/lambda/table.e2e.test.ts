/**
 * The BUILT Lambda bundle with the ledger table, as serverless.yml deploys it: dynalite on loopback
 * with the table created from serverless.yml's keys (the SDK reaches it through
 * AWS_ENDPOINT_URL_DYNAMODB, with fake credentials), one simulated portal on real time, every
 * process with its own fresh state directory. One invocation; then two at once, each in its own
 * process as separate containers would be; then a `once` of the built CLI as another host: all
 * succeed, and no 60 s window at the portal holds more than the share of 5. The table remembers
 * each slow source's run whatever process made it: the first invocation runs the resolved-alerts
 * pass, and the access settings and the directory it gives back each run once after it.
 */
import { copyFileSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalIdentity } from '../../src/config/identity.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { startReceiver, type Receiver } from '../sinks/receiver.js';
import { runProcess, type Ran } from '../support/cli.js';
import { startDynalite, type Dynalite } from '../support/dynalite.js';
import { maxInAnyWindow } from '../support/window.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const RUNNER = join(ROOT, 'test/lambda/invoke-bundle.mjs');
const KEY = 'sim-table-bundle-key-0123456789';
const TABLE = 'posture-exporter-test-ledger';

let work: string;
let db: Dynalite;
let sim: Simulator;
let receiver: Receiver;
let states = 0;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'lambda-table-'));
  for (const entry of ['src', 'scripts', 'node_modules', 'tsconfig.json']) symlinkSync(join(ROOT, entry), join(work, entry));
  copyFileSync(join(ROOT, 'package.json'), join(work, 'package.json'));
  const built = runProcess('npm', ['run', 'build', '--silent'], { cwd: work, env: { PATH: process.env.PATH ?? '' } });
  db = await startDynalite();
  await db.createTable(TABLE);
  // The portal's clock is real: its request log holds the times the requests arrived.
  sim = await startSimulator({ moving: false, keys: [{ key: KEY }] });
  receiver = await startReceiver();
  const { code, stderr } = await built;
  if (code !== 0) throw new Error(`npm run build failed:\n${stderr}`);
}, 180_000);

afterAll(async () => {
  await Promise.all([sim?.close(), receiver?.close(), db?.close()]);
  if (work) rmSync(work, { recursive: true, force: true });
});

/** What every process shares: the portal, the table and how to reach it; and a fresh state directory of its own. */
function env(): Record<string, string> {
  return { PATH: process.env.PATH ?? '', ...db.env, POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_STATE_TABLE: TABLE, POSTURE_STATE_DIR: join(work, `state-${++states}`) };
}

/** One invocation of the built handler in a fresh process; its outcome (the runner's last line). */
async function invoke(): Promise<{ ran: Ran; result: { ok: boolean; summary?: { portals: Array<{ sources: Record<string, string> }> }; error?: { message: string } } }> {
  const ran = await runProcess(process.execPath, [RUNNER, join(work, 'dist/lambda/index.mjs'), '300000'], {
    cwd: work,
    env: { ...env(), POSTURE_PUSH: 'remote_write', POSTURE_REMOTE_WRITE_URL: `${receiver.url}/api/v1/write` },
  });
  const last = ran.stdout.trimEnd().split('\n').at(-1) ?? '';
  if (!last.startsWith('INVOCATION_RESULT ')) throw new Error(`the runner did not finish (exit ${ran.code}):\n${ran.stderr.slice(-2000)}`);
  return { ran, result: JSON.parse(last.slice('INVOCATION_RESULT '.length)) as never };
}

describe('the built bundle and a once elsewhere, on one table', () => {
  it('all succeed, and no 60 s window at the portal holds more than the share of 5', async () => {
    const first = await invoke();
    expect(first.result.ok, first.result.error?.message).toBe(true);
    // No slow source in the table yet, so all three are due: the window of 5 leaves 5 - 1 (Vitals) - 2 (devices) - 1 (/alerts)
    // = 1 beside the sources, so the resolved-alerts pass runs (the first due, 1 request while its total is unknown) and the
    // access settings (3) and the directory (1) are given back: 4 + 1 = 5.
    expect(first.result.summary!.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
    expect(sim.requests).toHaveLength(5);

    // Two containers at once, then a cron `once` on another host. The pass is within its hour. One container claims the
    // access settings (due and first: it runs them, 4 + 3 = 7); the directory runs once, in the other container if its
    // claim comes after the first gives it back (4 + 1), else in the once (4 + 1). Each run plans for its own requests
    // only: the containers' 11 or 12 take the three windows after the first's, which their plans allow. (Three containers
    // at once send 15 or 16, and with 16 the last request waits a window longer than its plan and is late.)
    const [a, b] = await Promise.all([invoke(), invoke()]);
    const once = await runProcess(process.execPath, [join(work, 'dist/cli.js'), 'once'], { cwd: work, env: env() });
    const slowIn = (sources: Record<string, string>) => Object.keys(sources).filter((s) => !['vitals', 'alerts', 'devices'].includes(s));
    const ran: string[] = [];
    for (const inv of [a!, b!]) {
      expect(inv.result.ok, inv.result.error?.message).toBe(true);
      const sources = inv.result.summary!.portals[0]!.sources;
      expect(Object.values(sources).every((v) => v === 'ok'), JSON.stringify(sources)).toBe(true);
      ran.push(...slowIn(sources));
    }
    expect(once.code, once.stderr.slice(-2000)).toBe(0);
    const onceSlow = ['resolved', 'access', 'directory'].filter((s) => new RegExp(`^posture_collection_success\\{[^}]*source="${s}"[^}]*\\} 1$`, 'm').test(once.stdout));
    // Each slow source once after the first invocation: the access settings in a container, the directory in one run.
    expect([...ran, ...onceSlow].sort()).toEqual(['access', 'directory']);
    expect(ran).toContain('access');

    // Four runs of four requests (the first's, the containers', the once's), the pass's 1, the access settings' 3 and the
    // directory's 1, each answered.
    const times = sim.requests.map((q) => q.time);
    expect(times).toHaveLength(4 * 4 + 1 + 3 + 1);
    expect(sim.requests.filter((q) => q.query.filter === 'resolved')).toHaveLength(1);
    expect(sim.requests.filter((q) => q.path.startsWith('/settings/usermanagement/')).map((q) => q.path).sort()).toEqual(['/settings/usermanagement/roles', '/settings/usermanagement/teams', '/settings/usermanagement/users']);
    expect(sim.requests.filter((q) => q.path === '/users')).toHaveLength(1);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
    expect(maxInAnyWindow(times)).toBe(5);
    // The table holds each of them, in claim order.
    const items = await db.items(TABLE, portalIdentity(sim.baseUrl));
    expect(items.filter((i) => !i.released).map((i) => i.n)).toEqual(Array.from({ length: times.length }, (_, i) => i + 1));
    // And the pass, the one claim of the entry's chain of its own (the entry is named after the portal's host).
    const pass = await db.items(TABLE, `resolved-pass ${JSON.stringify([portalIdentity(sim.baseUrl), '127.0.0.1'])}`);
    expect(pass.map((i) => [i.n, i.at! <= sim.requests.find((q) => q.query.filter === 'resolved')!.time])).toEqual([[1, true]]);
  }, 360_000);
});
