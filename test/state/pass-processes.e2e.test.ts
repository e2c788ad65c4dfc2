/**
 * Real processes claiming one entry's resolved-alerts pass at one instant, as `once` from cron and
 * Lambda containers do: six on one state directory, six on one DynamoDB table (dynalite on
 * loopback, created from serverless.yml's keys). In each, exactly one makes the pass.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynalite, type Dynalite } from '../support/dynalite.js';

const TABLE = 'posture-exporter-e2e-passes';
const PORTAL = 'https://acme.example.com/public-api/v1';
const PROCESSES = 6;

/** One claimer: opens the passes (of the state directory or the table), waits for the common instant, claims once, prints whether it won. */
const CLAIMER = `
const [root, kind, where, portal, realStart] = process.argv.slice(1);
const { systemClock } = await import(root + 'src/core/clock.ts');
const quiet = () => {};
const logger = { debug: quiet, info: quiet, warn: (m) => process.stderr.write(m + '\\n'), error: (m) => process.stderr.write(m + '\\n'), child: () => logger };
let passes;
if (kind === 'table') {
  const { openTable } = await import(root + 'src/state/table.ts');
  passes = openTable(where, logger, systemClock).passes;
} else {
  const { openState } = await import(root + 'src/state/index.ts');
  passes = openState(where, logger, systemClock).passes;
}
while (Date.now() < Number(realStart)) await new Promise((r) => setTimeout(r, 1));
const claim = await passes.claim(portal, 'acme', 3600000);
process.stdout.write(JSON.stringify({ due: claim.due }) + '\\n');
process.exit(0);
`;

let db: Dynalite;
let dir: string;
beforeAll(async () => {
  db = await startDynalite();
  await db.createTable(TABLE);
  dir = mkdtempSync(join(tmpdir(), 'pass-processes-'));
});
afterAll(async () => {
  await db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function claimer(kind: 'table' | 'dir', where: string, realStart: number): Promise<{ code: number | null; due: boolean | undefined; stderr: string }> {
  const root = new URL('../../', import.meta.url).href;
  const args = ['--import', 'tsx', '--input-type=module', '-e', CLAIMER, root, kind, where, PORTAL, String(realStart)];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: new URL('../..', import.meta.url).pathname, env: { PATH: process.env.PATH, ...db.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, due: stdout.trim() ? (JSON.parse(stdout.trim()) as { due: boolean }).due : undefined, stderr }));
  });
}

describe('processes claiming one pass at once', () => {
  it.each([
    ['a state directory', 'dir' as const, (): string => join(dir, 'state')],
    ['a DynamoDB table', 'table' as const, (): string => TABLE],
  ])('on %s: exactly one makes it', async (_name, kind, where) => {
    // Time for the processes to load TypeScript on a busy machine, then all claim at once.
    const realStart = Date.now() + 8_000;
    const runs = await Promise.all(Array.from({ length: PROCESSES }, () => claimer(kind, where(), realStart)));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    expect(runs.map((r) => r.stderr)).toEqual(Array(PROCESSES).fill(''));
    expect(runs.filter((r) => r.due === true)).toHaveLength(1);
    expect(runs.filter((r) => r.due === false)).toHaveLength(PROCESSES - 1);
  }, 60_000);
});
