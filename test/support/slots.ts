import type { PortalScheduler } from '../../src/schedule/scheduler.js';

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
