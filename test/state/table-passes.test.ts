/**
 * The last resolved-alerts pass of each portal entry in the DynamoDB table, against dynalite (the
 * table created from serverless.yml's keys, its clock the test's): a chain of claims per entry, a
 * pass claimed when none counts (its interval less the early margin); of several claims at one
 * instant only one wins; a failed pass given back lets the one before count again; a record dated
 * ahead of DynamoDB's clock is dated now; an earlier version's single item still counts; the
 * requests' chain is untouched; a table that cannot be used is a LedgerError.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { LedgerError } from '../../src/errors.js';
import { openTable, type TableLedgers } from '../../src/state/table.js';
import { useDynalite } from '../support/dynalite.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const PORTAL = 'https://acme.example.com/public-api/v1';
const HOUR = 3_600_000;
const MINUTE = 60_000;
/** The partition key of the passes of entry `acme` (docs/serverless.md). */
const ACME_PASS = `resolved-pass ${JSON.stringify([PORTAL, 'acme'])}`;

let clock = new FakeClock(T0);
const tables = useDynalite('passes', () => clock.now());

/** The table as one process opens it (a new clock at T0 for the first of a test). */
function process_(name = tables.table): TableLedgers {
  return tables.open(openTable(name, memoryLogger(), clock));
}

/** A fresh clock for a test. */
function at(t: number): void {
  clock = new FakeClock(t);
}

describe('passes in the table', () => {
  it('claims a first pass, none within the interval less a minute, and the next one from then on, each a claim of the entry\'s chain', async () => {
    at(T0);
    const { passes } = process_();
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    // 3600 s less the minute of margin: 3540 s.
    clock.set(T0 + 3_540_000 - 1);
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    clock.set(T0 + 3_540_000);
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    // Each with its interval, expiring (TTL) an hour after the next pass is due.
    expect((await tables.db.items(tables.table, ACME_PASS)).map((i) => [i.n, i.at, i.expiresAt])).toEqual([
      [1, T0, (T0 + 3_540_000 + HOUR) / 1000],
      [2, T0 + 3_540_000, (T0 + 2 * 3_540_000 + HOUR) / 1000],
    ]);
  });

  it('keeps each entry apart and leaves the chain of requests alone', async () => {
    at(T0);
    const t = process_();
    expect((await t.passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    expect((await t.passes.claim(PORTAL, 'acme-finance', HOUR)).due).toBe(true);
    expect((await t.passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    expect(await tables.db.items(tables.table, PORTAL)).toEqual([]);
    expect((await t.ledgerOf(PORTAL).claim(5)).granted).toBe(true);
    expect((await tables.db.items(tables.table, PORTAL)).map((i) => i.n)).toEqual([1]);
  });

  it('lets one of eight processes claiming at one instant make the pass', async () => {
    at(T0);
    const claims = await Promise.all(Array.from({ length: 8 }, () => process_().passes.claim(PORTAL, 'acme', HOUR)));
    expect(claims.filter((c) => c.due)).toHaveLength(1);
  });

  it('gives a failed pass back: the one before counts again', async () => {
    at(T0);
    const { passes } = process_();
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    // Half an hour later a pass at a 10-minute interval is due, fails and is given back.
    clock.set(T0 + 30 * MINUTE);
    const failed = await passes.claim(PORTAL, 'acme', 10 * MINUTE);
    expect(failed.due).toBe(true);
    await failed.release();
    expect((await tables.db.items(tables.table, ACME_PASS)).map((i) => [i.at, i.released ?? false])).toEqual([
      [T0, false],
      [T0 + 30 * MINUTE, true],
    ]);
    // Another process: at the hourly interval the pass of T0 (30 minutes ago) counts, so it is not due.
    clock.set(T0 + 30 * MINUTE + 1);
    expect((await process_().passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
  });

  it('gives a failed first pass back: the next run makes it', async () => {
    at(T0);
    const first = await process_().passes.claim(PORTAL, 'acme', HOUR);
    expect(first.due).toBe(true);
    await first.release();
    clock.advance(MINUTE);
    expect((await process_().passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
  });

  it('never gives back a pass another process has claimed since', async () => {
    at(T0);
    const a = await process_().passes.claim(PORTAL, 'acme', 10 * MINUTE);
    clock.set(T0 + 10 * MINUTE);
    const b = await process_().passes.claim(PORTAL, 'acme', 10 * MINUTE);
    expect(b.due).toBe(true);
    // A's release comes late (its pass failed slowly): B's claim stays.
    await a.release();
    clock.set(T0 + 11 * MINUTE);
    expect((await process_().passes.claim(PORTAL, 'acme', 10 * MINUTE)).due).toBe(false);
  });

  it('reads an earlier version\'s single item as a pass: it counts, one dated ahead counts from now, and one whose time is not a number is none', async () => {
    at(T0);
    await tables.db.client.send(new PutItemCommand({ TableName: tables.table, Item: { portal: { S: ACME_PASS }, n: { N: '0' }, at: { N: String(T0 - 30 * MINUTE) }, writer: { S: 'earlier' } } }));
    expect((await process_().passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    clock.set(T0 + 29 * MINUTE);
    expect((await process_().passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);

    at(T0);
    const ahead = `resolved-pass ${JSON.stringify([PORTAL, 'ahead'])}`;
    await tables.db.client.send(new PutItemCommand({ TableName: tables.table, Item: { portal: { S: ahead }, n: { N: '0' }, at: { N: String(T0 + 2 * HOUR) }, writer: { S: 'ahead' } } }));
    expect((await process_().passes.claim(PORTAL, 'ahead', HOUR)).due).toBe(false);
    // Dated now: due again an interval less the margin later, not two hours later.
    clock.set(T0 + 59 * MINUTE);
    expect((await process_().passes.claim(PORTAL, 'ahead', HOUR)).due).toBe(true);

    const odd = `resolved-pass ${JSON.stringify([PORTAL, 'odd'])}`;
    await tables.db.client.send(new PutItemCommand({ TableName: tables.table, Item: { portal: { S: odd }, n: { N: '0' }, at: { S: 'yesterday' }, writer: { S: 'odd' } } }));
    expect((await process_().passes.claim(PORTAL, 'odd', HOUR)).due).toBe(true);
  });

  it('throws LedgerError naming a table that does not exist', async () => {
    at(T0);
    const err = await process_('no-such-passes').passes.claim(PORTAL, 'acme', HOUR).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as Error).message).toMatch(/^the DynamoDB table no-such-passes \(POSTURE_STATE_TABLE\) does not exist in us-east-1: /);
  });
});
