/**
 * The BUILT Lambda bundle with the ledger table, as serverless.yml deploys it: dynalite on loopback
 * with the table created from serverless.yml's keys (the SDK reaches it through
 * AWS_ENDPOINT_URL_DYNAMODB, with fake credentials), one simulated portal on real time, every
 * process with its own fresh state directory. One invocation; then three at once, each in its own
 * process as separate containers would be, beside a `once` of the built CLI as another host: all
 * succeed, and no 60 s window at the portal holds more than the share of 5.
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
    expect(sim.requests).toHaveLength(4);

    // Three containers at once, and a cron `once` on another host.
    const [a, b, c, once] = await Promise.all([invoke(), invoke(), invoke(), runProcess(process.execPath, [join(work, 'dist/cli.js'), 'once'], { cwd: work, env: env() })]);
    for (const inv of [a!, b!, c!]) {
      expect(inv.result.ok, inv.result.error?.message).toBe(true);
      expect(inv.result.summary!.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok' });
    }
    expect(once!.code, once!.stderr.slice(-2000)).toBe(0);

    // Five runs of four requests, each answered.
    const times = sim.requests.map((q) => q.time);
    expect(times).toHaveLength(20);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
    expect(maxInAnyWindow(times)).toBe(5);
    // The table holds each of them, in claim order.
    const items = await db.items(TABLE, portalIdentity(sim.baseUrl));
    expect(items.filter((i) => !i.released).map((i) => i.n)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  }, 360_000);
});
