/**
 * The ledger on a DynamoDB table (POSTURE_STATE_TABLE): the claim protocol of src/state/claims.ts,
 * shared by every process, Lambda container and host that uses the table.
 *
 * The table (serverless.yml declares it; docs/serverless.md gives the commands): partition key
 * `portal` (S), sort key `n` (N), TTL on `expiresAt` (N, epoch seconds). A chain per partition: a
 * portal's requests under its identity (its normalised base URL), an entry's resolved-alerts
 * passes under `resolved-pass ["<portal>","<entry>"]` (no identity, a URL, has a space or a quote).
 * Each item is one claim, numbered 1, 2, 3…: `at` (N, the claim, on DynamoDB's clock, epoch ms),
 * `writer` (S), `flightMs` (N, a request's longest flight) or `intervalMs` (N, a pass's interval),
 * `arrivedBy` (N, when the request could last have reached the portal, once known), `released`
 * (BOOL, given back), `reach` (N, the lowest number that counted when it was claimed: the next
 * claimer reads back no further), `expiring` (BOOL, below) and `expiresAt`.
 *
 * A number is claimed by a PutItem on the condition that it does not exist, after a strongly
 * consistent Query of the chain, newest first, back to the newest item's `reach`: every record that
 * can count, released or not.
 *
 * Times are on DynamoDB's clock, read from the Date header of its answers (src/state/server-clock.ts),
 * never the host's: writers whose wall clocks differ, or run under libfaketime, keep one window. A
 * reader at most SKEW_MS (1 s and a round trip) behind DynamoDB; it is added to the window's
 * margin. A record dated more than SKEW_MS ahead (a clock that stepped, an earlier version's host
 * clock) is dated now by the first reader that sees it, so it counts a window and the margin from
 * then, no longer.
 *
 * Items expire (TTL) an hour after they stop counting. TTL deletes them in any order and late, so a
 * writer whose read found the chain empty or its newest item about to expire (two writers might
 * then see different newest numbers) marks its claim `expiring`, reads again after its write, and
 * gives the number back if a record appeared meanwhile that it had not seen and whose writer may not
 * have seen its own.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { AttributeValue, DynamoDBClient, QueryCommandOutput } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { LedgerError } from '../errors.js';
import { awsRequestHandler } from '../net/agents.js';
import type { SendLedger } from '../schedule/ledger.js';
import type { PassLedger } from '../schedule/passes.js';
import { BACK_OFF_MS, counts, DEFAULT_FLIGHT_MS, IDLE_MS, lowestCounting, MAX_FLIGHT_MS, passKeepMs, passLedger, REQUEST_SPAN_MS, sendLedger, type Chain, type Claimed, type Look, type Mark, type Rec } from './claims.js';
import { ServerClock } from './server-clock.js';

/** How far behind DynamoDB's clock a reader may be (the Date header's whole seconds, a round trip): added to the window's margin. */
const SKEW_MS = 1_000;
/** How long a request counts after it arrived, on the table: the window, its margin and the skew. */
const TABLE_SPAN_MS = REQUEST_SPAN_MS + SKEW_MS;
/** Items read per page, newest first. */
const PAGE = 64;
/** Items read at most per look: more means the chain is flooded; the claim waits rather than decide blind. */
const MAX_ITEMS = 512;
/** A chain whose newest item expires within this long may be being deleted by TTL: a claim on it is checked after its write. */
const EXPIRING_MS = 60_000;

/** The DynamoDB API as this module calls it, loaded on first use. */
type Sdk = typeof import('@aws-sdk/client-dynamodb');

/** One claim as the table holds it, its times on DynamoDB's clock. */
interface Item extends Rec {
  /** Its writer decided on a chain TTL may have been deleting (empty, or its newest item about to expire). */
  readonly expiring: boolean;
}

/** What a writer read of a chain. */
interface TableLook extends Look {
  readonly records: readonly Item[];
  /** The chain is empty, or its newest item expires soon: TTL may be removing it. */
  readonly expiring: boolean;
}

/** The two kinds of chain in the table. */
type Kind = 'requests' | 'passes';

/** The error names of a request DynamoDB refused for its credentials or permissions. */
const REFUSED = new Set(['AccessDeniedException', 'UnrecognizedClientException', 'InvalidSignatureException', 'ExpiredTokenException', 'MissingAuthenticationTokenException', 'IncompleteSignatureException', 'InvalidClientTokenId', 'SignatureDoesNotMatch']);
const THROTTLED = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);
const NETWORK = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE)$/;

/** The DynamoDB client of the ledger: the SDK's standard settings for region, endpoint and credentials; bounded, so a table that does not answer fails the run within seconds (the SDK retries twice). */
function dynamoClient(sdk: Sdk): DynamoDBClient {
  // The process's connections and proxy, and bounded waits: a table that does not answer fails the run within seconds (src/net/agents.ts).
  return new sdk.DynamoDBClient({ requestHandler: awsRequestHandler() });
}

/** Reads DynamoDB's clock from the Date header of every answer `client` receives (see ServerClock). */
function watchServerTime(client: DynamoDBClient, clock: ServerClock, monotonic: () => number): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      const sent = monotonic();
      const out = await next(args);
      clock.observe((out.response as { headers?: Record<string, string | undefined> }).headers?.date, sent, monotonic());
      return out;
    },
    // Next to the answer, before it is parsed: an error answer (a lost condition) carries the header too.
    { step: 'deserialize', priority: 'low', name: 'postureLedgerServerTime' },
  );
}

/** The table of a process: one client, loaded on first use, for every chain. */
class LedgerTable {
  private sdk?: Promise<{ sdk: Sdk; client: DynamoDBClient }>;
  /** Items already warned about (once each per process). */
  private readonly warned = new Set<string>();
  private readonly server = new ServerClock();

  constructor(
    readonly table: string,
    readonly logger: Logger,
    readonly clock: Clock,
  ) {}

  /** DynamoDB's time now (epoch ms), as its answers so far prove it. */
  now(): number {
    return this.server.now(this.clock.monotonic());
  }

  /** The SDK and its client: the SDK is loaded only now (it is large). */
  private api(): Promise<{ sdk: Sdk; client: DynamoDBClient }> {
    this.sdk ??= (async () => {
      // The SDK's notice about Node versions it will drop is no news about this run: one log line less.
      process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
      const sdk = await import('@aws-sdk/client-dynamodb');
      const client = dynamoClient(sdk);
      watchServerTime(client, this.server, () => this.clock.monotonic());
      return { sdk, client };
    })();
    this.sdk.catch(() => (this.sdk = undefined));
    return this.sdk;
  }

  /** Reads one page of a chain, newest first (strongly consistent). Throws LedgerError. */
  async query(key: string, start: Record<string, AttributeValue> | undefined): Promise<QueryCommandOutput> {
    const { sdk, client } = await this.loaded();
    try {
      return await client.send(
        new sdk.QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#p = :p',
          ExpressionAttributeNames: { '#p': 'portal' },
          ExpressionAttributeValues: { ':p': { S: key } },
          ConsistentRead: true,
          ScanIndexForward: false,
          Limit: PAGE,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
    } catch (err) {
      return this.fail(client, err);
    }
  }

  /** Writes claim `n` of chain `key` unless it exists; false when another writer wrote it first. Throws LedgerError. */
  async put(key: string, item: Record<string, AttributeValue>): Promise<boolean> {
    const { sdk, client } = await this.loaded();
    try {
      await client.send(new sdk.PutItemCommand({ TableName: this.table, Item: { portal: { S: key }, ...item }, ConditionExpression: 'attribute_not_exists(#p)', ExpressionAttributeNames: { '#p': 'portal' } }));
      return true;
    } catch (err) {
      if ((err as Error)?.name === 'ConditionalCheckFailedException') return false;
      return this.fail(client, err);
    }
  }

  /** Sets `set` on claim `n` of chain `key` when `condition` (on `at` and `writer`) holds; a change that cannot be made leaves the claim as it was (logged at debug). Never throws. */
  async update(key: string, n: number, set: Record<string, AttributeValue>, condition: { at?: number; writer?: string }): Promise<void> {
    const names: Record<string, string> = {};
    const values: Record<string, AttributeValue> = {};
    const sets = Object.entries(set).map(([k, v], i) => {
      names[`#s${i}`] = k;
      values[`:s${i}`] = v;
      return `#s${i} = :s${i}`;
    });
    const conditions: string[] = [];
    if (condition.at !== undefined) {
      names['#at'] = 'at';
      values[':at'] = { N: String(condition.at) };
      conditions.push('#at = :at');
    }
    if (condition.writer !== undefined) {
      names['#w'] = 'writer';
      values[':w'] = { S: condition.writer };
      conditions.push('#w = :w');
    }
    try {
      const { sdk, client } = await this.api();
      await client.send(
        new sdk.UpdateItemCommand({
          TableName: this.table,
          Key: { portal: { S: key }, n: { N: String(n) } },
          UpdateExpression: `SET ${sets.join(', ')}`,
          // Stryker disable next-line StringLiteral: every caller gives one condition (`at` or `writer`), so the separator is never written.
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
    } catch (err) {
      this.logger.debug('a claim in the DynamoDB table could not be changed: it stays as it was', { table: this.table, n, error: (err as Error)?.name });
    }
  }

  /** The SDK, or LedgerError when it cannot be loaded. */
  private async loaded(): Promise<{ sdk: Sdk; client: DynamoDBClient }> {
    try {
      return await this.api();
    } catch (err) {
      throw new LedgerError(this.table, `the DynamoDB table ${this.table} (POSTURE_STATE_TABLE) cannot be used: the AWS SDK's DynamoDB client (@aws-sdk/client-dynamodb) cannot be loaded (${(err as Error)?.message ?? String(err)}); no request goes to the portal while its share cannot be counted`, { cause: err });
    }
  }

  /** Throws the LedgerError of a failed request: the table, what went wrong (in which region) and how to fix it. */
  private async fail(client: DynamoDBClient, err: unknown): Promise<never> {
    let region: string | undefined;
    try {
      region = await client.config.region();
    } catch {
      // No region: the message says so.
    }
    throw ledgerErrorOf(this.table, region, err);
  }

  /** Warns once per item that is not a claim of its chain. */
  warnItem(key: string, n: number, why: string): void {
    const id = `${key}\u0000${n}`;
    if (this.warned.has(id)) return;
    this.warned.add(id);
    this.logger.warn(`item n=${n} of ${key} in the DynamoDB table ${this.table} is ${why}: it is ignored; delete it`, { table: this.table, portal: key, n });
  }

  /** Closes the client's connections (tests; a process's exit does it too). */
  destroy(): void {
    void this.sdk?.then(({ client }) => client.destroy(), () => undefined);
  }
}

/** The message of a failed request to the table: the table, what went wrong and how to fix it. */
function ledgerErrorOf(table: string, region: string | undefined, err: unknown): LedgerError {
  const e = (err ?? {}) as { name?: string; message?: string; code?: string };
  const name = e.name ?? 'Error';
  const message = (e.message ?? String(err)).split('\n')[0]!;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const detail = `${code ?? name}: ${message}`;
  let what: string;
  if (name === 'ResourceNotFoundException') what = `does not exist${region ? ` in ${region}` : ''}: create it with the two commands of docs/serverless.md, "Creating the ledger table" (aws dynamodb create-table, then update-time-to-live), or correct POSTURE_STATE_TABLE or the region (AWS_REGION)`;
  else if (REFUSED.has(name)) what = `refused the request (${detail}): give these credentials dynamodb:Query, dynamodb:PutItem and dynamodb:UpdateItem on the table (docs/serverless.md, "Creating the ledger table")`;
  else if (name === 'CredentialsProviderError') what = `cannot be used without AWS credentials (${message}): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or AWS_PROFILE, or run where a role provides them`;
  else if (/region is missing/i.test(message)) what = 'cannot be found: no AWS region is set: set AWS_REGION';
  else if ((code !== undefined && NETWORK.test(code)) || name === 'TimeoutError') what = `cannot be reached (${detail}): check the network path to DynamoDB${process.env.AWS_ENDPOINT_URL_DYNAMODB || process.env.AWS_ENDPOINT_URL ? ' and AWS_ENDPOINT_URL_DYNAMODB' : ''}`;
  else if (THROTTLED.has(name)) what = `throttled the requests (${detail}): give it on-demand capacity`;
  else if (name === 'ValidationException') what = `refused the request (${detail}): its keys must be portal (S, partition key) and n (N, sort key), see docs/serverless.md`;
  else what = `cannot be used (${detail})`;
  return new LedgerError(table, `the DynamoDB table ${table} (POSTURE_STATE_TABLE) ${what}; no request goes to the portal while its share cannot be counted`, { cause: err });
}

/** A number attribute, or undefined. */
function numberOf(v: AttributeValue | undefined): number | undefined {
  if (v?.N === undefined) return undefined;
  const n = Number(v.N);
  return Number.isFinite(n) ? n : undefined;
}

/** One chain of the table, as one writer uses it. */
class TableChain implements Chain {
  constructor(
    private readonly table: LedgerTable,
    private readonly key: string,
    private readonly kind: Kind,
    readonly writer: string,
  ) {}

  /** How long a record counts after it arrived, by its kind: a request's window (and skew), a pass's own interval. */
  // Stryker disable next-line BlockStatement: equivalent, nothing reads a table record's keepMs (pruning and sweeping are the directory's; TTL removes items)
  private keepOf(raw: Record<string, AttributeValue>): number {
    // Stryker disable next-line all: equivalent, nothing reads a table record's keepMs (see above)
    return this.kind === 'passes' ? passKeepMs(numberOf(raw.intervalMs)) : TABLE_SPAN_MS;
  }

  /** A claim item, or undefined (warned once) when the item is not one. */
  private itemOf(raw: Record<string, AttributeValue>, n: number): Item | undefined {
    const at = numberOf(raw.at);
    const writer = raw.writer?.S;
    if (at === undefined || writer === undefined) {
      this.table.warnItem(this.key, n, 'not a claim (no number `at` or string `writer`)');
      return undefined;
    }
    const arrivedBy = numberOf(raw.arrivedBy);
    return {
      n,
      writer,
      released: raw.released?.BOOL === true,
      claimed: at,
      // A pass arrives as it is claimed.
      // Stryker disable next-line StringLiteral: equivalent, a pass read as a request arrives by its claim and its flight, 0 below, so at its claim
      arrived: this.kind === 'passes' ? at : arrivedBy,
      // Stryker disable next-line StringLiteral: equivalent, a pass read as a request has its arrival above, so its flight is never read
      flightMs: this.kind === 'passes' ? 0 : (numberOf(raw.flightMs) ?? DEFAULT_FLIGHT_MS),
      keepMs: this.keepOf(raw),
      expiring: raw.expiring?.BOOL === true,
    };
  }

  /** Reads the chain, newest first, back to the newest claim's `reach` (without one: as far back as a request in flight could still count). */
  async look(): Promise<TableLook> {
    const items: Item[] = [];
    let newest = 0;
    let newestExpiresAt: number | undefined;
    let reach: number | undefined;
    let start: Record<string, AttributeValue> | undefined;
    let incomplete = false;
    for (let first = true; ; ) {
      const page = await this.table.query(this.key, start);
      // Stryker disable next-line ArrayDeclaration: equivalent, an item that is no object has no number and is skipped
      for (const raw of page.Items ?? []) {
        const n = numberOf(raw.n);
        if (n === undefined) continue;
        if (first) {
          first = false;
          newest = n;
          newestExpiresAt = numberOf(raw.expiresAt);
          reach = numberOf(raw.reach);
        }
        const item = this.itemOf(raw, n);
        if (item) items.push(item);
      }
      start = page.LastEvaluatedKey;
      if (!start) break;
      const oldest = items.at(-1);
      if (oldest && (reach !== undefined ? oldest.n <= reach : this.kind === 'requests' && oldest.claimed < this.table.now() - MAX_FLIGHT_MS - TABLE_SPAN_MS - SKEW_MS)) break;
      if (items.length >= MAX_ITEMS) {
        incomplete = true;
        break;
      }
    }
    const now = this.table.now();
    const expiring = newest === 0 || (newestExpiresAt !== undefined && newestExpiresAt * 1000 - now < EXPIRING_MS);
    const records = await Promise.all(items.map((i) => this.redated(i, now)));
    return { records, newest, now, busyMs: incomplete ? BACK_OFF_MS : 0, expiring };
  }

  /** An item dated more than SKEW_MS ahead of `now`, dated now (in the table too, so it counts from here on for every reader). */
  private async redated(item: Item, now: number): Promise<Item> {
    const ahead = (t: number | undefined) => t !== undefined && t > now + SKEW_MS;
    if (!ahead(item.claimed) && !(this.kind === 'requests' && ahead(item.arrived))) return item;
    const set: Record<string, AttributeValue> = { at: { N: String(now) } };
    if (item.arrived !== undefined && this.kind === 'requests') set.arrivedBy = { N: String(Math.min(item.arrived, now)) };
    await this.table.update(this.key, item.n, set, { at: item.claimed });
    return { ...item, claimed: Math.min(item.claimed, now), arrived: item.arrived === undefined ? undefined : Math.min(item.arrived, now) };
  }

  async put(look: Look, n: number, what: Claimed): Promise<'won' | 'lost' | 'void'> {
    const seen = look as TableLook;
    const at = this.table.now();
    const keep = this.kind === 'passes' ? passKeepMs(what.intervalMs) : TABLE_SPAN_MS;
    const reach = this.kind === 'requests' ? (lowestCounting(seen.records, TABLE_SPAN_MS, at) ?? n) : undefined;
    const item: Record<string, AttributeValue> = {
      n: { N: String(n) },
      at: { N: String(at) },
      writer: { S: this.writer },
      ...(this.kind === 'requests' ? { flightMs: { N: String(what.flightMs) }, reach: { N: String(reach) } } : { intervalMs: { N: String(what.intervalMs) } }),
      expiresAt: { N: String(Math.floor((at + what.flightMs + keep + IDLE_MS) / 1000)) },
      ...(seen.expiring ? { expiring: { BOOL: true } } : {}),
    };
    // Stryker disable next-line StringLiteral: equivalent, the claim loop reads only 'won' (any other outcome: look again)
    if (!(await this.table.put(this.key, item))) return 'lost';
    // TTL may be deleting the chain under another writer's read: give the number back if one wrote unseen.
    if (seen.expiring && (await this.wroteUnseen(seen, n))) {
      await this.mark(n, 'released');
      // Stryker disable next-line StringLiteral: equivalent, the claim loop reads only 'won' (any other outcome: look again)
      return 'void';
    }
    return 'won';
  }

  /**
   * Whether, after this writer claimed `n`, the chain holds a claim that counts, that its look did
   * not see, and whose writer may not have seen `n`. A claim numbered above `n` by a writer that
   * read a chain TTL was not deleting saw `n` (it read an item that existed when `n` was decided,
   * so every item written since, `n` included), so it is no conflict: only a lower number, or a
   * writer that read an expiring chain too, is.
   */
  private async wroteUnseen(seen: TableLook, n: number): Promise<boolean> {
    const key = (i: Item) => `${i.n}\u0000${i.writer}\u0000${i.claimed}`;
    const known = new Set(seen.records.map(key));
    const after = await this.look();
    return after.records.some((i) => !(i.n === n && i.writer === this.writer) && !known.has(key(i)) && (i.n < n || i.expiring) && (this.kind === 'passes' ? !i.released : counts(i, TABLE_SPAN_MS, after.now)));
  }

  async mark(n: number, how: Mark): Promise<void> {
    const set: Record<string, AttributeValue> = how === 'released' ? { released: { BOOL: true } } : { arrivedBy: { N: String(this.table.now()) } };
    await this.table.update(this.key, n, set, { writer: this.writer });
  }

  // TTL removes what no longer counts.
  async prune(): Promise<void> {}
}

/** The partition key of an entry's passes: never a portal identity, which is a URL (no space, no quote). */
function passKey(identity: string, entry: string): string {
  return `resolved-pass ${JSON.stringify([identity, entry])}`;
}

/** The ledgers of one table: the ledger of each portal, by identity (normalised base URL), the passes; `destroy` closes the connections. */
export interface TableLedgers {
  ledgerOf(identity: string): SendLedger;
  readonly passes: PassLedger;
  destroy(): void;
}

/**
 * Opens the DynamoDB table `table` (name or ARN) as the ledger of every portal. Nothing is sent
 * until the first ledger is read: the SDK is loaded then, and every failure is a LedgerError.
 */
export function openTable(table: string, logger: Logger, clock: Clock): TableLedgers {
  const t = new LedgerTable(table, logger, clock);
  const writer = () => `${hostname()}/${process.pid}/${randomBytes(6).toString('hex')}`;
  const passes = writer();
  return {
    ledgerOf: (identity) => sendLedger(new TableChain(t, identity, 'requests', writer()), `the DynamoDB table ${table}`, TABLE_SPAN_MS),
    passes: passLedger((identity, entry) => new TableChain(t, passKey(identity, entry), 'passes', passes)),
    destroy: () => t.destroy(),
  };
}
