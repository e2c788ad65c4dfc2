import { Agent, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { T0, get } from './helpers.js';

/** Reads a body chunk by chunk; returns the bytes received and the error that ended it, if any. */
async function readAll(sim: Simulator, path: string, dispatcher?: Agent): Promise<{ status: number; bytes: Buffer; error?: unknown }> {
  const res = await request(sim.baseUrl + path, { headers: { 'X-Service-ApiKey': sim.apiKey }, dispatcher });
  const chunks: Buffer[] = [];
  try {
    for await (const c of res.body) chunks.push(c as Buffer);
    return { status: res.statusCode, bytes: Buffer.concat(chunks) };
  } catch (error) {
    return { status: res.statusCode, bytes: Buffer.concat(chunks), error };
  }
}

describe('fault injection', () => {
  let sim: Simulator;
  const clock = new FakeClock(T0);
  beforeAll(async () => {
    sim = await startSimulator({ clock, rateLimit: false, moving: false });
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.clearFaults());

  it('delays the headers by `latency` ms', async () => {
    sim.addFault({ path: '/vitals', fault: { kind: 'latency', ms: 150 } });
    const started = performance.now();
    const r = await get(sim, '/vitals');
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(r.status).toBe(200);
    expect(r.json.total).toBe(8);
  });

  it.each([500, 502, 503])('answers with status %i and an error envelope', async (status) => {
    sim.addFault({ path: '/vitals', fault: { kind: 'status', status } });
    const r = await get(sim, '/vitals');
    expect(r.status).toBe(status);
    expect(r.json).toMatchObject({ success: false, statusCode: status, data: [] });
    expect((await get(sim, '/vitals')).status).toBe(200); // consumed once
  });

  it('answers 429 with or without Retry-After, and with a custom body', async () => {
    sim.addFault({ fault: { kind: 'status', status: 429, retryAfter: '7' } });
    sim.addFault({ fault: { kind: 'status', status: 429 } });
    sim.addFault({ fault: { kind: 'status', status: 503, body: 'upstream down' } });
    const a = await get(sim, '/alerts', { query: { filter: 'all' } });
    const b = await get(sim, '/alerts', { query: { filter: 'all' } });
    const c = await get(sim, '/alerts', { query: { filter: 'all' } });
    expect([a.status, a.headers['retry-after']]).toEqual([429, '7']);
    expect([b.status, b.headers['retry-after']]).toEqual([429, undefined]);
    expect([c.status, c.text]).toEqual([503, 'upstream down']);
  });

  it('truncates the body after N bytes and ends the socket', async () => {
    const whole = (await get(sim, '/alerts', { query: { filter: 'all' } })).text;
    sim.addFault({ path: '/alerts', fault: { kind: 'truncate', afterBytes: 1000 } });
    const r = await readAll(sim, '/alerts?filter=all');
    expect(r.status).toBe(200);
    expect(r.error).toBeDefined();
    expect(r.bytes.length).toBe(1000);
    expect(r.bytes.toString()).toBe(Buffer.from(whole).subarray(0, 1000).toString());
    expect(sim.requests.at(-1)!.status).toBe(200);
  });

  it('truncates even a body shorter than N bytes (the response never completes)', async () => {
    sim.addFault({ path: '/settings/tags', fault: { kind: 'truncate', afterBytes: 1_000_000 } });
    const r = await readAll(sim, '/settings/tags');
    expect(r.error).toBeDefined();
    expect(r.bytes.length).toBeGreaterThan(0);
  });

  it('resets the connection without a response', async () => {
    sim.addFault({ path: '/vitals', fault: { kind: 'reset' } });
    await expect(get(sim, '/vitals')).rejects.toThrow();
    expect(sim.requests.at(-1)).toMatchObject({ path: '/vitals', status: 0 });
    expect((await get(sim, '/vitals')).status).toBe(200);
  });

  it('answers 200 with a body that is not JSON', async () => {
    sim.addFault({ path: '/vitals', fault: { kind: 'malformed' } });
    const r = await get(sim, '/vitals');
    expect(r.status).toBe(200);
    expect(() => JSON.parse(r.text)).toThrow();
  });

  it('answers 200 with success:false and statusCode 500', async () => {
    sim.addFault({ path: '/vitals', fault: { kind: 'success-false', message: 'Temporary failure.' } });
    const r = await get(sim, '/vitals');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ success: false, statusCode: 500, message: 'Temporary failure.', data: [] });
  });

  it.each([
    ['/alerts', { filter: 'allunresolved' }, 'state', 7],
    ['/devices', { filter: 'all' }, 'lastOnline', 1_700_000_000],
  ] as const)('damages the first records of %s (missing / mistyped %s)', async (path, query, field, wrong) => {
    const clean = (await get(sim, path, { query })).json.data as Record<string, unknown>[];
    sim.addFault({ path, fault: { kind: 'bad-records', count: 3, how: 'missing' } });
    const missing = (await get(sim, path, { query })).json.data as Record<string, unknown>[];
    sim.addFault({ path, fault: { kind: 'bad-records', count: 2, how: 'mistyped' } });
    const mistyped = (await get(sim, path, { query })).json.data as Record<string, unknown>[];
    for (let i = 0; i < 3; i++) {
      expect(field in missing[i]!).toBe(false);
      const { [field]: _dropped, ...rest } = clean[i]!;
      expect(missing[i]).toEqual(rest);
    }
    expect(missing.slice(3)).toEqual(clean.slice(3));
    expect(mistyped.slice(0, 2).map((r) => r[field])).toEqual([wrong, wrong]);
    expect(mistyped.slice(2)).toEqual(clean.slice(2));
  });

  it('mistypes Vitals numbers as strings', async () => {
    const clean = (await get(sim, '/vitals')).json.data;
    sim.addFault({ path: '/vitals', fault: { kind: 'bad-records', count: 2, how: 'mistyped' } });
    const bad = (await get(sim, '/vitals')).json.data;
    expect(bad[0].agentDeployedCompliant).toBe(String(clean[0].agentDeployedCompliant));
    expect(bad[1].activeAgents).toBe(String(clean[1].activeAgents)); // okta: Vitals disabled
    expect(bad.slice(2)).toEqual(clean.slice(2));
  });

  it('sends a total that is off by delta', async () => {
    sim.addFault({ path: '/alerts', fault: { kind: 'total-mismatch', delta: 5 } });
    const r = (await get(sim, '/alerts', { query: { filter: 'allunresolved' } })).json;
    expect(r.total).toBe(r.data.length + 5);
    sim.addFault({ path: '/alerts', fault: { kind: 'total-mismatch', delta: -3 } });
    const s = (await get(sim, '/alerts', { query: { filter: 'allunresolved', limit: 10 } })).json;
    expect(s.total).toBe(r.total - 5 - 3);
    expect(s.data).toHaveLength(10);
  });

  it('stalls after N bytes so a body timeout fires', async () => {
    const dispatcher = new Agent({ bodyTimeout: 200 });
    try {
      sim.addFault({ path: '/alerts', fault: { kind: 'stall', afterBytes: 300 } });
      const started = performance.now();
      const r = await readAll(sim, '/alerts?filter=all', dispatcher);
      expect(r.status).toBe(200);
      expect(r.bytes.length).toBe(300);
      expect((r.error as { code?: string }).code).toBe('UND_ERR_BODY_TIMEOUT');
      expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    } finally {
      await dispatcher.destroy();
    }
  });

  it('matches rules in order by path and consumes them `times` times', async () => {
    sim.addFault({ path: '/alerts', times: 2, fault: { kind: 'status', status: 502 } });
    sim.addFault({ fault: { kind: 'status', status: 503 } });
    const statuses = [];
    for (const p of ['/vitals', '/alerts?filter=all', '/alerts?filter=all', '/alerts?filter=all', '/vitals']) statuses.push((await get(sim, p)).status);
    expect(statuses).toEqual([503, 502, 502, 200, 200]);
    sim.addFault({ path: '/vitals', times: Infinity, fault: { kind: 'status', status: 500 } });
    for (let i = 0; i < 5; i++) expect((await get(sim, '/vitals')).status).toBe(500);
    sim.clearFaults();
    expect((await get(sim, '/vitals')).status).toBe(200);
  });

  it('accepts a rule path with the base path', async () => {
    sim.addFault({ path: '/public-api/v1/vitals', fault: { kind: 'status', status: 502 } });
    expect((await get(sim, '/vitals')).status).toBe(502);
  });

  it('applies faults after auth: a 401 does not consume a rule', async () => {
    sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 503 } });
    expect((await get(sim, '/vitals', { key: null })).status).toBe(401);
    expect((await get(sim, '/vitals')).status).toBe(503);
  });
});

describe('faults and the rate limit', () => {
  it('counts a faulted request against the rate limit, and a 429 from the limiter does not consume a rule', async () => {
    const clock = new FakeClock(T0);
    const sim = await startSimulator({ clock, rateLimit: { requests: 2, windowMs: 60_000 } });
    try {
      sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 503 } });
      sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 502 } });
      expect((await get(sim, '/vitals')).status).toBe(503);
      expect((await get(sim, '/settings/tags')).status).toBe(200);
      expect((await get(sim, '/vitals')).status).toBe(429);
      clock.advance(60_000);
      expect((await get(sim, '/vitals')).status).toBe(502);
    } finally {
      await sim.close();
    }
  });
});
