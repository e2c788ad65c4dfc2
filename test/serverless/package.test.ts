/**
 * Packages serverless.yml with osls (the Serverless Framework fork that works offline, without
 * credentials) and checks the CloudFormation it produces and the zip it would upload.
 *
 * The build and the packaging run in a scratch service directory (symlinks to src, scripts and
 * node_modules, copies of serverless.yml and package.json): `npm run build` starts by deleting
 * `dist/`, which must not pull the CLI out from under other tests running at the same time.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const OSLS = join(ROOT, 'node_modules/osls/bin/serverless.js');
const PSEUDO: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': 'us-east-1', 'AWS::AccountId': '123456789012' };
const ACCOUNT = 'arn:aws:%s:us-east-1:123456789012:';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface Template {
  Conditions?: Record<string, Json>;
  Resources: Record<string, { Type: string; Properties: Record<string, Json>; Condition?: string }>;
}
interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

let work: string;
/** A second service directory for the refusals, run beside the packages (its own .serverless scratch folder), on the same build. */
let refusing: string;
const packages: Record<'plain' | 'noMaps' | 'ssm' | 'secret' | 'rwTokenSsmPgwSecret' | 'rwPasswordSecret' | 'rwTokenSecretPgwSsm' | 'rwPasswordSsm' | 'pushgateway' | 'sharded' | 'sharded100', { template: Template; dir: string }> = {} as never;
/** What `osls package` said when it refused, by case (refused before writing a package). */
const refusals: Record<RefusalCase, { code: number; output: string; packaged: boolean }> = {} as never;

/** A sink: the function pushes what it collects (without one, packaging refuses). */
const PUSH = { push: 'pushgateway', pushgatewayUrl: 'https://pushgateway.example.com' };
/** Remote write as the sink, for the remote-write credentials. */
const REMOTE_WRITE = { push: 'remote_write', remoteWriteUrl: 'https://mimir.example.com/api/v1/push' };
/** What the function needs to run: a portal's address, where its key is stored, and a sink. */
const PORTAL = { baseUrl: 'https://acme.example.com/public-api/v1', apiKeySsmParameter: '/posture-exporter/api-key', ...PUSH };

/** Parameters the function refuses on every invocation, each with the environment serverless.yml makes of them (for check-config --lambda). */
const REFUSED = {
  baseUrlPath: [{ ...PORTAL, baseUrl: 'https://acme.example.com/api' }, { POSTURE_BASE_URL: 'https://acme.example.com/api', POSTURE_API_KEY_SSM_PARAMETER: '/posture-exporter/api-key', POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: PUSH.pushgatewayUrl }],
  noPush: [{ baseUrl: PORTAL.baseUrl, apiKeySsmParameter: '/posture-exporter/api-key' }, { POSTURE_BASE_URL: PORTAL.baseUrl, POSTURE_API_KEY_SSM_PARAMETER: '/posture-exporter/api-key' }],
  remoteWriteNoUrl: [{ baseUrl: PORTAL.baseUrl, apiKeySsmParameter: '/posture-exporter/api-key', push: 'remote_write' }, { POSTURE_BASE_URL: PORTAL.baseUrl, POSTURE_API_KEY_SSM_PARAMETER: '/posture-exporter/api-key', POSTURE_PUSH: 'remote_write' }],
  noKey: [{ baseUrl: PORTAL.baseUrl, ...PUSH }, { POSTURE_BASE_URL: PORTAL.baseUrl, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: PUSH.pushgatewayUrl }],
  configFileMissing: [{ ...PUSH, configFile: '/var/task/posture-config/portals.yml' }, {}],
  // A packaged config file whose portal's base URL lacks the API root (BAD_FLEET).
  configFileInvalid: [{ ...PUSH, configFile: '/var/task/posture-config/bad.yml' }, {}],
} as const satisfies Record<string, readonly [Record<string, string>, Record<string, string>]>;
type RefusalCase = keyof typeof REFUSED;
/** The config file of configFileInvalid. */
const BAD_FLEET = 'portals:\n  - portal: a\n    base_url: https://a.example.com/api\n    api_key_ssm_parameter: /posture/a\n';

function oslsArgs(dir: string, params: Record<string, string>): string[] {
  return [OSLS, 'package', '--stage', 'test', '--package', dir, ...Object.entries(params).map(([k, v]) => `--param=${k}=${v}`)];
}

// No AWS credentials and no network: packaging is local.
const oslsEnv = (home = work) => ({ PATH: process.env.PATH, HOME: home, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off', AWS_REGION: 'us-east-1' });

async function oslsPackage(name: keyof typeof packages, params: Record<string, string>): Promise<void> {
  const dir = join(work, `pkg-${name}`);
  await run(process.execPath, oslsArgs(dir, params), { cwd: work, env: oslsEnv(), timeout: 60_000 });
  packages[name] = { dir, template: JSON.parse(readFileSync(join(dir, 'cloudformation-template-update-stack.json'), 'utf8')) as Template };
}

/** `osls package` that is expected to fail: its exit code, what it printed, and whether it wrote a package. */
async function oslsRefusal(name: keyof typeof refusals, params: Record<string, string>): Promise<void> {
  const dir = join(work, `refused-${name}`);
  const ran = await run(process.execPath, oslsArgs(dir, params), { cwd: refusing, env: oslsEnv(refusing), timeout: 60_000 }).then(
    (r) => ({ code: 0, output: r.stdout + r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
  );
  refusals[name] = { ...ran, packaged: existsSync(join(dir, 'posture-exporter.zip')) };
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'sls-package-'));
  for (const entry of ['src', 'scripts', 'node_modules', 'tsconfig.json']) symlinkSync(join(ROOT, entry), join(work, entry));
  for (const file of ['package.json', 'serverless.yml']) copyFileSync(join(ROOT, file), join(work, file));
  await run('npm', ['run', 'build'], { cwd: work, timeout: 120_000 });
  // One after the other in each service directory: runs in one share its .serverless scratch folder.
  // The refusals in a directory of their own, beside the packages.
  refusing = mkdtempSync(join(tmpdir(), 'sls-refusing-'));
  mkdirSync(join(refusing, 'posture-config'));
  for (const entry of ['src', 'scripts', 'node_modules', 'tsconfig.json', 'dist']) symlinkSync(join(work, entry), join(refusing, entry));
  for (const file of ['package.json', 'serverless.yml']) copyFileSync(join(ROOT, file), join(refusing, file));
  writeFileSync(join(refusing, 'posture-config/bad.yml'), BAD_FLEET);
  const refused = (async () => {
    for (const [name, [params]] of Object.entries(REFUSED)) await oslsRefusal(name as RefusalCase, params);
  })();
  await oslsPackage('plain', PORTAL);
  await oslsPackage('noMaps', { ...PORTAL, nodeOptions: '--no-enable-source-maps' });
  await oslsPackage('ssm', { ...PORTAL, ampWorkspaceArn: 'arn:aws:aps:us-east-1:123456789012:workspace/ws-0123abcd', schedule: 'rate(10 minutes)', timeout: '120' });
  await oslsPackage('secret', { cloudId: 'acme', apiHost: 'example.com', apiKeySecretId: 'posture-exporter/api-key', apiKeyKmsKeyArn: 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab', ...PUSH });
  // Remote-write credentials and the Pushgateway password: each credential from each store, one
  // auth method each (as the function takes them), so every statement is tied to its own
  // parameter; the Pushgateway's with the push limits and headers.
  const both = { ...PORTAL, push: 'remote_write,pushgateway', remoteWriteUrl: REMOTE_WRITE.remoteWriteUrl, pushgatewayUsername: 'pusher', pushTimeoutSeconds: '5', pushMaxRetries: '1', remoteWriteHeaders: 'X-Scope-OrgID=tenant-1' };
  await oslsPackage('rwTokenSsmPgwSecret', { ...both, remoteWriteBearerTokenSsmParameter: '/posture-exporter/rw-token', pushgatewayPasswordSecretId: 'posture-exporter/pgw-password' });
  await oslsPackage('rwTokenSecretPgwSsm', { ...both, remoteWriteBearerTokenSecretId: 'posture-exporter/rw-token', pushgatewayPasswordSsmParameter: '/posture-exporter/pgw-password' });
  await oslsPackage('rwPasswordSecret', { ...PORTAL, ...REMOTE_WRITE, remoteWriteUsername: '1234567', remoteWritePasswordSecretId: 'posture-exporter/rw-password' });
  await oslsPackage('rwPasswordSsm', { ...PORTAL, ...REMOTE_WRITE, remoteWriteUsername: '1234567', remoteWritePasswordSsmParameter: '/posture-exporter/rw-password' });
  // A portal and a Pushgateway: the deployment the ledger's checks name.
  await oslsPackage('pushgateway', { baseUrl: 'https://acme.example.com/public-api/v1', apiKeySsmParameter: '/posture-exporter/api-key', push: 'pushgateway', pushgatewayUrl: 'https://pushgateway.example.com' });
  // A fleet: three shards, the portal list in a packaged config file (created only now, so the
  // packages above show that nothing but the bundle is uploaded without one).
  mkdirSync(join(work, 'posture-config'));
  writeFileSync(join(work, 'posture-config/portals.yml'), 'portals:\n  - portal: a\n    base_url: https://a.example.com/public-api/v1\n    api_key_ssm_parameter: /posture/a\n');
  await oslsPackage('sharded', { totalShards: '3', configFile: '/var/task/posture-config/portals.yml', ...PUSH });
  // A fleet's size: every shard must start at once, and the execution's output must stay small.
  await oslsPackage('sharded100', { totalShards: '100', configFile: '/var/task/posture-config/portals.yml', ...REMOTE_WRITE, pushConcurrency: '4' });
  await refused;
}, 600_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
  if (refusing) rmSync(refusing, { recursive: true, force: true });
});

const NO_VALUE = Symbol('AWS::NoValue');

/** Evaluates the intrinsic functions the template uses (Ref, Fn::If/Not/Or/Equals/Join, conditions) for one account. */
function evaluate(node: Json, template: Template): unknown {
  const condition = (name: string): boolean => evaluate(template.Conditions![name]!, template) as boolean;
  if (Array.isArray(node)) return node.map((n) => evaluate(n, template)).filter((v) => v !== NO_VALUE);
  if (node && typeof node === 'object') {
    const keys = Object.keys(node);
    if (keys.length === 1) {
      const [k] = keys;
      const v = node[k!]!;
      if (k === 'Ref') return v === 'AWS::NoValue' ? NO_VALUE : (PSEUDO[v as string] ?? { Ref: v });
      if (k === 'Fn::If') {
        const [c, yes, no] = v as [string, Json, Json];
        return evaluate(condition(c) ? yes : no, template);
      }
      if (k === 'Fn::Join') {
        const [sep, parts] = v as [string, Json[]];
        return (evaluate(parts, template) as string[]).join(sep);
      }
      if (k === 'Fn::Equals') return evaluate((v as Json[])[0]!, template) === evaluate((v as Json[])[1]!, template);
      if (k === 'Fn::Not') return !evaluate((v as Json[])[0]!, template);
      if (k === 'Fn::Or') return (v as Json[]).some((c) => evaluate(c, template) === true);
      if (k === 'Condition' && typeof v === 'string') return condition(v);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      const e = evaluate(v, template);
      if (e !== NO_VALUE) out[k] = e;
    }
    return out;
  }
  return node;
}

function statements(template: Template): Statement[] {
  const role = template.Resources.PostureExporterRole!;
  const policies = evaluate(role.Properties.Policies!, template) as Array<{ PolicyDocument: { Statement: Statement[] } }>;
  return policies.flatMap((p) => p.PolicyDocument.Statement);
}

function fn(template: Template) {
  return Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function')!.Properties as Record<string, unknown> & { Environment: { Variables: Record<string, string> } };
}

function schedules(template: Template): string[] {
  return Object.values(template.Resources)
    .filter((r) => r.Type === 'AWS::Events::Rule')
    .map((r) => r.Properties.ScheduleExpression as string);
}

function periodSeconds(expression: string): number {
  const m = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!m) throw new Error(`unexpected schedule ${expression}`);
  return Number(m[1]) * { minute: 60, minutes: 60, hour: 3600, hours: 3600, day: 86400, days: 86400 }[m[2] as 'minute'];
}

const arn = (service: string, rest: string) => ACCOUNT.replace('%s', service) + rest;
const actions = (s: Statement) => [s.Action].flat();
const resources = (s: Statement) => [s.Resource].flat();

/** Entries of a zip file (central directory), with a reader for one entry's bytes. */
function readZip(buf: Buffer): Map<string, () => Buffer> {
  let eocd = buf.length - 22;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  if (eocd < 0) throw new Error('no end of central directory');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries = new Map<string, () => Buffer>();
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error('bad central directory entry');
    const method = buf.readUInt16LE(p + 10);
    const size = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
    entries.set(name, () => {
      const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
      const data = buf.subarray(start, start + size);
      return method === 0 ? Buffer.from(data) : inflateRawSync(data);
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

describe('serverless.yml packaged with osls', () => {
  it('defines one arm64 nodejs22.x function on the bundle, one at a time', () => {
    const f = fn(packages.plain.template);
    expect(f.Runtime).toBe('nodejs22.x');
    expect(f.Architectures).toEqual(['arm64']);
    expect(f.Handler).toBe('dist/lambda/index.handler');
    expect(f.ReservedConcurrentExecutions).toBe(1);
    expect(f.MemorySize).toBe(256);
  });

  it('runs every 5 minutes by default and on the schedule parameter otherwise, timing out within one period', () => {
    expect(schedules(packages.plain.template)).toEqual(['rate(5 minutes)']);
    expect(schedules(packages.ssm.template)).toEqual(['rate(10 minutes)']);
    for (const { template } of Object.values(packages)) {
      expect(fn(template).Timeout as number).toBeLessThan(periodSeconds(schedules(template)[0]!));
    }
    expect(fn(packages.plain.template).Timeout).toBe(240);
    expect(fn(packages.ssm.template).Timeout).toBe(120);
  });

  it('passes settings as environment variables, never an API key', () => {
    const vars = fn(packages.ssm.template).Environment.Variables;
    expect(vars.POSTURE_API_KEY_SSM_PARAMETER).toBe('/posture-exporter/api-key');
    expect(fn(packages.secret.template).Environment.Variables.POSTURE_API_KEY_SECRET_ID).toBe('posture-exporter/api-key');
    // The requests sent to each portal are recorded in the table every container shares, not in a container's /tmp.
    expect(vars.POSTURE_STATE_DIR).toBeUndefined();
    for (const { template } of Object.values(packages)) {
      const names = Object.keys(fn(template).Environment.Variables);
      expect(names).toEqual(expect.arrayContaining(['POSTURE_PUSH', 'POSTURE_REMOTE_WRITE_URL', 'POSTURE_REMOTE_WRITE_SIGV4_REGION', 'POSTURE_PUSHGATEWAY_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT']));
      expect(names).not.toContain('POSTURE_API_KEY');
      expect(names).not.toContain('POSTURE_REMOTE_WRITE_PASSWORD');
      expect(names).not.toContain('POSTURE_REMOTE_WRITE_BEARER_TOKEN');
      expect(names).not.toContain('POSTURE_PUSHGATEWAY_PASSWORD');
    }
  });

  it('grants only logging, the ledger table and the key\'s parameter when no other store or AMP workspace is configured', () => {
    const st = statements(packages.plain.template);
    expect(st.map((s) => s.Sid)).toEqual(['Logs', 'StateTable', 'ReadApiKeyParameter', 'DecryptApiKeyParameter']);
    expect(actions(st[0]!).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    expect(st[0]!.Resource).toBe(arn('logs', 'log-group:/aws/lambda/posture-exporter-test-collect:*'));
  });

  it('grants reading exactly the one SSM parameter, decrypting via SSM, and remote write to the one workspace', () => {
    const st = statements(packages.ssm.template);
    const bySid = new Map(st.map((s) => [s.Sid, s]));
    expect([...bySid.keys()].sort()).toEqual(['DecryptApiKeyParameter', 'Logs', 'ReadApiKeyParameter', 'RemoteWriteToAmp', 'StateTable']);
    expect(bySid.get('ReadApiKeyParameter')).toMatchObject({ Effect: 'Allow', Action: 'ssm:GetParameter', Resource: arn('ssm', 'parameter/posture-exporter/api-key') });
    expect(bySid.get('DecryptApiKeyParameter')).toMatchObject({ Action: 'kms:Decrypt', Condition: { StringEquals: { 'kms:ViaService': 'ssm.us-east-1.amazonaws.com' } } });
    expect(bySid.get('RemoteWriteToAmp')).toMatchObject({ Action: 'aps:RemoteWrite', Resource: 'arn:aws:aps:us-east-1:123456789012:workspace/ws-0123abcd' });
  });

  it('grants reading exactly the one secret, decrypting with its key via Secrets Manager', () => {
    const st = statements(packages.secret.template);
    const bySid = new Map(st.map((s) => [s.Sid, s]));
    expect([...bySid.keys()].sort()).toEqual(['DecryptApiKeySecret', 'Logs', 'ReadApiKeySecret', 'StateTable']);
    expect(bySid.get('ReadApiKeySecret')).toMatchObject({ Action: 'secretsmanager:GetSecretValue', Resource: arn('secretsmanager', 'secret:posture-exporter/api-key-??????') });
    expect(bySid.get('DecryptApiKeySecret')).toMatchObject({
      Action: 'kms:Decrypt',
      Resource: 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
      Condition: { StringEquals: { 'kms:ViaService': 'secretsmanager.us-east-1.amazonaws.com' } },
    });
  });

  describe('the Pushgateway password from SSM or Secrets Manager, and the push limits', () => {
    const PUSHGATEWAY_SIDS = ['ReadPushgatewayPasswordParameter', 'ReadPushgatewayPasswordSecret', 'DecryptPushgatewayPasswordParameter', 'DecryptPushgatewayPasswordSecret'];
    const pushgatewaySids = (name: keyof typeof packages) =>
      statements(packages[name].template)
        .map((s) => s.Sid!)
        .filter((sid) => PUSHGATEWAY_SIDS.includes(sid))
        .sort();

    it('passes the username, where the password is stored, the headers and the limits as settings', () => {
      expect(fn(packages.rwTokenSsmPgwSecret.template).Environment.Variables).toMatchObject({ POSTURE_PUSHGATEWAY_PASSWORD_SECRET_ID: 'posture-exporter/pgw-password', POSTURE_PUSHGATEWAY_PASSWORD_SSM_PARAMETER: '' });
      const vars = fn(packages.rwTokenSecretPgwSsm.template).Environment.Variables;
      expect(vars).toMatchObject({
        POSTURE_PUSHGATEWAY_USERNAME: 'pusher',
        POSTURE_PUSHGATEWAY_PASSWORD_SSM_PARAMETER: '/posture-exporter/pgw-password',
        POSTURE_PUSHGATEWAY_PASSWORD_SECRET_ID: '',
        POSTURE_PUSH_TIMEOUT_SECONDS: '5',
        POSTURE_PUSH_MAX_RETRIES: '1',
        POSTURE_REMOTE_WRITE_HEADERS: 'X-Scope-OrgID=tenant-1',
      });
      expect(fn(packages.plain.template).Environment.Variables).toMatchObject({ POSTURE_PUSHGATEWAY_USERNAME: '', POSTURE_PUSH_TIMEOUT_SECONDS: '', POSTURE_PUSH_MAX_RETRIES: '', POSTURE_REMOTE_WRITE_HEADERS: '' });
    });

    it('grants nothing for it when it is not configured', () => {
      for (const name of ['plain', 'ssm', 'secret', 'rwPasswordSecret', 'rwPasswordSsm'] as const) expect(pushgatewaySids(name), name).toEqual([]);
    });

    it('grants reading exactly the configured parameter or secret, decrypting each via its own service', () => {
      expect(pushgatewaySids('rwTokenSecretPgwSsm')).toEqual(['DecryptPushgatewayPasswordParameter', 'ReadPushgatewayPasswordParameter']);
      expect(pushgatewaySids('rwTokenSsmPgwSecret')).toEqual(['DecryptPushgatewayPasswordSecret', 'ReadPushgatewayPasswordSecret']);
      const st = new Map([...statements(packages.rwTokenSecretPgwSsm.template), ...statements(packages.rwTokenSsmPgwSecret.template)].map((s) => [s.Sid, s]));
      expect(st.get('ReadPushgatewayPasswordParameter')).toEqual({ Sid: 'ReadPushgatewayPasswordParameter', Effect: 'Allow', Action: 'ssm:GetParameter', Resource: arn('ssm', 'parameter/posture-exporter/pgw-password') });
      expect(st.get('ReadPushgatewayPasswordSecret')).toEqual({ Sid: 'ReadPushgatewayPasswordSecret', Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: arn('secretsmanager', 'secret:posture-exporter/pgw-password-??????') });
      expect(st.get('DecryptPushgatewayPasswordParameter')).toMatchObject({ Action: 'kms:Decrypt', Condition: { StringEquals: { 'kms:ViaService': 'ssm.us-east-1.amazonaws.com' } } });
      expect(st.get('DecryptPushgatewayPasswordSecret')).toMatchObject({ Action: 'kms:Decrypt', Condition: { StringEquals: { 'kms:ViaService': 'secretsmanager.us-east-1.amazonaws.com' } } });
    });
  });

  describe('remote-write credentials from SSM or Secrets Manager', () => {
    const REMOTE_WRITE_SIDS = ['ReadRemoteWriteBearerTokenParameter', 'ReadRemoteWriteBearerTokenSecret', 'ReadRemoteWritePasswordParameter', 'ReadRemoteWritePasswordSecret', 'DecryptRemoteWriteParameter', 'DecryptRemoteWriteSecret'];
    const remoteWriteSids = (name: keyof typeof packages) =>
      statements(packages[name].template)
        .map((s) => s.Sid!)
        .filter((sid) => REMOTE_WRITE_SIDS.includes(sid))
        .sort();
    const bySid = (name: keyof typeof packages) => new Map(statements(packages[name].template).map((s) => [s.Sid, s]));
    const viaSsm = { StringEquals: { 'kms:ViaService': 'ssm.us-east-1.amazonaws.com' } };
    const viaSecretsManager = { StringEquals: { 'kms:ViaService': 'secretsmanager.us-east-1.amazonaws.com' } };

    it('passes where each credential is stored (and the username), never the credential', () => {
      const vars = (name: keyof typeof packages) => fn(packages[name].template).Environment.Variables;
      const credentialVars = (name: keyof typeof packages) =>
        Object.fromEntries(Object.entries(vars(name)).filter(([k]) => /^POSTURE_REMOTE_WRITE_(USERNAME|BEARER_TOKEN|PASSWORD)/.test(k)));
      expect(credentialVars('plain')).toEqual({
        POSTURE_REMOTE_WRITE_USERNAME: '',
        POSTURE_REMOTE_WRITE_BEARER_TOKEN_SSM_PARAMETER: '',
        POSTURE_REMOTE_WRITE_BEARER_TOKEN_SECRET_ID: '',
        POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER: '',
        POSTURE_REMOTE_WRITE_PASSWORD_SECRET_ID: '',
      });
      expect(credentialVars('rwPasswordSecret')).toMatchObject({ POSTURE_REMOTE_WRITE_USERNAME: '1234567', POSTURE_REMOTE_WRITE_PASSWORD_SECRET_ID: 'posture-exporter/rw-password', POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER: '' });
      expect(credentialVars('rwTokenSsmPgwSecret')).toMatchObject({ POSTURE_REMOTE_WRITE_BEARER_TOKEN_SSM_PARAMETER: '/posture-exporter/rw-token', POSTURE_REMOTE_WRITE_BEARER_TOKEN_SECRET_ID: '' });
      expect(credentialVars('rwTokenSecretPgwSsm')).toMatchObject({ POSTURE_REMOTE_WRITE_BEARER_TOKEN_SECRET_ID: 'posture-exporter/rw-token', POSTURE_REMOTE_WRITE_BEARER_TOKEN_SSM_PARAMETER: '' });
      expect(credentialVars('rwPasswordSsm')).toMatchObject({ POSTURE_REMOTE_WRITE_USERNAME: '1234567', POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER: '/posture-exporter/rw-password', POSTURE_REMOTE_WRITE_PASSWORD_SECRET_ID: '' });
    });

    it('grants nothing for them when none is configured', () => {
      for (const name of ['plain', 'ssm', 'secret'] as const) expect(remoteWriteSids(name), name).toEqual([]);
    });

    it('grants reading exactly the token parameter, decrypting via SSM only, when only it is configured', () => {
      expect(remoteWriteSids('rwTokenSsmPgwSecret')).toEqual(['DecryptRemoteWriteParameter', 'ReadRemoteWriteBearerTokenParameter']);
      const st = bySid('rwTokenSsmPgwSecret');
      expect(st.get('ReadRemoteWriteBearerTokenParameter')).toEqual({ Sid: 'ReadRemoteWriteBearerTokenParameter', Effect: 'Allow', Action: 'ssm:GetParameter', Resource: arn('ssm', 'parameter/posture-exporter/rw-token') });
      expect(st.get('DecryptRemoteWriteParameter')).toEqual({ Sid: 'DecryptRemoteWriteParameter', Effect: 'Allow', Action: 'kms:Decrypt', Resource: arn('kms', 'key/*'), Condition: viaSsm });
      // The API key's own statements are still there, untouched.
      expect(st.get('ReadApiKeyParameter')).toMatchObject({ Resource: arn('ssm', 'parameter/posture-exporter/api-key') });
    });

    it('grants reading exactly the password secret (with its random suffix), decrypting via Secrets Manager only, when only it is configured', () => {
      expect(remoteWriteSids('rwPasswordSecret')).toEqual(['DecryptRemoteWriteSecret', 'ReadRemoteWritePasswordSecret']);
      const st = bySid('rwPasswordSecret');
      expect(st.get('ReadRemoteWritePasswordSecret')).toEqual({ Sid: 'ReadRemoteWritePasswordSecret', Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: arn('secretsmanager', 'secret:posture-exporter/rw-password-??????') });
      expect(st.get('DecryptRemoteWriteSecret')).toEqual({ Sid: 'DecryptRemoteWriteSecret', Effect: 'Allow', Action: 'kms:Decrypt', Resource: arn('kms', 'key/*'), Condition: viaSecretsManager });
    });

    it('grants the token secret, or the password parameter, each by its own parameter', () => {
      expect(remoteWriteSids('rwTokenSecretPgwSsm')).toEqual(['DecryptRemoteWriteSecret', 'ReadRemoteWriteBearerTokenSecret']);
      expect(remoteWriteSids('rwPasswordSsm')).toEqual(['DecryptRemoteWriteParameter', 'ReadRemoteWritePasswordParameter']);
      expect(bySid('rwTokenSecretPgwSsm').get('ReadRemoteWriteBearerTokenSecret')).toMatchObject({ Action: 'secretsmanager:GetSecretValue', Resource: arn('secretsmanager', 'secret:posture-exporter/rw-token-??????') });
      expect(bySid('rwTokenSecretPgwSsm').get('DecryptRemoteWriteSecret')).toMatchObject({ Condition: viaSecretsManager });
      expect(bySid('rwPasswordSsm').get('ReadRemoteWritePasswordParameter')).toMatchObject({ Action: 'ssm:GetParameter', Resource: arn('ssm', 'parameter/posture-exporter/rw-password') });
      expect(bySid('rwPasswordSsm').get('DecryptRemoteWriteParameter')).toMatchObject({ Condition: viaSsm });
    });
  });

  it('has no wildcard actions, and no wildcard resources for SSM or Secrets Manager', () => {
    const all = Object.values(packages).flatMap(({ template }) => statements(template));
    expect(all.length).toBeGreaterThan(0);
    expect(all.flatMap((s) => actions(s)).filter((a) => a.includes('*'))).toEqual([]);
    const stores = all.filter((s) => actions(s).some((a) => a.startsWith('ssm:') || a.startsWith('secretsmanager:')));
    expect(stores.length).toBeGreaterThan(0);
    expect(stores.flatMap((s) => resources(s)).filter((r) => r.includes('*'))).toEqual([]);
  });

  it('uploads only the bundle, whose dist/lambda/index.mjs exports handler', async () => {
    const zip = readZip(readFileSync(join(packages.plain.dir, 'posture-exporter.zip')));
    const names = [...zip.keys()];
    expect(names).toContain('dist/lambda/index.mjs');
    for (const n of names) expect(n.startsWith('dist/lambda/')).toBe(true);
    // Unpack the whole artifact (the entry imports its code-split chunks), as Lambda does.
    const root = join(work, 'extracted');
    for (const [name, read] of zip) {
      if (name.endsWith('/')) continue;
      mkdirSync(dirname(join(root, name)), { recursive: true });
      writeFileSync(join(root, name), read());
    }
    const file = join(root, 'dist/lambda/index.mjs');
    // A separate Node process, as Lambda loads it: an ES module with a `handler` export.
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(file)}); console.log(typeof m.handler);`], {
      cwd: work,
      env: { PATH: process.env.PATH },
      timeout: 30_000,
    });
    expect(stdout.trim()).toBe('function');
  });
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

describe('osls package refuses a function that would fail every invocation', () => {
  /** What `check-config --lambda` of the built CLI says about `env`, the function's environment: its problem lines. */
  async function checkConfigLines(env: Record<string, string>): Promise<string[]> {
    const ran = await run(process.execPath, [join(work, 'dist/cli.js'), 'check-config', '--lambda'], { env: { ...env, POSTURE_STATE_TABLE: 'posture-exporter-test-ledger' }, timeout: 30_000 }).then(
      () => ({ stderr: '' }),
      (e: { stderr: string }) => e,
    );
    return ran.stderr.split('\n').filter((l) => l.startsWith('config error: ')).map((l) => l.slice('config error: '.length));
  }

  it.each([
    // The four: each was packaged ("Service packaged") and failed every invocation.
    ['baseUrlPath', 'parameter baseUrl', 'does not end in /public-api/v1'],
    ['noPush', 'parameter push', 'POSTURE_PUSH is empty'],
    ['remoteWriteNoUrl', 'parameters push, remoteWriteUrl', 'POSTURE_REMOTE_WRITE_URL is not set'],
    ['noKey', 'parameters apiKeySsmParameter, apiKeySecretId', 'no API key'],
  ] as const)('%s: the line check-config --lambda prints for its environment, led by the parameters; nothing packaged', async (name, params, says) => {
    const r = refusals[name];
    expect(r.code).not.toBe(0);
    expect(r.packaged).toBe(false);
    const lines = await checkConfigLines(REFUSED[name][1]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(says);
    expect(r.output).toContain(`posture-exporter: the function would fail every invocation:\n  ${params}: ${lines[0]}\n`);
  });

  it('a packaged config file the function refuses: check-config\'s line, naming the file where the function reads it, led by configFile', async () => {
    const r = refusals.configFileInvalid;
    expect(r).toMatchObject({ packaged: false });
    const local = join(work, 'local-bad.yml');
    writeFileSync(local, BAD_FLEET);
    const lines = await checkConfigLines({ POSTURE_CONFIG_FILE: local, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: PUSH.pushgatewayUrl });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('does not end in /public-api/v1');
    expect(r.output).toContain(`posture-exporter: the function would fail every invocation:\n  parameter configFile: ${lines[0]!.replace(local, '/var/task/posture-config/bad.yml')}\n`);
  });

  it('with a configFile that is not beside serverless.yml: says it would not be packaged', () => {
    expect(refusals.configFileMissing).toMatchObject({ packaged: false });
    expect(refusals.configFileMissing.code).not.toBe(0);
    expect(refusals.configFileMissing.output).toContain('posture-exporter: the function would fail every invocation:\n  configFile=/var/task/posture-config/portals.yml: posture-config/portals.yml does not exist beside serverless.yml, so it would not be packaged.');
  });
});

describe('the zip carries what the runtime reads', () => {
  const entries = (name: keyof typeof packages) => readZip(readFileSync(join(packages[name].dir, 'posture-exporter.zip')));

  it('with --enable-source-maps (the default NODE_OPTIONS): each code file and its map, the map without the sources\' text', () => {
    expect(fn(packages.plain.template).Environment.Variables.NODE_OPTIONS).toBe('--enable-source-maps');
    const zip = entries('plain');
    const code = [...zip.keys()].filter((n) => /\.(mjs|cjs)$/.test(n));
    const maps = [...zip.keys()].filter((n) => n.endsWith('.map'));
    // Every map belongs to a packaged file that names it, and nothing else is packaged.
    expect(maps.sort()).toEqual(code.map((n) => `${n}.map`).sort());
    expect([...zip.keys()].filter((n) => !n.endsWith('/')).sort()).toEqual([...code, ...maps].sort());
    for (const n of code) expect(zip.get(n)!().toString('utf8'), n).toContain(`//# sourceMappingURL=${n.split('/').pop()}.map`);
    for (const n of maps) {
      const map = JSON.parse(zip.get(n)!().toString('utf8')) as { mappings: string; sourcesContent?: unknown };
      // (A chunk that only re-exports has no mappings of its own.)
      expect(typeof map.mappings, n).toBe('string');
      expect(map.sourcesContent, n).toBeUndefined();
    }
  });

  it('without it (nodeOptions=--no-enable-source-maps): no source map at all, and a smaller zip', () => {
    expect(fn(packages.noMaps.template).Environment.Variables.NODE_OPTIONS).toBe('--no-enable-source-maps');
    const names = [...entries('noMaps').keys()].filter((n) => !n.endsWith('/'));
    expect(names).toContain('dist/lambda/index.mjs');
    expect(names.filter((n) => !/\.(mjs|cjs)$/.test(n))).toEqual([]);
    expect(names.sort()).toEqual([...entries('plain').keys()].filter((n) => /\.(mjs|cjs)$/.test(n)).sort());
    const size = (name: keyof typeof packages) => statSync(join(packages[name].dir, 'posture-exporter.zip')).size;
    expect(size('noMaps')).toBeLessThan(size('plain'));
  });
});

/** The resources CloudFormation would create: those without a Condition or whose Condition holds. */
function live(template: Template): Record<string, Template['Resources'][string]> {
  return Object.fromEntries(Object.entries(template.Resources).filter(([, r]) => r.Condition === undefined || evaluate({ Condition: r.Condition }, template) === true));
}

const FAN_OUT_TYPES = ['AWS::StepFunctions::StateMachine', 'AWS::Scheduler::Schedule'];

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
  it('renders no fan-out by default: the one schedule rule invokes the function, one at a time', () => {
    for (const name of ['plain', 'ssm', 'secret', 'rwTokenSsmPgwSecret', 'rwPasswordSecret', 'rwTokenSecretPgwSsm', 'rwPasswordSsm'] as const) {
      const resources = live(packages[name].template);
      expect(Object.values(resources).filter((r) => FAN_OUT_TYPES.includes(r.Type)), name).toEqual([]);
      expect(Object.keys(resources).filter((k) => k.startsWith('FanOut')), name).toEqual([]);
      expect(Object.values(resources).filter((r) => r.Type === 'AWS::Events::Rule').length, name).toBe(1);
      expect(resources.CollectLambdaPermissionEventsRuleSchedule1, name).toBeDefined();
      expect(fn(packages[name].template).ReservedConcurrentExecutions, name).toBe(1);
    }
  });

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
