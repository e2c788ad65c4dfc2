/**
 * Four real processes claim slots of one portal in one DynamoDB table (dynalite on loopback, the
 * table created from serverless.yml's keys) as fast as the share lets them, releasing some: no
 * 62 s window (60 s, its 1 s margin, the 1 s allowed for skew) ever holds more than the share, and
 * every number of the chain was claimed exactly once.
 *
 * The processes share a clock that runs 20 times faster than real time (from one real instant the
 * test gives them all), so twelve real seconds are four minutes of the portal's windows.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynalite, type Dynalite } from '../support/dynalite.js';
import { maxInAnyWindow } from '../support/window.js';

const TABLE = 'posture-exporter-e2e-ledger';
const PORTAL = 'https://acme.example.com/public-api/v1';
const SHARE = 5;
const SPEED = 20;
const RUN_MS = 12_000;
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

/** One claimer: claims until its time is up, gives back about one grant in six, and prints how many it kept and gave back. */
const CLAIMER = `
const [tableModule, table, portal, share, speed, t0, realStart, realEnd] = process.argv.slice(1);
const { openTable } = await import(tableModule);
const clock = {
  now: () => Number(t0) + (Date.now() - Number(realStart)) * Number(speed),
  monotonic: () => Number(t0) + (Date.now() - Number(realStart)) * Number(speed),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms) / Number(speed))),
};
const quiet = () => {};
const logger = { debug: quiet, info: quiet, warn: (m) => process.stderr.write(m + '\\n'), error: (m) => process.stderr.write(m + '\\n'), child: () => logger };
while (Date.now() < Number(realStart)) await new Promise((r) => setTimeout(r, 5));
const ledger = openTable(table, logger, clock).ledgerOf(portal);
let granted = 0;
let released = 0;
let claims = 0;
while (Date.now() < Number(realEnd)) {
  claims++;
  const r = await ledger.claim(Number(share));
  if (!r.granted) {
    await clock.sleep(r.waitMs);
    continue;
  }
  if (Math.random() < 1 / 6) {
    await r.release();
    released++;
  } else granted++;
  // The request's own time, up to 3 s.
  await clock.sleep(Math.random() * 3000);
}
process.stdout.write(JSON.stringify({ granted, released, claims }) + '\\n');
process.exit(0);
`;

let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite();
  await db.createTable(TABLE);
});
afterAll(async () => {
  await db?.close();
});

interface Claimed {
  granted: number;
  released: number;
  claims: number;
}

function claimer(realStart: number): Promise<{ code: number | null; out: Claimed | undefined; stderr: string }> {
  const tableModule = new URL('../../src/state/table.ts', import.meta.url).href;
  const args = ['--import', 'tsx', '--input-type=module', '-e', CLAIMER, tableModule, TABLE, PORTAL, String(SHARE), String(SPEED), String(T0), String(realStart), String(realStart + RUN_MS)];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: new URL('../..', import.meta.url).pathname, env: { PATH: process.env.PATH, ...db.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out: stdout.trim() ? (JSON.parse(stdout.trim()) as Claimed) : undefined, stderr }));
  });
}

describe('four processes on one table', () => {
  it('never hold more than the share in any window, and claim every number of the chain once', async () => {
    // Time for four processes to load TypeScript on a busy machine, then all start at once.
    const realStart = Date.now() + 8_000;
    const runs = await Promise.all([0, 1, 2, 3].map(() => claimer(realStart)));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    expect(runs.map((r) => r.stderr)).toEqual(['', '', '', '']);
    const outs = runs.map((r) => r.out!);

    const items = await db.items(TABLE, PORTAL);
    // Every number from 1 up was claimed once: no gap, no number twice (it is the key).
    expect(items.map((i) => i.n)).toEqual(Array.from({ length: items.length }, (_, i) => i + 1));
    expect(new Set(items.map((i) => i.writer)).size).toBe(4);
    // The processes' own account and the table's agree.
    const sent = items.filter((i) => !i.released).map((i) => i.at!);
    expect(sent).toHaveLength(outs.reduce((n, o) => n + o.granted, 0));
    expect(items.filter((i) => i.released)).toHaveLength(outs.reduce((n, o) => n + o.released, 0));
    // Four minutes at 5 per 62 s: at least three windows' worth went out, never more than 5 in one.
    expect(sent.length).toBeGreaterThanOrEqual(15);
    expect(maxInAnyWindow(sent, 62_000)).toBe(SHARE);
  }, 60_000);
});
