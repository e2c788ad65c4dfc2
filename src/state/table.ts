/**
 * The ledger on a DynamoDB table (POSTURE_STATE_TABLE): the scheduler's SendLedger port with the
 * state directory's semantics, shared by every process, Lambda container and host that uses the
 * table.
 *
 * The table (serverless.yml declares it): partition key `portal` (S, the portal identity, its
 * normalised base URL), sort key `n` (N), TTL on `expiresAt` (N, epoch seconds). Each item is one
 * request, numbered 1, 2, 3… per portal: `at` (N, its start on the writer's wall clock, epoch ms),
 * `writer` (S), `released` (BOOL, set when it reached no portal), `expiring` (BOOL, see below) and
 * `expiresAt`.
 *
 * A slot is granted by one atomic step, as in the state directory: a writer reads the portal's
 * newest items (a strongly consistent Query, newest first, as far back as the window reaches),
 * decides against the share, and writes item n + 1 with the condition that it does not exist. A
 * writer that loses reads again. So every request n was decided by a writer that saw requests up
 * to n − 1, and no window holds more than the share. A process killed anywhere leaves at most a
 * request counted that it never sent.
 *
 * DynamoDB has no clock a condition can read: times compare on the writers' wall clocks, assumed
 * synchronised by NTP (as on Lambda, EC2 and most hosts, within milliseconds). Any two clocks may
 * differ by up to SKEW_MS: it is added to the window's margin, so a skew within it never lets a
 * request start early; a record from a clock ahead of the reader's counts as now.
 *
 * Items expire by TTL an hour after their start. TTL deletes them in any order and late, so a
 * writer whose read found the portal's chain empty or about to expire (two writers might then see
 * different newest numbers) marks its request `expiring`, reads again after its write, and gives
 * the slot back if a request appeared meanwhile that it had not seen and whose writer may not have
 * seen its own.
 *
 * The last resolved-alerts pass of each portal entry is one item of its own beside the requests
 * (the PassLedger port): partition key `resolved-pass ["<portal>","<entry>"]` (no portal identity,
 * a URL, has a space or a quote), `n` 0, `at` (N, the pass's start on the writer's wall clock,
 * epoch ms), `writer` and `expiresAt`. A run claims the pass with one conditional write: the item
 * is absent or its `at` is at least the interval (less the early margin) before now, so of two
 * invocations at once only one makes the pass. A failed pass is given back by restoring the `at`
 * it replaced (0 when none), on the condition that the item is still this claim. A record from a
 * clock ahead of the writer's counts as now (it is not due); clocks within SKEW_MS of each other
 * move a pass by at most that much. The item expires (TTL) an hour after the pass is due again.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { AttributeValue, DynamoDBClient, QueryCommandOutput } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { LedgerError } from '../errors.js';
import { nextStart, type ClaimResult, type SendLedger } from '../schedule/ledger.js';
import { dueAfterMs, NOT_DUE, type PassClaim, type PassLedger } from '../schedule/passes.js';
import { WINDOW_MS } from '../schedule/scheduler.js';
import { WINDOW_MARGIN_MS } from '../schedule/window.js';

/** The most two writers' wall clocks may differ (NTP keeps them within milliseconds): added to the window's margin. */
const SKEW_MS = 1_000;
/** How long after its start a request's item expires (TTL): far past the window, so TTL never removes a request that counts. */
const EXPIRY_SECONDS = 3_600;
/** Items read per page, newest first: a window's requests (at most 10, the portal's limit) and a few released ones in one page. */
const PAGE = 16;
/** Items read at most per look: more in one window means the chain is flooded; the claim waits rather than decide blind. */
const MAX_ITEMS = 256;
/** Writes lost to other writers in a row before the claimer lets them go first. */
const MAX_RACES = 10;
/** A chain whose newest item expires within this long may be being deleted by TTL: a claim on it is checked after its write. */
const EXPIRING_MS = 60_000;
/** The wait after MAX_RACES lost writes, or when the chain could not be read to the window's start. */
const BACK_OFF_MS = 250;

/** The DynamoDB API as this module calls it, loaded on first use. */
type Sdk = typeof import('@aws-sdk/client-dynamodb');

/** One request as the table holds it. */
interface Item {
  readonly n: number;
  readonly at: number;
  readonly writer: string;
  readonly released: boolean;
  /** Epoch s; undefined when the item has none (TTL never deletes it). */
  readonly expiresAt: number | undefined;
  /** Its writer decided on a chain TTL may have been deleting (empty, or its newest item about to expire). */
  readonly expiring: boolean;
}

/** What a writer read of the portal's chain. */
interface Look {
  /** The requests, newest first. */
  readonly items: readonly Item[];
  /** The newest number in the chain (0: none), also when its item is not a request record. */
  readonly newest: number;
  /** The read stopped before reaching the window's start (MAX_ITEMS). */
  readonly incomplete: boolean;
  /** The chain is empty, or its newest item expires soon: TTL may be removing it. */
  readonly expiring: boolean;
}

/** The error names of a request DynamoDB refused for its credentials or permissions. */
const REFUSED = new Set(['AccessDeniedException', 'UnrecognizedClientException', 'InvalidSignatureException', 'ExpiredTokenException', 'MissingAuthenticationTokenException', 'IncompleteSignatureException', 'InvalidClientTokenId', 'SignatureDoesNotMatch']);
const THROTTLED = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);
const NETWORK = /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE)$/;

/** The table of a process: one client, loaded on first use, for the ledgers of every portal. */
class LedgerTable {
  private sdk?: Promise<{ sdk: Sdk; client: DynamoDBClient }>;
  /** Items already warned about (once each per process). */
  private readonly warned = new Set<string>();

  constructor(
    readonly table: string,
    readonly logger: Logger,
    readonly clock: Clock,
  ) {}

  /** The SDK and its client: the SDK is loaded only now (it is large), with the SDK's standard settings for region, endpoint and credentials. */
  private api(): Promise<{ sdk: Sdk; client: DynamoDBClient }> {
    this.sdk ??= (async () => {
      // The SDK's notice about Node versions it will drop is no news about this run: one log line less.
      process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
      const sdk = await import('@aws-sdk/client-dynamodb');
      // Bounded: a table that does not answer fails the run within seconds (the SDK retries twice).
      const client = new sdk.DynamoDBClient({ requestHandler: { connectionTimeout: 3_000, requestTimeout: 5_000 } });
      return { sdk, client };
    })();
    this.sdk.catch(() => (this.sdk = undefined));
    return this.sdk;
  }

  /** Reads one page of the portal's chain, newest first (strongly consistent). Throws LedgerError. */
  async query(identity: string, start: Record<string, AttributeValue> | undefined): Promise<QueryCommandOutput> {
    const { sdk, client } = await this.loaded();
    try {
      return await client.send(
        new sdk.QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#p = :p',
          ExpressionAttributeNames: { '#p': 'portal' },
          ExpressionAttributeValues: { ':p': { S: identity } },
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

  /** Writes request `n` unless it exists; false when another writer wrote it first. Throws LedgerError. */
  async put(identity: string, item: Item): Promise<boolean> {
    const { sdk, client } = await this.loaded();
    try {
      await client.send(
        new sdk.PutItemCommand({
          TableName: this.table,
          Item: {
            portal: { S: identity },
            n: { N: String(item.n) },
            at: { N: String(item.at) },
            writer: { S: item.writer },
            expiresAt: { N: String(item.expiresAt) },
            ...(item.expiring ? { expiring: { BOOL: true } } : {}),
          },
          ConditionExpression: 'attribute_not_exists(#p)',
          ExpressionAttributeNames: { '#p': 'portal' },
        }),
      );
      return true;
    } catch (err) {
      if ((err as Error)?.name === 'ConditionalCheckFailedException') return false;
      return this.fail(client, err);
    }
  }

  /** Marks `writer`'s request `n` as never sent. Never throws: a request that stays counted is the careful side. */
  async release(identity: string, n: number, writer: string): Promise<void> {
    try {
      const { sdk, client } = await this.loaded();
      await client.send(
        new sdk.UpdateItemCommand({
          TableName: this.table,
          Key: { portal: { S: identity }, n: { N: String(n) } },
          UpdateExpression: 'SET #r = :t',
          ConditionExpression: '#w = :w',
          ExpressionAttributeNames: { '#r': 'released', '#w': 'writer' },
          ExpressionAttributeValues: { ':t': { BOOL: true }, ':w': { S: writer } },
        }),
      );
    } catch (err) {
      this.logger.debug('a request that reached no portal could not be marked in the DynamoDB table: it stays counted', { table: this.table, n, error: (err as Error)?.name });
    }
  }

  /**
   * Claims the pass item `key` at `at` when it is absent or its `at` is at or before `dueAt`; the
   * `at` it replaced (0: none), or undefined when the pass is not due. Throws LedgerError.
   */
  async claimPass(key: string, at: number, dueAt: number, writer: string, expiresAt: number): Promise<number | undefined> {
    const { sdk, client } = await this.loaded();
    try {
      const out = await client.send(
        new sdk.PutItemCommand({
          TableName: this.table,
          Item: { portal: { S: key }, n: { N: '0' }, at: { N: String(at) }, writer: { S: writer }, expiresAt: { N: String(expiresAt) } },
          // An item whose `at` is not a number is no record: the pass runs.
          ConditionExpression: 'attribute_not_exists(#p) OR NOT attribute_type(#at, :number) OR #at <= :due',
          ExpressionAttributeNames: { '#p': 'portal', '#at': 'at' },
          ExpressionAttributeValues: { ':number': { S: 'N' }, ':due': { N: String(dueAt) } },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return numberOf(out.Attributes?.at) ?? 0;
    } catch (err) {
      if ((err as Error)?.name === 'ConditionalCheckFailedException') return undefined;
      return this.fail(client, err);
    }
  }

  /** Gives `writer`'s claim at `at` of the pass item `key` back: its `at` becomes `previous`. Never throws. */
  async releasePass(key: string, at: number, previous: number, writer: string): Promise<void> {
    try {
      const { sdk, client } = await this.loaded();
      await client.send(
        new sdk.UpdateItemCommand({
          TableName: this.table,
          Key: { portal: { S: key }, n: { N: '0' } },
          UpdateExpression: 'SET #at = :previous',
          ConditionExpression: '#w = :w AND #at = :at',
          ExpressionAttributeNames: { '#at': 'at', '#w': 'writer' },
          ExpressionAttributeValues: { ':previous': { N: String(previous) }, ':w': { S: writer }, ':at': { N: String(at) } },
        }),
      );
    } catch (err) {
      this.logger.warn(`a failed resolved-alerts pass could not be given back in the DynamoDB table ${this.table}: it counts until its interval has passed`, { table: this.table, error: (err as Error)?.name });
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

  /** Warns once per item that is not a request record of the portal. */
  warnItem(identity: string, n: string, why: string): void {
    const key = `${identity}\u0000${n}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.logger.warn(`item n=${n} of portal ${identity} in the DynamoDB table ${this.table} is ${why}: it is ignored; delete it`, { table: this.table, portal: identity, n });
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
  if (name === 'ResourceNotFoundException') what = `does not exist${region ? ` in ${region}` : ''}: create it (docs/serverless.md, "The budget across invocations"), or correct POSTURE_STATE_TABLE or the region (AWS_REGION)`;
  else if (REFUSED.has(name)) what = `refused the request (${detail}): give these credentials dynamodb:Query, dynamodb:PutItem and dynamodb:UpdateItem on the table`;
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

/** One portal's ledger in the table; each is a writer of its own. */
class PortalTable implements SendLedger {
  constructor(
    private readonly table: LedgerTable,
    private readonly identity: string,
    private readonly writer: string,
  ) {}

  async others(): Promise<readonly number[]> {
    const look = await this.look();
    return this.decide(look, Infinity, this.table.clock.now()).others;
  }

  async claim(share: number): Promise<ClaimResult> {
    for (let race = 0; race < MAX_RACES; race++) {
      const look = await this.look();
      const now = this.table.clock.now();
      const decision = this.decide(look, share, now);
      if (look.incomplete) return { granted: false, waitMs: BACK_OFF_MS, others: decision.others };
      if (decision.waitMs > 0) return { granted: false, waitMs: decision.waitMs, others: decision.others };
      const item: Item = { n: look.newest + 1, at: now, writer: this.writer, released: false, expiresAt: Math.floor(now / 1000) + EXPIRY_SECONDS, expiring: look.expiring };
      if (!(await this.table.put(this.identity, item))) continue;
      // TTL may be deleting the chain under another writer's read: give the slot back if one wrote unseen.
      if (look.expiring && (await this.wroteUnseen(look, item))) {
        await this.table.release(this.identity, item.n, this.writer);
        continue;
      }
      return { granted: true, waitMs: 0, others: decision.others, release: () => this.table.release(this.identity, item.n, this.writer) };
    }
    // Every write lost to another writer: let them go first.
    return { granted: false, waitMs: BACK_OFF_MS, others: this.decide(await this.look(), Infinity, this.table.clock.now()).others };
  }

  /**
   * When one more request may start at `share` (waitMs 0: now), and the ages of the other writers'
   * requests in the window, each read as late as the skew allows (so the scheduler's own window,
   * without the skew, counts them as long as the table does).
   */
  private decide(look: Look, share: number, now: number): { waitMs: number; others: number[] } {
    const margin = WINDOW_MARGIN_MS + SKEW_MS;
    const cutoff = now - WINDOW_MS - margin;
    const starts: number[] = [];
    const others: number[] = [];
    for (const item of look.items) {
      if (item.released) continue;
      // A record from a clock ahead of this one counts as now.
      const start = Math.min(item.at, now);
      if (start <= cutoff) continue;
      starts.push(start);
      if (item.writer !== this.writer) others.push(Math.max(0, now - start - SKEW_MS));
    }
    const waitMs = Number.isFinite(share) ? nextStart(starts, share, now, WINDOW_MS, margin) - now : 0;
    return { waitMs, others };
  }

  /** Reads the portal's chain, newest first, back to where the window starts (allowing for the skew). */
  private async look(): Promise<Look> {
    const items: Item[] = [];
    let newest = 0;
    let newestExpiresAt: number | undefined;
    let start: Record<string, AttributeValue> | undefined;
    for (;;) {
      const page = await this.table.query(this.identity, start);
      for (const raw of page.Items ?? []) {
        const n = numberOf(raw.n);
        if (n === undefined) continue;
        if (newest === 0) {
          newest = n;
          newestExpiresAt = numberOf(raw.expiresAt);
        }
        const item = this.itemOf(raw, n);
        if (item) items.push(item);
      }
      start = page.LastEvaluatedKey;
      if (!start) break;
      // Requests were claimed in order: one this far out of the window (a skew's reach) has only older ones behind it.
      const oldest = items.at(-1);
      if (oldest && oldest.at <= this.table.clock.now() - WINDOW_MS - WINDOW_MARGIN_MS - 2 * SKEW_MS) break;
      if (items.length >= MAX_ITEMS) return { items, newest, incomplete: true, expiring: false };
    }
    const expiring = newest === 0 || (newestExpiresAt !== undefined && newestExpiresAt * 1000 - this.table.clock.now() < EXPIRING_MS);
    return { items, newest, incomplete: false, expiring };
  }

  /** A request item, or undefined (warned once) when the item is not one. */
  private itemOf(raw: Record<string, AttributeValue>, n: number): Item | undefined {
    const at = numberOf(raw.at);
    const writer = raw.writer?.S;
    if (at === undefined || writer === undefined) {
      this.table.warnItem(this.identity, String(n), 'not a request record (no number `at` or string `writer`)');
      return undefined;
    }
    return { n, at, writer, released: raw.released?.BOOL === true, expiresAt: numberOf(raw.expiresAt), expiring: raw.expiring?.BOOL === true };
  }

  /**
   * Whether, after this writer wrote `mine`, the chain holds a request in the window that its
   * decision did not see and whose writer may not have seen `mine`. A request numbered above
   * `mine` by a writer that read a chain TTL was not deleting saw `mine` (it read an item that
   * existed when `mine` was decided, so every item written since, `mine` included), so it is no
   * conflict: only a lower number, or a writer that read an expiring chain too, is.
   */
  private async wroteUnseen(seen: Look, mine: Item): Promise<boolean> {
    const key = (i: Item) => `${i.n}\u0000${i.writer}\u0000${i.at}`;
    const known = new Set(seen.items.map(key));
    const after = await this.look();
    const now = this.table.clock.now();
    const cutoff = now - WINDOW_MS - WINDOW_MARGIN_MS - SKEW_MS;
    return after.items.some((i) => !i.released && !(i.n === mine.n && i.writer === mine.writer) && !known.has(key(i)) && (i.n < mine.n || i.expiring) && Math.min(i.at, now) > cutoff);
  }
}

/** The partition key of an entry's pass item: never a portal identity, which is a URL (no space, no quote). */
function passKey(identity: string, entry: string): string {
  return `resolved-pass ${JSON.stringify([identity, entry])}`;
}

/** The last resolved-alerts pass of every portal entry, in the table. */
class TablePasses implements PassLedger {
  constructor(
    private readonly table: LedgerTable,
    private readonly writer: string,
  ) {}

  async claim(identity: string, entry: string, intervalMs: number): Promise<PassClaim> {
    const key = passKey(identity, entry);
    const at = this.table.clock.now();
    const expiresAt = Math.floor((at + intervalMs) / 1000) + EXPIRY_SECONDS;
    const previous = await this.table.claimPass(key, at, at - dueAfterMs(intervalMs), this.writer, expiresAt);
    if (previous === undefined) return NOT_DUE;
    return { due: true, release: () => this.table.releasePass(key, at, previous, this.writer) };
  }
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
  return {
    ledgerOf: (identity) => new PortalTable(t, identity, writer()),
    passes: new TablePasses(t, writer()),
    destroy: () => t.destroy(),
  };
}
