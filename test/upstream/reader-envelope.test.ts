/**
 * Request shape and envelope validation of PortalReader, through undici's MockAgent as the injected
 * dispatcher: cases the simulated portal cannot produce (a missing `total`, a body that ends cleanly
 * inside the JSON, a status at the edge of 2xx).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, InvalidResponseError, TruncatedBodyError, UpstreamHttpError } from '../../src/errors.js';
import { PortalReader } from '../../src/upstream/reader.js';
import { failure } from '../support/upstream.js';
import { USER_AGENT } from '../../src/version.js';
import { BASE, counting, KEY, list, mockAgentPerTest, pool, reader, seen } from './reader-mock.js';

mockAgentPerTest();

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
