/**
 * Packages serverless.yml with osls (the Serverless Framework fork that works offline, without
 * credentials) and checks the CloudFormation it produces and the zip it would upload: the function,
 * its schedule, its settings and the IAM grants of each key store, and no fan-out by default. The
 * ledger table and the fan-out: package-ledger-fan-out.test.ts; the refusals: package-refusals.test.ts.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { actions, arn, builtService, fn, live, oslsPackage, periodSeconds, PORTAL, PUSH, readZip, REMOTE_WRITE, run, statements, work, type Packaged, type Statement, type Template } from './support.js';

const packages: Record<'plain' | 'noMaps' | 'ssm' | 'secret' | 'rwTokenSsmPgwSecret' | 'rwPasswordSecret' | 'rwTokenSecretPgwSsm' | 'rwPasswordSsm', Packaged> = {} as never;

builtService('sls-package-', async () => {
  packages.plain = await oslsPackage('plain', PORTAL);
  packages.noMaps = await oslsPackage('noMaps', { ...PORTAL, nodeOptions: '--no-enable-source-maps' });
  packages.ssm = await oslsPackage('ssm', { ...PORTAL, ampWorkspaceArn: 'arn:aws:aps:us-east-1:123456789012:workspace/ws-0123abcd', schedule: 'rate(10 minutes)', timeout: '120' });
  packages.secret = await oslsPackage('secret', { cloudId: 'acme', apiHost: 'example.com', apiKeySecretId: 'posture-exporter/api-key', apiKeyKmsKeyArn: 'arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab', ...PUSH });
  // Remote-write credentials and the Pushgateway password: each credential from each store, one
  // auth method each (as the function takes them), so every statement is tied to its own
  // parameter; the Pushgateway's with the push limits and headers.
  const both = { ...PORTAL, push: 'remote_write,pushgateway', remoteWriteUrl: REMOTE_WRITE.remoteWriteUrl, pushgatewayUsername: 'pusher', pushTimeoutSeconds: '5', pushMaxRetries: '1', remoteWriteHeaders: 'X-Scope-OrgID=tenant-1' };
  packages.rwTokenSsmPgwSecret = await oslsPackage('rwTokenSsmPgwSecret', { ...both, remoteWriteBearerTokenSsmParameter: '/posture-exporter/rw-token', pushgatewayPasswordSecretId: 'posture-exporter/pgw-password' });
  packages.rwTokenSecretPgwSsm = await oslsPackage('rwTokenSecretPgwSsm', { ...both, remoteWriteBearerTokenSecretId: 'posture-exporter/rw-token', pushgatewayPasswordSsmParameter: '/posture-exporter/pgw-password' });
  packages.rwPasswordSecret = await oslsPackage('rwPasswordSecret', { ...PORTAL, ...REMOTE_WRITE, remoteWriteUsername: '1234567', remoteWritePasswordSecretId: 'posture-exporter/rw-password' });
  packages.rwPasswordSsm = await oslsPackage('rwPasswordSsm', { ...PORTAL, ...REMOTE_WRITE, remoteWriteUsername: '1234567', remoteWritePasswordSsmParameter: '/posture-exporter/rw-password' });
});

function schedules(template: Template): string[] {
  return Object.values(template.Resources)
    .filter((r) => r.Type === 'AWS::Events::Rule')
    .map((r) => r.Properties.ScheduleExpression as string);
}

const resources = (s: Statement) => [s.Resource].flat();

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

const FAN_OUT_TYPES = ['AWS::StepFunctions::StateMachine', 'AWS::Scheduler::Schedule'];

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
});
