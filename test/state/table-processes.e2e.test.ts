/**
 * Four real processes claim slots of one portal in one DynamoDB table (dynalite on loopback, the
 * table created from serverless.yml's keys) as fast as the share lets them, each request a while
 * in flight, some given back: no 60 s window at the portal ever holds more than the share, the
 * table's own records agree (62 s: 60 s, its 1 s margin, the 1 s for reading DynamoDB's clock),
 * and every number of the chain was claimed exactly once.
 *
 * The processes share a clock that runs 20 times faster than real time (from one real instant the
 * test gives them all), and so does dynalite's Date header, DynamoDB's clock: twelve real seconds
 * are four minutes of the portal's windows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynalite, type Dynalite } from '../support/dynalite.js';
import { claimer } from '../support/processes.js';
import { maxInAnyWindow } from '../support/window.js';

const TABLE = 'posture-exporter-e2e-ledger';
const PORTAL = 'https://acme.example.com/public-api/v1';
const SHARE = 5;
const SPEED = 20;
const RUN_MS = 12_000;

/** The real instant the claimers start at, and virtual time with it. */
let start = Date.now();
let db: Dynalite;
beforeAll(async () => {
  db = await startDynalite(() => start + (Date.now() - start) * SPEED);
  await db.createTable(TABLE);
});
afterAll(async () => {
  await db?.close();
});

describe('four processes on one table', () => {
  it('never hold more than the share in any window, and claim every number of the chain once', async () => {
    // Time for four processes to load TypeScript on a busy machine, then all start at once.
    start = Date.now() + 8_000;
    const options = { store: 'table' as const, where: TABLE, portal: PORTAL, speed: SPEED, start, kind: 'requests' as const, share: SHARE, until: start + RUN_MS, releaseOneIn: 6, flightMs: 3_000 };
    const runs = await Promise.all([0, 1, 2, 3].map(() => claimer(options, db.env).done));
    for (const r of runs) expect([r.code, r.stderr]).toEqual([0, '']);

    const items = await db.items(TABLE, PORTAL);
    // Every number from 1 up was claimed once: no gap, no number twice (it is the key).
    expect(items.map((i) => i.n)).toEqual(Array.from({ length: items.length }, (_, i) => i + 1));
    expect(new Set(items.map((i) => i.writer)).size).toBe(4);
    // The processes' own account and the table's agree.
    const sent = items.filter((i) => !i.released);
    expect(sent.filter((i) => i.arrivedBy !== undefined)).toHaveLength(runs.reduce((n, r) => n + r.result!.granted!, 0));
    expect(items.filter((i) => i.released)).toHaveLength(runs.reduce((n, r) => n + r.result!.released!, 0));
    // Four minutes at 5 per window: at least three windows' worth reached the portal, never more than 5 in one.
    const arrivals = runs.flatMap((r) => r.arrivals).sort((a, b) => a - b);
    expect(arrivals.length).toBeGreaterThanOrEqual(15);
    expect(maxInAnyWindow(arrivals, 60_000)).toBe(SHARE);
    expect(maxInAnyWindow(sent.map((i) => i.arrivedBy ?? i.at!).sort((a, b) => a - b), 62_000)).toBe(SHARE);
  }, 60_000);
});
