/**
 * Envelope validation, error mapping and request shape of PortalReader, through undici's MockAgent
 * as the injected dispatcher: cases the simulated portal cannot produce (a missing `total`, a body
 * echoing the key, a body that ends cleanly inside the JSON, undici's timeout errors).
 */
import { performance } from 'node:perf_hooks';
import { errors, MockAgent, type Dispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { ConfigError, InvalidResponseError, NetworkError, PermissionError, PortalUnreachableError, RateLimitedError, TimeoutError, TruncatedBodyError, UntrustedCertificateError, UpstreamHttpError } from '../../src/errors.js';
import { PortalReader, type PortalReaderOptions } from '../../src/upstream/reader.js';
import { failure } from '../support/upstream.js';
import { USER_AGENT } from '../../src/version.js';

const ORIGIN = 'http://127.0.0.1:9';
const BASE = `${ORIGIN}/public-api/v1`;
const KEY = 'mock-key-5f1c2e9a7b3d4c6e8f0a';
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

let agent: MockAgent;
let clock: FakeClock;
beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  clock = new FakeClock(T0);
});
afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
});

function reader(overrides: Partial<PortalReaderOptions> = {}) {
  const logger = memoryLogger();
  const r = new PortalReader({ baseUrl: BASE, apiKey: KEY, clock, logger, dispatcher: agent, ...overrides });
  return { r, logger };
}

/** A sink that counts records; `seen` counts across every sink made. */
let seen = 0;
const counting = () => {
  let n = 0;
  return {
    record: () => {
      n++;
      seen++;
    },
    finish: () => n,
  };
};
beforeEach(() => {
  seen = 0;
});

const pool = () => agent.get(ORIGIN);
const list = (r: PortalReader, endpoint = '/vitals', query: Record<string, string | number | undefined> = {}) => r.read({ endpoint, query }, counting);

describe('PortalReader request shape', () => {
  it('sends the key header, Accept and User-Agent, and the query without undefined values', async () => {
    const requests: Array<{ path: string; headers: Record<string, string> }> = [];
    pool()
      .intercept({ path: (p) => p.startsWith('/public-api/v1/alerts'), method: 'GET' })
      .reply((opts) => {
        requests.push({ path: opts.path, headers: opts.headers as Record<string, string> });
        return { statusCode: 200, data: JSON.stringify({ total: 0, data: [] }) };
      });
    const { r } = reader({ baseUrl: BASE + '//' });
    await r.read({ endpoint: 'alerts', query: { filter: 'allunresolved', systemName: undefined, offset: 0, limit: 250 } }, counting);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.path).toBe('/public-api/v1/alerts?filter=allunresolved&offset=0&limit=250');
    const headers = Object.fromEntries(Object.entries(requests[0]!.headers).map(([k, v]) => [k.toLowerCase(), v]));
    expect(headers['x-service-apikey']).toBe(KEY);
    expect(headers.accept).toBe('application/json');
    // The same User-Agent as every push request: the exporter and its version.
    expect(headers['user-agent']).toBe(USER_AGENT);
    expect(USER_AGENT).toMatch(/^posture-exporter\/\d+\.\d+\.\d+/);
  });

  it('joins an endpoint to the base URL with one slash, whatever slashes it starts with', async () => {
    const paths: string[] = [];
    pool()
      .intercept({ path: (p) => p.startsWith('/public-api/v1/settings/'), method: 'GET' })
      .reply((opts) => {
        paths.push(opts.path);
        return { statusCode: 200, data: JSON.stringify({ total: 0, data: [] }) };
      })
      .times(2);
    const { r } = reader();
    await r.read({ endpoint: '//settings/usermanagement/users', query: {} }, counting);
    await r.read({ endpoint: 'settings/usermanagement/roles', query: {} }, counting);
    expect(paths).toEqual(['/public-api/v1/settings/usermanagement/users', '/public-api/v1/settings/usermanagement/roles']);
  });

  it('sends the key in a configured header instead', async () => {
    const requests: Array<Record<string, string>> = [];
    pool()
      .intercept({ path: '/public-api/v1/vitals' })
      .reply((opts) => {
        requests.push(Object.fromEntries(Object.entries(opts.headers as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v])));
        return { statusCode: 200, data: JSON.stringify({ total: 0, data: [] }) };
      });
    await list(reader({ apiKeyHeader: 'X-Other-Key' }).r);
    expect(requests).toHaveLength(1);
    expect(requests[0]!['x-other-key']).toBe(KEY);
    expect(requests[0]!['x-service-apikey']).toBeUndefined();
  });

  it.each([
    ['portal.example.com/public-api/v1', 'POSTURE_BASE_URL is not a URL: use https://<cloud_id>.<host>/public-api/v1'],
    ['ftp://portal.example.com/public-api/v1', 'POSTURE_BASE_URL must start with https:// (got ftp:)'],
  ])('refuses the base URL %s with a ConfigError naming the setting', (baseUrl, message) => {
    let err: unknown;
    try {
      reader({ baseUrl });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect(err).toMatchObject({ setting: 'POSTURE_BASE_URL', message });
  });

  it("keeps the URL parser's error as the cause of a base URL that is not a URL", () => {
    const err = (() => {
      try {
        reader({ baseUrl: 'portal.example.com/public-api/v1' });
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(err.cause).toBeInstanceOf(TypeError);
    expect(err.cause).toMatchObject({ code: 'ERR_INVALID_URL' });
  });

  it('takes an http:// base URL as well as https://', () => {
    expect(() => reader({ baseUrl: 'http://127.0.0.1:9/public-api/v1' })).not.toThrow();
    expect(() => reader({ baseUrl: 'https://portal.example/public-api/v1' })).not.toThrow();
  });
});

describe('PortalReader envelope checks', () => {
  it.each([
    ['total missing', { data: [{}], success: true }],
    ['total negative', { total: -1, data: [] }],
    ['total fractional', { total: 1.5, data: [] }],
    ['total a string', { total: '3', data: [] }],
    ['success false', { success: false, statusCode: 500, message: 'Backend unavailable', total: 0, data: [] }],
    ['success a string', { success: 'true', total: 0, data: [] }],
    ['data not an array', { total: 1, data: { a: 1 } }],
  ])('rejects a 200 with %s as InvalidResponseError', async (_name, body) => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify(body));
    const err = await failure(list(reader().r));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err).not.toBeInstanceOf(TruncatedBodyError);
    expect((err as InvalidResponseError).endpoint).toBe('/vitals');
    expect(err.message).toContain('/vitals');
    expect(PortalReader.codeOf(err)).toBe('200');
  });

  it("names the portal's message when it says success:false", async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify({ success: false, statusCode: 500, message: 'Backend unavailable', total: 0, data: [] }));
    const err = await failure(list(reader().r));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.message).toContain('"Backend unavailable"');
    expect(err.message).toContain('statusCode 500');
  });

  it('tells a body that ends cleanly but early (cut by a proxy) from a complete malformed one', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, '{"total":3,"data":[{"a":1},{"a"');
    pool().intercept({ path: '/public-api/v1/alerts' }).reply(200, '{"total":3,"data":[{"a":1},{"a":}]}');
    const { r } = reader();
    const cut = await failure(list(r));
    expect(cut).toBeInstanceOf(TruncatedBodyError);
    expect((cut as TruncatedBodyError).endpoint).toBe('/vitals');
    expect(cut.message).toContain('ended early');
    // The parser's own error is kept as the cause.
    expect(cut.cause).toBeInstanceOf(InvalidResponseError);
    expect((cut.cause as Error).message).toBe(cut.message);
    expect(seen).toBe(1); // the one complete record reached the sink before the cut
    expect(PortalReader.codeOf(cut)).toBe('200');
    const malformed = await failure(list(r, '/alerts'));
    expect(malformed).toBeInstanceOf(InvalidResponseError);
    expect(malformed).not.toBeInstanceOf(TruncatedBodyError);
    expect(malformed.message).toContain('malformed JSON');
  });

  it('treats an empty 200 body as cut short', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, '');
    const err = await failure(list(reader().r));
    expect(err).toBeInstanceOf(TruncatedBodyError);
  });

  it('accepts an envelope without success, and takes offset/limit from the request when the body lacks them', async () => {
    pool().intercept({ path: '/public-api/v1/alerts?filter=all&offset=20&limit=10' }).reply(200, JSON.stringify({ total: 25, data: [1, 2, 3, 4, 5] }));
    const res = await list(reader().r, '/alerts', { filter: 'all', offset: 20, limit: 10 });
    expect(res).toEqual({ total: 25, offset: 20, limit: 10, received: 5, result: 5 });
  });

  it("prefers the body's offset and limit echo when present", async () => {
    pool().intercept({ path: '/public-api/v1/alerts?filter=all&limit=1000' }).reply(200, JSON.stringify({ offset: 0, limit: 500, total: 900, data: [] }));
    const res = await list(reader().r, '/alerts', { filter: 'all', limit: 1000 });
    expect([res.offset, res.limit]).toEqual([0, 500]);
  });

  it('defaults offset and limit to 0 (all) when neither side gives them', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify({ total: 2, data: [{}, {}] }));
    const res = await list(reader().r);
    expect([res.offset, res.limit, res.received]).toEqual([0, 0, 2]);
  });
});

describe('PortalReader error mapping', () => {
  it.each([400, 401, 403, 404, 418, 429, 500, 503])('never puts the key in the error of a %i, even when the portal echoes it', async (status) => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(status, JSON.stringify({ success: false, message: `key ${KEY} is not allowed here` }));
    const { r, logger } = reader();
    const err = await failure(list(r));
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect((err as UpstreamHttpError).status).toBe(status);
    expect(err.message).not.toContain(KEY);
    expect(JSON.stringify({ ...err, message: err.message })).not.toContain(KEY);
    expect(logger.lines.length).toBeGreaterThan(0);
    expect(logger.lines.join('\n')).not.toContain(KEY);
  });

  it('never puts the key in the error of a success:false that echoes it', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify({ success: false, message: `key ${KEY} expired`, total: 0, data: [] }));
    const err = await failure(list(reader().r));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.message).toContain('[REDACTED] expired');
    expect(err.message).not.toContain(KEY);
  });

  it("includes the portal's message on 400 and names the path on 403", async () => {
    pool().intercept({ path: '/public-api/v1/devices?filter=x' }).reply(400, JSON.stringify({ success: false, statusCode: 400, message: "filter must be one of 'active', 'inactive', 'all'", data: [] }));
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(403, JSON.stringify({ success: false, message: 'Forbidden' }));
    const { r } = reader();
    const bad = await failure(list(r, '/devices', { filter: 'x' }));
    expect(bad).toBeInstanceOf(UpstreamHttpError);
    expect((bad as UpstreamHttpError).status).toBe(400);
    expect(bad.message).toContain("filter must be one of 'active', 'inactive', 'all'");
    const denied = await failure(list(r));
    expect(denied).toBeInstanceOf(PermissionError);
    expect(denied.message).toContain('may not read /vitals (403)');
    expect(denied.message).toContain('Vitals permission');
  });

  it.each([
    [418, 'an unexpected status (418)'],
    [501, 'a server error (501)'],
    [502, 'a server error (502)'],
    [503, 'a server error (503)'],
    [504, 'a server error (504)'],
  ])('maps status %i to an UpstreamHttpError saying %s', async (status, said) => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(status, '');
    const err = await failure(list(reader().r));
    expect(err.constructor).toBe(UpstreamHttpError);
    expect((err as UpstreamHttpError).status).toBe(status);
    expect(err.message).toContain(said);
    expect(PortalReader.codeOf(err)).toBe(String(status));
  });

  it.each<[string, string | string[], number | undefined]>([
    ['seconds', '30', 30_000],
    ['an HTTP-date', new Date(T0 + 90_000).toUTCString(), 90_000],
    ['an HTTP-date in the past', new Date(T0 - 5_000).toUTCString(), 0],
    ['something unusable', 'later', undefined],
  ])('reads a Retry-After of %s into retryAfterMs', async (_name, header, expected) => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(429, '', { headers: { 'retry-after': header } });
    const err = await failure(list(reader().r));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(expected);
  });

  it.each([
    ['connect', new errors.ConnectTimeoutError()],
    ['headers', new errors.HeadersTimeoutError()],
    ['body', new errors.BodyTimeoutError()],
  ] as const)("maps undici's %s timeout to TimeoutError", async (phase, cause) => {
    pool().intercept({ path: '/public-api/v1/vitals' }).replyWithError(cause);
    const err = await failure(list(reader().r));
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).phase).toBe(phase);
    expect((err as TimeoutError).endpoint).toBe('/vitals');
    expect(err.cause).toBe(cause);
    expect(PortalReader.codeOf(err)).toBe('error');
  });

  it('maps a refused connection to a PortalUnreachableError naming host and port, keeping the cause', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    pool().intercept({ path: '/public-api/v1/vitals' }).replyWithError(refused);
    const err = await failure(list(reader().r));
    expect(err).toBeInstanceOf(PortalUnreachableError);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).not.toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ code: 'ECONNREFUSED', host: '127.0.0.1', port: 9, endpoint: '/vitals' });
    expect(err.cause).toBe(refused);
    expect(err.message).toBe(
      `connection refused by 127.0.0.1:9 (/vitals): nothing accepts connections there — check the host and port in POSTURE_BASE_URL and that the portal, or the proxy in front of it, is up and reachable from this network.`,
    );
    expect(PortalReader.codeOf(err)).toBe('error');
  });

  it.each([
    ['ENOTFOUND', `cannot resolve HOST (ENOTFOUND, /vitals): check the host name in POSTURE_BASE_URL (https://<cloud_id>.<host>/public-api/v1) and this network's DNS.`],
    ['EAI_AGAIN', `cannot resolve HOST (EAI_AGAIN, /vitals): check the host name in POSTURE_BASE_URL (https://<cloud_id>.<host>/public-api/v1) and this network's DNS.`],
    ['EHOSTUNREACH', `cannot reach HOST:9 (EHOSTUNREACH, /vitals): no route to the portal — check POSTURE_BASE_URL and this network (routes, firewall, proxy).`],
  ])('maps %s to a PortalUnreachableError saying what to check', async (code, message) => {
    pool().intercept({ path: '/public-api/v1/vitals' }).replyWithError(Object.assign(new Error(`getaddrinfo ${code}`), { code }));
    const err = await failure(list(reader().r));
    expect(err).toBeInstanceOf(PortalUnreachableError);
    expect(err).toMatchObject({ code, message: message.replace('HOST', '127.0.0.1') });
  });

  // getaddrinfo's codes (the name has no address, or the resolver failed) and the kernel's (no
  // route to the host or its network, or either is down): no connection, so no request was made.
  it.each([
    ['ECONNREFUSED', 'refused'],
    ['ENOTFOUND', 'unresolvable'],
    ['EAI_AGAIN', 'unresolvable'],
    ['EAI_FAIL', 'unresolvable'],
    ['EAI_NONAME', 'unresolvable'],
    ['EHOSTUNREACH', 'unreachable'],
    ['ENETUNREACH', 'unreachable'],
    ['EHOSTDOWN', 'unreachable'],
    ['ENETDOWN', 'unreachable'],
  ] as const)('classes a connection that failed with %s as a portal that is %s', async (code, kind) => {
    pool().intercept({ path: '/public-api/v1/vitals' }).replyWithError(Object.assign(new Error(`connect ${code}`), { code }));
    const err = await failure(list(reader().r));
    expect(err).toBeInstanceOf(PortalUnreachableError);
    expect(err).toMatchObject({ code, kind, host: '127.0.0.1', port: 9 });
    const start = { refused: 'connection refused by 127.0.0.1:9 (/vitals)', unresolvable: `cannot resolve 127.0.0.1 (${code}, /vitals)`, unreachable: `cannot reach 127.0.0.1:9 (${code}, /vitals)` }[kind];
    expect(err.message.startsWith(`${start}: `)).toBe(true);
  });

  it('keeps a reset connection a plain NetworkError (the request may have reached the portal)', async () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    pool().intercept({ path: '/public-api/v1/vitals' }).replyWithError(reset);
    const err = await failure(list(reader().r));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).not.toBeInstanceOf(PortalUnreachableError);
    expect(err.cause).toBe(reset);
    expect(err.message).toBe('Could not get a response from the portal for /vitals (ECONNRESET): check POSTURE_BASE_URL and network access.');
  });
});

describe('PortalReader error messages', () => {
  it.each([
    ['/vitals', "give the key's role the Vitals permission (vitals) and device visibility (deviceVisibility All or Team)"],
    ['/vitals/integrations', "give the key's role the Vitals permission (vitals)"],
    ['/alerts', "give the key's role the needed visibility (deviceVisibility All or Team, userVisibility for user alerts)"],
    ['/devices', "give the key's role the needed visibility (deviceVisibility All or Team)"],
    ['/inventory', "give the key's role the needed visibility (deviceVisibility All or Team)"],
    ['/users', "give the key's role the needed visibility (userVisibility)"],
    ['/settings/usermanagement/roles', "give the key's role the matching settings permission (users, roles, teams)"],
    ['/settings/usermanagement/users', "give the key's role the matching settings permission (users, roles, teams)"],
    // Paths under a resource (spec 4.9) need what the resource needs.
    ['/devices/d-1234', "give the key's role the needed visibility (deviceVisibility All or Team)"],
    ['/inventory/devices', "give the key's role the needed visibility (deviceVisibility All or Team)"],
    ['/inventory/software', "give the key's role the needed visibility (deviceVisibility All or Team)"],
    ['/users/u-5678', "give the key's role the needed visibility (userVisibility)"],
    ['/alerts/a-42', "give the key's role the needed visibility (deviceVisibility All or Team, userVisibility for user alerts)"],
    ['/issues', "give the key's role the needed visibility (e.g. deviceVisibility All or Team)"],
  ])('names the permission a 403 on %s lacks (spec 2.9)', async (endpoint, hint) => {
    pool().intercept({ path: `/public-api/v1${endpoint}` }).reply(403, '');
    const err = await failure(list(reader().r, endpoint));
    expect(err).toBeInstanceOf(PermissionError);
    expect(err.message).toContain(`may not read ${endpoint} (403): ${hint}`);
    expect(err.message).not.toContain('The portal said');
  });

  it("quotes the portal's message on a 404 and a 5xx, trimmed", async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(404, JSON.stringify({ message: '  No such resource \n' }));
    pool().intercept({ path: '/public-api/v1/alerts' }).reply(500, JSON.stringify({ success: false, message: 'Database timeout' }));
    const { r } = reader();
    const missing = await failure(list(r));
    expect(missing.message).toBe('The portal has no /vitals (404): check POSTURE_BASE_URL ends with /public-api/v1 (https://<cloud_id>.<host>/public-api/v1). The portal said: "No such resource".');
    const failed = await failure(list(r, '/alerts'));
    expect(failed.message).toBe('The portal answered /alerts with a server error (500): the portal may be down or overloaded; it will be tried again on the next cycle. The portal said: "Database timeout".');
  });

  it.each([
    ['blank', JSON.stringify({ message: '   ' })],
    ['not a string', JSON.stringify({ message: 42 })],
    ['JSON null', 'null'],
    ['not JSON', '<html>Bad gateway</html>'],
  ])('quotes no portal message when the error body has a message that is %s', async (_name, body) => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(400, body);
    const err = await failure(list(reader().r));
    expect(err.message).toBe('The portal rejected the request to /vitals as invalid (400); check the query settings for this source (filters, tag, archiveDate).');
  });

  it('cuts a portal message to its first 300 characters', async () => {
    const long = 'a'.repeat(299) + 'bcdef';
    const exact = 'c'.repeat(300);
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(400, JSON.stringify({ message: long }));
    pool().intercept({ path: '/public-api/v1/alerts' }).reply(400, JSON.stringify({ message: exact }));
    const { r } = reader();
    expect((await failure(list(r))).message).toContain(`invalid (400): "${'a'.repeat(299)}b…"; check`);
    expect((await failure(list(r, '/alerts'))).message).toContain(`invalid (400): "${exact}"; check`);
  });

  it('tells a status below 500 that it does not expect from a server error', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(499, '');
    pool().intercept({ path: '/public-api/v1/alerts' }).reply(500, '');
    const { r } = reader();
    expect((await failure(list(r))).message).toBe('The portal answered /vitals with an unexpected status (499): check POSTURE_BASE_URL and the source settings.');
    expect((await failure(list(r, '/alerts'))).message).toContain('a server error (500): the portal may be down or overloaded');
  });

  it('rounds the wait a 429 asks for up to whole seconds in its message', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(429, '', { headers: { 'retry-after': '1.5' } });
    const err = await failure(list(reader().r));
    expect(err).toMatchObject({ retryAfterMs: 1_500 });
    expect(err.message).toContain('(429; it asked to wait 2 s)');
  });

  it('says success:false plainly when the envelope gives no statusCode and no message', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify({ success: false, message: '', total: 0, data: [] }));
    const err = await failure(list(reader().r));
    expect(err.message).toBe("The portal answered /vitals with success:false; the data was not used — retry later or check the portal's status");
  });

  it('quotes no message of success:false that is not a string', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify({ success: false, statusCode: 503, message: 42, total: 0, data: [] }));
    const err = await failure(list(reader().r));
    expect(err.message).toBe("The portal answered /vitals with success:false (statusCode 503); the data was not used — retry later or check the portal's status");
  });

  it('accepts success:true', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify({ success: true, statusCode: 200, total: 1, data: [{}] }));
    expect(await list(reader().r)).toMatchObject({ total: 1, received: 1 });
  });

  it.each([
    [{ data: [] }, 'has no "total"'],
    [{ total: null, data: [] }, 'has an invalid "total" (null)'],
    [{ total: 2 ** 53, data: [] }, 'has an invalid "total" (9007199254740992)'],
  ])('says what is wrong with the total of %j', async (body, said) => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify(body));
    const err = await failure(list(reader().r));
    expect(err.message).toBe(`The response from /vitals ${said}; expected a whole number from 0 to 2^53 - 1 (spec 2.1)`);
  });

  it('takes a total of 2^53 - 1, and a total of 0', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, `{"total":${2 ** 53 - 1},"data":[]}`);
    pool().intercept({ path: '/public-api/v1/alerts' }).reply(200, '{"total":0,"data":[]}');
    const { r } = reader();
    expect((await list(r)).total).toBe(2 ** 53 - 1);
    expect((await list(r, '/alerts')).total).toBe(0);
  });

  it('takes offset and limit from the request when the body gives invalid ones, and 0 for a query value that is not a number', async () => {
    pool().intercept({ path: '/public-api/v1/alerts?offset=30&limit=all' }).reply(200, JSON.stringify({ offset: -1, limit: 2.5, total: 40, data: [] }));
    const res = await list(reader().r, '/alerts', { offset: 30, limit: 'all' });
    expect([res.offset, res.limit]).toEqual([30, 0]);
  });
});

describe('PortalReader and the 2xx range', () => {
  const body = JSON.stringify({ total: 1, data: [{ key: 'a' }] });

  it('reads the list of a 299, the last 2xx status', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(299, body);
    expect(await list(reader().r)).toMatchObject({ total: 1, received: 1 });
    expect(seen).toBe(1);
  });

  it('does not read a list from a 300, the first status past 2xx', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(300, body);
    const err = await failure(list(reader().r));
    expect(err.constructor).toBe(UpstreamHttpError);
    expect(err.message).toBe('The portal answered /vitals with an unexpected status (300): check POSTURE_BASE_URL and the source settings.');
    expect(seen).toBe(0);
  });
});

describe('PortalReader and a long error body', () => {
  it('reads the portal message from no more than the first 64 KiB of an error body that comes in one piece', async () => {
    // MockAgent hands the whole body in one chunk: the cut is inside it.
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(500, JSON.stringify({ message: 'Backend down', padding: 'p'.repeat(70 * 1024) }));
    const err = await failure(list(reader().r));
    expect((err as UpstreamHttpError).status).toBe(500);
    expect(err.message).not.toContain('Backend down');
  });
});

describe('PortalReader.codeOf', () => {
  it('gives the status of any UpstreamHttpError, and error for what no read threw', () => {
    expect(PortalReader.codeOf(new UpstreamHttpError('/vitals', 502, 'bad gateway'))).toBe('502');
    expect(PortalReader.codeOf(new RateLimitedError('/vitals', undefined, 'slow down'))).toBe('429');
    expect(PortalReader.codeOf(new InvalidResponseError('/vitals', 'not read here'))).toBe('error');
    expect(PortalReader.codeOf(new Error('x'))).toBe('error');
    expect(PortalReader.codeOf('a string')).toBe('error');
    expect(PortalReader.codeOf(undefined)).toBe('error');
  });
});

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
