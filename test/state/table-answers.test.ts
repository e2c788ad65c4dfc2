/**
 * The ledger table against answers a real DynamoDB gives rarely or never on demand (src/state/table.ts):
 * each error name and system error code the SDK can throw and the one line that names it, items
 * that are not claims, a write that fails after its read, a change that cannot be made, answers
 * without headers. The AWS SDK's DynamoDB client is replaced by a scripted one; the table module
 * is loaded again in each test, so the tables it builds as it loads are the ones that test reads.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import type { LedgerError } from '../../src/errors.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const PORTAL = 'https://acme.example.com/public-api/v1';
const TABLE = 'posture-ledger';
const TAIL = '; no request goes to the portal while its share cannot be counted';

type Input = Record<string, unknown>;
type Answer = { Items?: Array<Record<string, unknown>>; LastEvaluatedKey?: Record<string, unknown> } | undefined;
/** What the scripted client answers each kind of command (throw to fail it), and its region. */
interface Script {
  Query: (input: Input) => Answer;
  PutItem: (input: Input) => Answer;
  UpdateItem: (input: Input) => Answer;
  region: () => Promise<string>;
  /** Runs as a client is made: throws when the SDK cannot make one. */
  make: () => void;
  /** The headers of each answer: DynamoDB's Date by default. */
  headers: () => Record<string, string> | undefined;
}

let clock: FakeClock;
let script: Script;
/** Every command sent, by kind, with its input; the clients made, with what they were made with; the clients destroyed. */
let sent: Array<{ kind: string; input: Input }>;
let made: unknown[];
let destroyed: number;

class Command {
  constructor(
    readonly kind: keyof Script,
    readonly input: Input,
  ) {}
}

/** The scripted SDK: a client that runs the middleware the ledger adds around the script's answers. */
function fakeSdk() {
  class DynamoDBClient {
    private readonly middleware: Array<(next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>> = [];
    readonly middlewareStack = { add: (m: (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>) => this.middleware.push(m) };
    readonly config = { region: () => script.region() };
    constructor(options: unknown) {
      script.make();
      made.push(options);
    }
    async send(command: Command): Promise<unknown> {
      let handler = async (): Promise<unknown> => {
        sent.push({ kind: command.kind, input: command.input });
        const output = (script[command.kind] as (input: Input) => Answer)(command.input) ?? {};
        return { response: { statusCode: 200, headers: script.headers() }, output };
      };
      for (const m of this.middleware) handler = m(handler) as () => Promise<unknown>;
      return ((await handler()) as { output: unknown }).output;
    }
    destroy(): void {
      destroyed++;
    }
  }
  return {
    DynamoDBClient,
    QueryCommand: class extends Command {
      constructor(input: Input) {
        super('Query', input);
      }
    },
    PutItemCommand: class extends Command {
      constructor(input: Input) {
        super('PutItem', input);
      }
    },
    UpdateItemCommand: class extends Command {
      constructor(input: Input) {
        super('UpdateItem', input);
      }
    },
  };
}

beforeEach(() => {
  clock = new FakeClock(T0);
  sent = [];
  made = [];
  destroyed = 0;
  script = {
    Query: () => ({ Items: [] }),
    PutItem: () => ({}),
    UpdateItem: () => ({}),
    region: () => Promise.resolve('eu-west-1'),
    make: () => {},
    headers: () => ({ date: new Date(clock.now()).toUTCString() }),
  };
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', '');
  vi.stubEnv('AWS_ENDPOINT_URL', '');
  vi.resetModules();
  vi.doMock('@aws-sdk/client-dynamodb', fakeSdk);
});
afterEach(() => {
  vi.doUnmock('@aws-sdk/client-dynamodb');
  vi.unstubAllEnvs();
});

/** The table module, loaded afresh, opened as TABLE. */
async function open(logger = memoryLogger()) {
  const { openTable } = await import('../../src/state/table.js');
  return openTable(TABLE, logger, clock);
}

/** An error as the SDK throws it. */
const sdkError = (name: string | undefined, message: string, more: Record<string, unknown> = {}) => Object.assign(name === undefined ? {} : { name }, { message }, more);

/** The LedgerError a claim fails with. */
async function claimError(): Promise<LedgerError> {
  const err = await (await open()).ledgerOf(PORTAL).claim(5).catch((e: unknown) => e);
  // The error class of the modules loaded with the table.
  const { LedgerError: Loaded } = await import('../../src/errors.js');
  expect(err).toBeInstanceOf(Loaded);
  return err as LedgerError;
}

/** A claim item of PORTAL's chain, claimed at T0 by another writer. */
const item = (n: number, more: Record<string, unknown> = {}) => ({ portal: { S: PORTAL }, n: { N: String(n) }, at: { N: String(T0) }, writer: { S: 'other/1/abc' }, flightMs: { N: '1000' }, reach: { N: '1' }, expiresAt: { N: String(T0 / 1000 + 7200) }, ...more });

describe('a request the table refused, and what the line says to do', () => {
  const REFUSED = ['AccessDeniedException', 'UnrecognizedClientException', 'InvalidSignatureException', 'ExpiredTokenException', 'MissingAuthenticationTokenException', 'IncompleteSignatureException', 'InvalidClientTokenId', 'SignatureDoesNotMatch'];
  it.each(REFUSED)('%s: the credentials need the three permissions', async (name) => {
    script.Query = () => {
      throw sdkError(name, 'not you');
    };
    const err = await claimError();
    expect(err.message).toBe(`the DynamoDB table ${TABLE} (POSTURE_STATE_TABLE) refused the request (${name}: not you): give these credentials dynamodb:Query, dynamodb:PutItem and dynamodb:UpdateItem on the table (docs/serverless.md, "Creating the ledger table")${TAIL}`);
  });

  it.each(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded'])('%s: the table is throttled and needs on-demand capacity', async (name) => {
    script.Query = () => {
      throw sdkError(name, 'slow down');
    };
    const err = await claimError();
    expect(err.message).toBe(`the DynamoDB table ${TABLE} (POSTURE_STATE_TABLE) throttled the requests (${name}: slow down): give it on-demand capacity${TAIL}`);
  });
});

describe('a table that cannot be reached', () => {
  it.each(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE'])('%s: says so, with the system error, and to check the network path', async (code) => {
    script.Query = () => {
      throw sdkError('Error', `${code.toLowerCase()} happened`, { code });
    };
    const err = await claimError();
    expect(err.message).toBe(`the DynamoDB table ${TABLE} (POSTURE_STATE_TABLE) cannot be reached (${code}: ${code.toLowerCase()} happened): check the network path to DynamoDB${TAIL}`);
  });

  it("says the SDK's timeout is one too, by its name", async () => {
    script.Query = () => {
      throw sdkError('TimeoutError', 'Connection timed out after 3000 ms');
    };
    expect((await claimError()).message).toBe(`the DynamoDB table ${TABLE} (POSTURE_STATE_TABLE) cannot be reached (TimeoutError: Connection timed out after 3000 ms): check the network path to DynamoDB${TAIL}`);
  });

  it.each(['XECONNRESET', 'ECONNRESETX', 'ERR_SOMETHING'])('takes a code that only contains a network code (%s) for what it is: the table cannot be used', async (code) => {
    script.Query = () => {
      throw sdkError('Error', 'odd', { code });
    };
    expect((await claimError()).message).toBe(`the DynamoDB table ${TABLE} (POSTURE_STATE_TABLE) cannot be used (${code}: odd)${TAIL}`);
  });
});

describe('an error of another shape', () => {
  it('names an error without a name Error, and one whose code is not a string by its name', async () => {
    script.Query = () => {
      throw sdkError(undefined, 'nameless');
    };
    expect((await claimError()).message).toBe(`the DynamoDB table ${TABLE} (POSTURE_STATE_TABLE) cannot be used (Error: nameless)${TAIL}`);
    script.Query = () => {
      throw sdkError('ServiceUnavailable', 'try later', { code: 503 });
    };
    expect((await claimError()).message).toBe(`the DynamoDB table ${TABLE} (POSTURE_STATE_TABLE) cannot be used (ServiceUnavailable: try later)${TAIL}`);
  });

  it('keeps what the SDK threw as the cause', async () => {
    const thrown = sdkError('ThrottlingException', 'slow down');
    script.Query = () => {
      throw thrown;
    };
    expect((await claimError()).cause).toBe(thrown);
  });

  it('says a table that does not exist does not exist, without a region when the client has none', async () => {
    script.Query = () => {
      throw sdkError('ResourceNotFoundException', 'Requested resource not found');
    };
    script.region = () => Promise.reject(new Error('Region is missing'));
    expect((await claimError()).message).toBe(
      `the DynamoDB table ${TABLE} (POSTURE_STATE_TABLE) does not exist: create it with the two commands of docs/serverless.md, "Creating the ledger table" (aws dynamodb create-table, then update-time-to-live), or correct POSTURE_STATE_TABLE or the region (AWS_REGION)${TAIL}`,
    );
  });

  it('fails a claim whose write fails for another reason than a lost condition, and a write that throws nothing named', async () => {
    script.PutItem = () => {
      throw sdkError('ThrottlingException', 'slow down');
    };
    expect((await claimError()).message).toBe(`the DynamoDB table ${TABLE} (POSTURE_STATE_TABLE) throttled the requests (ThrottlingException: slow down): give it on-demand capacity${TAIL}`);
    script.PutItem = () => {
      throw undefined;
    };
    expect((await claimError()).message).toBe(`the DynamoDB table ${TABLE} (POSTURE_STATE_TABLE) cannot be used (Error: undefined)${TAIL}`);
  });

  it('fails a claim when the SDK cannot be loaded and threw nothing named, and keeps what it threw as the cause', async () => {
    const thrown = new Error('no @smithy/core');
    script.make = () => {
      throw thrown;
    };
    expect((await claimError()).cause).toBe(thrown);
    script.make = () => {
      throw undefined;
    };
    expect((await claimError()).message).toBe(`the DynamoDB table ${TABLE} (POSTURE_STATE_TABLE) cannot be used: the AWS SDK's DynamoDB client (@aws-sdk/client-dynamodb) cannot be loaded (undefined)${TAIL}`);
  });
});

describe('an item that is not a claim', () => {
  it('is ignored with one warning per item and chain, however often it is read, and the chain goes on past it', async () => {
    const logger = memoryLogger();
    const other = 'https://other.example.com/public-api/v1';
    script.Query = (input) => {
      const key = ((input.ExpressionAttributeValues as Record<string, { S: string }>)[':p']!).S;
      const { at: _at, ...noAt } = item(3, { portal: { S: key } });
      const { writer: _w, ...noWriter } = item(2, { portal: { S: key } });
      return { Items: [noAt, noWriter, item(1, { portal: { S: key } })] };
    };
    const t = await open(logger);
    for (const identity of [PORTAL, PORTAL, other]) expect((await t.ledgerOf(identity).claim(5)).granted).toBe(true);
    const warnings = logger.records().filter((l) => l.level === 'warn');
    expect(warnings.map((w) => w.msg)).toEqual([
      `item n=3 of ${PORTAL} in the DynamoDB table ${TABLE} is not a claim (no number \`at\` or string \`writer\`): it is ignored; delete it`,
      `item n=2 of ${PORTAL} in the DynamoDB table ${TABLE} is not a claim (no number \`at\` or string \`writer\`): it is ignored; delete it`,
      `item n=3 of ${other} in the DynamoDB table ${TABLE} is not a claim (no number \`at\` or string \`writer\`): it is ignored; delete it`,
      `item n=2 of ${other} in the DynamoDB table ${TABLE} is not a claim (no number \`at\` or string \`writer\`): it is ignored; delete it`,
    ]);
    expect(warnings[0]).toMatchObject({ table: TABLE, portal: PORTAL, n: 3 });
    // Each claim took the number after the newest item, claim or not.
    expect(sent.filter((s) => s.kind === 'PutItem').map((s) => (s.input.Item as { n: { N: string } }).n.N)).toEqual(['4', '4', '4']);
  });

  it('is skipped when it has no number: the chain is numbered by the items that have one', async () => {
    const { n: _n, ...noNumber } = item(9);
    script.Query = () => ({ Items: [noNumber, item(1)] });
    expect((await (await open()).ledgerOf(PORTAL).claim(5)).granted).toBe(true);
    expect(sent.filter((s) => s.kind === 'PutItem').map((s) => (s.input.Item as { n: { N: string } }).n.N)).toEqual(['2']);
  });
});

describe('a change to a claim that cannot be made', () => {
  it('leaves the claim as it was and says so at debug level, with the error name', async () => {
    const logger = memoryLogger({ level: 'debug' });
    script.UpdateItem = () => {
      throw sdkError('ConditionalCheckFailedException', 'The conditional request failed');
    };
    const r = await (await open(logger)).ledgerOf(PORTAL).claim(5);
    await expect(r.arrived!()).resolves.toBeUndefined();
    script.UpdateItem = () => {
      throw undefined;
    };
    await expect(r.release!()).resolves.toBeUndefined();
    const lines = logger.records().filter((l) => l.msg === 'a claim in the DynamoDB table could not be changed: it stays as it was');
    expect(lines.map((l) => [l.level, l.table, l.n, l.error])).toEqual([
      ['debug', TABLE, 1, 'ConditionalCheckFailedException'],
      ['debug', TABLE, 1, undefined],
    ]);
  });
});

describe('the client', () => {
  it("is made with the process's connections and bounded waits, and reads DynamoDB's clock from answers with no headers too", async () => {
    // The first answer dates the clock; the rest carry no headers.
    let answers = 0;
    script.headers = () => (answers++ === 0 ? { date: new Date(clock.now()).toUTCString() } : undefined);
    const t = await open();
    expect((await t.ledgerOf(PORTAL).claim(5)).granted).toBe(true);
    // The process's agents (its proxy, its connections) and the bounds of its waits (src/net/agents.ts).
    expect(made).toEqual([{ requestHandler: expect.objectContaining({ httpAgent: expect.anything(), httpsAgent: expect.anything(), connectionTimeout: expect.any(Number), requestTimeout: expect.any(Number) }) }]);
    // The chain was empty, so the claim reads it again after its write (TTL may have been deleting it).
    expect(sent.map((s) => s.kind)).toEqual(['Query', 'PutItem', 'Query']);
  });

  it('is closed by destroy once made, and destroy before any use closes nothing and throws nothing', async () => {
    const unused = await open();
    expect(() => unused.destroy()).not.toThrow();
    const t = await open();
    await t.ledgerOf(PORTAL).claim(5);
    t.destroy();
    await vi.waitFor(() => expect(destroyed).toBe(1));
  });

  it("turns the SDK's notice about Node versions off unless it is set, and leaves a setting as it is", async () => {
    vi.stubEnv('AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED', undefined);
    await (await open()).ledgerOf(PORTAL).claim(5);
    expect(process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBe('true');
    vi.stubEnv('AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED', 'false');
    vi.resetModules();
    await (await open()).ledgerOf(PORTAL).claim(5);
    expect(process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED).toBe('false');
  });
});

/** A chain the scripted client holds: Query answers it newest first; PutItem adds to it, `meanwhile` having written first (once); UpdateItem sets what it sets. */
function heldChain(items: Array<Record<string, unknown>>, meanwhile: Array<Record<string, unknown>> = []): void {
  const held = [...items];
  script.Query = () => ({ Items: [...held].sort((a, b) => Number((b.n as { N: string }).N) - Number((a.n as { N: string }).N)) });
  script.PutItem = (input) => {
    held.push(...meanwhile.splice(0));
    held.push(input.Item as Record<string, unknown>);
    return {};
  };
  script.UpdateItem = (input) => {
    const target = held.find((i) => (i.n as { N: string }).N === (input.Key as { n: { N: string } }).n.N)!;
    const names = input.ExpressionAttributeNames as Record<string, string>;
    const values = input.ExpressionAttributeValues as Record<string, unknown>;
    for (const [k, name] of Object.entries(names)) if (k.startsWith('#s')) target[name] = values[`:s${k.slice(2)}`];
    return {};
  };
}
const numbersOf = (kind: string) => sent.filter((s) => s.kind === kind).map((s) => ((s.input.Item ?? s.input.Key) as { n: { N: string } }).n.N);
/** Expires within the minute: TTL may be deleting the chain. */
const SOON = { expiresAt: { N: String(T0 / 1000 + 10) } };
const HOUR_AGO = { at: { N: String(T0 - 3_600_000) }, arrivedBy: { N: String(T0 - 3_600_000) } };

describe('a claim on a chain TTL may be deleting (its newest item expires within a minute)', () => {
  it('keeps its number when the read after its write finds only what it had read, and its own claim', async () => {
    heldChain([item(5, SOON)]);
    expect((await (await open()).ledgerOf(PORTAL).claim(5)).granted).toBe(true);
    expect([numbersOf('PutItem'), numbersOf('UpdateItem')]).toEqual([['6'], []]);
  });

  it('gives its number back when a lower one that counts appeared meanwhile, written by a writer that read a live chain, and claims the next', async () => {
    heldChain([item(5, SOON)], [{ ...item(4), arrivedBy: { N: String(T0) } }]);
    expect((await (await open()).ledgerOf(PORTAL).claim(5)).granted).toBe(true);
    expect([numbersOf('PutItem'), numbersOf('UpdateItem')]).toEqual([['6', '7'], ['6']]);
    expect(sent.find((s) => s.kind === 'UpdateItem')!.input.ExpressionAttributeValues).toMatchObject({ ':s0': { BOOL: true } });
  });

  it('keeps its number when the lower request that appeared meanwhile no longer counts (it arrived an hour ago), given back or not', async () => {
    heldChain([item(5, SOON)], [item(4, HOUR_AGO)]);
    expect((await (await open()).ledgerOf(PORTAL).claim(5)).granted).toBe(true);
    expect([numbersOf('PutItem'), numbersOf('UpdateItem')]).toEqual([['6'], []]);
  });

  it("gives a pass's number back when a lower pass not given back appeared meanwhile, however long ago it was claimed", async () => {
    const key = `resolved-pass ${JSON.stringify([PORTAL, 'acme'])}`;
    const pass = (n: number, more: Record<string, unknown>) => ({ portal: { S: key }, n: { N: String(n) }, writer: { S: 'other/1/abc' }, intervalMs: { N: '60000' }, expiresAt: { N: String(T0 / 1000 + 7200) }, ...HOUR_AGO, ...more });
    heldChain([pass(5, SOON)], [pass(4, {})]);
    expect((await (await open()).passes.claim(PORTAL, 'acme', 60_000)).due).toBe(true);
    expect([numbersOf('PutItem'), numbersOf('UpdateItem')]).toEqual([['6', '7'], ['6']]);
  });
});

describe('a claim on the table', () => {
  it("reads the chain strongly consistent, newest first, and counts a request 62 s after it arrived, on DynamoDB's clock: the window, its margin and the clock's second", async () => {
    heldChain([{ ...item(1), arrivedBy: { N: String(T0) } }]);
    clock.set(T0 + 2_000);
    const ledger = (await open()).ledgerOf(PORTAL);
    expect(ledger.where).toBe(`the DynamoDB table ${TABLE}`);
    expect(await ledger.claim(1)).toMatchObject({ granted: false, waitMs: 60_000 });
    expect(sent[0]).toMatchObject({ kind: 'Query', input: { TableName: TABLE, ConsistentRead: true, ScanIndexForward: false } });
  });
});
