/**
 * What the tests of serverless.yml packaged with osls share (package, package-ledger-fan-out and
 * package-refusals): a scratch service directory to build and package in, the parameters of a
 * function that runs, `osls package` itself, and readers of the CloudFormation template and the
 * zip it writes.
 *
 * The build and the packaging run in a scratch service directory (symlinks to src, scripts and
 * node_modules, copies of serverless.yml and package.json): `npm run build` starts by deleting
 * `dist/`, which must not pull the CLI out from under other tests running at the same time.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll } from 'vitest';

/** execFile, awaited. */
export const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const OSLS = join(ROOT, 'node_modules/osls/bin/serverless.js');
const PSEUDO: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': 'us-east-1', 'AWS::AccountId': '123456789012' };
const ACCOUNT = 'arn:aws:%s:us-east-1:123456789012:';

/** A JSON value of the template. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
/** The parts of a CloudFormation template the tests read. */
export interface Template {
  Conditions?: Record<string, Json>;
  Resources: Record<string, { Type: string; Properties: Record<string, Json>; Condition?: string }>;
}
/** One statement of an IAM policy. */
export interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}
/** A package `osls package` wrote: its directory and its CloudFormation template. */
export interface Packaged {
  template: Template;
  dir: string;
}

/** A sink: the function pushes what it collects (without one, packaging refuses). */
export const PUSH = { push: 'pushgateway', pushgatewayUrl: 'https://pushgateway.example.com' };
/** Remote write as the sink, for the remote-write credentials. */
export const REMOTE_WRITE = { push: 'remote_write', remoteWriteUrl: 'https://mimir.example.com/api/v1/push' };
/** What the function needs to run: a portal's address, where its key is stored, and a sink. */
export const PORTAL = { baseUrl: 'https://acme.example.com/public-api/v1', apiKeySsmParameter: '/posture-exporter/api-key', ...PUSH };

/** The file's scratch service directory (builtService). */
export let work: string;

/**
 * Before the file's tests: a scratch service directory, `work` (symlinks to src, scripts,
 * node_modules and tsconfig.json, copies of package.json and serverless.yml), built with `npm run
 * build`, then `then` (the packaging); after them, the directory removed. Call once, at the top of
 * the file.
 */
export function builtService(prefix: string, then: () => Promise<void>): void {
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), prefix));
    for (const entry of ['src', 'scripts', 'node_modules', 'tsconfig.json']) symlinkSync(join(ROOT, entry), join(work, entry));
    for (const file of ['package.json', 'serverless.yml']) copyFileSync(join(ROOT, file), join(work, file));
    await run('npm', ['run', 'build'], { cwd: work, timeout: 120_000 });
    await then();
  }, 600_000);
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });
}

/** The arguments of `osls package` into `dir` with `params`. */
export function oslsArgs(dir: string, params: Record<string, string>): string[] {
  return [OSLS, 'package', '--stage', 'test', '--package', dir, ...Object.entries(params).map(([k, v]) => `--param=${k}=${v}`)];
}

/** How long one `osls package` may take: a hang guard, with three files packaging at once beside the rest of the suite on two cores. */
export const OSLS_TIMEOUT_MS = 120_000;

/** The environment of `osls package`, with `home` as HOME: no AWS credentials and no network, packaging is local. */
export const oslsEnv = (home: string) => ({ PATH: process.env.PATH, HOME: home, SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off', AWS_REGION: 'us-east-1' });

/** `osls package` of the built service in `work` with `params`, into `work/pkg-NAME`. */
export async function oslsPackage(name: string, params: Record<string, string>): Promise<Packaged> {
  const dir = join(work, `pkg-${name}`);
  await run(process.execPath, oslsArgs(dir, params), { cwd: work, env: oslsEnv(work), timeout: OSLS_TIMEOUT_MS });
  return { dir, template: JSON.parse(readFileSync(join(dir, 'cloudformation-template-update-stack.json'), 'utf8')) as Template };
}

const NO_VALUE = Symbol('AWS::NoValue');

/** Evaluates the intrinsic functions the template uses (Ref, Fn::If/Not/Or/Equals/Join, conditions) for one account. */
export function evaluate(node: Json, template: Template): unknown {
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

/** Every statement of the function's role, evaluated. */
export function statements(template: Template): Statement[] {
  const role = template.Resources.PostureExporterRole!;
  const policies = evaluate(role.Properties.Policies!, template) as Array<{ PolicyDocument: { Statement: Statement[] } }>;
  return policies.flatMap((p) => p.PolicyDocument.Statement);
}

/** The function's properties. */
export function fn(template: Template) {
  return Object.values(template.Resources).find((r) => r.Type === 'AWS::Lambda::Function')!.Properties as Record<string, unknown> & { Environment: { Variables: Record<string, string> } };
}

/** The seconds between runs of a `rate(...)` schedule. */
export function periodSeconds(expression: string): number {
  const m = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!m) throw new Error(`unexpected schedule ${expression}`);
  return Number(m[1]) * { minute: 60, minutes: 60, hour: 3600, hours: 3600, day: 86400, days: 86400 }[m[2] as 'minute'];
}

/** The ARN of `rest` in `service` of the test account. */
export const arn = (service: string, rest: string) => ACCOUNT.replace('%s', service) + rest;
/** A statement's actions, as a list. */
export const actions = (s: Statement) => [s.Action].flat();

/** Entries of a zip file (central directory), with a reader for one entry's bytes. */
export function readZip(buf: Buffer): Map<string, () => Buffer> {
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

/** The resources CloudFormation would create: those without a Condition or whose Condition holds. */
export function live(template: Template): Record<string, Template['Resources'][string]> {
  return Object.fromEntries(Object.entries(template.Resources).filter(([, r]) => r.Condition === undefined || evaluate({ Condition: r.Condition }, template) === true));
}
