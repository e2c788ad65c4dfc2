/**
 * The Lambda handler invoked in-process, as Lambda invokes it, with bad settings (one line naming
 * the setting, the key never logged) and with its API key or remote-write credential read from a key
 * store: a loopback fake of the AWS JSON protocol at the AWS SDK's edge, read once per container
 * and again after a rejection.
 */
import snappy from 'snappyjs';
import { describe, expect, it } from 'vitest';
import { ConfigError, ConfigErrors } from '../../src/errors.js';
import { InvocationFailedError } from '../../src/runtime/lambda.js';
import { decodeWriteRequest } from '../sinks/decode.js';
import { startReceiver, type Receiver } from '../sinks/receiver.js';
import { startAwsFake } from './aws-fake.js';
import { familiesOf, pushgatewayGroups } from './support.js';
import { awsFake, clock, envFor, fakes, handlerPerTest, KEY, lambda, pgw, portal, secrets, SOURCES, sourceGroups, successOf } from './handler-harness.js';

handlerPerTest();

describe('Lambda handler, in-process, against the simulated portal and a real Pushgateway', () => {
  describe('bad settings fail the invocation with one line naming the setting, and the key is never logged', () => {
    const cases: Array<[string, Record<string, string | undefined>, string[], string]> = [
      ['no sink', { POSTURE_PUSH: '' }, ['POSTURE_PUSH'], 'POSTURE_PUSH is empty: the Lambda pushes its metrics, set it to any of otlp, remote_write, pushgateway.'],
      ['an unknown sink', { POSTURE_PUSH: 'pushgateway,graphite' }, ['POSTURE_PUSH'], 'POSTURE_PUSH (--push)="pushgateway,graphite" is not valid: use a comma-separated subset of otlp, remote_write, pushgateway.'],
      ['a sink without its URL', { POSTURE_PUSHGATEWAY_URL: undefined }, ['POSTURE_PUSHGATEWAY_URL'], "POSTURE_PUSH includes pushgateway but POSTURE_PUSHGATEWAY_URL is not set: give the Pushgateway's base URL."],
      ['a margin of 0', { POSTURE_LAMBDA_MARGIN_SECONDS: '0' }, ['POSTURE_LAMBDA_MARGIN_SECONDS'], 'POSTURE_LAMBDA_MARGIN_SECONDS="0" is not valid: set a whole number from 1 to 300 (default 10).'],
      ['two key sources', { POSTURE_API_KEY_SSM_PARAMETER: '/posture/key' }, ['POSTURE_API_KEY'], 'more than one API key source is set (value, ssm): keep exactly one of POSTURE_API_KEY, POSTURE_API_KEY_FILE, POSTURE_API_KEY_SSM_PARAMETER, POSTURE_API_KEY_SECRET_ID.'],
      [
        'two problems at once',
        { POSTURE_REQUESTS_PER_MINUTE: '11', POSTURE_REMOTE_WRITE_PASSWORD: 'rw-password-secret-42' },
        ['POSTURE_REQUESTS_PER_MINUTE', 'POSTURE_REMOTE_WRITE_USERNAME'],
        'POSTURE_REQUESTS_PER_MINUTE (--requests-per-minute)="11" is not valid: set a whole number from 1 to 10 (default 5). | POSTURE_REMOTE_WRITE_USERNAME and POSTURE_REMOTE_WRITE_PASSWORD go together: set both for basic auth.',
      ],
    ];
    it.each(cases)('%s', async (_name, change, settings, message) => {
      secrets.push('rw-password-secret-42');
      const env = { POSTURE_BASE_URL: 'http://127.0.0.1:9/public-api/v1', POSTURE_API_KEY: KEY, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: pgw.url, ...change };
      const { failure, records } = lambda(env);
      const err = await failure();
      expect(err).toBeInstanceOf(InvocationFailedError);
      expect(err.message).toBe(`invalid settings: ${message}`);
      expect(err.message).not.toContain('\n');
      const cause = err.cause;
      const problems = cause instanceof ConfigErrors ? cause.problems : cause instanceof ConfigError ? [cause] : [];
      expect(problems.map((p) => p.setting)).toEqual(settings);
      expect(records()).toEqual([expect.objectContaining({ level: 'ERROR', message: 'invalid settings', settings, service: 'posture-exporter', function_request_id: 'req-1' })]);
    });
  });

  describe('API key from a key store (a loopback fake of the AWS JSON protocol)', () => {
    it('reads an SSM SecureString once with decryption, and again after the portal rejects the key (rotation)', async () => {
      const rotated = 'sim-rotated-key-fedcba9876543210';
      secrets.push(rotated);
      const sim = await portal({ keys: [{ key: KEY }, { key: rotated }] });
      const aws = await awsFake({ parameters: { '/posture/lambda-test/ssm': KEY } });
      const env = envFor(sim, 'ssm', { POSTURE_API_KEY: undefined, POSTURE_API_KEY_SSM_PARAMETER: '/posture/lambda-test/ssm' });
      const { invoke, failure } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });

      const first = await invoke();
      clock.advance(300_000);
      const second = await invoke();
      // The resolved-alerts pass runs in the cold container only: 300 s later its hour has not passed.
      expect(first.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
      expect(second.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok' });
      expect(aws.calls).toEqual([{ target: 'AmazonSSM.GetParameter', body: { Name: '/posture/lambda-test/ssm', WithDecryption: true }, signed: true }]);
      expect(sim.requests.every((r) => r.keyIndex === 0)).toBe(true);

      // The key is rotated in the store; the portal rejects the old one once.
      aws.parameters.set('/posture/lambda-test/ssm', rotated);
      sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 401 } });
      clock.advance(300_000);
      const rejected = await failure();
      expect(rejected.message).toMatch(/\(401\)/);
      expect(aws.calls).toHaveLength(1);

      clock.advance(300_000);
      const seen = sim.requests.length;
      await invoke();
      clock.advance(300_000);
      await invoke();
      expect(aws.calls.map((c) => c.target)).toEqual(['AmazonSSM.GetParameter', 'AmazonSSM.GetParameter']);
      expect(sim.requests.slice(seen).map((r) => `${r.keyIndex} ${r.status}`)).toEqual(Array(8).fill('1 200'));
    });

    it('reads a Secrets Manager secret once across invocations, and again after a 401', async () => {
      const sim = await portal();
      const aws = await awsFake({ secrets: { 'posture/lambda-test/secret': `${KEY}\n` } });
      const env = envFor(sim, 'secret', { POSTURE_API_KEY: undefined, POSTURE_API_KEY_SECRET_ID: 'posture/lambda-test/secret' });
      const { invoke, failure } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });

      await invoke();
      clock.advance(300_000);
      await invoke();
      expect(aws.calls).toEqual([{ target: 'secretsmanager.GetSecretValue', body: { SecretId: 'posture/lambda-test/secret' }, signed: true }]);

      sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 401 } });
      clock.advance(300_000);
      await failure();
      clock.advance(300_000);
      const after = await invoke();
      expect(after.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok' });
      expect(aws.calls.map((c) => c.target)).toEqual(['secretsmanager.GetSecretValue', 'secretsmanager.GetSecretValue']);
    });

    it('fails the invocation when the parameter cannot be read, and tries the store again next time', async () => {
      const sim = await portal();
      const aws = await awsFake();
      const env = envFor(sim, 'ssm-missing', { POSTURE_API_KEY: undefined, POSTURE_API_KEY_SSM_PARAMETER: '/posture/lambda-test/missing' });
      const { invoke, failure } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });
      const err = await failure();
      expect(err).toBeInstanceOf(InvocationFailedError);
      expect(err.message).toBe(
        'nothing could be collected (vitals, alerts, devices, resolved): cannot read the API key from SSM parameter /posture/lambda-test/missing (ParameterNotFound: Parameter /posture/lambda-test/missing not found.): check it exists and the process may read it (IAM: ssm:GetParameter / secretsmanager:GetSecretValue and kms:Decrypt).',
      );
      expect(sim.requests).toEqual([]);

      aws.parameters.set('/posture/lambda-test/missing', KEY);
      clock.advance(300_000);
      const summary = await invoke();
      // The failed pass was not remembered: it runs now.
      expect(summary.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
      expect(aws.calls).toHaveLength(2);
    });
  });

  describe('remote-write credential from a key store (the loopback fake), pushed to a receiver that checks it', () => {
    const USER = '1234567';
    const basic = (password: string) => `Basic ${Buffer.from(`${USER}:${password}`).toString('base64')}`;

    /** A remote-write receiver that answers 204 only to `accepted()` in Authorization, else 401 as Grafana Cloud does. */
    async function receiver(accepted: () => string): Promise<Receiver> {
      const rw = await startReceiver((req) => (req.headers.authorization === accepted() ? { status: 204 } : { status: 401, body: 'authentication error: invalid token' }));
      fakes.push(rw);
      return rw;
    }

    /** Pushgateway and remote write, the latter with basic auth whose password is the SSM parameter `parameter`. */
    const bothSinksWithStoredPassword = (rw: Receiver, parameter: string) => ({
      POSTURE_PUSH: 'pushgateway,remote_write',
      POSTURE_REMOTE_WRITE_URL: `${rw.url}/api/prom/push`,
      POSTURE_REMOTE_WRITE_USERNAME: USER,
      POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER: parameter,
    });

    /** `posture_*` series of one remote-write request, as `name{labels}` (portal left out) → value. */
    function pushed(rw: Receiver, index: number): Map<string, number> {
      const request = decodeWriteRequest(snappy.uncompress(new Uint8Array(rw.requests[index]!.body)));
      return familiesOf(
        request.timeseries.map((t) => {
          const { __name__: name = '', ...labels } = Object.fromEntries(t.labels);
          return { name, labels, value: t.samples[0]!.value };
        }),
        ['posture_collection_success', 'posture_push_success'],
      );
    }

    const cases: Array<{ what: string; credential: string; store: Parameters<typeof startAwsFake>[0]; env: Record<string, string>; call: unknown; authorization: string }> = [
      {
        what: 'the basic-auth password from an SSM SecureString',
        credential: 'glc_rw-password-from-ssm-0123456789',
        store: { parameters: { '/posture/lambda-test/rw-password': 'glc_rw-password-from-ssm-0123456789' } },
        env: { POSTURE_REMOTE_WRITE_USERNAME: USER, POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER: '/posture/lambda-test/rw-password' },
        call: { target: 'AmazonSSM.GetParameter', body: { Name: '/posture/lambda-test/rw-password', WithDecryption: true }, signed: true },
        authorization: basic('glc_rw-password-from-ssm-0123456789'),
      },
      {
        what: 'the basic-auth password from a Secrets Manager secret',
        credential: 'glc_rw-password-from-secret-abcdef',
        store: { secrets: { 'posture/lambda-test/rw-password': 'glc_rw-password-from-secret-abcdef\n' } },
        env: { POSTURE_REMOTE_WRITE_USERNAME: USER, POSTURE_REMOTE_WRITE_PASSWORD_SECRET_ID: 'posture/lambda-test/rw-password' },
        call: { target: 'secretsmanager.GetSecretValue', body: { SecretId: 'posture/lambda-test/rw-password' }, signed: true },
        authorization: basic('glc_rw-password-from-secret-abcdef'),
      },
      {
        what: 'the bearer token from an SSM SecureString',
        credential: 'mimir-rw-token-from-ssm-fedcba',
        store: { parameters: { '/posture/lambda-test/rw-token': 'mimir-rw-token-from-ssm-fedcba' } },
        env: { POSTURE_REMOTE_WRITE_BEARER_TOKEN_SSM_PARAMETER: '/posture/lambda-test/rw-token' },
        call: { target: 'AmazonSSM.GetParameter', body: { Name: '/posture/lambda-test/rw-token', WithDecryption: true }, signed: true },
        authorization: 'Bearer mimir-rw-token-from-ssm-fedcba',
      },
    ];
    it.each(cases)('reads $what once per container, pushes with it, and never shows it', async ({ credential, store, env: credentialEnv, call, authorization }) => {
      secrets.push(credential, authorization.replace(/^\w+ /, ''));
      const sim = await portal();
      const aws = await awsFake(store);
      const rw = await receiver(() => authorization);
      const env = envFor(sim, 'rw-store', { POSTURE_PUSH: 'remote_write', POSTURE_REMOTE_WRITE_URL: `${rw.url}/api/prom/push`, ...credentialEnv });
      const { invoke, records } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });

      const first = await invoke();
      clock.advance(300_000);
      const second = await invoke();
      for (const summary of [first, second]) {
        // The resolved-alerts pass runs in the cold container only: 300 s later its hour has not passed.
        expect(summary.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', ...(summary === first ? { resolved: 'ok' } : {}) });
        expect(summary.sinks).toEqual([{ sink: 'remote_write', ok: true, durationMs: expect.any(Number) }]);
      }
      // One read for the container; the API key is a plain value here, so that is the only call.
      expect(aws.calls).toEqual([call]);
      expect(rw.requests.map((r) => [r.url, r.headers.authorization === authorization])).toEqual([
        ['/api/prom/push', true],
        ['/api/prom/push', true],
      ]);
      // The receiver got the collection, and with the second push the first push's outcome.
      expect(pushed(rw, 0)).toEqual(new Map([...SOURCES, 'resolved'].map((source) => [`posture_collection_success{source="${source}"}`, 1])));
      expect(pushed(rw, 1).get('posture_push_success{sink="remote_write"}')).toBe(1);
      expect(records().filter((l) => l.message === 'push succeeded').map((l) => l.sink)).toEqual(['remote_write', 'remote_write']);
      expect(JSON.stringify([first, second])).not.toContain(credential);
    });

    it('reads the password again after the receiver rejects it (rotated in the store)', async () => {
      const [old, rotated] = ['glc_rw-password-before-rotation-01', 'glc_rw-password-after-rotation-002'];
      secrets.push(old, rotated);
      const sim = await portal();
      const aws = await awsFake({ parameters: { '/posture/lambda-test/rw-rotated': old } });
      let accepted = old;
      const rw = await receiver(() => basic(accepted));
      const env = envFor(sim, 'rw-rotated', bothSinksWithStoredPassword(rw, '/posture/lambda-test/rw-rotated'));
      const { invoke } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });
      expect((await invoke()).sinks.map((s) => s.ok)).toEqual([true, true]);

      aws.parameters.set('/posture/lambda-test/rw-rotated', rotated);
      accepted = rotated;
      clock.advance(300_000);
      const rejected = await invoke();
      expect(rejected.sinks).toEqual([
        { sink: 'pushgateway', ok: true, durationMs: expect.any(Number) },
        { sink: 'remote_write', ok: false, durationMs: expect.any(Number), error: expect.stringContaining('401') },
      ]);
      expect(aws.calls).toHaveLength(1);

      clock.advance(300_000);
      expect((await invoke()).sinks.map((s) => s.ok)).toEqual([true, true]);
      expect(aws.calls.map((c) => c.target)).toEqual(['AmazonSSM.GetParameter', 'AmazonSSM.GetParameter']);
      expect(rw.requests.map((r) => r.headers.authorization)).toEqual([basic(old), basic(old), basic(rotated)]);
    });

    it('fails only the remote-write sink when its password cannot be read, and reads the store again next time', async () => {
      const password = 'glc_rw-password-stored-late-4567';
      secrets.push(password);
      const sim = await portal();
      const aws = await awsFake();
      const rw = await receiver(() => basic(password));
      const env = envFor(sim, 'rw-missing', bothSinksWithStoredPassword(rw, '/posture/lambda-test/rw-missing'));
      const { invoke, records } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });

      // Not thrown: the collection worked and the Pushgateway took it.
      const first = await invoke();
      expect(first.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
      expect(first.sinks).toEqual([
        { sink: 'pushgateway', ok: true, durationMs: expect.any(Number) },
        {
          sink: 'remote_write',
          ok: false,
          durationMs: expect.any(Number),
          error:
            'cannot read the remote-write password from SSM parameter /posture/lambda-test/rw-missing (ParameterNotFound: Parameter /posture/lambda-test/rw-missing not found.): check it exists and the process may read it (IAM: ssm:GetParameter / secretsmanager:GetSecretValue and kms:Decrypt).',
        },
      ]);
      expect(rw.requests).toEqual([]);
      expect(records().filter((l) => l.message === 'push failed').map((l) => l.sink)).toEqual(['remote_write']);
      const g1 = await pushgatewayGroups(pgw.url);
      expect(successOf(g1, 'rw-missing')).toEqual({ vitals: 1, alerts: 1, devices: 1 });
      expect(sourceGroups(g1, 'rw-missing')).toEqual(['portal=rw-missing,source=alerts', 'portal=rw-missing,source=devices', 'portal=rw-missing,source=resolved', 'portal=rw-missing,source=vitals']);

      aws.parameters.set('/posture/lambda-test/rw-missing', password);
      clock.advance(300_000);
      const second = await invoke();
      expect(second.sinks.map((s) => [s.sink, s.ok])).toEqual([
        ['pushgateway', true],
        ['remote_write', true],
      ]);
      expect(aws.calls.map((c) => c.target)).toEqual(['AmazonSSM.GetParameter', 'AmazonSSM.GetParameter']);
      expect(rw.requests.map((r) => r.headers.authorization === basic(password))).toEqual([true]);
      // The failed read went out with this push as the remote-write sink's outcome.
      const g2 = await pushgatewayGroups(pgw.url);
      expect(familiesOf(g2.get('portal=rw-missing')!.samples, ['posture_push_success'])).toEqual(new Map([
        ['posture_push_success{sink="pushgateway"}', 1],
        ['posture_push_success{sink="remote_write"}', 0],
      ]));
      expect(pushed(rw, 0).get('posture_push_success{sink="remote_write"}')).toBe(0);
    });

    it('throws when remote write is the only sink and its token cannot be read', async () => {
      const sim = await portal();
      const aws = await awsFake();
      const rw = await receiver(() => 'Bearer never-read');
      const env = envFor(sim, 'rw-only', { POSTURE_PUSH: 'remote_write', POSTURE_REMOTE_WRITE_URL: `${rw.url}/api/v1/push`, POSTURE_REMOTE_WRITE_BEARER_TOKEN_SECRET_ID: 'posture/lambda-test/rw-absent' });
      const { failure } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });
      const err = await failure();
      expect(err).toBeInstanceOf(InvocationFailedError);
      expect(err.message).toBe(
        "nothing could be pushed: remote_write: cannot read the remote-write bearer token from secret posture/lambda-test/rw-absent (ResourceNotFoundException: Secrets Manager can't find the specified secret.): check it exists and the process may read it (IAM: ssm:GetParameter / secretsmanager:GetSecretValue and kms:Decrypt).",
      );
      expect(err.summary!.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
      expect(rw.requests).toEqual([]);
    });
  });

});
