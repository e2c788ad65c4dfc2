// The order the sources' requests take a scarce budget (one request per window here): a list already
// being read finishes before anything new starts, and new runs go Vitals, then devices, then alerts
// (the scheduler's PRIORITY). The simulated portal records the order it was asked in; the fake clock
// moves to the next window whenever every request waits for one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import type { RunContext } from '../../src/schedule/request.js';
import { startSimulator, type AlertRecord, type Simulator } from '../../src/simulator/index.js';
import { runAlerts } from '../../src/sources/alerts/run.js';
import { devices } from '../../src/sources/devices.js';
import { vitals } from '../../src/sources/vitals.js';
import { runContexts } from '../support/run-context.js';

/** Longer than a window: the budget is whole again, and the first request of a batch goes at once. */
const WINDOW = 120_000;

describe('the order of the sources\' requests on a scarce budget', () => {
  const setup = runContexts();
  let sim: Simulator;
  const clock = new FakeClock(undefined, { autoAdvance: true });
  beforeAll(async () => {
    sim = await startSimulator({ rateLimit: false, moving: false, clock });
    const open = { state: 'Red', product: 'Okta, Identity', status: 'Incident', ownerName: '', timestamp: '2026-11-20T10:00:00.0000000', resolved: false, acknowledged: false, inactiveUntil: '0001-01-01T00:00:00.0000000' };
    sim.setFixture({ alerts: [open, open, open] as unknown as AlertRecord[] });
  });
  afterAll(async () => {
    await sim.close();
  });

  /** One run context per run, sharing one scheduler (one request per window) and reader. */
  function contexts(n: number): RunContext[] {
    const { ctx } = setup(sim, clock, { share: 1, deadline: clock.now() + 3_600_000 });
    // A cap of 2 records per /alerts page, learned earlier: the 3 open alerts take two pages.
    return Array.from({ length: n }, () => ({ ...ctx, requests: new Map(), memory: { pageCap: 2 } }));
  }

  /** The requests the portal saw since `from`, as `path?filter|tag`. */
  const seen = (from: number) => sim.requests.slice(from).map((q) => `${q.path}${q.query.filter ? `?${q.query.filter}` : ''}${q.query.tag ? `?tag=${q.query.tag}` : ''}`);

  it('sends the second devices request before a Vitals run that waited for the first', async () => {
    const [a, b] = contexts(2);
    clock.advance(WINDOW);
    const from = sim.requests.length;
    await Promise.all([devices.run(a!), vitals.run(b!)]);
    expect(seen(from)).toEqual(['/devices?active', '/devices?inactive', '/vitals']);
  });

  it('starts a waiting Vitals run before a waiting devices run', async () => {
    const [a, b, c] = contexts(3);
    clock.advance(WINDOW);
    const from = sim.requests.length;
    await Promise.all([vitals.run(a!), devices.run(b!), vitals.run(c!)]);
    expect(seen(from)).toEqual(['/vitals', '/vitals', '/devices?active', '/devices?inactive']);
  });

  it('reads a tag view before another Vitals run that waited', async () => {
    const [a, b] = contexts(2);
    const tagged = { ...a!, portal: { ...a!.portal, vitalsTags: ['laptops'] } };
    clock.advance(WINDOW);
    const from = sim.requests.length;
    await Promise.all([vitals.run(tagged), vitals.run(b!)]);
    expect(seen(from)).toEqual(['/vitals', '/vitals?tag=laptops', '/vitals']);
  });

  it('reads the next /alerts page before a devices run that waited, and starts /alerts after it', async () => {
    const [a, b, c] = contexts(3);
    clock.advance(WINDOW);
    const from = sim.requests.length;
    await Promise.all([runAlerts(a!, () => {}), devices.run(b!)]);
    expect(seen(from)).toEqual(['/alerts?allunresolved', '/alerts?allunresolved', '/devices?active', '/devices?inactive']);
    clock.advance(WINDOW);
    const next = sim.requests.length;
    await Promise.all([devices.run(b!), runAlerts(c!, () => {}), vitals.run(a!)]);
    expect(seen(next)).toEqual(['/devices?active', '/devices?inactive', '/vitals', '/alerts?allunresolved', '/alerts?allunresolved']);
  });
});
