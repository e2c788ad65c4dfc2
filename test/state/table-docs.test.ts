/**
 * The ledger table as docs/serverless.md ("Creating the ledger table") tells a user to create it
 * outside serverless.yml: its `aws dynamodb create-table` and `update-time-to-live` commands declare
 * the keys, billing and TTL serverless.yml declares, a table created from them (in dynalite) is one
 * the ledger claims on, and its IAM policy grants the calls the ledger makes, the ones serverless.yml
 * grants the function.
 */
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { memoryLogger } from '../../src/core/log.js';
import { FakeClock } from '../../src/core/clock.js';
import { openTable } from '../../src/state/table.js';
import { useDynalite } from '../support/dynalite.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
let clock = new FakeClock(T0);
const tables = useDynalite('docs-ledger', () => clock.now());

/** The section of docs/serverless.md, and its shell and JSON blocks. */
function section(): { shell: string; policy: { Statement: Array<{ Action: string[] }> } } {
  const docs = readFileSync(new URL('../../docs/serverless.md', import.meta.url), 'utf8');
  const start = docs.indexOf('### Creating the ledger table');
  expect(start).toBeGreaterThan(0);
  const text = docs.slice(start, docs.indexOf('\n## ', start));
  const blocks = (lang: string) => [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
  return { shell: blocks('sh')[0]!.replace(/\\\n\s*/g, ''), policy: JSON.parse(blocks('json')[0]!) as never };
}

/** serverless.yml's StateTable and the actions it grants on it. */
function serverlessYml(): { table: { AttributeDefinitions: unknown; KeySchema: unknown; BillingMode: string; TimeToLiveSpecification: { AttributeName: string; Enabled: boolean } }; actions: string[] } {
  const doc = parse(readFileSync(new URL('../../serverless.yml', import.meta.url), 'utf8')) as {
    resources: { Resources: { StateTable: { Properties: never }; PostureExporterRole: { Properties: { Policies: Array<{ PolicyDocument: { Statement: Array<{ Sid?: string; Action?: string[] }> } }> } } } };
  };
  const statements = doc.resources.Resources.PostureExporterRole.Properties.Policies.flatMap((p) => p.PolicyDocument.Statement);
  return { table: doc.resources.Resources.StateTable.Properties, actions: statements.find((s) => s.Sid === 'StateTable')!.Action! };
}

/** The value of `--flag` in a command line, as the AWS CLI's shorthand: its space-separated items. */
function flag(command: string, name: string): string[] {
  const m = new RegExp(`--${name} ((?:[^-\\s][^\\s]*\\s?)+)`).exec(command);
  expect(m, `--${name}`).not.toBeNull();
  return m![1]!.trim().split(/\s+/);
}

/** AWS CLI shorthand `A=x,B=y` as an object. */
const shorthand = (item: string) => Object.fromEntries(item.split(',').map((kv) => kv.split('=') as [string, string]));

describe('the ledger table, created as docs/serverless.md says', () => {
  it('declares the keys, billing and TTL serverless.yml declares', () => {
    const { shell } = section();
    const [create, , ttl] = shell.split('\n').filter((l) => l.startsWith('aws dynamodb'));
    expect(create).toMatch(/^aws dynamodb create-table /);
    expect(ttl).toMatch(/^aws dynamodb update-time-to-live /);
    const { table } = serverlessYml();
    expect(flag(create!, 'attribute-definitions').map(shorthand)).toEqual(table.AttributeDefinitions);
    expect(flag(create!, 'key-schema').map(shorthand)).toEqual(table.KeySchema);
    expect(flag(create!, 'billing-mode')).toEqual([table.BillingMode]);
    expect(shorthand(flag(ttl!, 'time-to-live-specification')[0]!)).toEqual({ Enabled: String(table.TimeToLiveSpecification.Enabled), AttributeName: table.TimeToLiveSpecification.AttributeName });
    // The ledger names the same table in both, and TTL on the attribute it writes.
    expect(flag(create!, 'table-name')).toEqual(flag(ttl!, 'table-name'));
  });

  it('makes a table the ledger claims on', async () => {
    clock = new FakeClock(T0);
    const { shell } = section();
    const create = shell.split('\n').find((l) => l.startsWith('aws dynamodb create-table'))!;
    const name = `${tables.table}-from-docs`;
    await tables.db.client.send(
      new CreateTableCommand({ TableName: name, AttributeDefinitions: flag(create, 'attribute-definitions').map(shorthand) as never, KeySchema: flag(create, 'key-schema').map(shorthand) as never, BillingMode: flag(create, 'billing-mode')[0] as never }),
    );
    expect((await tables.db.client.send(new DescribeTableCommand({ TableName: name }))).Table?.TableStatus).toBe('ACTIVE');
    const ledger = tables.open(openTable(name, memoryLogger(), clock)).ledgerOf('https://acme.example.com/public-api/v1');
    const claim = await ledger.claim(1);
    expect(claim.granted).toBe(true);
    await claim.arrived!();
    expect(await ledger.claim(1)).toMatchObject({ granted: false, waitMs: 62_000 });
    expect((await tables.db.items(name, 'https://acme.example.com/public-api/v1')).map((i) => [i.n, i.at, i.arrivedBy])).toEqual([[1, T0, T0]]);
  });

  it('grants the three calls the ledger makes, as serverless.yml grants the function', () => {
    const { policy } = section();
    expect(policy.Statement.flatMap((s) => s.Action)).toEqual(serverlessYml().actions);
    expect(serverlessYml().actions).toEqual(['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
  });
});
