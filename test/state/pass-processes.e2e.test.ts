/**
 * Real processes claiming one entry's resolved-alerts pass at one instant, as `once` from cron and
 * Lambda containers do: six on one state directory, six on one DynamoDB table (dynalite on
 * loopback, created from serverless.yml's keys). In each, exactly one makes the pass.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynalite, type Dynalite } from '../support/dynalite.js';
import { claimer } from '../support/processes.js';

const TABLE = 'posture-exporter-e2e-passes';
const PORTAL = 'https://acme.example.com/public-api/v1';
const PROCESSES = 6;

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

describe('processes claiming one pass at once', () => {
  it.each([
    ['a state directory', 'dir' as const, (): string => join(dir, 'state')],
    ['a DynamoDB table', 'table' as const, (): string => TABLE],
  ])('on %s: exactly one makes it', async (_name, store, where) => {
    // Time for the processes to load TypeScript on a busy machine, then all claim at once.
    const start = Date.now() + 8_000;
    const runs = await Promise.all(Array.from({ length: PROCESSES }, () => claimer({ store, where: where(), portal: PORTAL, speed: 1, start, kind: 'pass', entry: 'acme', intervalMs: 3_600_000 }, db.env).done));
    for (const r of runs) expect([r.code, r.stderr]).toEqual([0, '']);
    expect(runs.filter((r) => r.result?.due === true)).toHaveLength(1);
    expect(runs.filter((r) => r.result?.due === false)).toHaveLength(PROCESSES - 1);
  }, 60_000);
});
