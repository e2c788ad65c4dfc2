/**
 * Envelope validation, error mapping and request shape, through undici's MockAgent as the
 * injected dispatcher: cases the simulated portal cannot produce (a missing `total`, a body
 * echoing the key, undici's timeout errors).
 */
import { errors, MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { ConfigError, InvalidResponseError, NetworkError, PermissionError, RateLimitedError, TimeoutError, UpstreamHttpError } from '../../src/errors.js';
import { PortalClient, type PortalClientOptions } from '../../src/upstream/client.js';
import { RateLimiter } from '../../src/upstream/limiter.js';

const ORIGIN = 'http://127.0.0.1:9';
const BASE = `${ORIGIN}/public-api/v1`;
const KEY = 'mock-key-5f1c2e9a7b3d4c6e8f0a';
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const HOUR = 3_600_000;

let agent: MockAgent;
let clock: FakeClock;
beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  clock = new FakeClock(T0, { autoAdvance: true });
});
afterEach(async () => {
  await agent.close();
});

function client(overrides: Partial<PortalClientOptions> = {}) {
  const logger = memoryLogger();
  const codes: string[] = [];
  const c = new PortalClient({
    baseUrl: BASE,
    apiKey: KEY,
    limiter: new RateLimiter({ limit: 10, clock }),
    clock,
    logger,
    dispatcher: agent,
    random: () => 1,
    onResponse: (endpoint, code) => codes.push(code),
    ...overrides,
  });
  return { c, logger, codes };
}

const counting = () => {
  let n = 0;
  return { record: () => void n++, finish: () => n };
};

const pool = () => agent.get(ORIGIN);
const list = (c: PortalClient, endpoint = '/vitals', query: Record<string, string | number | undefined> = {}) =>
  c.list({ endpoint, query }, counting, { deadline: clock.now() + HOUR });

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

describe('PortalClient request shape', () => {
  it('sends the key header, Accept and User-Agent, and the query without undefined values', async () => {
    let seen: { path: string; headers: Record<string, string> } | undefined;
    pool()
      .intercept({ path: (p) => p.startsWith('/public-api/v1/alerts'), method: 'GET' })
      .reply((opts) => {
        seen = { path: opts.path, headers: opts.headers as Record<string, string> };
        return { statusCode: 200, data: JSON.stringify({ total: 0, data: [] }) };
      });
    const { c } = client({ baseUrl: BASE + '//', userAgent: 'posture-exporter/9.9' });
    await c.list({ endpoint: 'alerts', query: { filter: 'allunresolved', systemName: undefined, offset: 0, limit: 250 } }, counting, { deadline: T0 + HOUR });
    expect(seen!.path).toBe('/public-api/v1/alerts?filter=allunresolved&offset=0&limit=250');
    const headers = Object.fromEntries(Object.entries(seen!.headers).map(([k, v]) => [k.toLowerCase(), v]));
    expect(headers['x-service-apikey']).toBe(KEY);
    expect(headers.accept).toBe('application/json');
    expect(headers['user-agent']).toBe('posture-exporter/9.9');
  });

  it('refuses a base URL that is not http(s) with a ConfigError', () => {
    expect(() => client({ baseUrl: 'portal.example.com/public-api/v1' })).toThrow(ConfigError);
    expect(() => client({ baseUrl: 'ftp://portal.example.com/public-api/v1' })).toThrow(ConfigError);
  });
});

describe('PortalClient envelope checks', () => {
  it.each([
    ['total missing', { data: [{}], success: true }],
    ['total negative', { total: -1, data: [] }],
    ['total fractional', { total: 1.5, data: [] }],
    ['total a string', { total: '3', data: [] }],
    ['success false', { success: false, statusCode: 500, message: 'Backend unavailable', total: 0, data: [] }],
    ['success a string', { success: 'true', total: 0, data: [] }],
    ['data not an array', { total: 1, data: { a: 1 } }],
  ])('rejects a 200 with %s as InvalidResponseError, without retrying', async (_name, body) => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify(body));
    const { c, codes } = client();
    const err = await failure(list(c));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as InvalidResponseError).endpoint).toBe('/vitals');
    expect(err.message).toContain('/vitals');
    if ('message' in body) expect(err.message).toContain(body.message);
    expect(codes).toEqual(['200']);
  });

  it('retries a body that ends cleanly but early (cut by a proxy), and not a complete malformed one', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, '{"total":3,"data":[{"a":1},{"a"');
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify({ total: 3, data: [{}, {}, {}] }));
    pool().intercept({ path: '/public-api/v1/alerts' }).reply(200, '{"total":3,"data":[{"a":1},{"a":}]}');
    const { c, codes } = client();
    const res = await list(c);
    expect([res.attempts, res.received, res.result]).toEqual([2, 3, 3]);
    const err = await failure(list(c, '/alerts'));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(codes).toEqual(['200', '200', '200']);
  });

  it('accepts an envelope without success, and takes offset/limit from the request when the body lacks them', async () => {
    pool().intercept({ path: '/public-api/v1/alerts?filter=all&offset=20&limit=10' }).reply(200, JSON.stringify({ total: 25, data: [1, 2, 3, 4, 5] }));
    const { c } = client();
    const res = await list(c, '/alerts', { filter: 'all', offset: 20, limit: 10 });
    expect(res).toEqual({ total: 25, offset: 20, limit: 10, received: 5, result: 5, attempts: 1 });
  });

  it("prefers the body's offset and limit echo when present", async () => {
    pool().intercept({ path: '/public-api/v1/alerts?filter=all&limit=1000' }).reply(200, JSON.stringify({ offset: 0, limit: 500, total: 900, data: [] }));
    const { c } = client();
    const res = await list(c, '/alerts', { filter: 'all', limit: 1000 });
    expect([res.offset, res.limit]).toEqual([0, 500]);
  });

  it('defaults offset and limit to 0 (all) when neither side gives them', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify({ total: 2, data: [{}, {}] }));
    const res = await list(client().c);
    expect([res.offset, res.limit, res.received]).toEqual([0, 0, 2]);
  });
});

describe('PortalClient error mapping', () => {
  it('never puts the key in an error, even when the portal echoes it', async () => {
    for (const status of [400, 401, 403, 404, 418, 500]) {
      pool().intercept({ path: '/public-api/v1/vitals' }).reply(status, JSON.stringify({ success: false, message: `key ${KEY} is not allowed here` }));
    }
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify({ success: false, message: `key ${KEY} expired`, total: 0, data: [] }));
    const { c, logger } = client({ maxRetries: 0 });
    for (let i = 0; i < 7; i++) {
      const err = await failure(list(c));
      expect(err.message).not.toContain(KEY);
      expect(JSON.stringify({ ...err, message: err.message })).not.toContain(KEY);
    }
    expect(logger.lines.join('\n')).not.toContain(KEY);
  });

  it("includes the portal's message on 400 and names the path on 403", async () => {
    pool().intercept({ path: '/public-api/v1/devices?filter=x' }).reply(400, JSON.stringify({ success: false, statusCode: 400, message: "filter must be one of 'active', 'inactive', 'all'", data: [] }));
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(403, JSON.stringify({ success: false, message: 'Forbidden' }));
    const { c } = client();
    const bad = await failure(list(c, '/devices', { filter: 'x' }));
    expect(bad).toBeInstanceOf(UpstreamHttpError);
    expect(bad.message).toContain("filter must be one of 'active', 'inactive', 'all'");
    const denied = await failure(list(c));
    expect(denied).toBeInstanceOf(PermissionError);
    expect(denied.message).toContain('may not read /vitals (403)');
    expect(denied.message).toContain('Vitals permission');
  });

  it.each([
    [418, 1],
    [501, 1],
    [502, 2],
    [503, 2],
    [504, 2],
  ])('status %i is tried %i time(s) with maxRetries 1', async (status, tries) => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(status, '').times(2);
    const { c, codes } = client({ maxRetries: 1 });
    const err = await failure(list(c));
    expect((err as UpstreamHttpError).status).toBe(status);
    expect(codes).toEqual(Array(tries).fill(String(status)));
  });

  it('gives a 429 without a usable Retry-After an undefined retryAfterMs and backs off', async () => {
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(429, '', { headers: { 'retry-after': 'later' } }).times(2);
    const { c } = client({ maxRetries: 1, backoffBaseMs: 3_000 });
    const before = clock.now();
    const err = await failure(list(c));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBeUndefined();
    expect(clock.now() - before).toBe(3_000); // random() = 1: the full first backoff window
  });

  it.each([
    ['connect', new errors.ConnectTimeoutError()],
    ['headers', new errors.HeadersTimeoutError()],
    ['body', new errors.BodyTimeoutError()],
  ] as const)("maps undici's %s timeout to TimeoutError", async (phase, cause) => {
    pool().intercept({ path: '/public-api/v1/vitals' }).replyWithError(cause);
    const { c, codes } = client({ maxRetries: 0 });
    const err = await failure(list(c));
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).phase).toBe(phase);
    expect(err.cause).toBe(cause);
    expect(codes).toEqual(['error']);
  });

  it('maps a refused connection to NetworkError and retries it', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    pool().intercept({ path: '/public-api/v1/vitals' }).replyWithError(refused);
    pool().intercept({ path: '/public-api/v1/vitals' }).reply(200, JSON.stringify({ total: 0, data: [] }));
    const { c, codes, logger } = client();
    const res = await list(c);
    expect(res.attempts).toBe(2);
    expect(codes).toEqual(['error', '200']);
    expect(logger.records().find((r) => r.level === 'warn')).toMatchObject({ endpoint: '/vitals', status: 'NetworkError', attempt: 1, waitMs: 1_000 });
  });
});
