/**
 * Retries of one request through `request()`: a real PortalScheduler, PortalReader and Deadline on
 * a FakeClock that jumps over every wait, against the simulated portal. Each test asserts the
 * portal's exact request log (clock time from the test's start, status; 0 = connection reset).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock, type Clock } from '../../src/core/clock.js';
import { LateError, NetworkError, PortalUnreachableError, RateLimitedError, TimeoutError, UpstreamHttpError } from '../../src/errors.js';
import { request, type RunContext } from '../../src/schedule/request.js';
import { PortalScheduler, PRIORITY } from '../../src/schedule/scheduler.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { PortalReader, type ListRequest } from '../../src/upstream/reader.js';
import { runContexts, type RunSetup } from '../support/run-context.js';
import { failure, itemIds, sinks } from '../support/upstream.js';
// A port that was free a moment ago: nothing listens on it, so connecting is refused.
import { freePort as closedPort } from '../support/peers.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const MINUTE = 60_000;

const setup = runContexts();

const vitals = (): ListRequest => ({ endpoint: '/vitals', query: {} });
const alerts = (): ListRequest => ({ endpoint: '/alerts', query: { filter: 'all' } });

/** The run's request counts as `endpoint code` → n. */
const counts = (ctx: RunContext) => Object.fromEntries([...ctx.requests].map(([k, n]) => [k.replace('\u0000', ' '), n]));

/**
 * A `describe`'s portal (no rate limit, data that holds still) on a FakeClock from T0 that jumps
 * over every wait. After each test its faults and request log are cleared; `t0` is the clock when
 * the current test started.
 */
function portalOnFakeClock(options: Pick<SimulatorOptions, 'seed' | 'alerts'>) {
  const env = { clock: new FakeClock(T0, { autoAdvance: true }), sim: undefined as unknown as Simulator, t0: T0 };
  beforeAll(async () => {
    env.sim = await startSimulator({ ...options, clock: env.clock, rateLimit: false, moving: false });
  });
  afterAll(async () => {
    await env.sim.close();
  });
  afterEach(() => {
    env.sim.clearFaults();
    env.sim.requests.length = 0;
  });
  beforeEach(() => {
    env.t0 = env.clock.now();
  });
  return env;
}

describe('request() against the simulated portal', () => {
  const env = portalOnFakeClock({ seed: 7, alerts: 150 });
  /** The portal's request log: [ms since the test started, status]. */
  const log = () => env.sim.requests.map((r) => [r.time - env.t0, r.status]);
  /** The request threw the portal's `status`, after one attempt at each of `attemptsAt` (ms), each answered `status`. */
  function expectGaveUp(err: unknown, status: number, attemptsAt: number[]) {
    expect(err).toBeInstanceOf(UpstreamHttpError);
    expect((err as UpstreamHttpError).status).toBe(status);
    expect(log()).toEqual(attemptsAt.map((t) => [t, status]));
  }


  /** A run whose /vitals the portal always answers `status`, and the error request() ends with. */
  async function alwaysAnswered(status: number, options: RunSetup) {
    const run = setup(env.sim, env.clock, options);
    env.sim.addFault({ path: '/vitals', times: Infinity, fault: { kind: 'status', status } });
    const err = await failure(request(run.ctx, vitals, sinks().newSink, PRIORITY.vitals));
    return { ...run, err };
  }

  it('reads in one request when the portal answers', async () => {
    const { ctx, scheduler } = setup(env.sim, env.clock);
    const { made, newSink } = sinks();
    const res = await request(ctx, vitals, newSink, PRIORITY.vitals);
    expect(res.received).toBe(env.sim.data().vitals().length);
    expect(made).toHaveLength(1);
    expect(log()).toEqual([[0, 200]]);
    expect(counts(ctx)).toEqual({ '/vitals 200': 1 });
    // The scheduler took a slot for it.
    expect(scheduler.window.countAt(env.t0)).toBe(1);
  });

  it('retries a 503 after a backoff and succeeds, with no sink for the 503 and no double count', async () => {
    const { ctx, warnings } = setup(env.sim, env.clock);
    const { made, newSink } = sinks();
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 503 } });
    const res = await request(ctx, vitals, newSink, PRIORITY.vitals);
    expect(res.received).toBe(env.sim.data().vitals().length);
    expect(made).toHaveLength(1); // no body was streamed for the 503
    expect(res.result).toBe(made[0]!.records);
    // random() = 0.5 and a 1 s base: the first retry waits 500 ms of clock time.
    expect(log()).toEqual([
      [0, 503],
      [500, 200],
    ]);
    expect(counts(ctx)).toEqual({ '/vitals 503': 1, '/vitals 200': 1 });
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ msg: 'upstream request failed, retrying', endpoint: '/vitals', status: 503, attempt: 1, waitMs: 500 });
  });

  it('retries a 500 only once', async () => {
    const { ctx, err } = await alwaysAnswered(500, { maxRetries: 3 });
    expectGaveUp(err, 500, [0, 500]);
    expect(counts(ctx)).toEqual({ '/vitals 500': 2 });
  });

  it('gives up after maxRetries and throws the last error', async () => {
    const { err, warnings } = await alwaysAnswered(502, { maxRetries: 2 });
    // Full jitter at 0.5: 500 ms, then 1 s.
    expectGaveUp(err, 502, [0, 500, 1_500]);
    expect(warnings().at(-1)).toMatchObject({ msg: 'upstream request failed, retries used up', status: 502, attempt: 3 });
  });

  it.each([
    [400, 1],
    [401, 1],
    [403, 1],
    [404, 1],
    [418, 1],
    [501, 1],
    [502, 2],
    [503, 2],
    [504, 2],
  ])('sends a request answered %i %i time(s) with maxRetries 1', async (status, tries) => {
    const { err } = await alwaysAnswered(status, { maxRetries: 1 });
    expect((err as UpstreamHttpError).status).toBe(status);
    expect(env.sim.requests.map((r) => r.status)).toEqual(Array(tries).fill(status));
  });

  it('waits a Retry-After in seconds on the env.clock before sending again', async () => {
    const { ctx, scheduler, warnings } = setup(env.sim, env.clock);
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: '7' } });
    await request(ctx, vitals, sinks().newSink, PRIORITY.vitals);
    expect(log()).toEqual([
      [0, 429],
      [7_000, 200],
    ]);
    expect(counts(ctx)).toEqual({ '/vitals 429': 1, '/vitals 200': 1 });
    expect(scheduler.pausedUntilMs).toBe(env.t0 + 7_000);
    expect(scheduler.rateLimitedInLastHour()).toBe(1);
    expect(warnings().find((r) => r.msg === 'upstream request failed, retrying')).toMatchObject({ status: 429, waitMs: 7_000 });
  });

  it('waits a Retry-After given as an HTTP-date', async () => {
    const { ctx } = setup(env.sim, env.clock);
    // HTTP-dates have whole seconds.
    const retryAt = Math.ceil((env.t0 + 12_000) / 1_000) * 1_000;
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: new Date(retryAt).toUTCString() } });
    await request(ctx, vitals, sinks().newSink, PRIORITY.vitals);
    expect(log()).toEqual([
      [0, 429],
      [retryAt - env.t0, 200],
    ]);
  });

  it('backs off on a 429 without Retry-After, pausing the portal for the backoff and halving the share', async () => {
    const { ctx, scheduler } = setup(env.sim, env.clock, { random: () => 1 });
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429 } });
    await request(ctx, vitals, sinks().newSink, PRIORITY.vitals);
    // random() = 1: the whole first backoff window, 10 s (the portal counts 60 s windows).
    expect(log()).toEqual([
      [0, 429],
      [10_000, 200],
    ]);
    expect(scheduler.pausedUntilMs).toBe(env.t0 + 10_000);
    // One request of ours in the window cannot explain a 429: others spend the budget.
    expect(scheduler.share.effective).toBe(5);
  });

  it.each([
    [0, 5_000, 10_000, 20_000],
    [0.999, 9_995, 19_990, 39_980],
  ])('pauses a 429 without Retry-After exponentially from 10 s to the 60 s window, never less than half (random %s)', async (random, ...pauses) => {
    const { ctx, scheduler } = setup(env.sim, env.clock, { random: () => random });
    env.sim.addFault({ path: '/vitals', times: 3, fault: { kind: 'status', status: 429 } });
    await request(ctx, vitals, sinks().newSink, PRIORITY.vitals);
    const times = log().map(([t]) => t);
    expect(times.slice(1).map((t, i) => t - times[i]!)).toEqual(pauses.slice(0, 3));
    expect(scheduler.pausedUntilMs).toBe(env.t0 + times[3]!);
  });

  it('does not wait a Retry-After that ends after the deadline', async () => {
    const { ctx, warnings } = setup(env.sim, env.clock, { deadline: env.clock.now() + MINUTE });
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: '120' } });
    const err = await failure(request(ctx, vitals, sinks().newSink, PRIORITY.vitals));
    // Late, not broken: the 429 that asked for the wait is the cause.
    expect(err).toBeInstanceOf(LateError);
    expect(err.message).toContain('a retry after 429');
    expect(err.cause).toBeInstanceOf(RateLimitedError);
    expect((err.cause as RateLimitedError).retryAfterMs).toBe(120_000);
    expect(env.clock.now()).toBe(env.t0);
    expect(log()).toEqual([[0, 429]]);
    expect(warnings().at(-1)).toMatchObject({ msg: 'upstream request failed, no time left to retry before the deadline', status: 429, waitMs: 120_000 });
  });

  it('waits a Retry-After that ends a second before the deadline, and gives one that ends at the deadline up as late, saying when it could have gone', async () => {
    const { ctx } = setup(env.sim, env.clock, { deadline: env.clock.monotonic() + 30_000 });
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: '29' } });
    await request(ctx, vitals, sinks().newSink, PRIORITY.vitals);
    expect(log()).toEqual([
      [0, 429],
      [29_000, 200],
    ]);
    env.sim.requests.length = 0;
    env.t0 = env.clock.now();
    const start = env.clock.monotonic();
    const later = setup(env.sim, env.clock, { deadline: start + 30_000 });
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: '30' } });
    const err = await failure(request(later.ctx, vitals, sinks().newSink, PRIORITY.vitals));
    // The deadline cuts the run the moment the wait ends: late, with the 429 as the cause, and no second request.
    expect(err).toBeInstanceOf(LateError);
    expect(err.cause).toBeInstanceOf(RateLimitedError);
    expect((err as LateError).slotAt).toBe(start + 30_000);
    expect(log()).toEqual([[0, 429]]);
  });

  it('defers a request whose Retry-After is longer than the largest wait allowed, pausing the portal only that long', async () => {
    const { ctx, scheduler, warnings } = setup(env.sim, env.clock);
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: '600' } });
    const err = await failure(request(ctx, vitals, sinks().newSink, PRIORITY.vitals));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(env.clock.now()).toBe(env.t0);
    expect(log()).toEqual([[0, 429]]);
    expect(scheduler.pausedUntilMs).toBe(env.t0 + scheduler.maxRetryAfterMs);
    expect(warnings().at(-1)).toMatchObject({ retryAfterMs: 600_000, maxRetryAfterMs: 120_000 });
  });

  it('a first request with no slot before the deadline is late for its slot alone, with no failure before it to blame', async () => {
    const { ctx } = setup(env.sim, env.clock, { share: 1, deadline: env.clock.monotonic() + 30_000 });
    await request(ctx, vitals, sinks().newSink, PRIORITY.vitals);
    // The one slot of the window is spent: the next is 61 s on, after the deadline.
    const err = await failure(request(ctx, alerts, sinks().newSink, PRIORITY.alerts));
    expect(err).toBeInstanceOf(LateError);
    expect(err.message).not.toContain('a retry after');
    expect(err.cause).toBeUndefined();
    expect(log()).toEqual([[0, 200]]);
  });

  it('takes a scheduler slot for every attempt: with a share of 2 per minute the third waits a window', async () => {
    const { ctx, scheduler } = setup(env.sim, env.clock, { share: 2 });
    env.sim.addFault({ path: '/vitals', times: 2, fault: { kind: 'status', status: 503 } });
    await request(ctx, vitals, sinks().newSink, PRIORITY.vitals);
    // Backoffs of 500 ms and 1 s; the third start waits a window (plus the 1 s margin) after the first.
    expect(log()).toEqual([
      [0, 503],
      [500, 503],
      [MINUTE + 1_000, 200],
    ]);
    // Each attempt took a slot: at the third start the first has left the window (plus margin), the other two are in it.
    expect(scheduler.window.countAt(env.t0 + MINUTE + 1_000)).toBe(2);
  });

  it('stops retrying when the slot a retry could get is after the deadline', async () => {
    const deadline = env.clock.now() + 30_000;
    const { ctx } = setup(env.sim, env.clock, { share: 2, deadline });
    env.sim.addFault({ path: '/vitals', times: Infinity, fault: { kind: 'status', status: 503 } });
    const err = await failure(request(ctx, vitals, sinks().newSink, PRIORITY.vitals));
    // Two attempts used the share; a third would have to wait a whole window, past the deadline.
    expect(err).toBeInstanceOf(LateError);
    expect((err as LateError).slotAt).toBe(env.t0 + MINUTE + 1_000);
    expect((err as LateError).deadline).toBe(deadline);
    expect(err.message).toContain('a retry after 503');
    expect((err.cause as UpstreamHttpError).status).toBe(503);
    expect(log()).toEqual([
      [0, 503],
      [500, 503],
    ]);
    expect(env.clock.now()).toBeLessThanOrEqual(deadline);
  });

  it('retries a body cut off mid-way with a fresh sink, so nothing is counted twice', async () => {
    const { ctx } = setup(env.sim, env.clock);
    const { made, newSink } = sinks();
    const expected = [...env.sim.data().alerts()];
    env.sim.addFault({ path: '/alerts', fault: { kind: 'truncate', afterBytes: 3_000 } });
    const res = await request(ctx, alerts, newSink, PRIORITY.alerts);
    expect(made).toHaveLength(2);
    expect(made[0]!.records.length).toBeGreaterThan(0); // the cut attempt had delivered some records…
    expect(made[0]!.records.length).toBeLessThan(expected.length);
    expect(res.result).toBe(made[1]!.records); // …but the result is the second attempt's alone
    expect(res.received).toBe(expected.length);
    expect(itemIds(res.result)).toEqual(itemIds(expected));
    expect(log()).toEqual([
      [0, 200],
      [500, 200],
    ]);
    // Both attempts were answered 200 (the first one's body was then cut).
    expect(counts(ctx)).toEqual({ '/alerts 200': 2 });
  });

  it('retries a body that ends cleanly but early (a TruncatedBodyError)', async () => {
    const { ctx, warnings } = setup(env.sim, env.clock);
    const { made, newSink } = sinks();
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 200, body: '{"offset":0,"limit":0,"total":3,"data":[{"a":1},{"a"' } });
    const res = await request(ctx, vitals, newSink, PRIORITY.vitals);
    expect(made).toHaveLength(2);
    expect(made[0]!.records).toEqual([{ a: 1 }]);
    expect(res.result).toBe(made[1]!.records);
    expect(res.received).toBe(env.sim.data().vitals().length);
    expect(log()).toEqual([
      [0, 200],
      [500, 200],
    ]);
    expect(counts(ctx)).toEqual({ '/vitals 200': 2 });
    expect(warnings()[0]).toMatchObject({ status: 'TruncatedBodyError', attempt: 1 });
  });

  it('reports a cut body as a network failure when retries are used up', async () => {
    const { ctx } = setup(env.sim, env.clock, { maxRetries: 0 });
    env.sim.addFault({ path: '/alerts', fault: { kind: 'truncate', afterBytes: 3_000 } });
    const err = await failure(request(ctx, alerts, sinks().newSink, PRIORITY.alerts));
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).endpoint).toBe('/alerts');
    expect(log()).toEqual([[0, 200]]);
  });

  it('retries a stalled body (a body TimeoutError)', async () => {
    const { ctx } = setup(env.sim, env.clock, { reader: { bodyTimeoutMs: 200 } });
    env.sim.addFault({ path: '/vitals', fault: { kind: 'stall', afterBytes: 100 } });
    const res = await request(ctx, vitals, sinks().newSink, PRIORITY.vitals);
    expect(res.received).toBe(env.sim.data().vitals().length);
    expect(log()).toEqual([
      [0, 200],
      [500, 200],
    ]);
  });

  it('retries a connection reset and counts it as code error', async () => {
    const { ctx } = setup(env.sim, env.clock);
    env.sim.addFault({ path: '/vitals', fault: { kind: 'reset' } });
    await request(ctx, vitals, sinks().newSink, PRIORITY.vitals);
    expect(log()).toEqual([
      [0, 0],
      [500, 200],
    ]);
    expect(counts(ctx)).toEqual({ '/vitals error': 1, '/vitals 200': 1 });
  });

  it('throws NetworkError when the portal keeps resetting', async () => {
    const { ctx } = setup(env.sim, env.clock, { maxRetries: 1 });
    env.sim.addFault({ path: '/vitals', times: Infinity, fault: { kind: 'reset' } });
    const err = await failure(request(ctx, vitals, sinks().newSink, PRIORITY.vitals));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).not.toBeInstanceOf(TimeoutError);
    expect(err.message).toContain('/vitals');
    expect(log()).toEqual([
      [0, 0],
      [500, 0],
    ]);
  });

  it("passes a sink's own error through without retrying", async () => {
    const { ctx } = setup(env.sim, env.clock);
    class TooMany extends Error {}
    const err = await failure(
      request(
        ctx,
        alerts,
        () => ({
          record: () => {
            throw new TooMany('sink is full');
          },
          finish: () => 0,
        }),
        PRIORITY.alerts,
      ),
    );
    expect(err).toBeInstanceOf(TooMany);
    expect(log()).toEqual([[0, 200]]);
    expect(counts(ctx)).toEqual({ '/alerts 200': 1 });
  });

  it('lets a request function change the query on a retry', async () => {
    const { ctx } = setup(env.sim, env.clock);
    env.sim.addFault({ path: '/alerts', fault: { kind: 'status', status: 503 } });
    const asked: number[] = [];
    const res = await request(
      ctx,
      (attempt) => {
        asked.push(attempt);
        return { endpoint: '/alerts', query: { filter: 'all', limit: attempt === 0 ? 10 : 25 } };
      },
      sinks().newSink,
      PRIORITY.alerts,
    );
    expect(asked).toEqual([0, 1]);
    expect(res.limit).toBe(25);
    expect(res.received).toBe(25);
    expect(env.sim.requests.map((r) => r.query.limit)).toEqual(['10', '25']);
  });

  it('stops a retry sleep when the run is aborted, with the abort reason', async () => {
    const still = new FakeClock(env.clock.now()); // never advances: the sleep can only end by abort
    const stop = new AbortController();
    const { ctx } = setup(env.sim, still, { signal: stop.signal });
    env.sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: '30' } });
    const pending = request(ctx, vitals, sinks().newSink, PRIORITY.vitals);
    // Two waits on the clock: the run's deadline, and the retry's pause until the Retry-After.
    while (still.pending < 2) await new Promise((r) => setTimeout(r, 5));
    expect(still.nextWakeAt).toBe(env.t0 + 30_000);
    stop.abort(new Error('shutting down'));
    await expect(pending).rejects.toThrow('shutting down');
    expect(still.pending).toBe(0);
    expect(log()).toEqual([[0, 429]]);
  });

  it('cuts a request in flight at the deadline and does not retry it', async () => {
    const still = new FakeClock(env.clock.now()); // moves only when the test says: the deadline fires on it
    const { ctx } = setup(env.sim, still, { deadline: still.now() + 100 });
    env.sim.addFault({ path: '/alerts', times: Infinity, fault: { kind: 'stall', afterBytes: 200 } });
    const started = Date.now();
    const pending = failure(request(ctx, alerts, sinks().newSink, PRIORITY.alerts));
    // The body has started and stalls; the fake clock reaches the deadline while the request is in flight.
    while (env.sim.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    still.advance(100);
    const err = await pending;
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).phase).toBe('deadline');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(log()).toEqual([[0, 200]]);
  });
});

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
