/**
 * How PortalReader reports what its dispatcher does besides answering: every address refused, a
 * connection cut after the status, a certificate this process does not trust, a dispatch that throws,
 * an error body in pieces. Through undici's MockAgent, or a dispatcher scripted here that calls the
 * handler's callbacks in turn.
 */
import { performance } from 'node:perf_hooks';
import { errors, type Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { ConfigError, NetworkError, PortalUnreachableError, UntrustedCertificateError } from '../../src/errors.js';
import { PortalReader } from '../../src/upstream/reader.js';
import { failure } from '../support/upstream.js';
import { agent, list, mockAgentPerTest, pool, reader, seen } from './reader-mock.js';

mockAgentPerTest();

describe('PortalReader transport failures', () => {
  it('reads the code of the first address tried when every address fails (happy eyeballs)', async () => {
    const refused = (address: string) => Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: 'ECONNREFUSED' });
    const all = new AggregateError([refused('::1:9'), refused('127.0.0.1:9')], 'connect failed');
    pool().intercept({ path: '/public-api/v1/vitals' }).replyWithError(all);
    const err = await failure(list(reader().r));
    expect(err).toBeInstanceOf(PortalUnreachableError);
    expect(err).toMatchObject({ code: 'ECONNREFUSED', kind: 'refused' });
    expect(err.cause).toBe(all);
  });

  it('keeps an AggregateError without codes a NetworkError that quotes it', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).replyWithError(new AggregateError([new Error('first')], 'every address failed'));
    const err = await failure(list(reader().r));
    expect(err.constructor).toBe(NetworkError);
    expect(err.message).toBe('Could not get a response from the portal for /vitals (every address failed): check POSTURE_BASE_URL and network access.');
  });

  it.each([
    ['https://portal.example/public-api/v1', 'https://portal.example', 'portal.example:443'],
    ['http://portal.example/public-api/v1', 'http://portal.example', 'portal.example:80'],
    ['https://portal.example:8443/public-api/v1', 'https://portal.example:8443', 'portal.example:8443'],
  ])('names the default port of %s when the connection is refused', async (baseUrl, origin, at) => {
    agent
      .get(origin)
      .intercept({ path: '/public-api/v1/vitals' })
      .replyWithError(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    const err = await failure(list(reader({ baseUrl }).r));
    expect(err).toMatchObject({ host: 'portal.example', port: Number(at.split(':')[1]) });
    expect(err.message).toContain(`connection refused by ${at} (/vitals)`);
  });

  it('reports a request the dispatcher refuses outright as a NetworkError', async () => {
    // No interceptor and no network: MockAgent throws from dispatch itself.
    const err = await failure(list(reader().r, '/alerts'));
    expect(err.constructor).toBe(NetworkError);
    expect(err.message).toContain('Could not get a response from the portal for /alerts (UND_MOCK_ERR_MOCK_NOT_MATCHED)');
    expect(PortalReader.codeOf(err)).toBe('error');
  });

  it('logs a request that got no answer with status error and no records', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).replyWithError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    const { r, logger } = reader();
    const before = performance.now();
    await failure(list(r));
    const took = performance.now() - before;
    const logged = logger.records().filter((l) => l.msg === 'upstream request');
    expect(logged).toMatchObject([{ level: 'debug', endpoint: '/vitals', status: 'error', records: 0 }]);
    // Milliseconds since the request started, rounded.
    expect(Number.isInteger(logged[0]!.durationMs)).toBe(true);
    expect(logged[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(logged[0]!.durationMs).toBeLessThanOrEqual(Math.round(took) + 1);
  });

  it('names the timeouts it was given in the timeout errors', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).replyWithError(new errors.ConnectTimeoutError());
    pool().intercept({ path: '/public-api/v1/alerts' }).replyWithError(new errors.HeadersTimeoutError());
    pool().intercept({ path: '/public-api/v1/devices' }).replyWithError(new errors.BodyTimeoutError());
    const { r } = reader({ connectTimeoutMs: 1_234, headersTimeoutMs: 2_345, bodyTimeoutMs: 3_456 });
    expect((await failure(list(r))).message).toContain('timed out after 1234 ms');
    expect((await failure(list(r, '/alerts'))).message).toContain('within 2345 ms (headers timeout)');
    expect((await failure(list(r, '/devices'))).message).toContain('for 3456 ms (body timeout)');
  });

  it('names the default timeouts, 10 s to connect and 30 s for headers and between body chunks', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).replyWithError(new errors.ConnectTimeoutError());
    pool().intercept({ path: '/public-api/v1/alerts' }).replyWithError(new errors.HeadersTimeoutError());
    pool().intercept({ path: '/public-api/v1/devices' }).replyWithError(new errors.BodyTimeoutError());
    const { r } = reader();
    expect((await failure(list(r))).message).toContain('timed out after 10000 ms');
    expect((await failure(list(r, '/alerts'))).message).toContain('within 30000 ms (headers timeout)');
    expect((await failure(list(r, '/devices'))).message).toContain('for 30000 ms (body timeout)');
  });
});

/**
 * A dispatcher that plays `script` on the reader's handler once the request starts, as undici
 * would call it: for failures a real connection cannot be made to show on demand.
 */
function scripted(script: (handler: Dispatcher.DispatchHandler, controller: Dispatcher.DispatchController) => void): Dispatcher {
  const controller = {
    aborted: false,
    paused: false,
    reason: null as Error | null,
    abort(reason: Error) {
      this.aborted = true;
      this.reason = reason;
    },
    pause() {},
    resume() {},
  };
  return {
    dispatch(_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
      setImmediate(() => {
        handler.onRequestStart?.(controller, {});
        script(handler, controller);
      });
      return true;
    },
  } as unknown as Dispatcher;
}

describe('PortalReader, a connection failing after the status', () => {
  const coded = (code: string) => Object.assign(new Error(`read ${code}`), { code });

  it.each([
    ['a system code', coded('EHOSTUNREACH'), '(EHOSTUNREACH)'],
    ['no code', new Error('other side closed'), '(other side closed)'],
  ])('reports a 200 body cut with %s as a NetworkError of the body, never as an unreachable portal', async (_name, cause, said) => {
    const dispatcher = scripted((h, c) => {
      h.onResponseStart?.(c, 200, {}, 'OK');
      h.onResponseData?.(c, Buffer.from('{"total":2,"data":[{"a":1},'));
      h.onResponseError?.(c, cause);
    });
    const err = await failure(list(reader({ dispatcher }).r));
    expect(err.constructor).toBe(NetworkError);
    expect(err.message).toBe(`The connection to the portal was cut while reading /vitals ${said}; the partial data was discarded.`);
    expect(err.cause).toBe(cause);
    expect(seen).toBe(1);
    expect(PortalReader.codeOf(err)).toBe('200');
  });

  it('reports an unreachable code before any status as an unreachable portal', async () => {
    const cause = coded('ENETUNREACH');
    const err = await failure(list(reader({ dispatcher: scripted((h, c) => h.onResponseError?.(c, cause)) }).r));
    expect(err).toBeInstanceOf(PortalUnreachableError);
    expect(err).toMatchObject({ code: 'ENETUNREACH', kind: 'unreachable' });
  });
});

describe('PortalReader, a certificate this process does not trust', () => {
  const coded = (code: string, message = 'unable to verify the first certificate') => Object.assign(new Error(message), { code });

  it.each([
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'is signed by a CA this process does not trust'],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'is signed by a CA this process does not trust'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'is signed by a CA this process does not trust'],
    ['CERT_HAS_EXPIRED', 'is expired'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'does not name this host'],
  ])('reports %s as an UntrustedCertificateError, a configuration error naming the host and NODE_EXTRA_CA_CERTS', async (code, why) => {
    const cause = coded(code);
    const err = await failure(list(reader({ dispatcher: scripted((h, c) => h.onResponseError?.(c, cause)) }).r));
    expect(err).toBeInstanceOf(UntrustedCertificateError);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).not.toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ host: '127.0.0.1:9', code, setting: 'NODE_EXTRA_CA_CERTS', endpoint: '/vitals' });
    expect(err.cause).toBe(cause);
    expect(err.message).toContain(`The TLS connection to the portal at 127.0.0.1:9 (/vitals) failed: its certificate ${why}`);
    expect(err.message).toContain('NODE_EXTRA_CA_CERTS');
    expect(err.message.split('\n')).toHaveLength(1);
    expect(PortalReader.codeOf(err)).toBe('error');
  });

  it('reports a trust failure among happy eyeballs\' attempts the same way', async () => {
    const cause = new AggregateError([coded('SELF_SIGNED_CERT_IN_CHAIN')], 'all failed');
    const err = await failure(list(reader({ dispatcher: scripted((h, c) => h.onResponseError?.(c, cause)) }).r));
    expect(err).toMatchObject({ code: 'SELF_SIGNED_CERT_IN_CHAIN' });
  });

  it('keeps a handshake cut by the other side a NetworkError, which is retried', async () => {
    const err = await failure(list(reader({ dispatcher: scripted((h, c) => h.onResponseError?.(c, coded('ECONNRESET', 'socket hang up'))) }).r));
    expect(err.constructor).toBe(NetworkError);
  });

  it('names the proxy that refused the tunnel, and what to check', async () => {
    const cause = coded('ERR_PROXY_CONNECT', 'the proxy http://127.0.0.1:3128 refused to open a tunnel to 127.0.0.1:9 (403 Forbidden)');
    const err = await failure(list(reader({ dispatcher: scripted((h, c) => h.onResponseError?.(c, cause)) }).r));
    expect(err.constructor).toBe(NetworkError);
    expect(err.message).toBe('Could not reach the portal for /vitals: the proxy http://127.0.0.1:3128 refused to open a tunnel to 127.0.0.1:9 (403 Forbidden); check HTTPS_PROXY / HTTP_PROXY and the proxy\'s rules for this host, or name the host in NO_PROXY to go direct.');
  });
});

/** How `p` stands once the callbacks already queued have run: its value, its error, or still pending. */
async function soon(p: Promise<unknown>): Promise<{ value: unknown } | { error: unknown } | 'pending'> {
  const outcome = p.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  let later: Promise<'pending'> = Promise.resolve('pending');
  for (let i = 0; i < 3; i++) later = later.then(() => new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending'))));
  return Promise.race([outcome, later]);
}

describe('PortalReader, a dispatcher that refuses the request outright', () => {
  /** A dispatcher whose dispatch throws `thrown` instead of starting the request. */
  const throwing = (thrown: unknown) =>
    ({
      dispatch() {
        throw thrown;
      },
    }) as unknown as Dispatcher;

  it('reports a refused connection thrown by dispatch as an unreachable portal, keeping the cause', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const outcome = await soon(list(reader({ dispatcher: throwing(refused) }).r));
    expect(outcome).not.toBe('pending');
    const err = (outcome as { error: Error }).error;
    expect(err).toBeInstanceOf(PortalUnreachableError);
    expect(err).toMatchObject({ code: 'ECONNREFUSED', kind: 'refused' });
    expect(err.cause).toBe(refused);
  });

  it.each([
    ['null', null, 'null'],
    ['an AggregateError of no attempts', new AggregateError([], 'no address to try'), 'no address to try'],
    ['an AggregateError whose first code is not a string', new AggregateError([Object.assign(new Error('first'), { code: 42 })], 'every address failed'), 'every address failed'],
  ])('reports %s thrown by dispatch as a NetworkError quoting it', async (_name, thrown, said) => {
    const outcome = await soon(list(reader({ dispatcher: throwing(thrown) }).r));
    const err = (outcome as { error: Error }).error;
    expect(err.constructor).toBe(NetworkError);
    expect(err.message).toBe(`Could not get a response from the portal for /vitals (${said}): check POSTURE_BASE_URL and network access.`);
  });
});

describe('PortalReader, an error body in pieces', () => {
  it("reads the portal's message across the chunks of an error body", async () => {
    const dispatcher = scripted((h, c) => {
      h.onResponseStart?.(c, 500, {}, 'Internal Server Error');
      h.onResponseData?.(c, Buffer.from('{"message":"Back'));
      h.onResponseData?.(c, Buffer.from('end down"}'));
      h.onResponseEnd?.(c, {});
    });
    const err = await failure(list(reader({ dispatcher }).r));
    expect(err.message).toContain('The portal said: "Backend down".');
  });

  it('stops reading an error body at exactly 64 KiB, not a byte before', async () => {
    let handler: Dispatcher.DispatchHandler | undefined;
    let controller: Dispatcher.DispatchController | undefined;
    const dispatcher = scripted((h, c) => {
      [handler, controller] = [h, c];
      h.onResponseStart?.(c, 502, {}, 'Bad Gateway');
      h.onResponseData?.(c, Buffer.alloc(64 * 1024 - 1, 'x'));
    });
    const pending = list(reader({ dispatcher }).r);
    expect(await soon(pending)).toBe('pending');
    expect(controller!.aborted).toBe(false);
    handler!.onResponseData?.(controller!, Buffer.from('x'));
    const outcome = await soon(pending);
    expect(outcome).toMatchObject({ error: { status: 502 } });
    expect(controller!.aborted).toBe(true);
  });
});
