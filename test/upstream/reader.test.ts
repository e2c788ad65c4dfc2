import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import {
  AuthenticationError,
  BudgetExhaustedError,
  InvalidResponseError,
  NetworkError,
  PermissionError,
  RateLimitedError,
  TimeoutError,
  UpstreamHttpError,
} from '../../src/errors.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { PortalClient, type PortalClientOptions, type RecordSink } from '../../src/upstream/client.js';
import { RateLimiter } from '../../src/upstream/limiter.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A sink that keeps its records; `made` lists every sink created, so tests can see one per attempt. */
function sinks() {
  const made: Array<{ records: unknown[] }> = [];
  const newSink = (): RecordSink<unknown[]> => {
    const records: unknown[] = [];
    made.push({ records });
    return { record: (raw) => records.push(raw), finish: () => records };
  };
  return { made, newSink };
}

const itemIds = (records: unknown[]) => records.map((r) => (r as { itemId: string }).itemId);

/** Runs `fn` and returns what it threw (fails the test if it did not throw). */
async function failure(fn: () => Promise<unknown>): Promise<Error> {
  try {
    await fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

let agent: Agent;
beforeAll(() => {
  agent = new Agent({ connect: { timeout: 2_000 } });
});
afterAll(async () => {
  await agent.close();
});

/** A client on `sim` with a FakeClock that jumps over every sleep; everything else overridable. */
function setup(sim: Simulator, clock: FakeClock, overrides: Partial<PortalClientOptions> = {}) {
  const logger = memoryLogger();
  const codes: string[] = [];
  const limiter = overrides.limiter ?? new RateLimiter({ limit: 10, clock });
  const client = new PortalClient({
    baseUrl: sim.baseUrl,
    apiKey: sim.apiKey,
    limiter,
    clock,
    logger,
    dispatcher: agent,
    random: () => 0.5,
    onResponse: (endpoint, code) => codes.push(`${endpoint} ${code}`),
    ...overrides,
  });
  return { client, logger, codes, limiter };
}

describe('PortalClient against the simulated portal', () => {
  let sim: Simulator;
  let clock: FakeClock;

  beforeAll(async () => {
    clock = new FakeClock(T0, { autoAdvance: true });
    sim = await startSimulator({ seed: 7, clock, rateLimit: false, moving: false, alerts: 150, devices: 300 });
  });
  afterAll(async () => {
    await sim.close();
  });
  afterEach(() => {
    sim.clearFaults();
    sim.requests.length = 0;
  });

  it('reads a whole list in one request and reports the envelope', async () => {
    const { client, codes, logger } = setup(sim, clock);
    const { made, newSink } = sinks();
    const expected = [...sim.data().alerts()];
    const res = await client.list({ endpoint: '/alerts', query: { filter: 'all', systemName: undefined } }, newSink, { deadline: clock.now() + HOUR });
    expect(res.total).toBe(expected.length);
    expect(res.received).toBe(expected.length);
    expect(res.attempts).toBe(1);
    expect(res.offset).toBe(0);
    expect(res.limit).toBe(0);
    expect(itemIds(res.result)).toEqual(itemIds(expected));
    expect(made).toHaveLength(1);
    expect(codes).toEqual(['/alerts 200']);
    // The undefined query value is left out of the URL.
    expect(sim.requests.map((r) => [r.path, r.query])).toEqual([['/alerts', { filter: 'all' }]]);
    const debug = logger.records().filter((r) => r.level === 'debug' && r.msg === 'upstream request');
    expect(debug).toHaveLength(1);
    expect(debug[0]).toMatchObject({ endpoint: '/alerts', query: { filter: 'all' }, status: 200, records: expected.length });
    expect(typeof debug[0]!.durationMs).toBe('number');
    expect(logger.lines.join('\n')).not.toContain(sim.apiKey);
  });

  it('pages with offset and limit, and the pages add up to the whole list', async () => {
    const { client } = setup(sim, clock, { baseUrl: sim.baseUrl + '/' });
    const whole = [...sim.data().alerts()].filter((a) => !a.resolved);
    const pageSize = 40;
    const seen: string[] = [];
    let offset = 0;
    for (;;) {
      const { newSink } = sinks();
      const res = await client.list({ endpoint: '/alerts', query: { filter: 'allunresolved', offset, limit: pageSize } }, newSink, { deadline: clock.now() + HOUR });
      expect(res.total).toBe(whole.length);
      expect(res.offset).toBe(offset);
      expect(res.limit).toBe(pageSize);
      expect(res.received).toBe(Math.min(pageSize, whole.length - offset));
      seen.push(...itemIds(res.result));
      offset += res.received;
      if (offset >= res.total) break;
    }
    expect(whole.length).toBeGreaterThan(pageSize);
    expect(seen).toEqual(itemIds(whole));
    expect(sim.requests.map((r) => r.query.offset)).toEqual(Array.from({ length: Math.ceil(whole.length / pageSize) }, (_, i) => String(i * pageSize)));
  });

  it('counts devices per filter with limit=1', async () => {
    const { client } = setup(sim, clock);
    const totals: Record<string, number> = {};
    for (const filter of ['active', 'inactive', 'all']) {
      const res = await client.list({ endpoint: '/devices', query: { filter, limit: 1 } }, sinks().newSink, { deadline: clock.now() + HOUR });
      expect(res.received).toBe(1);
      expect(res.limit).toBe(1);
      totals[filter] = res.total;
    }
    expect(totals.all).toBe([...sim.data().devices()].length);
    expect(totals.active! + totals.inactive!).toBe(totals.all);
    expect(totals.inactive).toBeGreaterThan(0);
  });

  it('turns 404 into an UpstreamHttpError that points at POSTURE_BASE_URL', async () => {
    const { client, codes } = setup(sim, clock, { baseUrl: sim.baseUrl.replace('/public-api/v1', '') });
    const err = await failure(() => client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect(err).not.toBeInstanceOf(AuthenticationError);
    expect((err as UpstreamHttpError).status).toBe(404);
    expect((err as UpstreamHttpError).endpoint).toBe('/vitals');
    expect(err.message).toContain('POSTURE_BASE_URL');
    expect(err.message).toContain('/public-api/v1');
    expect(err.message).not.toContain(sim.apiKey);
    expect(codes).toEqual(['/vitals 404']);
  });

  it("turns 400 into an UpstreamHttpError carrying the portal's message, without retrying", async () => {
    const { client } = setup(sim, clock);
    const err = await failure(() => client.list({ endpoint: '/devices', query: { filter: 'sometimes' } }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect((err as UpstreamHttpError).status).toBe(400);
    expect(err.message).toContain('/devices');
    expect(sim.requests).toHaveLength(1);
    expect(sim.requests[0]!.status).toBe(400);
  });

  it('retries a 503 and succeeds, reporting every response code', async () => {
    const { client, codes, logger } = setup(sim, clock);
    const { made, newSink } = sinks();
    sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 503 } });
    const before = clock.now();
    const res = await client.list({ endpoint: '/vitals', query: {} }, newSink, { deadline: clock.now() + HOUR });
    expect(res.attempts).toBe(2);
    expect(res.received).toBe(sim.data().vitals().length);
    expect(codes).toEqual(['/vitals 503', '/vitals 200']);
    expect(made).toHaveLength(1); // no body was streamed for the 503
    // random() = 0.5 and backoffBaseMs 1000: the first retry waits 500 ms of clock time.
    expect(clock.now() - before).toBe(500);
    const warn = logger.records().filter((r) => r.level === 'warn');
    expect(warn).toHaveLength(1);
    expect(warn[0]).toMatchObject({ endpoint: '/vitals', status: 503, attempt: 1, waitMs: 500 });
  });

  it('retries 500 only once', async () => {
    const { client, codes } = setup(sim, clock);
    sim.addFault({ path: '/vitals', times: Infinity, fault: { kind: 'status', status: 500 } });
    const err = await failure(() => client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect((err as UpstreamHttpError).status).toBe(500);
    expect(codes).toEqual(['/vitals 500', '/vitals 500']);
  });

  it('gives up after maxRetries and throws the last error', async () => {
    const { client, codes } = setup(sim, clock, { maxRetries: 2 });
    sim.addFault({ path: '/vitals', times: Infinity, fault: { kind: 'status', status: 502 } });
    const err = await failure(() => client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect((err as UpstreamHttpError).status).toBe(502);
    expect(codes).toEqual(['/vitals 502', '/vitals 502', '/vitals 502']);
  });

  it('honours Retry-After in seconds on 429, sleeping on the injected clock', async () => {
    const { client, codes, logger } = setup(sim, clock);
    sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: '7' } });
    const res = await client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR });
    expect(res.attempts).toBe(2);
    expect(codes).toEqual(['/vitals 429', '/vitals 200']);
    expect(sim.requests[1]!.time - sim.requests[0]!.time).toBe(7_000);
    expect(logger.records().find((r) => r.level === 'warn')).toMatchObject({ status: 429, waitMs: 7_000 });
  });

  it('honours Retry-After as an HTTP-date', async () => {
    const { client } = setup(sim, clock);
    // HTTP-dates have whole seconds.
    const retryAt = Math.ceil((clock.now() + 12_000) / 1_000) * 1_000;
    sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: new Date(retryAt).toUTCString() } });
    await client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR });
    expect(sim.requests[1]!.time).toBe(retryAt);
  });

  it('backs off on a 429 without Retry-After', async () => {
    const { client } = setup(sim, clock, { random: () => 1, backoffBaseMs: 2_000 });
    sim.addFault({ path: '/vitals', times: 2, fault: { kind: 'status', status: 429 } });
    const res = await client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR });
    expect(res.attempts).toBe(3);
    const times = sim.requests.map((r) => r.time);
    expect([times[1]! - times[0]!, times[2]! - times[1]!]).toEqual([2_000, 4_000]);
  });

  it('throws RateLimitedError without sleeping when Retry-After ends after the deadline', async () => {
    const { client } = setup(sim, clock);
    sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: '120' } });
    const before = clock.now();
    const err = await failure(() => client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: before + MINUTE }));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(120_000);
    expect(clock.now()).toBe(before);
    expect(sim.requests).toHaveLength(1);
  });

  it('counts every retry against the limiter and stops retrying when the next slot is after the deadline', async () => {
    const limiter = new RateLimiter({ limit: 2, windowMs: MINUTE, clock });
    const { client, codes } = setup(sim, clock, { limiter });
    sim.addFault({ path: '/vitals', times: Infinity, fault: { kind: 'status', status: 503 } });
    const before = clock.now();
    const deadline = before + 30_000;
    const err = await failure(() => client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline }));
    // Two attempts used the budget; a third would have to wait a whole window, past the deadline.
    expect((err as UpstreamHttpError).status).toBe(503);
    expect(codes).toEqual(['/vitals 503', '/vitals 503']);
    expect(limiter.inWindow()).toBe(2);
    expect(clock.now()).toBeLessThanOrEqual(deadline);
    // And the next request of the cycle is refused at once by the budget.
    await expect(client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline })).rejects.toBeInstanceOf(BudgetExhaustedError);
  });

  it('waits for the limiter between retries when the window is full', async () => {
    const limiter = new RateLimiter({ limit: 1, windowMs: MINUTE, clock });
    const { client } = setup(sim, clock, { limiter });
    sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 503 } });
    const res = await client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR });
    expect(res.attempts).toBe(2);
    expect(sim.requests[1]!.time - sim.requests[0]!.time).toBe(MINUTE);
  });

  it('retries a body cut off mid-way with a fresh sink, so nothing is counted twice', async () => {
    const { client, codes } = setup(sim, clock);
    const { made, newSink } = sinks();
    const expected = [...sim.data().alerts()];
    sim.addFault({ path: '/alerts', fault: { kind: 'truncate', afterBytes: 3_000 } });
    const res = await client.list({ endpoint: '/alerts', query: { filter: 'all' } }, newSink, { deadline: clock.now() + HOUR });
    expect(res.attempts).toBe(2);
    expect(codes).toEqual(['/alerts 200', '/alerts 200']);
    expect(made).toHaveLength(2);
    expect(made[0]!.records.length).toBeGreaterThan(0); // the cut attempt had delivered some records…
    expect(made[0]!.records.length).toBeLessThan(expected.length);
    expect(res.result).toBe(made[1]!.records); // …but the result is the second attempt's alone
    expect(res.received).toBe(expected.length);
    expect(itemIds(res.result)).toEqual(itemIds(expected));
  });

  it('reports a cut body as a network failure when retries are used up', async () => {
    const { client } = setup(sim, clock, { maxRetries: 0 });
    sim.addFault({ path: '/alerts', fault: { kind: 'truncate', afterBytes: 3_000 } });
    const err = await failure(() => client.list({ endpoint: '/alerts', query: { filter: 'all' } }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).endpoint).toBe('/alerts');
  });

  it('retries a connection reset and reports it as an error code', async () => {
    const { client, codes } = setup(sim, clock);
    sim.addFault({ path: '/vitals', fault: { kind: 'reset' } });
    const res = await client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR });
    expect(res.attempts).toBe(2);
    expect(codes).toEqual(['/vitals error', '/vitals 200']);
  });

  it('throws NetworkError when the portal keeps resetting', async () => {
    const { client } = setup(sim, clock, { maxRetries: 1 });
    sim.addFault({ path: '/vitals', times: Infinity, fault: { kind: 'reset' } });
    const err = await failure(() => client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).not.toBeInstanceOf(TimeoutError);
    expect(err.message).toContain('/vitals');
  });

  it('turns a stalled body into a body TimeoutError', async () => {
    const { client, codes } = setup(sim, clock, { bodyTimeoutMs: 200, maxRetries: 0 });
    sim.addFault({ path: '/alerts', fault: { kind: 'stall', afterBytes: 500 } });
    const err = await failure(() => client.list({ endpoint: '/alerts', query: { filter: 'all' } }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).phase).toBe('body');
    expect(err.message).toContain('/alerts');
    expect(codes).toEqual(['/alerts 200']);
  });

  it('retries after a stalled body', async () => {
    const { client } = setup(sim, clock, { bodyTimeoutMs: 200 });
    sim.addFault({ path: '/vitals', fault: { kind: 'stall', afterBytes: 100 } });
    const res = await client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR });
    expect(res.attempts).toBe(2);
    expect(res.received).toBe(sim.data().vitals().length);
  });

  it('turns a slow answer into a headers TimeoutError', async () => {
    const { client } = setup(sim, clock, { headersTimeoutMs: 200, maxRetries: 0 });
    sim.addFault({ path: '/vitals', fault: { kind: 'latency', ms: 2_500 } });
    const err = await failure(() => client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).phase).toBe('headers');
  });

  it("reports the envelope's total as sent, leaving a total that does not match the records to the caller", async () => {
    const { client } = setup(sim, clock);
    sim.addFault({ path: '/vitals', fault: { kind: 'total-mismatch', delta: 3 } });
    const res = await client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR });
    expect(res.received).toBe(sim.data().vitals().length);
    expect(res.total).toBe(res.received + 3);
  });

  it('rejects success:false with an InvalidResponseError naming the message, without retrying', async () => {
    const { client } = setup(sim, clock);
    sim.addFault({ path: '/vitals', fault: { kind: 'success-false', message: 'Vitals are being recalculated' } });
    const err = await failure(() => client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err.message).toContain('Vitals are being recalculated');
    expect(err.message).toContain('/vitals');
    expect(sim.requests).toHaveLength(1);
  });

  it('rejects a malformed body with an InvalidResponseError, without retrying', async () => {
    const { client, codes } = setup(sim, clock);
    sim.addFault({ path: '/vitals', fault: { kind: 'malformed' } });
    const err = await failure(() => client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as InvalidResponseError).endpoint).toBe('/vitals');
    expect(codes).toEqual(['/vitals 200']);
  });

  it('lets a request function change the query on a retry', async () => {
    const { client } = setup(sim, clock);
    sim.addFault({ path: '/alerts', fault: { kind: 'status', status: 503 } });
    const asked: number[] = [];
    const res = await client.list(
      (attempt) => {
        asked.push(attempt);
        return { endpoint: '/alerts', query: { filter: 'all', limit: attempt === 0 ? 10 : 25 } };
      },
      sinks().newSink,
      { deadline: clock.now() + HOUR },
    );
    expect(asked).toEqual([0, 1]);
    expect(res.limit).toBe(25);
    expect(res.received).toBe(25);
    expect(sim.requests.map((r) => r.query.limit)).toEqual(['10', '25']);
  });

  it('aborts a retry sleep and an in-flight request with the signal reason', async () => {
    const realClock = new FakeClock(T0); // never advances: the sleep can only end by abort
    const { client } = setup(sim, realClock);
    sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: '30' } });
    const sleeping = new AbortController();
    const pending = client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: T0 + HOUR, signal: sleeping.signal });
    while (realClock.pending === 0) await new Promise((r) => setTimeout(r, 5));
    sleeping.abort(new Error('shutting down'));
    await expect(pending).rejects.toThrow('shutting down');
    expect(realClock.pending).toBe(0);

    sim.addFault({ path: '/alerts', fault: { kind: 'stall', afterBytes: 200 } });
    const inFlight = new AbortController();
    const stalled = client.list({ endpoint: '/alerts', query: { filter: 'all' } }, sinks().newSink, { deadline: T0 + HOUR, signal: inFlight.signal });
    setTimeout(() => inFlight.abort(new Error('cancelled mid-body')), 50);
    const started = Date.now();
    await expect(stalled).rejects.toThrow('cancelled mid-body');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('reads a deadline signal (AbortSignal.timeout) as a deadline TimeoutError', async () => {
    const { client } = setup(sim, new FakeClock(T0));
    sim.addFault({ path: '/alerts', fault: { kind: 'stall', afterBytes: 200 } });
    const err = await failure(() => client.list({ endpoint: '/alerts', query: { filter: 'all' } }, sinks().newSink, { deadline: T0 + HOUR, signal: AbortSignal.timeout(50) }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).phase).toBe('deadline');
  });

  it("passes a sink's own error through without retrying", async () => {
    const { client } = setup(sim, clock);
    class TooMany extends Error {}
    const err = await failure(() =>
      client.list({ endpoint: '/alerts', query: { filter: 'all' } }, () => ({ record: () => { throw new TooMany('sink is full'); }, finish: () => 0 }), { deadline: clock.now() + HOUR }),
    );
    expect(err).toBeInstanceOf(TooMany);
    expect(sim.requests).toHaveLength(1);
  });
});

describe('PortalClient and keys', () => {
  const fullKey = 'sim-full-0123456789abcdef01234567';
  const vitalsOnlyKey = 'sim-part-0123456789abcdef01234567';
  let sim: Simulator;
  let clock: FakeClock;

  beforeAll(async () => {
    clock = new FakeClock(T0, { autoAdvance: true });
    sim = await startSimulator({ seed: 3, clock, rateLimit: false, moving: false, keys: [{ key: fullKey }, { key: vitalsOnlyKey, permissions: { deny: ['/alerts'] } }] });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('turns 401 into an AuthenticationError that names the settings and never the key', async () => {
    const wrongKey = 'wrong-key-that-must-not-leak-42';
    const { client, logger } = setup(sim, clock, { apiKey: wrongKey });
    const err = await failure(() => client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as AuthenticationError).status).toBe(401);
    expect(err.message).toContain('POSTURE_API_KEY');
    expect(err.message).toContain('POSTURE_API_KEY_HEADER');
    expect(err.message).not.toContain(wrongKey);
    expect(JSON.stringify(err)).not.toContain(wrongKey);
    expect(logger.lines.join('\n')).not.toContain(wrongKey);
    expect(sim.requests.filter((r) => r.status === 401)).toHaveLength(1); // never retried
  });

  it('sends the key in the configured header', async () => {
    const { client } = setup(sim, clock, { apiKey: fullKey, apiKeyHeader: 'Authorization' });
    const err = await failure(() => client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err.message).toContain("'Authorization'");
  });

  it('turns 403 into a PermissionError that says which permission to grant', async () => {
    const { client } = setup(sim, clock, { apiKey: vitalsOnlyKey });
    const ok = await client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR });
    expect(ok.received).toBeGreaterThan(0);
    const err = await failure(() => client.list({ endpoint: '/alerts', query: { filter: 'allunresolved' } }, sinks().newSink, { deadline: clock.now() + HOUR }));
    expect(err).toBeInstanceOf(PermissionError);
    expect((err as PermissionError).status).toBe(403);
    expect((err as PermissionError).endpoint).toBe('/alerts');
    expect(err.message).toContain('/alerts');
    expect(err.message).toContain('deviceVisibility');
    expect(err.message).not.toContain(vitalsOnlyKey);
  });
});

describe("PortalClient and the portal's own rate limit", () => {
  it("waits out the portal's Retry-After when another client used the budget", async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = await startSimulator({ seed: 5, clock, moving: false, rateLimit: { requests: 3, windowMs: MINUTE } });
    try {
      // Our limiter believes 10 a minute are fine; the portal allows 3 (another client shares it).
      const { client, codes } = setup(sim, clock);
      for (let i = 0; i < 3; i++) await client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR });
      const res = await client.list({ endpoint: '/vitals', query: {} }, sinks().newSink, { deadline: clock.now() + HOUR });
      expect(res.attempts).toBe(2);
      expect(codes.slice(-2)).toEqual(['/vitals 429', '/vitals 200']);
      const [first] = sim.requests;
      const retried = sim.requests.at(-1)!;
      // The retry came once the portal's window had room again, not before.
      expect(retried.time).toBeGreaterThanOrEqual(first!.time + MINUTE);
      expect(retried.time - sim.requests.at(-2)!.time).toBeLessThanOrEqual(MINUTE);
    } finally {
      await sim.close();
    }
  });
});

describe('PortalClient streaming a large list', () => {
  it('streams 100,000 alerts with flat memory', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = await startSimulator({ seed: 11, clock, rateLimit: false, moving: false, alerts: 100_000 });
    try {
      const { client } = setup(sim, clock);
      gc();
      const baseline = process.memoryUsage().heapUsed;
      let peak = 0;
      let bytes = 0;
      let count = 0;
      const res = await client.list(
        { endpoint: '/alerts', query: { filter: 'allunresolved' } },
        () => ({
          record: (raw) => {
            count++;
            if (count % 1_000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
            bytes += JSON.stringify(raw).length;
          },
          finish: () => count,
        }),
        { deadline: clock.now() + HOUR },
      );
      expect(res.received).toBe(res.total);
      expect(res.total).toBeGreaterThanOrEqual(90_000);
      expect(bytes / res.total).toBeGreaterThan(300);
      // The body is tens of MB; holding it or its records would show here.
      expect(peak).toBeLessThan(Math.min(48 * 1024 * 1024, bytes / 2));
    } finally {
      await sim.close();
    }
  });
});
