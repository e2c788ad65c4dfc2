/**
 * The ledger on a DynamoDB table, against dynalite (a real DynamoDB API, in memory) with the table
 * created from serverless.yml's keys, on an injected clock: slots granted by conditional writes,
 * never more than the share in any window (60 s, its 1 s margin and the 1 s allowed for clock
 * skew: 62 s), released requests, records from clocks ahead, expiry by TTL, and every way the table
 * can fail, each one LedgerError naming the table.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { LedgerError } from '../../src/errors.js';
import type { SendLedger } from '../../src/schedule/ledger.js';
import { openTable, type TableLedgers } from '../../src/state/table.js';
import { startDynalite, type Dynalite } from '../support/dynalite.js';
import { mulberry32 } from '../support/prng.js';
import { maxInAnyWindow } from '../support/window.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const PORTAL = 'https://acme.example.com/public-api/v1';
/** 60 s window + 1 s margin + 1 s skew, written out. */
const SPAN = 62_000;

let db: Dynalite;
const saved: Record<string, string | undefined> = {};
let tables = 0;
let table: string;
let clock: FakeClock;
const opened: TableLedgers[] = [];

/** The AWS SDK reads its settings from the process's environment: point it at `endpoint`. */
function useEndpoint(endpoint: string): void {
  process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
}

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
  table = `ledger-${++tables}`;
  await db.createTable(table);
  clock = new FakeClock(T0);
  useEndpoint(db.endpoint);
});
afterEach(() => {
  for (const t of opened.splice(0)) t.destroy();
});

/** `count` writers (each a process's ledger of the portal) on `table`, reading `c`. */
function writers(count: number, c: FakeClock = clock, name = table): SendLedger[] {
  const t = openTable(name, memoryLogger(), c);
  opened.push(t);
  return Array.from({ length: count }, () => t.ledgerOf(PORTAL));
}

describe('slots granted by conditional writes', () => {
  it('gives eight writers claiming at one instant exactly the share of 5, numbered 1 to 5', async () => {
    const results = await Promise.all(writers(8).map((w) => w.claim(5)));
    expect(results.filter((r) => r.granted)).toHaveLength(5);
    const items = await db.items(table, PORTAL);
    expect(items.map((i) => i.n)).toEqual([1, 2, 3, 4, 5]);
    expect(items.every((i) => i.at === T0 && i.released === undefined)).toBe(true);
    // Each granted writer wrote one of them.
    expect(new Set(items.map((i) => i.writer)).size).toBe(5);
  });

  it('lets the next request start 62 s after the first of the window: its 60 s, the 1 s margin and the 1 s skew', async () => {
    const [a, b] = writers(2);
    for (let i = 0; i < 5; i++) expect((await a!.claim(5)).granted).toBe(true);
    clock.advance(10_000);
    expect(await b!.claim(5)).toMatchObject({ granted: false, waitMs: 52_000 });
    clock.set(T0 + 61_999);
    expect(await b!.claim(5)).toMatchObject({ granted: false, waitMs: 1 });
    clock.set(T0 + 62_000);
    expect((await b!.claim(5)).granted).toBe(true);
    expect((await db.items(table, PORTAL)).map((i) => i.n)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('never holds more than the share in any 62 s, whatever two writers claim, release and wait over 12 minutes', async () => {
    const random = mulberry32(30);
    const [a, b] = writers(2);
    const starts = new Map<number, number>();
    let claims = 0;
    while (clock.now() < T0 + 12 * 60_000) {
      const results = await Promise.all([a!.claim(3), b!.claim(3)]);
      claims += 2;
      for (const r of results) {
        if (!r.granted) continue;
        // About one in five reaches no portal and is given back.
        if (random() < 0.2) await r.release!();
        else starts.set(starts.size, clock.now());
      }
      clock.advance(Math.floor(random() * 9_000));
    }
    const times = [...starts.values()].sort((x, y) => x - y);
    expect(claims).toBeGreaterThan(150);
    expect(maxInAnyWindow(times, SPAN)).toBe(3);
    // Counted from the table, independently of what the writers said: the same requests.
    const items = await db.items(table, PORTAL);
    expect(items.filter((i) => !i.released).map((i) => i.at)).toEqual(times);
  });
});

describe("the other writers' requests", () => {
  it('reports their ages read a second late (the skew), never its own', async () => {
    const [a, b] = writers(2);
    await a!.claim(5);
    clock.advance(10_000);
    expect(await b!.others()).toEqual([9_000]);
    expect(await a!.others()).toEqual([]);
    clock.set(T0 + 61_999);
    expect(await b!.others()).toEqual([60_999]);
    clock.set(T0 + 62_000);
    expect(await b!.others()).toEqual([]);
  });

  it('counts a request recorded by a clock 30 s ahead as now', async () => {
    const ahead = new FakeClock(T0 + 30_000);
    const [fast] = writers(1, ahead);
    const [slow] = writers(1);
    expect((await fast!.claim(1)).granted).toBe(true);
    expect(await slow!.claim(1)).toMatchObject({ granted: false, waitMs: SPAN, others: [0] });
  });

  it('no longer counts a request given back, which stays in the table marked released', async () => {
    const [a, b] = writers(2);
    const first = await a!.claim(1);
    expect(first.granted).toBe(true);
    await first.release!();
    expect((await b!.claim(1)).granted).toBe(true);
    expect((await db.items(table, PORTAL)).map((i) => [i.n, i.released ?? false])).toEqual([
      [1, true],
      [2, false],
    ]);
  });
});

describe('expiry by TTL', () => {
  it('sets expiresAt an hour after each request, in epoch seconds', async () => {
    const [a] = writers(1);
    await a!.claim(5);
    clock.advance(1_500);
    await a!.claim(5);
    expect((await db.items(table, PORTAL)).map((i) => i.expiresAt)).toEqual([Date.UTC(2026, 10, 22, 13, 0, 0) / 1000, Date.UTC(2026, 10, 22, 13, 0, 1) / 1000]);
  });

  it('continues the chain past expired items TTL has not deleted yet, and starts again at 1 once it has', async () => {
    const [a] = writers(1);
    for (let i = 0; i < 3; i++) await a!.claim(3);
    clock.advance(2 * 3_600_000);
    expect((await a!.claim(3)).granted).toBe(true);
    expect((await db.items(table, PORTAL)).map((i) => i.n)).toEqual([1, 2, 3, 4]);
    // TTL deletes them (dynalite does not run TTL: the test deletes what has expired).
    clock.advance(2 * 3_600_000);
    for (const item of await db.items(table, PORTAL)) {
      if (item.expiresAt! * 1000 <= clock.now()) await db.client.send(new DeleteItemCommand({ TableName: table, Key: { portal: { S: PORTAL }, n: { N: String(item.n) } } }));
    }
    expect(await db.items(table, PORTAL)).toEqual([]);
    expect((await a!.claim(3)).granted).toBe(true);
    expect((await db.items(table, PORTAL)).map((i) => i.n)).toEqual([1]);
  });

  it('gives back a slot claimed on an expiring chain when a writer that saw another part of it claimed meanwhile', async () => {
    // Another host's writer whose read TTL had cut short (it saw newest 9, not 3) writes request 10
    // between this writer's read and its write: neither saw the other.
    const proxy = await startProxy(db.endpoint, beforePutOf4(10, true));
    try {
      const [old] = writers(1);
      for (let i = 0; i < 3; i++) await old!.claim(3);
      clock.advance(2 * 3_600_000);
      useEndpoint(proxy.endpoint);
      const [a] = writers(1);
      expect(await a!.claim(1)).toMatchObject({ granted: false, waitMs: SPAN, others: [0] });
      expect((await db.items(table, PORTAL)).map((i) => [i.n, i.released ?? false])).toEqual([
        [1, false],
        [2, false],
        [3, false],
        [4, true],
        [10, false],
      ]);
    } finally {
      await proxy.close();
    }
  });

  it('keeps a slot claimed on an expiring chain when the request written meanwhile is a later one by a writer that read a live chain', async () => {
    // Request 5 by a writer whose read was not cut short by TTL: it read request 4, so it counted it.
    const proxy = await startProxy(db.endpoint, beforePutOf4(5, false));
    try {
      const [old] = writers(1);
      for (let i = 0; i < 3; i++) await old!.claim(3);
      clock.advance(2 * 3_600_000);
      useEndpoint(proxy.endpoint);
      const [a] = writers(1);
      expect((await a!.claim(2)).granted).toBe(true);
      expect((await db.items(table, PORTAL)).map((i) => [i.n, i.released ?? false])).toEqual([
        [1, false],
        [2, false],
        [3, false],
        [4, false],
        [5, false],
      ]);
    } finally {
      await proxy.close();
    }
  });
});

/** A hook for startProxy: just before request 4 is written, another host's writer writes request `n` (marked `expiring` as such a writer would). */
function beforePutOf4(n: number, expiring: boolean): (target: string, body: Record<string, unknown>) => Promise<void> {
  return async (target, body) => {
    if (target !== 'DynamoDB_20120810.PutItem' || (body.Item as { n: { N: string } }).n.N !== '4') return;
    const at = clock.now();
    await db.client.send(
      new PutItemCommand({
        TableName: table,
        Item: { portal: { S: PORTAL }, n: { N: String(n) }, at: { N: String(at) }, writer: { S: 'other-host/1/abc' }, expiresAt: { N: String(Math.floor(at / 1000) + 3600) }, ...(expiring ? { expiring: { BOOL: true } } : {}) },
      }),
    );
  };
}

describe('a table that cannot be used', () => {
  const failure = async (ledger: SendLedger): Promise<LedgerError> => {
    const err = await ledger.claim(5).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LedgerError);
    // others() fails the same way: the run fails before any request.
    await expect(ledger.others()).rejects.toBeInstanceOf(LedgerError);
    return err as LedgerError;
  };

  it('names a table that does not exist, and its region', async () => {
    const err = await failure(writers(1, clock, 'no-such-table')[0]!);
    expect(err.ledger).toBe('no-such-table');
    expect(err.message).toBe(
      'the DynamoDB table no-such-table (POSTURE_STATE_TABLE) does not exist in us-east-1: create it (docs/serverless.md, "The budget across invocations"), or correct POSTURE_STATE_TABLE or the region (AWS_REGION); no request goes to the portal while its share cannot be counted',
    );
  });

  it('says a table that cannot be reached cannot be reached, with the system error', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    useEndpoint(`http://127.0.0.1:${port}`);
    const err = await failure(writers(1)[0]!);
    expect(err.message).toMatch(new RegExp(`^the DynamoDB table ${table} \\(POSTURE_STATE_TABLE\\) cannot be reached \\(ECONNREFUSED: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\): check the network path to DynamoDB and AWS_ENDPOINT_URL_DYNAMODB; no request goes to the portal`));
  });

  it('says a refused request was refused, and which permissions the credentials need', async () => {
    const refusing = await startRefusing();
    try {
      useEndpoint(refusing.endpoint);
      const err = await failure(writers(1)[0]!);
      expect(err.message).toBe(
        `the DynamoDB table ${table} (POSTURE_STATE_TABLE) refused the request (AccessDeniedException: User: arn:aws:sts::123456789012:assumed-role/other/x is not authorized to perform: dynamodb:Query): give these credentials dynamodb:Query, dynamodb:PutItem and dynamodb:UpdateItem on the table; no request goes to the portal while its share cannot be counted`,
      );
    } finally {
      await refusing.close();
    }
  });
});

/** A loopback proxy to `target` that runs `before` (with the request's target and body) before it forwards a request. */
async function startProxy(target: string, before: (amzTarget: string, body: Record<string, unknown>) => Promise<void>): Promise<{ endpoint: string; close(): Promise<void> }> {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      void before(String(req.headers['x-amz-target']), JSON.parse(body.toString('utf8')) as Record<string, unknown>).then(() => {
        const out = httpRequest({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        });
        out.end(body);
      });
    });
  });
  return listening(server);
}

/** A loopback endpoint that refuses every request as DynamoDB refuses a role without the permission. */
async function startRefusing(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'refused-1' });
      res.end(JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', message: 'User: arn:aws:sts::123456789012:assumed-role/other/x is not authorized to perform: dynamodb:Query' }));
    });
  });
  return listening(server);
}

async function listening(server: Server): Promise<{ endpoint: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
