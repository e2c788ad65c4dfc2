/**
 * Retries of one request through `request()`: a real PortalScheduler, PortalReader and Deadline on
 * a FakeClock that jumps over every wait, against the simulated portal. Each test asserts the
 * portal's exact request log (clock time from the test's start, status; 0 = connection reset).
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { LateError, NetworkError, RateLimitedError, TimeoutError, UpstreamHttpError } from '../../src/errors.js';
import { request } from '../../src/schedule/request.js';
import { PRIORITY } from '../../src/schedule/scheduler.js';
import { runContexts, type RunSetup } from '../support/run-context.js';
import { failure, itemIds, sinks } from '../support/upstream.js';
import { alerts, counts, MINUTE, portalOnFakeClock, vitals } from './request-support.js';

const setup = runContexts();

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
