/**
 * What the tests of `request()` share (request-retries and request-budget): the requests they send,
 * the run's request counts, and a describe's simulated portal on a FakeClock that jumps over every
 * wait.
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import type { RunContext } from '../../src/schedule/request.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import type { ListRequest } from '../../src/upstream/reader.js';

/** The fake clocks' start. */
export const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
/** The portal's budget window. */
export const MINUTE = 60_000;

/** A request of /vitals. */
export const vitals = (): ListRequest => ({ endpoint: '/vitals', query: {} });
/** A request of every alert. */
export const alerts = (): ListRequest => ({ endpoint: '/alerts', query: { filter: 'all' } });

/** The run's request counts as `endpoint code` → n. */
export const counts = (ctx: RunContext) => Object.fromEntries([...ctx.requests].map(([k, n]) => [k.replace('\u0000', ' '), n]));

/**
 * A `describe`'s portal (no rate limit, data that holds still) on a FakeClock from T0 that jumps
 * over every wait. After each test its faults and request log are cleared; `t0` is the clock when
 * the current test started.
 */
export function portalOnFakeClock(options: Pick<SimulatorOptions, 'seed' | 'alerts'>) {
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
