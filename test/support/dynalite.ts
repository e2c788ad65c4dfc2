/**
 * A real DynamoDB API for the ledger's tests: dynalite (DynamoDB on LevelDB, in memory) on a random
 * loopback port, with the ledger's table created from the keys serverless.yml declares, and the
 * environment the AWS SDK reads (endpoint, region, fake credentials) to reach it. Its answers'
 * Date header (DynamoDB's clock, which the ledger measures its windows on) reads the real clock, or
 * a test's clock.
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient, QueryCommand, type AttributeValue, type AttributeDefinition, type KeySchemaElement } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { parse } from 'yaml';

/** The ledger table as serverless.yml declares it (resources.Resources.StateTable.Properties). */
export interface TableSpec {
  AttributeDefinitions: AttributeDefinition[];
  KeySchema: KeySchemaElement[];
  BillingMode: string;
  TimeToLiveSpecification: { AttributeName: string; Enabled: boolean };
}

/** The StateTable of serverless.yml (plain YAML: its keys use no short intrinsic tags). */
function tableSpecOfServerlessYml(): TableSpec {
  const text = readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8');
  const doc = parse(text) as { resources: { Resources: { StateTable: { Type: string; Properties: TableSpec } } } };
  const table = doc.resources.Resources.StateTable;
  if (table.Type !== 'AWS::DynamoDB::Table') throw new Error(`serverless.yml: StateTable is a ${table.Type}`);
  return table.Properties;
}

/** One item of the ledger, as its attributes read. */
export interface LedgerItem {
  portal: string;
  n: number;
  at?: number;
  writer?: string;
  released?: boolean;
  arrivedBy?: number;
  expiresAt?: number;
}

export interface Dynalite {
  /** http://127.0.0.1:PORT */
  readonly endpoint: string;
  /** What the AWS SDK needs to reach it: AWS_ENDPOINT_URL_DYNAMODB, a region and fake credentials. */
  readonly env: Record<string, string>;
  /** A client of it (for the tests' own reads and writes). */
  readonly client: DynamoDBClient;
  /** Creates the ledger table `name` from serverless.yml's keys and billing mode. */
  createTable(name: string): Promise<void>;
  /** Every item of `portal` in `table`, oldest first. */
  items(table: string, portal: string): Promise<LedgerItem[]>;
  close(): Promise<void>;
}

const FAKE_AWS = { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'AKIDLEDGERTEST', AWS_SECRET_ACCESS_KEY: 'ledger-test-secret', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };

/** Starts dynalite on 127.0.0.1 and a random port; `dateOf`, when given, is the time (epoch ms) its answers' Date header reads. */
export async function startDynalite(dateOf?: () => number): Promise<Dynalite> {
  // The SDK's notice that later versions need Node 22 is no news to these tests.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  if (dateOf) {
    server.prependListener('request', (_req, res: ServerResponse) => {
      res.sendDate = false;
      res.setHeader('date', new Date(dateOf()).toUTCString());
    });
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({ endpoint, region: FAKE_AWS.AWS_REGION, credentials: { accessKeyId: FAKE_AWS.AWS_ACCESS_KEY_ID, secretAccessKey: FAKE_AWS.AWS_SECRET_ACCESS_KEY } });
  return {
    endpoint,
    env: { ...FAKE_AWS, AWS_ENDPOINT_URL_DYNAMODB: endpoint },
    client,
    async createTable(name) {
      const spec = tableSpecOfServerlessYml();
      await client.send(new CreateTableCommand({ TableName: name, AttributeDefinitions: spec.AttributeDefinitions, KeySchema: spec.KeySchema, BillingMode: spec.BillingMode as 'PAY_PER_REQUEST' }));
    },
    async items(table, portal) {
      const out: LedgerItem[] = [];
      let start: Record<string, AttributeValue> | undefined;
      do {
        const page = await client.send(new QueryCommand({ TableName: table, KeyConditionExpression: 'portal = :p', ExpressionAttributeValues: { ':p': { S: portal } }, ConsistentRead: true, ...(start ? { ExclusiveStartKey: start } : {}) }));
        for (const i of page.Items ?? []) {
          out.push({
            portal: i.portal!.S!,
            n: Number(i.n!.N),
            ...(i.at?.N !== undefined ? { at: Number(i.at.N) } : {}),
            ...(i.writer?.S !== undefined ? { writer: i.writer.S } : {}),
            ...(i.released?.BOOL !== undefined ? { released: i.released.BOOL } : {}),
            ...(i.arrivedBy?.N !== undefined ? { arrivedBy: Number(i.arrivedBy.N) } : {}),
            ...(i.expiresAt?.N !== undefined ? { expiresAt: Number(i.expiresAt.N) } : {}),
          });
        }
        start = page.LastEvaluatedKey;
      } while (start);
      return out;
    },
    async close() {
      client.destroy();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What `useDynalite` gives a test file. */
export interface DynaliteFixture {
  /** The running dynalite. */
  readonly db: Dynalite;
  /** The table of the test that runs: a fresh one each test. */
  readonly table: string;
  /** Keeps `ledgers` (what openTable returned) to close after the test; returns them. */
  open<T extends { destroy(): void }>(ledgers: T): T;
}

/**
 * Dynalite for every test of a file: started before them, with the AWS SDK's environment (endpoint,
 * region, fake credentials) pointing at it in this process and put back after; a fresh ledger
 * table (`<prefix>-<n>`) before each test; and the ledgers a test opened closed after it. `dateOf`
 * is what its Date header reads (a test's clock), else the real time.
 */
export function useDynalite(prefix: string, dateOf?: () => number): DynaliteFixture {
  let db: Dynalite | undefined;
  let table = '';
  let tables = 0;
  const opened: Array<{ destroy(): void }> = [];
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    db = await startDynalite(dateOf);
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
    await db?.close();
  });
  beforeEach(async () => {
    table = `${prefix}-${++tables}`;
    process.env.AWS_ENDPOINT_URL_DYNAMODB = db!.endpoint;
    await db!.createTable(table);
  });
  afterEach(() => {
    for (const t of opened.splice(0)) t.destroy();
  });
  return {
    get db() {
      return db!;
    },
    get table() {
      return table;
    },
    open(ledgers) {
      opened.push(ledgers);
      return ledgers;
    },
  };
}
