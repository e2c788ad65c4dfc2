import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { SinkError } from '../../src/sinks/errors.js';
import { RemoteWriteSink } from '../../src/sinks/remote-write.js';
import { credentialsFromEnv, signSigV4 } from '../../src/sinks/sigv4.js';
import { closeAfterEach } from '../support/closing.js';
import { batchFor } from './fixtures.js';
import { startReceiver } from './receiver.js';

// The AWS Signature Version 4 test suite's credentials and time (20150830T123600Z, us-east-1, service "service").
const SUITE = {
  credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
  region: 'us-east-1',
  service: 'service',
  date: new Date(Date.UTC(2015, 7, 30, 12, 36, 0)),
};
const GET_VANILLA =
  'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31';
const POST_FORM =
  'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a';

/** SigV4 written out from the published algorithm with node:crypto, independent of the signer under test. */
function referenceAuthorization(r: {
  method: string;
  path: string;
  headers: Record<string, string>;
  signedHeaders: string[];
  body: Buffer | string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  service: string;
  amzDate: string;
}): string {
  const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
  const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
  const canonicalHeaders = r.signedHeaders.map((h) => `${h}:${r.headers[h]!.trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalRequest = [r.method, r.path, '', canonicalHeaders, r.signedHeaders.join(';'), sha256(r.body)].join('\n');
  const day = r.amzDate.slice(0, 8);
  const scope = `${day}/${r.region}/${r.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', r.amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${r.secretAccessKey}`, day), r.region), r.service), 'aws4_request');
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  return `AWS4-HMAC-SHA256 Credential=${r.accessKeyId}/${scope}, SignedHeaders=${r.signedHeaders.join(';')}, Signature=${signature}`;
}

describe('SigV4 signing against the AWS test suite', () => {
  it('signs get-vanilla as published', async () => {
    const headers = await signSigV4({ method: 'GET', url: new URL('https://example.amazonaws.com/'), headers: {} }, SUITE);
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
    expect(headers.authorization).toBe(GET_VANILLA);
    expect(headers['x-amz-security-token']).toBeUndefined();
  });

  it('signs post-x-www-form-urlencoded as published', async () => {
    const headers = await signSigV4(
      { method: 'POST', url: new URL('https://example.amazonaws.com/'), headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'Param1=value1' },
      SUITE,
    );
    expect(headers.authorization).toBe(POST_FORM);
  });

  it('has a reference implementation that reproduces both published vectors', () => {
    const common = { ...SUITE.credentials, region: SUITE.region, service: SUITE.service, amzDate: '20150830T123600Z', path: '/' };
    expect(referenceAuthorization({ ...common, method: 'GET', headers: { host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z' }, signedHeaders: ['host', 'x-amz-date'], body: '' })).toBe(GET_VANILLA);
    expect(
      referenceAuthorization({
        ...common,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z' },
        signedHeaders: ['content-type', 'host', 'x-amz-date'],
        body: 'Param1=value1',
      }),
    ).toBe(POST_FORM);
  });

  it('reads the Lambda role credentials from the environment', () => {
    expect(credentialsFromEnv({ AWS_ACCESS_KEY_ID: 'AKIA', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'tok' })).toEqual({ accessKeyId: 'AKIA', secretAccessKey: 'secret', sessionToken: 'tok' });
    expect(credentialsFromEnv({ AWS_ACCESS_KEY_ID: 'AKIA' })).toBeUndefined();
  });
});

describe('remote write to Amazon Managed Service for Prometheus (SigV4)', () => {
  const closing = closeAfterEach();

  const env = {
    AWS_ACCESS_KEY_ID: 'ASIAEXAMPLEKEYID0001',
    AWS_SECRET_ACCESS_KEY: 'example/secret+access+key/0123456789abcdef',
    AWS_SESSION_TOKEN: 'IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN//////////wEaCWV1LXdlc3QtMQ==',
  };
  const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

  it('sends a request whose Authorization matches the reference signature of what arrived', async () => {
    const receiver = closing(await startReceiver());
    const clock = new FakeClock(T0);
    const logger = memoryLogger();
    const sink = new RemoteWriteSink({
      url: `${receiver.url}/workspaces/ws-0123abcd-4567-89ef/api/v1/remote_write`,
      auth: { kind: 'sigv4', region: 'eu-west-1' },
      headers: { 'X-Scope-OrgID': 'tenant-1' },
    });
    await sink.push([batchFor('acme', T0)], { clock, logger, deadline: T0 + 30_000, env });
    const req = receiver.requests[0]!;
    const auth = String(req.headers.authorization);
    const signedHeaders = /SignedHeaders=([^,]+)/.exec(auth)![1]!.split(';');
    expect(signedHeaders).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'x-amz-security-token', 'content-type', 'content-encoding', 'x-prometheus-remote-write-version', 'x-scope-orgid']));
    expect(req.headers['x-amz-date']).toBe('20261122T120000Z');
    expect(req.headers['x-amz-security-token']).toBe(env.AWS_SESSION_TOKEN);
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    expect(auth).toBe(
      referenceAuthorization({
        method: 'POST',
        path: req.url,
        headers,
        signedHeaders,
        body: req.body,
        accessKeyId: env.AWS_ACCESS_KEY_ID,
        secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
        region: 'eu-west-1',
        service: 'aps',
        amzDate: '20261122T120000Z',
      }),
    );
    expect(auth).toContain('/20261122/eu-west-1/aps/aws4_request');
    expect(logger.lines.join('\n')).not.toContain(env.AWS_SECRET_ACCESS_KEY);
  });

  it('fails with a SinkError, sending nothing, when the role credentials are missing', async () => {
    const receiver = closing(await startReceiver());
    const clock = new FakeClock(T0);
    const sink = new RemoteWriteSink({ url: `${receiver.url}/api/v1/remote_write`, auth: { kind: 'sigv4', region: 'eu-west-1' } });
    const err = await sink.push([batchFor('acme', T0)], { clock, logger: memoryLogger(), deadline: T0 + 30_000, env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).message).toMatch(/AWS_ACCESS_KEY_ID/);
    expect(receiver.requests).toHaveLength(0);
  });
});
