/**
 * `request()` and the budget: the portal's own rate limit when another client shares it, a portal
 * that cannot be reached (no budget spent), and what a request reports to the scheduler, the plan
 * and serve's totals. A real PortalScheduler, PortalReader and Deadline on a FakeClock, against the
 * simulated portal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, type Clock } from '../../src/core/clock.js';
import { LateError, PortalUnreachableError, RateLimitedError, UpstreamHttpError } from '../../src/errors.js';
import { request } from '../../src/schedule/request.js';
import { PortalScheduler, PRIORITY } from '../../src/schedule/scheduler.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { PortalReader } from '../../src/upstream/reader.js';
import { runContexts } from '../support/run-context.js';
import { failure, sinks } from '../support/upstream.js';
// A port that was free a moment ago: nothing listens on it, so connecting is refused.
import { freePort as closedPort } from '../support/peers.js';
import { alerts, counts, MINUTE, portalOnFakeClock, T0, vitals } from './request-support.js';

const setup = runContexts();

describe("request() and the portal's own rate limit", () => {
  it("waits out the portal's Retry-After when another client used the budget", async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = await startSimulator({ seed: 5, clock, moving: false, rateLimit: { requests: 3, windowMs: MINUTE } });
    try {
      // Our share says 10 a minute are fine; the portal allows 3 (another client shares it).
      const { ctx, scheduler, logger } = setup(sim, clock);
      for (let i = 0; i < 4; i++) await request(ctx, vitals, sinks().newSink, PRIORITY.vitals);
      // The fourth got 429 with Retry-After 60 and came back once the portal's window had room.
      expect(sim.requests.map((r) => [r.time - T0, r.status])).toEqual([
        [0, 200],
        [0, 200],
        [0, 200],
        [0, 429],
        [MINUTE, 200],
      ]);
      expect(counts(ctx)).toEqual({ '/vitals 200': 4, '/vitals 429': 1 });
      // Four of ours in the window do not explain the portal's limit of ten: the share is halved;
      // the retry a whole window later is the first clean one, which wins one request back.
      const budget = logger.records().filter((r) => String(r.msg).startsWith('the portal answered 429') || String(r.msg).startsWith('a clean window'));
      expect(budget.map((r) => [r.level, r.share])).toEqual([
        ['warn', 5],
        ['info', 6],
      ]);
      expect(scheduler.share.effective).toBe(6);
      expect(scheduler.rateLimitedInLastHour()).toBe(1);
    } finally {
      await sim.close();
    }
  });
});

describe('request() when the portal cannot be reached', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 7, rateLimit: false, moving: false });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('spends no budget on refused connections: retries paced by a short backoff, not the share, and the window stays empty', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const port = await closedPort();
    // A share of 1 a minute: attempts that took slots would be a minute apart.
    const { ctx, scheduler } = setup(sim, clock, { share: 1, reader: { baseUrl: `http://127.0.0.1:${port}/public-api/v1` } });
    const err = await failure(request(ctx, vitals, sinks().newSink, PRIORITY.vitals));
    expect(err).toBeInstanceOf(PortalUnreachableError);
    expect(err).toMatchObject({ code: 'ECONNREFUSED', host: '127.0.0.1', port });
    // Half of 500 ms, 1 s and 2 s.
    expect(clock.now() - T0).toBe(1_750);
    expect(counts(ctx)).toEqual({ '/vitals error': 4 });
    expect(scheduler.window.countAt(clock.now())).toBe(0);
  });

  it('fails as unreachable, not late, when the deadline leaves no time for another try', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const port = await closedPort();
    const { ctx, warnings } = setup(sim, clock, { deadline: T0 + 1_000, reader: { baseUrl: `http://127.0.0.1:${port}/public-api/v1` } });
    const err = await failure(request(ctx, vitals, sinks().newSink, PRIORITY.vitals));
    expect(err).toBeInstanceOf(PortalUnreachableError);
    expect(err).not.toBeInstanceOf(LateError);
    expect(counts(ctx)).toEqual({ '/vitals error': 3 });
    expect(warnings().at(-1)).toMatchObject({ msg: 'upstream request failed, no time left to retry before the deadline', status: 'ECONNREFUSED', attempt: 3 });
  });

  it('fails as unreachable, without further tries, when another request has taken the budget before its retry', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const port = await closedPort();
    // A share of 1: once the other request takes the slot the refused one gave back, the next is a minute away, past the deadline.
    const { ctx, warnings, agent } = setup(sim, clock, { share: 1, deadline: T0 + 10_000, reader: { baseUrl: `http://127.0.0.1:${port}/public-api/v1` } });
    const other = { ...ctx, reader: new PortalReader({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, clock, logger: ctx.logger, dispatcher: agent }), requests: new Map<string, number>() };
    // The other request asks 100 ms in, after the refused attempt gave its slot back and before its retry (250 ms).
    const later = clock.sleep(100).then(() => request(other, vitals, sinks().newSink, PRIORITY.devices));
    const [refused, answered] = await Promise.allSettled([request(ctx, vitals, sinks().newSink, PRIORITY.vitals), later]);
    expect(answered.status, String((answered as PromiseRejectedResult).reason)).toBe('fulfilled');
    expect(refused.status).toBe('rejected');
    const err = (refused as PromiseRejectedResult).reason as Error;
    expect(err).toBeInstanceOf(PortalUnreachableError);
    expect(err).not.toBeInstanceOf(LateError);
    // One refused attempt, one wait to retry; the retry found no slot and nothing was tried again.
    expect(counts(ctx)).toEqual({ '/vitals error': 1 });
    expect(warnings().filter((w) => w.msg === 'upstream request failed, retrying')).toHaveLength(1);
  });

  it.each([
    ['an error', new Error('shutting down'), 'Error'],
    ['no reason (an AbortError)', undefined, 'AbortError'],
  ])('ends with the abort reason, not unreachable, when the run is stopped with %s while a refused connection waits to retry', async (_what, reason, name) => {
    const still = new FakeClock(T0); // never advances: the retry's backoff can only end by abort
    const port = await closedPort();
    const stop = new AbortController();
    const { ctx } = setup(sim, still, { signal: stop.signal, reader: { baseUrl: `http://127.0.0.1:${port}/public-api/v1` } });
    const pending = failure(request(ctx, vitals, sinks().newSink, PRIORITY.vitals));
    // Two waits on the clock: the run's deadline and the retry's backoff.
    while (still.pending < 2) await new Promise((r) => setTimeout(r, 5));
    stop.abort(reason);
    const err = await pending;
    expect(err).not.toBeInstanceOf(PortalUnreachableError);
    expect(err).toBe(stop.signal.reason);
    expect(err.name).toBe(name);
  });

  it('fails as unresolvable, not late, for a host name that does not resolve', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const { ctx, scheduler } = setup(sim, clock, { share: 1, reader: { baseUrl: 'https://nonexistent.invalid/public-api/v1' } });
    const err = await failure(request(ctx, vitals, sinks().newSink, PRIORITY.vitals));
    expect(err).toBeInstanceOf(PortalUnreachableError);
    expect(err.message).toMatch(/^cannot resolve nonexistent\.invalid \((ENOTFOUND|EAI_AGAIN), \/vitals\)/);
    expect(clock.now() - T0).toBe(1_750);
    expect(scheduler.window.countAt(clock.now())).toBe(0);
  });
});

describe('request() and the budget it reports to', () => {
  const env = portalOnFakeClock({ seed: 11, alerts: 20 });

  it('runs on a env.clock that cannot be held, as the system env.clock', async () => {
    // No deadline to wait for: nothing on the clock but the requests.
    const { ctx } = setup(env.sim, env.clock, { deadline: Infinity });
    const bare: Clock = { now: () => env.clock.now(), monotonic: () => env.clock.monotonic(), sleep: (ms, signal) => env.clock.sleep(ms, signal) };
    const scheduler = new PortalScheduler({ share: 10, clock: bare });
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 503 } });
    const res = await request({ ...ctx, clock: bare, scheduler }, vitals, sinks().newSink, PRIORITY.vitals);
    expect(res.received).toBe(env.sim.data().vitals().length);
    expect(env.sim.requests.map((r) => [r.time - env.t0, r.status])).toEqual([
      [0, 503],
      [500, 200],
    ]);
  });

  it("adds each attempt to serve's totals across runs, by endpoint and code", async () => {
    const totals = new Map<string, number>();
    const first = setup(env.sim, env.clock);
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 503 } });
    await request({ ...first.ctx, totals }, vitals, sinks().newSink, PRIORITY.vitals);
    const second = setup(env.sim, env.clock);
    await request({ ...second.ctx, totals }, vitals, sinks().newSink, PRIORITY.vitals);
    expect(Object.fromEntries([...totals].map(([k, n]) => [k.replace('\u0000', ' '), n]))).toEqual({ '/vitals 503': 1, '/vitals 200': 2 });
    // Each run's own counts are its alone.
    expect(counts(second.ctx)).toEqual({ '/vitals 200': 1 });
  });

  it('asks the one-shot plan again after each 429, and only then', async () => {
    const { ctx } = setup(env.sim, env.clock);
    let replans = 0;
    env.sim.addFault({ path: '/vitals', times: 2, fault: { kind: 'status', status: 429, retryAfter: '1' } });
    env.sim.addFault({ path: '/alerts', fault: { kind: 'status', status: 503 } });
    const run = { ...ctx, replan: () => void replans++ };
    await request(run, vitals, sinks().newSink, PRIORITY.vitals);
    expect(replans).toBe(2);
    await request(run, alerts, sinks().newSink, PRIORITY.alerts);
    expect(replans).toBe(2);
  });

  it('waits a Retry-After of exactly the longest allowed, and defers one a second longer', async () => {
    const { ctx } = setup(env.sim, env.clock, { maxRetryAfterMs: 20_000 });
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: '20' } });
    await request(ctx, vitals, sinks().newSink, PRIORITY.vitals);
    expect(env.sim.requests.map((r) => [r.time - env.t0, r.status])).toEqual([
      [0, 429],
      [20_000, 200],
    ]);
    const later = setup(env.sim, env.clock, { maxRetryAfterMs: 20_000 });
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: '21' } });
    const err = await failure(request(later.ctx, vitals, sinks().newSink, PRIORITY.vitals));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(later.warnings().at(-1)).toMatchObject({
      msg: 'the portal asked to wait longer than POSTURE_MAX_RETRY_AFTER_SECONDS: this run of the source is deferred to its next run',
      endpoint: '/vitals',
      retryAfterMs: 21_000,
      maxRetryAfterMs: 20_000,
    });
  });

  it('tells the scheduler of an answer other than 429, so a lowered share grows back after a clean window', async () => {
    const { ctx, scheduler } = setup(env.sim, env.clock);
    // Another client's 429 halved the share; a whole window later the portal answers 404.
    scheduler.rateLimited(1_000, 1_000);
    expect(scheduler.share.effective).toBe(5);
    await env.clock.sleep(MINUTE);
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 404 } });
    const err = await failure(request(ctx, vitals, sinks().newSink, PRIORITY.vitals));
    expect((err as UpstreamHttpError).status).toBe(404);
    expect(scheduler.share.effective).toBe(6);
  });

  it('asks for its first slot at its own priority', async () => {
    const { ctx, scheduler } = setup(env.sim, env.clock);
    // The portal is busy with another request: both wait for it; Vitals goes before /alerts.
    const busy = await scheduler.acquire({ endpoint: '/other', priority: PRIORITY.vitals, deadline: Infinity });
    // Its answer is being read: the clock does not jump meanwhile (to the run's deadline).
    const reading = env.clock.hold();
    const both = Promise.all([request(ctx, alerts, sinks().newSink, PRIORITY.alerts), request(ctx, vitals, sinks().newSink, PRIORITY.vitals)]);
    await new Promise((r) => setImmediate(r));
    busy.done();
    reading();
    await both;
    expect(env.sim.requests.map((r) => r.path)).toEqual(['/vitals', '/alerts']);
  });

  it("asks for a retry's slot ahead of new work", async () => {
    // A share of 1: the retry of /alerts waits for the next window, and a new Vitals request joins it in the queue.
    const { ctx } = setup(env.sim, env.clock, { share: 1 });
    env.sim.addFault({ path: '/alerts', fault: { kind: 'status', status: 503 } });
    const retried = request(ctx, alerts, sinks().newSink, PRIORITY.alerts);
    const fresh = env.clock.sleep(1_000).then(() => request(ctx, vitals, sinks().newSink, PRIORITY.vitals));
    await Promise.all([retried, fresh]);
    expect(env.sim.requests.map((r) => [r.path, r.time - env.t0, r.status])).toEqual([
      ['/alerts', 0, 503],
      ['/alerts', MINUTE + 1_000, 200],
      ['/vitals', 2 * (MINUTE + 1_000), 200],
    ]);
  });
});
