/**
 * Where a writer's read of a chain of the DynamoDB table stops (src/state/table.ts), against
 * dynalite with the test's clock as DynamoDB's. A read takes pages of 64, newest first, and gives
 * up after 512 items (the chain is flooded: the claim waits 250 ms). It stops at the page whose
 * oldest item is the newest item's `reach`; without a reach (an earlier version's requests) at the
 * page whose oldest item was claimed before any request in flight could still count: its longest
 * flight (905 s), the window with its margin and the clock's second (62 s) and one more second of
 * skew, 968 s in all; a chain of passes, whose records count for their own interval, to its end.
 * Also what a read dates now: an item claimed more than a second ahead of DynamoDB's clock.
 */
import { BatchWriteItemCommand, GetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { openTable, type TableLedgers } from '../../src/state/table.js';
import { useDynalite } from '../support/dynalite.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const PORTAL = 'https://acme.example.com/public-api/v1';
/** 60 s window + 1 s margin + 1 s for DynamoDB's clock. */
const SPAN = 62_000;
/** How long before now a request claimed without a reach can no longer count: 905 s of flight, 62 s, 1 s. */
const BEYOND = 905_000 + SPAN + 1_000;
const BUSY = { granted: false, waitMs: 250 };

let clock = new FakeClock(T0);
beforeEach(() => {
  clock = new FakeClock(T0);
});
const tables = useDynalite('reading', () => clock.now());

const open = (): TableLedgers => tables.open(openTable(tables.table, memoryLogger(), clock));

/** Writes items 1…`count` of chain `key`, each with the attributes `attrsOf(n)` gives it. */
async function chain(key: string, count: number, attrsOf: (n: number) => Record<string, AttributeValue>): Promise<void> {
  const all = Array.from({ length: count }, (_, i) => ({ PutRequest: { Item: { portal: { S: key }, n: { N: String(i + 1) }, writer: { S: 'other/1/abc' }, ...attrsOf(i + 1) } } }));
  for (let i = 0; i < all.length; i += 25) await tables.db.client.send(new BatchWriteItemCommand({ RequestItems: { [tables.table]: all.slice(i, i + 25) } }));
}

/** A request claimed and arrived at `at`, given back (so none counts), expiring in a day. */
const givenBack = (at: number, more: Record<string, AttributeValue> = {}): Record<string, AttributeValue> => ({
  at: { N: String(at) },
  arrivedBy: { N: String(at) },
  flightMs: { N: '45000' },
  released: { BOOL: true },
  expiresAt: { N: String(T0 / 1000 + 86_400) },
  ...more,
});

/** Item `n` of chain `key` (PORTAL's requests unless given) as the table holds it. */
async function itemOf(n: number, key = PORTAL): Promise<Record<string, AttributeValue>> {
  const out = await tables.db.client.send(new GetItemCommand({ TableName: tables.table, Key: { portal: { S: key }, n: { N: String(n) } }, ConsistentRead: true }));
  return out.Item!;
}

describe('a read back to the reach', () => {
  it('stops at the page whose oldest item is the reach: 600 items, reach 89, the oldest of the 8th page (512 items), so the chain is not flooded', async () => {
    await chain(PORTAL, 600, () => givenBack(T0, { reach: { N: '89' } }));
    expect((await open().ledgerOf(PORTAL).claim(5)).granted).toBe(true);
  });

  it('goes on past a page whose oldest item is above the reach: reach 88 is on the 9th page, so 512 items are too many', async () => {
    await chain(PORTAL, 600, () => givenBack(T0, { reach: { N: '88' } }));
    expect(await open().ledgerOf(PORTAL).claim(5)).toMatchObject(BUSY);
  });
});

describe('the reach a claim writes', () => {
  it('is the lowest number that counts at the claim, not the lowest read: given back (1) or arrived over 62 s ago (2), they do not count', async () => {
    await chain(PORTAL, 4, (n) => (n === 1 ? givenBack(T0) : { ...givenBack(n === 2 ? T0 - SPAN : T0), released: { BOOL: false } }));
    expect((await open().ledgerOf(PORTAL).claim(5)).granted).toBe(true);
    expect((await itemOf(5)).reach).toEqual({ N: '3' });
  });
});

describe('a read of requests without a reach (an earlier version)', () => {
  /** 600 given-back requests: 90 and above claimed now; 1 to 89 (89: the oldest of the 8th page) `ago` ms before now. */
  const earlier = (ago: number) => chain(PORTAL, 600, (n) => givenBack(n >= 90 ? T0 : T0 - ago));

  it('stops at the page whose oldest item was claimed more than 968 s ago', async () => {
    await earlier(BEYOND + 1);
    expect((await open().ledgerOf(PORTAL).claim(5)).granted).toBe(true);
  });

  it('goes on at a page whose oldest item was claimed 968 s ago exactly: it might still count, so 512 items are too many', async () => {
    await earlier(BEYOND);
    expect(await open().ledgerOf(PORTAL).claim(5)).toMatchObject(BUSY);
  });
});

describe('a read of passes', () => {
  it('goes on to the end however long ago the items were claimed: 600 of them are too many, and the pass is not claimed', async () => {
    const key = `resolved-pass ${JSON.stringify([PORTAL, 'acme'])}`;
    await chain(key, 600, () => givenBack(T0 - 2 * 86_400_000, { intervalMs: { N: '60000' } }));
    expect((await open().passes.claim(PORTAL, 'acme', 60_000)).due).toBe(false);
  });

  it("records a pass's interval in its item (docs/serverless.md), and counts it for that interval less its margin", async () => {
    const { passes } = open();
    expect((await passes.claim(PORTAL, 'acme', 300_000)).due).toBe(true);
    const held = await itemOf(1, `resolved-pass ${JSON.stringify([PORTAL, 'acme'])}`);
    expect([held.intervalMs, held.flightMs, held.reach]).toEqual([{ N: '300000' }, undefined, undefined]);
    // 300 s less its early margin (a tenth, at most a minute): 270 s.
    clock.set(T0 + 270_000 - 1);
    expect((await open().passes.claim(PORTAL, 'acme', 300_000)).due).toBe(false);
    clock.set(T0 + 270_000);
    expect((await open().passes.claim(PORTAL, 'acme', 300_000)).due).toBe(true);
  });
});

describe('a chain of passes the exporter wrote', () => {
  it('is read to its end past 70 passes given back: an earlier pass that counts for a longer interval still counts', async () => {
    const key = `resolved-pass ${JSON.stringify([PORTAL, 'acme'])}`;
    // A pass two hours ago, written with a day's interval; then 70 passes of a minute's interval, each given back.
    await chain(key, 1, () => ({ at: { N: String(T0 - 7_200_000) }, intervalMs: { N: '86400000' }, expiresAt: { N: String(T0 / 1000 + 86_400) } }));
    const { passes } = open();
    for (let i = 0; i < 70; i++) {
      const claim = await passes.claim(PORTAL, 'acme', 60_000);
      expect(claim.due).toBe(true);
      await claim.release();
    }
    // A claim with a day's interval reads back to the first pass, which it still counts.
    expect((await passes.claim(PORTAL, 'acme', 86_400_000)).due).toBe(false);
    expect((await itemOf(71, key)).reach).toBeUndefined();
  });
});

describe('an item claimed ahead of DynamoDB\'s clock', () => {
  it('is dated now in the table when it is a pass, with no arrival added: a pass arrives as it is claimed', async () => {
    const key = `resolved-pass ${JSON.stringify([PORTAL, 'acme'])}`;
    await chain(key, 1, () => ({ at: { N: String(T0 + 1_800_000) }, intervalMs: { N: '60000' }, expiresAt: { N: String(T0 / 1000 + 86_400) } }));
    expect((await open().passes.claim(PORTAL, 'acme', 60_000)).due).toBe(false);
    const held = await itemOf(1, key);
    expect([held.at, held.arrivedBy]).toEqual([{ N: String(T0) }, undefined]);
  });

  it('counts a window from now when its arrival is ahead too, not from its own times', async () => {
    await chain(PORTAL, 1, () => ({ at: { N: String(T0 + 1_800_000) }, arrivedBy: { N: String(T0 + 1_800_000) }, flightMs: { N: '45000' }, expiresAt: { N: String(T0 / 1000 + 86_400) } }));
    expect(await open().ledgerOf(PORTAL).claim(1)).toMatchObject({ granted: false, waitMs: SPAN });
  });

  it('with no arrival and no flight, has arrived now: it counts a window from now, and is dated now in the table with no arrival added', async () => {
    await chain(PORTAL, 1, () => ({ at: { N: String(T0 + 1_800_000) }, flightMs: { N: '0' }, expiresAt: { N: String(T0 / 1000 + 86_400) } }));
    expect(await open().ledgerOf(PORTAL).claim(1)).toMatchObject({ granted: false, waitMs: SPAN });
    const held = await itemOf(1);
    expect([held.at, held.arrivedBy]).toEqual([{ N: String(T0) }, undefined]);
  });
});
