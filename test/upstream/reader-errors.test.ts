/**
 * How PortalReader maps an answer that is not a list to its typed errors, and what their messages
 * say, through undici's MockAgent as the injected dispatcher: a body echoing the key, Retry-After in
 * its forms, undici's timeout errors, a long error body.
 */
import { errors } from 'undici';
import { describe, expect, it } from 'vitest';
import { InvalidResponseError, NetworkError, PermissionError, PortalUnreachableError, RateLimitedError, TimeoutError, UpstreamHttpError } from '../../src/errors.js';
import { PortalReader } from '../../src/upstream/reader.js';
import { failure } from '../support/upstream.js';
import { KEY, list, mockAgentPerTest, pool, reader, T0 } from './reader-mock.js';

mockAgentPerTest();

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
