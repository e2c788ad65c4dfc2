import { expect } from 'vitest';
import type { Permit, PortalScheduler } from '../../src/schedule/scheduler.js';

/** Grants `n` slots of `sched` one after another; returns when each started (monotonic). */
export async function spendSlots(sched: PortalScheduler, n: number): Promise<number[]> {
  const starts: number[] = [];
  for (let i = 0; i < n; i++) {
    const permit = await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    starts.push(permit.startedAt);
    permit.done();
  }
  return starts;
}

/**
 * Asks `sched` for the next slot while `inFlight` is held: the slot must not start until
 * `inFlight` is read (its `done`), and must start then. One request in flight per portal.
 */
export async function expectNextWaitsFor(sched: PortalScheduler, inFlight: Permit): Promise<void> {
  let started = false;
  const next = sched.acquire({ endpoint: '/b', priority: 1, deadline: Infinity }).then((p) => ((started = true), p));
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  expect(started).toBe(false);
  inFlight.done();
  (await next).done();
  expect(started).toBe(true);
}
