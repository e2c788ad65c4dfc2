/**
 * serverless.yml packaged with osls, as package.test.ts packages it: the ledger table (the budget
 * across invocations), and the fan-out of totalShards (a schedule starting a Distributed Map that
 * invokes every shard), with the fleet's config file packaged beside the bundle.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { actions, arn, builtService, evaluate, fn, live, oslsPackage, periodSeconds, PORTAL, PUSH, readZip, REMOTE_WRITE, statements, work, type Json, type Packaged, type Statement, type Template } from './support.js';

const packages: Record<'plain' | 'pushgateway' | 'sharded' | 'sharded100', Packaged> = {} as never;

builtService('sls-fan-out-', async () => {
  packages.plain = await oslsPackage('plain', PORTAL);
  // A portal and a Pushgateway: the deployment the ledger's checks name.
  packages.pushgateway = await oslsPackage('pushgateway', { baseUrl: 'https://acme.example.com/public-api/v1', apiKeySsmParameter: '/posture-exporter/api-key', push: 'pushgateway', pushgatewayUrl: 'https://pushgateway.example.com' });
  // A fleet: three shards, the portal list in a packaged config file (created only now, so the
  // packages above show that nothing but the bundle is uploaded without one).
  mkdirSync(join(work, 'posture-config'));
  writeFileSync(join(work, 'posture-config/portals.yml'), 'portals:\n  - portal: a\n    base_url: https://a.example.com/public-api/v1\n    api_key_ssm_parameter: /posture/a\n');
  packages.sharded = await oslsPackage('sharded', { totalShards: '3', configFile: '/var/task/posture-config/portals.yml', ...PUSH });
  // A fleet's size: every shard must start at once, and the execution's output must stay small.
  packages.sharded100 = await oslsPackage('sharded100', { totalShards: '100', configFile: '/var/task/posture-config/portals.yml', ...REMOTE_WRITE, pushConcurrency: '4' });
});

describe('serverless.yml: the ledger table (the budget across invocations)', () => {
  const ALL = ['plain', 'pushgateway', 'sharded', 'sharded100'] as const;
  const tables = (name: (typeof ALL)[number]) => Object.entries(live(packages[name].template)).filter(([, r]) => r.Type === 'AWS::DynamoDB::Table');

  it('declares one DynamoDB table, on demand, keyed by portal (S) and n (N), with TTL on expiresAt, sharded or not', () => {
    for (const name of ALL) {
      expect(tables(name).map(([id]) => id), name).toEqual(['StateTable']);
      expect(tables(name)[0]![1].Properties, name).toEqual({
        TableName: 'posture-exporter-test-ledger',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'portal', AttributeType: 'S' },
          { AttributeName: 'n', AttributeType: 'N' },
        ],
        KeySchema: [
          { AttributeName: 'portal', KeyType: 'HASH' },
          { AttributeName: 'n', KeyType: 'RANGE' },
        ],
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      });
    }
  });

  it("grants the function that table alone, by the three named dynamodb: actions the ledger calls", () => {
    for (const name of ALL) {
      const st = statements(packages[name].template).filter((s) => actions(s).some((a) => a.startsWith('dynamodb:')));
      expect(st, name).toEqual([{ Sid: 'StateTable', Effect: 'Allow', Action: ['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem'], Resource: { 'Fn::GetAtt': ['StateTable', 'Arn'] } }]);
    }
    // No other role of the stack (the fan-out's) may touch it.
    for (const [id, r] of Object.entries(live(packages.sharded.template))) {
      if (r.Type !== 'AWS::IAM::Role' || id === 'PostureExporterRole') continue;
      expect(JSON.stringify(r.Properties), id).not.toContain('dynamodb');
    }
  });

  it('sets POSTURE_STATE_TABLE to that table', () => {
    for (const name of ALL) expect(fn(packages[name].template).Environment.Variables.POSTURE_STATE_TABLE, name).toEqual({ Ref: 'StateTable' });
  });

  it('retries no scheduled invocation: Lambda\'s asynchronous retries and the rule\'s delivery retries are 0', () => {
    for (const name of ALL) {
      const configs = Object.values(packages[name].template.Resources).filter((r) => r.Type === 'AWS::Lambda::EventInvokeConfig');
      expect(configs.map((c) => c.Properties), name).toEqual([expect.objectContaining({ FunctionName: { Ref: 'CollectLambdaFunction' }, Qualifier: '$LATEST', MaximumRetryAttempts: 0 })]);
    }
    const rules = Object.values(live(packages.pushgateway.template)).filter((r) => r.Type === 'AWS::Events::Rule');
    expect(rules.map((r) => r.Properties.Targets)).toEqual([[{ Arn: { 'Fn::GetAtt': ['CollectLambdaFunction', 'Arn'] }, Id: 'collectSchedule', RetryPolicy: { MaximumRetryAttempts: 0 } }]]);
    // Sharded, the schedule starts the state machine without retries (it invokes the function synchronously).
    expect((live(packages.sharded.template).FanOutSchedule!.Properties.Target as { RetryPolicy: unknown }).RetryPolicy).toEqual({ MaximumRetryAttempts: 0 });
  });

  it('passes the portal and the Pushgateway beside the table', () => {
    expect(fn(packages.pushgateway.template).Environment.Variables).toMatchObject({ POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: 'https://pushgateway.example.com', POSTURE_STATE_TABLE: { Ref: 'StateTable' } });
  });
});

interface Retrier {
  ErrorEquals: string[];
  IntervalSeconds?: number;
  BackoffRate?: number;
  MaxAttempts?: number;
  MaxDelaySeconds?: number;
  JitterStrategy?: string;
}

interface TaskState {
  Type: string;
  Resource?: string;
  ResultPath?: string | null;
  Retry?: Retrier[];
  Catch?: unknown;
  End?: boolean;
}

interface MapState {
  Type: 'Map';
  ItemsPath: string;
  MaxConcurrency: number;
  ToleratedFailurePercentage?: number;
  ResultPath?: string | null;
  Retry?: unknown;
  ItemSelector: Record<string, unknown>;
  ItemProcessor: { ProcessorConfig: { Mode: string; ExecutionType?: string }; StartAt: string; States: Record<string, TaskState> };
}

type Definition = { StartAt: string; States: Record<string, Record<string, unknown>> };

/** The state machine's definition with Fn::Sub applied (the function's ARN as `FUNCTION_ARN`); `totalShards` replaces the parameter's value when given. */
function definition(template: Template, totalShards?: number): Definition {
  const machine = live(template).FanOutStateMachine!;
  const [text, vars] = (machine.Properties.DefinitionString as { 'Fn::Sub': [string, Record<string, Json>] })['Fn::Sub'];
  expect(vars.FunctionArn).toEqual({ 'Fn::GetAtt': ['CollectLambdaFunction', 'Arn'] });
  const value = (name: string) => (name === 'FunctionArn' ? 'FUNCTION_ARN' : name === 'TotalShards' && totalShards !== undefined ? String(totalShards) : String(vars[name]));
  return JSON.parse(text.replace(/\$\{(\w+)\}/g, (_, name: string) => value(name))) as Definition;
}

/** The Map state the Pass state leads to. */
function mapState(def: Definition): MapState {
  return def.States[def.States[def.StartAt]!.Next as string] as unknown as MapState;
}

/** The output of a state: its input when ResultPath is null, else its result (the states here have no other path). */
function outputOf(input: unknown, result: unknown, resultPath: string | null | undefined): unknown {
  return resultPath === null ? input : result;
}

/**
 * What the Map hands each invocation, computed from the definition as Step Functions would: the
 * Pass state's `States.ArrayRange(a, b, step)`, then the ItemSelector per item
 * (`$$.Map.Item.Index`, `$$.Map.Item.Value`, or a literal).
 */
function mapInputs(def: Definition): Array<Record<string, unknown>> {
  const pass = def.States[def.StartAt]!;
  expect(pass.Type).toBe('Pass');
  const range = /^States\.ArrayRange\((\d+), (\d+), (\d+)\)$/.exec((pass.Parameters as Record<string, string>)['shards.$']!)!;
  const [from, to, step] = [Number(range[1]), Number(range[2]), Number(range[3])];
  const items: number[] = [];
  for (let v = from; v <= to; v += step) items.push(v);
  const map = def.States[pass.Next as string] as unknown as MapState;
  expect(map.ItemsPath).toBe('$.shards');
  return items.map((value, index) =>
    Object.fromEntries(
      Object.entries(map.ItemSelector).map(([k, v]) => (k.endsWith('.$') ? [k.slice(0, -2), v === '$$.Map.Item.Index' ? index : v === '$$.Map.Item.Value' ? value : `unknown path ${String(v)}`] : [k, v])),
    ),
  );
}

describe('serverless.yml fan-out (totalShards)', () => {
  it('with totalShards=3 replaces the rule by a schedule starting a state machine that invokes shards 0..2 of 3', () => {
    const { template } = packages.sharded;
    const resources = live(template);
    // The framework's rule and its permission are gone: nothing invokes the function for every portal.
    expect(Object.values(resources).filter((r) => r.Type === 'AWS::Events::Rule' || r.Type === 'AWS::Lambda::Permission')).toEqual([]);
    expect(fn(template).ReservedConcurrentExecutions).toBe(3);

    const def = definition(template);
    expect(mapInputs(def)).toEqual([
      { shard: 0, totalShards: 3 },
      { shard: 1, totalShards: 3 },
      { shard: 2, totalShards: 3 },
    ]);

    const schedule = resources.FanOutSchedule!.Properties as Record<string, Json>;
    expect(resources.FanOutSchedule!.Type).toBe('AWS::Scheduler::Schedule');
    expect(schedule.ScheduleExpression).toBe('rate(5 minutes)');
    expect(schedule.FlexibleTimeWindow).toEqual({ Mode: 'OFF' });
    expect(schedule.Target).toMatchObject({ Arn: { Ref: 'FanOutStateMachine' }, RoleArn: { 'Fn::GetAtt': ['FanOutScheduleRole', 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0 }, Input: '{}' });
    expect(fn(template).Timeout as number).toBeLessThan(periodSeconds(schedule.ScheduleExpression as string));
  });

  describe.each([
    ['sharded', 3],
    ['sharded100', 100],
  ] as const)('the %s package (totalShards=%i)', (name, total) => {
    const def = () => definition(packages[name].template);

    it('starts every shard at once: a Distributed Map of STANDARD child executions, MaxConcurrency at least the shards, all shards in its items', () => {
      const map = mapState(def());
      // An INLINE Map runs at most 40 iterations at once; a Distributed one runs MaxConcurrency.
      expect(map.ItemProcessor.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
      expect(map.MaxConcurrency).toBeGreaterThanOrEqual(total);
      expect(mapInputs(def())).toEqual(Array.from({ length: total }, (_, shard) => ({ shard, totalShards: total })));
      // Lambda must be able to run them all at once too.
      expect(fn(packages[name].template).ReservedConcurrentExecutions).toBe(total);
    });

    it('retries throttles and Lambda service errors with backoff, never a function error, and within the period', () => {
      const map = mapState(def());
      const tasks = Object.values(map.ItemProcessor.States);
      expect(tasks).toHaveLength(1);
      const [task] = tasks;
      expect(task).toMatchObject({ Type: 'Task', Resource: 'FUNCTION_ARN', End: true });
      expect(task!.Catch).toBeUndefined();
      expect(map.Retry).toBeUndefined();
      const retried = task!.Retry!.flatMap((r) => r.ErrorEquals);
      expect(retried).toEqual(expect.arrayContaining(['Lambda.TooManyRequestsException', 'Lambda.ServiceException']));
      // A function error (the handler threw, a timeout, a crash) or an unknown outcome is not retried:
      // the shard may already have spent its portals' budgets.
      for (const error of ['States.ALL', 'States.TaskFailed', 'States.Timeout', 'Lambda.Unknown', 'Lambda.SdkClientException', 'InvocationFailedError']) expect(retried, error).not.toContain(error);
      for (const r of task!.Retry!) {
        expect(r.BackoffRate, 'backoff').toBeGreaterThan(1);
        expect(r.JitterStrategy).toBe('FULL');
        // The longest the retries can hold a shard back, plus its own timeout, stays within the period.
        let wait = 0;
        for (let attempt = 0; attempt < r.MaxAttempts!; attempt++) wait += Math.min(r.IntervalSeconds! * r.BackoffRate! ** attempt, r.MaxDelaySeconds ?? Infinity);
        const schedule = live(packages[name].template).FanOutSchedule!.Properties.ScheduleExpression as string;
        expect(wait + (fn(packages[name].template).Timeout as number), 'retries and the timeout').toBeLessThan(periodSeconds(schedule));
      }
    });

    it('lets a failed shard fail alone, never cancelling the others', () => {
      expect(mapState(def()).ToleratedFailurePercentage).toBe(100);
    });

    it('keeps the execution\'s output small whatever the fleet: 1,000 shards stay far below the 256 KiB state limit', () => {
      for (const shards of [total, 1000]) {
        const d = definition(packages[name].template, shards);
        const map = mapState(d);
        const [task] = Object.values(map.ItemProcessor.States);
        // The largest summary the function may return for a shard (about 128 bytes a portal, 1,000 portals).
        const summary = { portals: Array.from({ length: 1000 }, (_, i) => ({ portal: `customer-${i}`, sources: { vitals: 'ok', alerts: 'ok', devices: 'ok' }, requests: 4, durationMs: 1234 })) };
        const children = mapInputs(d).map((input) => outputOf(input, summary, task!.ResultPath));
        // Were the Map to gather its children's outputs, they would still fit in one state.
        expect(JSON.stringify(children).length, `${shards} shards' outputs`).toBeLessThan(64 * 1024);
        const input = { shards: Array.from({ length: shards }, (_, i) => i + 1) };
        const output = outputOf(input, children, map.ResultPath);
        expect(JSON.stringify(output).length, `${shards} shards' execution output`).toBeLessThan(16 * 1024);
      }
    });
  });

  it('passes the push concurrency as a setting', () => {
    expect(fn(packages.sharded100.template).Environment.Variables.POSTURE_PUSH_CONCURRENCY).toBe('4');
    expect(fn(packages.plain.template).Environment.Variables.POSTURE_PUSH_CONCURRENCY).toBe('');
  });

  it('scopes the fan-out roles to this function and this state machine', () => {
    const resources = live(packages.sharded.template);
    const role = (name: string) => evaluate(resources[name]!.Properties as Json, packages.sharded.template) as { AssumeRolePolicyDocument: { Statement: Array<{ Principal: { Service: string } }> }; Policies: Array<{ PolicyDocument: { Statement: Statement[] } }> };
    const machine = role('FanOutStateMachineRole');
    expect(machine.AssumeRolePolicyDocument.Statement.map((s) => s.Principal.Service)).toEqual(['states.amazonaws.com']);
    // Its Distributed Map starts child executions of the state machine itself, and describes and stops them.
    expect(resources.FanOutStateMachine!.Properties.StateMachineName).toBe('posture-exporter-test-fan-out');
    expect(machine.Policies.flatMap((p) => p.PolicyDocument.Statement)).toEqual([
      { Sid: 'InvokeCollect', Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: { 'Fn::GetAtt': ['CollectLambdaFunction', 'Arn'] } },
      { Sid: 'StartShardExecutions', Effect: 'Allow', Action: 'states:StartExecution', Resource: arn('states', 'stateMachine:posture-exporter-test-fan-out') },
      { Sid: 'WatchShardExecutions', Effect: 'Allow', Action: ['states:DescribeExecution', 'states:StopExecution'], Resource: arn('states', 'execution:posture-exporter-test-fan-out/*') },
    ]);
    const scheduler = role('FanOutScheduleRole');
    expect(scheduler.AssumeRolePolicyDocument.Statement.map((s) => s.Principal.Service)).toEqual(['scheduler.amazonaws.com']);
    expect(scheduler.Policies.flatMap((p) => p.PolicyDocument.Statement)).toEqual([{ Sid: 'StartFanOut', Effect: 'Allow', Action: 'states:StartExecution', Resource: { Ref: 'FanOutStateMachine' } }]);
    expect(resources.FanOutStateMachine!.Properties.RoleArn).toEqual({ 'Fn::GetAtt': ['FanOutStateMachineRole', 'Arn'] });
    // The function's own role is unchanged by sharding (its keys are in the config file: no key store of its own).
    expect(statements(packages.sharded.template)).toEqual(statements(packages.plain.template).filter((s) => !/ApiKey/.test(s.Sid!)));
  });

  it('packages the fleet config file beside the bundle and points POSTURE_CONFIG_FILE at it', () => {
    expect(fn(packages.sharded.template).Environment.Variables.POSTURE_CONFIG_FILE).toBe('/var/task/posture-config/portals.yml');
    expect(fn(packages.plain.template).Environment.Variables.POSTURE_CONFIG_FILE).toBe('');
    const zip = readZip(readFileSync(join(packages.sharded.dir, 'posture-exporter.zip')));
    expect([...zip.keys()].filter((n) => !n.startsWith('dist/lambda/'))).toEqual(['posture-config/portals.yml']);
    expect(zip.get('posture-config/portals.yml')!().toString('utf8')).toContain('portal: a');
  });
});
