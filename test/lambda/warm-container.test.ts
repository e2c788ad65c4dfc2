/**
 * One warm Lambda container (one handler) invoked in turn with different shard events, as Lambda
 * may reuse a container across a fan-out's items: each invocation collects exactly the portals its
 * own event's shard owns, whatever the container ran before. In-process: a simulated fleet and a
 * recording push receiver on loopback ports, a FakeClock. Ownership comes from the documented rule
 * (test/support/shards.ts), not from the exporter's shard code.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { createHandler } from '../../src/runtime/lambda.js';
import { startFleet, type Fleet } from '../../src/simulator/fleet.js';
import { startReceiver, type Receiver } from '../sinks/receiver.js';
import { referenceShard } from '../support/shards.js';
import { fleetEnv as fleetEnvIn, lambdaContext, scheduledEvent } from './support.js';

/**
 * The schedule's period (serverless.yml's default rate): a container serves one invocation of an
 * execution, so its next invocation, of whatever shard, comes a period later. It keeps one shard's
 * state, so a portal's budget is not carried from one shard to another within a container.
 */
const PERIOD_MS = 5 * 60_000;

/**
 * Enough portals that, whatever ports the fleet's base URLs get, no shard of 2 or 3 is left empty
 * and some portal of shard 0 of 2 moves to shard 2 of 3 (each fails about once in 10,000 runs).
 */
const PORTALS = Array.from({ length: 48 }, (_, i) => `tenant-${String(i).padStart(2, '0')}`);

let clock: FakeClock;
let fleet: Fleet;
let pushes: Receiver;
let dir: string;
let logs: string[];

beforeEach(async () => {
  clock = new FakeClock(Date.UTC(2026, 10, 23, 12, 0, 0), { autoAdvance: true });
  fleet = await startFleet({ portals: PORTALS, clock, moving: false });
  pushes = await startReceiver(() => ({ status: 200 }));
  dir = mkdtempSync(join(tmpdir(), 'lambda-warm-'));
  logs = [];
});
afterEach(async () => {
  const text = logs.join('\n');
  for (const name of fleet.names) expect(text).not.toContain(fleet.apiKey(name));
  await Promise.all([fleet.close(), pushes.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** Settings of a fleet deployment pushing to the receiver. */
function fleetEnv(): Record<string, string> {
  return fleetEnvIn(fleet, dir, pushes.url, 'warm');
}

/** The portals shard `shard` of `total` owns by the documented rule, sorted. */
// A portal's shard comes from its identity, the normalised base URL, which a fleet's base URL already is.
const owned = (shard: number, total: number) => PORTALS.filter((p) => referenceShard(fleet.baseUrl(p), total) === shard).sort();

/** How many requests each portal has received so far. */
const requestCounts = () => new Map(fleet.names.map((n) => [n, fleet.requests(n).length]));

/** The portals whose requests grew since `before`, sorted. */
const contactedSince = (before: Map<string, number>) => fleet.names.filter((n) => fleet.requests(n).length > before.get(n)!).sort();

/** The `portal` grouping label of the pushes received from index `from` on, sorted and distinct (the shard's own group has none). */
const pushedSince = (from: number) => [...new Set(pushes.requests.slice(from).flatMap((r) => /\/portal\/([^/]+)/.exec(r.url)?.[1] ?? []))].sort();

describe('a warm Lambda container', () => {
  it('collects exactly the event\'s shard each time it is invoked with another shard', async () => {
    // The events in the order one container receives them: another shard, the same ordinal of
    // another total, then back to the first.
    const events = [
      { shard: 0, totalShards: 3 },
      { shard: 2, totalShards: 3 },
      { shard: 0, totalShards: 2 },
      { shard: 1, totalShards: 2 },
      { shard: 0, totalShards: 3 },
    ];
    for (const e of events) expect(owned(e.shard, e.totalShards).length, `shard ${e.shard} of ${e.totalShards} owns a portal`).toBeGreaterThan(0);
    expect(owned(0, 2)).not.toEqual(owned(0, 3));
    const handler = createHandler({ env: fleetEnv(), clock, write: (line) => logs.push(line) });

    for (const [i, event] of events.entries()) {
      // A container runs one invocation of an execution; the next comes with a later execution.
      if (i > 0) clock.advance(PERIOD_MS);
      const want = owned(event.shard, event.totalShards);
      const before = requestCounts();
      const pushedBefore = pushes.requests.length;
      const summary = await handler(event, lambdaContext(120_000, `req-${i}`));
      const label = `invocation ${i}: shard ${event.shard} of ${event.totalShards}`;
      expect(summary.shard, label).toEqual({ ...event, portals: want.length });
      expect(summary.portals.map((p) => p.portal).sort(), label).toEqual(want);
      // The resolved-alerts pass is in the summary when it ran (its interval passed since the container last ran it).
      for (const p of summary.portals) expect({ resolved: 'ok', access: 'ok', directory: 'ok', ...p.sources }, `${label}, ${p.portal}`).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok', access: 'ok', directory: 'ok' });
      expect(contactedSince(before), label).toEqual(want);
      expect(pushedSince(pushedBefore), label).toEqual(want);
    }
    expect(fleet.overBudget()).toEqual([]);
  }, 30_000);

  it('collects every portal on an event without a shard after a shard\'s invocation, and the shard\'s alone again after that', async () => {
    const handler = createHandler({ env: fleetEnv(), clock, write: (line) => logs.push(line) });
    const one = await handler({ shard: 1, totalShards: 3 }, lambdaContext(120_000, 'req-shard'));
    expect(one.portals.map((p) => p.portal).sort()).toEqual(owned(1, 3));
    clock.advance(PERIOD_MS);
    const before = requestCounts();
    const all = await handler(scheduledEvent(clock.now()), lambdaContext(120_000, 'req-all'));
    expect(all.shard).toBeUndefined();
    expect(all.portals.map((p) => p.portal).sort()).toEqual([...PORTALS].sort());
    expect(contactedSince(before)).toEqual([...PORTALS].sort());
    clock.advance(PERIOD_MS);
    const again = await handler({ shard: 1, totalShards: 3 }, lambdaContext(120_000, 'req-shard-again'));
    expect(again.portals.map((p) => p.portal).sort()).toEqual(owned(1, 3));
    expect(fleet.overBudget()).toEqual([]);
  }, 30_000);
});
