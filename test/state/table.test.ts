/**
 * The ledger on a DynamoDB table, against dynalite (a real DynamoDB API, in memory) with the table
 * created from serverless.yml's keys, whose answers' Date header (DynamoDB's clock) reads the
 * test's fake clock: slots granted by conditional writes, never more than the share in any window
 * (60 s, its 1 s margin and the 1 s allowed for reading DynamoDB's clock: 62 s after each request
 * arrived), requests in flight, released requests, writers whose own clocks are off, expiry by
 * TTL, and every way the table can fail, each one LedgerError naming the table.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { LedgerError } from '../../src/errors.js';
import type { ClaimResult, SendLedger } from '../../src/schedule/ledger.js';
import { openTable } from '../../src/state/table.js';
import { useDynalite } from '../support/dynalite.js';
import { mulberry32 } from '../support/prng.js';
import { maxInAnyWindow } from '../support/window.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const PORTAL = 'https://acme.example.com/public-api/v1';
/** 60 s window + 1 s margin + 1 s for DynamoDB's clock, written out. */
const SPAN = 62_000;

/** DynamoDB's clock: what dynalite's Date header reads (a new one for each test). */
let clock = new FakeClock(T0);
const tables = useDynalite('ledger', () => clock.now());
beforeEach(() => {
  clock = new FakeClock(T0);
});

/** `count` writers (each a process's ledger of the portal) on the table, on the clock `c` (DynamoDB's unless given). */
function writers(count: number, c: FakeClock = clock, name = tables.table): SendLedger[] {
  const t = tables.open(openTable(name, memoryLogger(), c));
  return Array.from({ length: count }, () => t.ledgerOf(PORTAL));
}

/** Claims a slot that must be granted, and says its request arrived at once. */
async function sent(w: SendLedger, share: number): Promise<ClaimResult> {
  const r = await w.claim(share);
  expect(r.granted).toBe(true);
  await r.arrived!();
  return r;
}

/** Points the AWS SDK of this process at `endpoint`. */
function useEndpoint(endpoint: string): void {
  process.env.AWS_ENDPOINT_URL_DYNAMODB = endpoint;
}

describe('slots granted by conditional writes', () => {
  it('gives eight writers claiming at one instant exactly the share of 5, numbered 1 to 5, on DynamoDB\'s clock', async () => {
    const results = await Promise.all(writers(8).map((w) => w.claim(5)));
    expect(results.filter((r) => r.granted)).toHaveLength(5);
    const items = await tables.db.items(tables.table, PORTAL);
    expect(items.map((i) => i.n)).toEqual([1, 2, 3, 4, 5]);
    expect(items.every((i) => i.at === T0 && i.released === undefined && i.arrivedBy === undefined)).toBe(true);
    // Each granted writer wrote one of them.
    expect(new Set(items.map((i) => i.writer)).size).toBe(5);
  });

  it('lets the next request start 62 s after the first of the window arrived: its 60 s, the 1 s margin and the 1 s for the clock', async () => {
    const [a, b] = writers(2);
    for (let i = 0; i < 5; i++) await sent(a!, 5);
    clock.advance(10_000);
    expect(await b!.claim(5)).toMatchObject({ granted: false, waitMs: 52_000 });
    clock.set(T0 + 61_999);
    expect(await b!.claim(5)).toMatchObject({ granted: false, waitMs: 1 });
    clock.set(T0 + 62_000);
    expect((await b!.claim(5)).granted).toBe(true);
    expect((await tables.db.items(tables.table, PORTAL)).map((i) => i.n)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('counts a request from when it could last have reached the portal: in flight it holds its slot, and 62 s after its answer began it frees it', async () => {
    const [a, b] = writers(2);
    const inFlight = await a!.claim(1);
    expect(inFlight.granted).toBe(true);
    // 40 s in flight (a relay held it): still counted; it may arrive at any moment, so look again in a second.
    clock.advance(40_000);
    expect(await b!.claim(1)).toMatchObject({ granted: false, waitMs: 1_000, others: [] });
    await inFlight.arrived!();
    expect((await tables.db.items(tables.table, PORTAL))[0]!.arrivedBy).toBe(T0 + 40_000);
    clock.set(T0 + 40_000 + SPAN - 1);
    expect(await b!.claim(1)).toMatchObject({ granted: false, waitMs: 1 });
    clock.set(T0 + 40_000 + SPAN);
    expect((await b!.claim(1)).granted).toBe(true);
  });

  it('counts a request whose writer never said it arrived until its flight has passed: the longest its answer could take to begin', async () => {
    const [a, b] = writers(2);
    // Its writer was killed in flight: the flight it declared (30 s) bounds when it could have arrived.
    expect((await a!.claim(1, 30_000)).granted).toBe(true);
    clock.set(T0 + 30_000 + SPAN - 1);
    expect((await b!.claim(1)).granted).toBe(false);
    clock.set(T0 + 30_000 + SPAN);
    expect((await b!.claim(1)).granted).toBe(true);
  });

  it('never holds more than the share in any 62 s, whatever two writers claim, release and wait over 12 minutes', async () => {
    const random = mulberry32(30);
    const [a, b] = writers(2);
    const arrivals: number[] = [];
    let claims = 0;
    while (clock.now() < T0 + 12 * 60_000) {
      const results = await Promise.all([a!.claim(3), b!.claim(3)]);
      claims += 2;
      for (const r of results) {
        if (!r.granted) continue;
        // About one in five reaches no portal and is given back; the others arrive up to 3 s later.
        if (random() < 0.2) await r.release!();
        else {
          clock.advance(Math.floor(random() * 3_000));
          await r.arrived!();
          arrivals.push(clock.now());
        }
      }
      clock.advance(Math.floor(random() * 9_000));
    }
    expect(claims).toBeGreaterThan(150);
    expect(maxInAnyWindow(arrivals, SPAN)).toBe(3);
    // Counted from the table, independently of what the writers said: the same arrivals.
    const items = await tables.db.items(tables.table, PORTAL);
    expect(items.filter((i) => !i.released).map((i) => i.arrivedBy!).sort((x, y) => x - y)).toEqual(arrivals);
  });
});

describe("the other writers' requests", () => {
  it('reports how long ago they arrived, read a second late (the clock), never its own', async () => {
    const [a, b] = writers(2);
    await sent(a!, 5);
    clock.advance(10_000);
    expect(await b!.others()).toEqual([9_000]);
    expect(await a!.others()).toEqual([]);
    clock.set(T0 + 61_999);
    expect(await b!.others()).toEqual([60_999]);
    clock.set(T0 + 62_000);
    expect(await b!.others()).toEqual([]);
  });

  it('measures on DynamoDB\'s clock, not the writers\': a writer whose clock runs 30 s ahead holds the window as long as any', async () => {
    const [fast] = writers(1, new FakeClock(T0 + 30_000));
    const [slow] = writers(1);
    await sent(fast!, 1);
    expect((await tables.db.items(tables.table, PORTAL)).map((i) => [i.at, i.arrivedBy])).toEqual([[T0, T0]]);
    expect(await slow!.claim(1)).toMatchObject({ granted: false, waitMs: SPAN });
    clock.set(T0 + SPAN);
    expect((await slow!.claim(1)).granted).toBe(true);
  });

  it('dates a record written ahead of DynamoDB\'s clock (an earlier version\'s host clock) now: it counts a window from then, not from its date', async () => {
    // Another writer's request, dated a day ahead.
    await tables.db.client.send(new PutItemCommand({ TableName: tables.table, Item: { portal: { S: PORTAL }, n: { N: '1' }, at: { N: String(T0 + 86_400_000) }, writer: { S: 'ahead/1/abc' }, expiresAt: { N: String((T0 + 86_400_000) / 1000 + 3600) } } }));
    const [a] = writers(1);
    clock.advance(5_000);
    // Dated now (T0 + 5 s), and in flight with an earlier version's flight of 45 s.
    expect(await a.claim(1)).toMatchObject({ granted: false, waitMs: 1_000 });
    expect((await tables.db.items(tables.table, PORTAL))[0]!.at).toBe(T0 + 5_000);
    clock.set(T0 + 5_000 + 45_000);
    expect(await a.claim(1)).toMatchObject({ granted: false, waitMs: SPAN });
    clock.set(T0 + 5_000 + 45_000 + SPAN);
    expect((await a!.claim(1)).granted).toBe(true);
  });

  it('no longer counts a request given back, which stays in the table marked released', async () => {
    const [a, b] = writers(2);
    const first = await a!.claim(1);
    expect(first.granted).toBe(true);
    await first.release!();
    expect((await b!.claim(1)).granted).toBe(true);
    expect((await tables.db.items(tables.table, PORTAL)).map((i) => [i.n, i.released ?? false])).toEqual([
      [1, true],
      [2, false],
    ]);
  });

  it('reads back to every request that can count, however many released ones came after it', async () => {
    const [a, b] = writers(2);
    for (let i = 0; i < 4; i++) await sent(a!, 5);
    // 70 requests that reached no portal, each given back: more than a page of the table's answer.
    for (let i = 0; i < 70; i++) {
      const r = await a!.claim(5);
      expect(r.granted).toBe(true);
      await r.release!();
    }
    // 4 count: one slot is left, not five.
    await sent(b!, 5);
    expect(await b!.claim(5)).toMatchObject({ granted: false, waitMs: SPAN });
  });
});

describe('expiry by TTL', () => {
  it('sets expiresAt an hour after a request stops counting at the latest (its flight and 62 s after its claim), in epoch seconds', async () => {
    const [a] = writers(1);
    await a!.claim(5, 30_000);
    clock.advance(1_500);
    await a!.claim(5, 30_000);
    // T0 + 30 s + 62 s + 1 h, and 1.5 s later (rounded down).
    expect((await tables.db.items(tables.table, PORTAL)).map((i) => i.expiresAt)).toEqual([Date.UTC(2026, 10, 22, 13, 1, 32) / 1000, Date.UTC(2026, 10, 22, 13, 1, 33) / 1000]);
  });

  it('continues the chain past expired items TTL has not deleted yet, and starts again at 1 once it has', async () => {
    const [a] = writers(1);
    for (let i = 0; i < 3; i++) await sent(a!, 3);
    clock.advance(2 * 3_600_000);
    expect((await a!.claim(3)).granted).toBe(true);
    expect((await tables.db.items(tables.table, PORTAL)).map((i) => i.n)).toEqual([1, 2, 3, 4]);
    // TTL deletes them (dynalite does not run TTL: the test deletes what has expired).
    clock.advance(2 * 3_600_000);
    for (const item of await tables.db.items(tables.table, PORTAL)) {
      if (item.expiresAt! * 1000 <= clock.now()) await tables.db.client.send(new DeleteItemCommand({ TableName: tables.table, Key: { portal: { S: PORTAL }, n: { N: String(item.n) } } }));
    }
    expect(await tables.db.items(tables.table, PORTAL)).toEqual([]);
    expect((await a!.claim(3)).granted).toBe(true);
    expect((await tables.db.items(tables.table, PORTAL)).map((i) => i.n)).toEqual([1]);
  });

  it('gives back a slot claimed on an expiring chain when a writer that saw another part of it claimed meanwhile', async () => {
    // Another host's writer whose read TTL had cut short (it saw newest 9, not 3) writes request 10
    // between this writer's read and its write: neither saw the other.
    await onExpiringChain(beforePutOf4(10, true), async (a) => {
      // Request 10, in flight, holds the share of 1.
      expect(await a.claim(1)).toMatchObject({ granted: false, waitMs: 1_000, others: [] });
      expect(await numbered()).toEqual([[1, false], [2, false], [3, false], [4, true], [10, false]]);
    });
  });

  it('keeps a slot claimed on an expiring chain when the request written meanwhile is a later one by a writer that read a live chain', async () => {
    // Request 5 by a writer whose read was not cut short by TTL: it read request 4, so it counted it.
    await onExpiringChain(beforePutOf4(5, false), async (a) => {
      expect((await a.claim(2)).granted).toBe(true);
      expect(await numbered()).toEqual([[1, false], [2, false], [3, false], [4, false], [5, false]]);
    });
  });
});

/** The chain's items as [number, released]. */
const numbered = async () => (await tables.db.items(tables.table, PORTAL)).map((i) => [i.n, i.released ?? false]);

/**
 * Three requests of one writer two hours ago (its chain's items expire within the minute), then a
 * new writer, `body`'s, through a proxy that runs `before` just before request 4 is written.
 */
async function onExpiringChain(before: (amzTarget: string, body: Record<string, unknown>) => Promise<void>, body: (a: SendLedger) => Promise<void>): Promise<void> {
  const proxy = await startProxy(tables.db.endpoint, before);
  try {
    const [old] = writers(1);
    for (let i = 0; i < 3; i++) await sent(old!, 3);
    clock.advance(2 * 3_600_000);
    useEndpoint(proxy.endpoint);
    const [a] = writers(1);
    await body(a!);
  } finally {
    await proxy.close();
  }
}

describe('a pass claimed on an expiring chain', () => {
  const HOUR = 3_600_000;
  const ACME_PASS = `resolved-pass ${JSON.stringify([PORTAL, 'acme'])}`;

  /** Three hourly passes, then four hours: the chain has expired, and a claim on it is checked after its write (through `proxy`). */
  async function claimAfterExpiry(hook: ReturnType<typeof beforePutOf4>): Promise<{ due: boolean; items: Array<[number, boolean]> }> {
    const proxy = await startProxy(tables.db.endpoint, hook);
    try {
      const old = tables.open(openTable(tables.table, memoryLogger(), clock));
      for (let i = 0; i < 3; i++) {
        expect((await old.passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
        clock.advance(HOUR);
      }
      clock.advance(3 * HOUR);
      useEndpoint(proxy.endpoint);
      const { due } = await tables.open(openTable(tables.table, memoryLogger(), clock)).passes.claim(PORTAL, 'acme', HOUR);
      return { due, items: (await tables.db.items(tables.table, ACME_PASS)).map((i) => [i.n, i.released ?? false]) };
    } finally {
      await proxy.close();
    }
  }

  it('gives its claim back, and makes no pass, when another writer that read the chain as it expired claimed a pass meanwhile', async () => {
    expect(await claimAfterExpiry(beforePutOf4(10, true, ACME_PASS))).toEqual({
      due: false,
      items: [
        [1, false],
        [2, false],
        [3, false],
        [4, true],
        [10, false],
      ],
    });
  });

  it('keeps its claim when the pass claimed meanwhile was given back (it failed)', async () => {
    expect(await claimAfterExpiry(beforePutOf4(10, true, ACME_PASS, true))).toEqual({
      due: true,
      items: [
        [1, false],
        [2, false],
        [3, false],
        [4, false],
        [10, true],
      ],
    });
  });
});

/** A hook for startProxy: just before claim 4 of chain `key` is written, another host's writer writes claim `n` (marked `expiring` as such a writer would; given back when `released`). */
function beforePutOf4(n: number, expiring: boolean, key = PORTAL, released = false): (target: string, body: Record<string, unknown>) => Promise<void> {
  return async (target, body) => {
    if (target !== 'DynamoDB_20120810.PutItem' || (body.Item as { n: { N: string } }).n.N !== '4') return;
    const at = clock.now();
    await tables.db.client.send(
      new PutItemCommand({
        TableName: tables.table,
        Item: {
          portal: { S: key },
          n: { N: String(n) },
          at: { N: String(at) },
          writer: { S: 'other-host/1/abc' },
          expiresAt: { N: String(Math.floor(at / 1000) + 3600) },
          ...(expiring ? { expiring: { BOOL: true } } : {}),
          ...(released ? { released: { BOOL: true } } : {}),
        },
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
      'the DynamoDB table no-such-table (POSTURE_STATE_TABLE) does not exist in us-east-1: create it with the two commands of docs/serverless.md, "Creating the ledger table" (aws dynamodb create-table, then update-time-to-live), or correct POSTURE_STATE_TABLE or the region (AWS_REGION); no request goes to the portal while its share cannot be counted',
    );
  });

  it('says a table that cannot be reached cannot be reached, with the system error', async () => {
    const port = await closedPort();
    useEndpoint(`http://127.0.0.1:${port}`);
    const err = await failure(writers(1)[0]!);
    expect(err.message).toMatch(new RegExp(`^the DynamoDB table ${tables.table} \\(POSTURE_STATE_TABLE\\) cannot be reached \\(ECONNREFUSED: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\): check the network path to DynamoDB and AWS_ENDPOINT_URL_DYNAMODB; no request goes to the portal`));
  });

  it('says a refused request was refused, and which permissions the credentials need', async () => {
    const refusing = await startRefusing();
    try {
      useEndpoint(refusing.endpoint);
      const err = await failure(writers(1)[0]!);
      expect(err.message).toBe(
        `the DynamoDB table ${tables.table} (POSTURE_STATE_TABLE) refused the request (AccessDeniedException: User: arn:aws:sts::123456789012:assumed-role/other/x is not authorized to perform: dynamodb:Query): give these credentials dynamodb:Query, dynamodb:PutItem and dynamodb:UpdateItem on the table (docs/serverless.md, "Creating the ledger table"); no request goes to the portal while its share cannot be counted`,
      );
    } finally {
      await refusing.close();
    }
  });

  it.each([
    ['throttled, and says to give it on-demand capacity', 'ThrottlingException', 'Rate of requests exceeds the allowed throughput.', 'throttled the requests (ThrottlingException: Rate of requests exceeds the allowed throughput.): give it on-demand capacity'],
    [
      'refused for its keys, and says which keys it must have',
      'ValidationException',
      'One or more parameter values were invalid: Missing the key n in the item',
      'refused the request (ValidationException: One or more parameter values were invalid: Missing the key n in the item): its keys must be portal (S, partition key) and n (N, sort key), see docs/serverless.md',
    ],
    ['refused otherwise, with the first line of what it said', 'ItemCollectionSizeLimitExceededException', 'Collection size exceeded.\nSecond line.', 'cannot be used (ItemCollectionSizeLimitExceededException: Collection size exceeded.)'],
  ])('says a table that %s', async (_what, type, message, what) => {
    const refusing = await startRefusing(type, message);
    try {
      useEndpoint(refusing.endpoint);
      // One attempt: the SDK would retry a throttled request after its back-off.
      await withEnv({ AWS_MAX_ATTEMPTS: '1' }, async () => {
        const err = await failure(writers(1)[0]!);
        expect(err.message).toBe(`the DynamoDB table ${tables.table} (POSTURE_STATE_TABLE) ${what}; no request goes to the portal while its share cannot be counted`);
      });
    } finally {
      await refusing.close();
    }
  });

  it('says a table that cannot be reached through AWS_ENDPOINT_URL cannot be reached, naming the endpoint variable too', async () => {
    const port = await closedPort();
    await withEnv({ AWS_ENDPOINT_URL_DYNAMODB: undefined, AWS_ENDPOINT_URL: `http://127.0.0.1:${port}` }, async () => {
      const err = await failure(writers(1)[0]!);
      expect(err.message).toMatch(/\(ECONNREFUSED: connect ECONNREFUSED [^)]*\): check the network path to DynamoDB and AWS_ENDPOINT_URL_DYNAMODB; no request goes to the portal/);
    });
  });

  it('says no AWS region is set, and which variable sets one', async () => {
    await withEnv({ AWS_REGION: undefined, AWS_DEFAULT_REGION: undefined, AWS_PROFILE: undefined, AWS_CONFIG_FILE: '/nonexistent/config', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials' }, async () => {
      const err = await failure(writers(1)[0]!);
      expect(err.message).toBe(`the DynamoDB table ${tables.table} (POSTURE_STATE_TABLE) cannot be found: no AWS region is set: set AWS_REGION; no request goes to the portal while its share cannot be counted`);
    });
  });

  it('says it cannot be used without AWS credentials, and how to give them', async () => {
    const none = { AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined, AWS_SESSION_TOKEN: undefined, AWS_PROFILE: undefined, AWS_WEB_IDENTITY_TOKEN_FILE: undefined, AWS_CONTAINER_CREDENTIALS_FULL_URI: undefined, AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: undefined };
    // No instance metadata either: nothing leaves 127.0.0.1.
    await withEnv({ ...none, AWS_EC2_METADATA_DISABLED: 'true', AWS_CONFIG_FILE: '/nonexistent/config', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials' }, async () => {
      const err = await failure(writers(1)[0]!);
      expect(err.message).toBe(
        `the DynamoDB table ${tables.table} (POSTURE_STATE_TABLE) cannot be used without AWS credentials (Could not load credentials from any providers): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE, or run where a role provides them; no request goes to the portal while its share cannot be counted`,
      );
    });
  });
});

/** Runs `fn` with the environment variables `vars` set (undefined: unset), then puts them back. */
async function withEnv(vars: Record<string, string | undefined>, fn: () => Promise<void>): Promise<void> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  apply(vars);
  try {
    await fn();
  } finally {
    apply(saved);
  }
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  return port;
}

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

/** A loopback endpoint that refuses every request as DynamoDB does, by default a role without the permission. */
async function startRefusing(type = 'AccessDeniedException', message = 'User: arn:aws:sts::123456789012:assumed-role/other/x is not authorized to perform: dynamodb:Query'): Promise<{ endpoint: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'refused-1' });
      res.end(JSON.stringify({ __type: `com.amazon.coral.service#${type}`, message }));
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
