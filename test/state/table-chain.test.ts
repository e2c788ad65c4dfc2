/**
 * How a writer reads a chain of the DynamoDB table (src/state/table.ts), against dynalite with the
 * test's clock as DynamoDB's: back to the newest item's `reach` (the lowest number that counted
 * when it was claimed), across pages of 64; without a `reach` (an earlier version's items) as far
 * as a request in flight could still count; a flooded chain (more than 512 items to read) waited on
 * rather than decided blind; a chain about to expire marked on the claim (`expiring`); an item
 * dated more than 1 s ahead of DynamoDB's clock dated now, one dated 1 s ahead left as it is.
 */
import { BatchWriteItemCommand, QueryCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import type { SendLedger } from '../../src/schedule/ledger.js';
import { BACK_OFF_MS } from '../../src/state/claims.js';
import { openTable } from '../../src/state/table.js';
import { useDynalite } from '../support/dynalite.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const PORTAL = 'https://acme.example.com/public-api/v1';
/** 60 s window + 1 s margin + 1 s for DynamoDB's clock. */
const SPAN = 62_000;

let clock = new FakeClock(T0);
const tables = useDynalite('chain', () => clock.now());

/** A process's ledger of PORTAL on the table. */
function ledger(): SendLedger {
  return tables.open(openTable(tables.table, memoryLogger(), clock)).ledgerOf(PORTAL);
}

/** Writes `items` (each an item's attributes but its key `portal`) straight into the table, 25 at a time. */
async function put(items: Array<Record<string, AttributeValue>>): Promise<void> {
  for (let i = 0; i < items.length; i += 25) {
    await tables.db.client.send(new BatchWriteItemCommand({ RequestItems: { [tables.table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item: { portal: { S: PORTAL }, ...Item } } })) } }));
  }
}

/** A request item: number `n`, claimed and arrived at `at`, given back or not, with its `reach` if any. */
const item = (n: number, at: number, o: { released?: boolean; reach?: number; expiresAt?: number } = {}): Record<string, AttributeValue> => ({
  n: { N: String(n) },
  at: { N: String(at) },
  arrivedBy: { N: String(at) },
  writer: { S: 'other/1/abc' },
  flightMs: { N: '45000' },
  ...(o.released ? { released: { BOOL: true } } : {}),
  ...(o.reach !== undefined ? { reach: { N: String(o.reach) } } : {}),
  expiresAt: { N: String(o.expiresAt ?? Math.floor((at + 45_000 + SPAN + 3_600_000) / 1000)) },
});

/** The raw items of PORTAL, oldest first. */
async function raw(): Promise<Array<Record<string, AttributeValue>>> {
  const out = await tables.db.client.send(new QueryCommand({ TableName: tables.table, KeyConditionExpression: 'portal = :p', ExpressionAttributeValues: { ':p': { S: PORTAL } }, ConsistentRead: true }));
  return out.Items ?? [];
}

describe('reading back to what can count', () => {
  it('reads back to the lowest number that counted at the newest claim, however far back, across pages', async () => {
    clock = new FakeClock(T0);
    // 1 arrived at T0, 2 to 70 were given back, 71 arrived at T0, 72 to 139 were given back: 1 and 71 count, 69 released items apart.
    await put(Array.from({ length: 139 }, (_, i) => item(i + 1, T0, { released: i + 1 !== 1 && i + 1 !== 71, reach: 1 })));
    // A claim, given back: it writes how far back the next must read.
    await (await ledger().claim(5)).release!();
    expect((await raw()).at(-1)).toMatchObject({ n: { N: '140' }, reach: { N: '1' } });
    // A share of 2 is full: both count until T0 + 62 s.
    expect(await ledger().claim(2)).toMatchObject({ granted: false, waitMs: SPAN });
  });

  it("reads an earlier version's chain, with no reach, as far back as a request could still count", async () => {
    clock = new FakeClock(T0);
    // 1 arrived at T0 and counts; 2 to 70 were given back; none says how far back to read.
    await put([item(1, T0), ...Array.from({ length: 69 }, (_, i) => item(i + 2, T0, { released: true }))]);
    clock.set(T0 + 10_000);
    expect(await ledger().claim(1)).toMatchObject({ granted: false, waitMs: SPAN - 10_000 });
  });

  it('waits rather than decide on a flooded chain: more than 512 items to read', async () => {
    clock = new FakeClock(T0);
    // 513 items, all given back, the newest saying it reached back to 1: the last of them is one more than a look reads.
    await put(Array.from({ length: 513 }, (_, i) => item(i + 1, T0 - 1_000, { released: true, reach: 1 })));
    expect(await ledger().claim(5)).toMatchObject({ granted: false, waitMs: BACK_OFF_MS });
    expect(BACK_OFF_MS).toBe(250);
  });
});

describe('a chain about to expire', () => {
  it('marks a claim on an empty chain, or one whose newest item expires within a minute, and no other', async () => {
    clock = new FakeClock(T0);
    const a = ledger();
    await (await a.claim(5)).arrived!();
    // The newest (1) expires at E; a claim exactly a minute before is not on an expiring chain, one a millisecond later is.
    const expiresAt = Number((await raw())[0]!.expiresAt!.N) * 1000;
    clock.set(expiresAt - 60_000);
    await (await a.claim(5)).release!();
    await put([item(3, expiresAt - 60_000, { released: true, reach: 3, expiresAt: (expiresAt - 60_000 + 59_999 + 1) / 1000 })]);
    clock.set(expiresAt - 60_000 + 1);
    await (await a.claim(5)).release!();
    expect((await raw()).map((i) => [i.n!.N, i.expiring?.BOOL ?? false])).toEqual([
      ['1', true],
      ['2', false],
      ['3', false],
      ['4', true],
    ]);
  });
});

describe('an item dated ahead of DynamoDB\'s clock', () => {
  it('is dated now when more than 1 s ahead (its arrival too), and left as it is at 1 s ahead', async () => {
    clock = new FakeClock(T0);
    await put([
      { ...item(1, T0 + 1_000), arrivedBy: { N: String(T0 + 1_000) } },
      { ...item(2, T0 + 1_001), arrivedBy: { N: String(T0 + 1_001) } },
      { ...item(3, T0), arrivedBy: { N: String(T0 + 1_001) } },
      { ...item(4, T0 + 5_000, { reach: 1 }), arrivedBy: { N: String(T0 + 1_000) } },
    ]);
    await ledger().others();
    expect((await raw()).map((i) => [Number(i.at!.N) - T0, Number(i.arrivedBy!.N) - T0])).toEqual([
      [1_000, 1_000],
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
  });
});
