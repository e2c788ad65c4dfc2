/**
 * A real DynamoDB API for the ledger's tests: dynalite (DynamoDB on LevelDB, in memory) on a random
 * loopback port, with the ledger's table created from the keys serverless.yml declares, and the
 * environment the AWS SDK reads (endpoint, region, fake credentials) to reach it.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient, QueryCommand, type AttributeValue, type AttributeDefinition, type KeySchemaElement } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
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

/** Starts dynalite on 127.0.0.1 and a random port. */
export async function startDynalite(): Promise<Dynalite> {
  // The SDK's notice that later versions need Node 22 is no news to these tests.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
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
