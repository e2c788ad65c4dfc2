/**
 * The last resolved-alerts pass of each portal entry in the DynamoDB table, against dynalite (the
 * table created from serverless.yml's keys) on an injected clock: one conditional write claims a
 * pass when the entry's item is absent or at least its interval less the early margin old; of
 * several claims at one instant only one wins; a failed pass given back restores the pass before
 * it; a record from a clock ahead counts as now; the requests' chain is untouched; a table that
 * cannot be used is a LedgerError.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { LedgerError } from '../../src/errors.js';
import { openTable, type TableLedgers } from '../../src/state/table.js';
import { startDynalite, type Dynalite } from '../support/dynalite.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const PORTAL = 'https://acme.example.com/public-api/v1';
const HOUR = 3_600_000;
const MINUTE = 60_000;
/** The partition key of the pass item of entry `acme` (docs/serverless.md). */
const ACME_PASS = `resolved-pass ${JSON.stringify([PORTAL, 'acme'])}`;

let db: Dynalite;
const saved: Record<string, string | undefined> = {};
let tables = 0;
let table: string;
let clock: FakeClock;
const opened: TableLedgers[] = [];

beforeAll(async () => {
  db = await startDynalite();
  for (const [k, v] of Object.entries(db.env)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  await db.close();
});
beforeEach(async () => {
  table = `passes-${++tables}`;
  await db.createTable(table);
  clock = new FakeClock(T0);
});
afterEach(() => {
  for (const t of opened.splice(0)) t.destroy();
});

/** The table as one process opens it. */
function process_(name = table): TableLedgers {
  const t = openTable(name, memoryLogger(), clock);
  opened.push(t);
  return t;
}

describe('passes in the table', () => {
  it('claims a first pass, none within the interval less a minute, and the next one from then on', async () => {
    const { passes } = process_();
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    // 3600 s less the minute of margin: 3540 s.
    clock.set(T0 + 3_540_000 - 1);
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    clock.set(T0 + 3_540_000);
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    // One item, the last claim's, expiring (TTL) an hour after the pass is due again.
    expect(await db.items(table, ACME_PASS)).toEqual([{ portal: ACME_PASS, n: 0, at: T0 + 3_540_000, writer: expect.any(String), expiresAt: (T0 + 3_540_000 + HOUR) / 1000 + 3600 }]);
  });

  it('keeps each entry apart and leaves the chain of requests alone', async () => {
    const t = process_();
    expect((await t.passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    expect((await t.passes.claim(PORTAL, 'acme-finance', HOUR)).due).toBe(true);
    expect((await t.passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    expect(await db.items(table, PORTAL)).toEqual([]);
    expect((await t.ledgerOf(PORTAL).claim(5)).granted).toBe(true);
    expect((await db.items(table, PORTAL)).map((i) => i.n)).toEqual([1]);
  });

  it('lets one of eight processes claiming at one instant make the pass', async () => {
    const claims = await Promise.all(Array.from({ length: 8 }, () => process_().passes.claim(PORTAL, 'acme', HOUR)));
    expect(claims.filter((c) => c.due)).toHaveLength(1);
  });

  it('gives a failed pass back: the one before counts again', async () => {
    const { passes } = process_();
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    // Half an hour later a pass at a 10-minute interval is due, fails and is given back.
    clock.set(T0 + 30 * MINUTE);
    const failed = await passes.claim(PORTAL, 'acme', 10 * MINUTE);
    expect(failed.due).toBe(true);
    await failed.release();
    expect((await db.items(table, ACME_PASS)).map((i) => i.at)).toEqual([T0]);
    // Another process: at the hourly interval the pass of T0 (30 minutes ago) counts, so it is not due.
    clock.set(T0 + 30 * MINUTE + 1);
    expect((await process_().passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
  });

  it('gives a failed first pass back: the next run makes it', async () => {
    const first = await process_().passes.claim(PORTAL, 'acme', HOUR);
    expect(first.due).toBe(true);
    await first.release();
    clock.advance(MINUTE);
    expect((await process_().passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
  });

  it('never gives back a pass another process has claimed since', async () => {
    const a = await process_().passes.claim(PORTAL, 'acme', 10 * MINUTE);
    clock.set(T0 + 10 * MINUTE);
    const b = await process_().passes.claim(PORTAL, 'acme', 10 * MINUTE);
    expect(b.due).toBe(true);
    // A's release comes late (its pass failed slowly): B's claim stays.
    await a.release();
    clock.set(T0 + 11 * MINUTE);
    expect((await process_().passes.claim(PORTAL, 'acme', 10 * MINUTE)).due).toBe(false);
  });

  it('counts a record from a clock ahead as now, and one whose time is not a number as none', async () => {
    await db.client.send(new PutItemCommand({ TableName: table, Item: { portal: { S: ACME_PASS }, n: { N: '0' }, at: { N: String(T0 + 2 * HOUR) }, writer: { S: 'ahead' } } }));
    expect((await process_().passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    await db.client.send(new PutItemCommand({ TableName: table, Item: { portal: { S: ACME_PASS }, n: { N: '0' }, at: { S: 'yesterday' }, writer: { S: 'odd' } } }));
    expect((await process_().passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
  });

  it('throws LedgerError naming a table that does not exist', async () => {
    const err = await process_('no-such-passes').passes.claim(PORTAL, 'acme', HOUR).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as Error).message).toMatch(/^the DynamoDB table no-such-passes \(POSTURE_STATE_TABLE\) does not exist in us-east-1: /);
  });
});
