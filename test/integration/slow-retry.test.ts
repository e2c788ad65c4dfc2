/**
 * In `serve`, a slow job (hourly, daily) whose run failed for a reason that may pass tries again
 * within 15 minutes rather than a whole interval later; a missing permission waits its interval.
 * On the injected clock, against the simulated portal.
 */
import { describe, expect, it } from 'vitest';
import { startServe } from '../../src/runtime/serve.js';
import { portalWithConfig, serveAfterEach, T0 } from './support.js';

const KEY = 'sim-slow-retry-key-0123456789';
const MINUTE = 60_000;
const { closing, stopping } = serveAfterEach();

/**
 * Serves from T0 for `minutes` against a portal whose `path` answers `status` to its first `times`
 * requests (no retries within a run): the requests to `path`, and the running serve.
 */
async function serveWithFault(path: string, status: number, times: number, minutes: number) {
  const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { moving: false }, { POSTURE_LISTEN: '127.0.0.1:0', POSTURE_MAX_RETRIES: '0' });
  sim.addFault({ path, times, fault: { kind: 'status', status } });
  const serving = stopping(await startServe(config, { clock, logger }));
  while (clock.monotonic() < T0 + minutes * MINUTE) await serving.nextCycle();
  return { reads: sim.requests.filter((q) => q.path === path), serving };
}

describe('a slow job that failed, in serve', () => {
  it('the directory after a 500 reads again within 15 minutes, not a day later, and succeeds', async () => {
    const { reads, serving } = await serveWithFault('/users', 500, 1, 40);
    expect(reads.map((q) => q.status)).toEqual([500, 200]);
    // The second read goes 15 minutes after the first failed (give or take the gap it waits for), not a day later.
    expect(reads[1]!.time - reads[0]!.time).toBeGreaterThanOrEqual(15 * MINUTE);
    expect(reads[1]!.time - reads[0]!.time).toBeLessThan(17 * MINUTE);
    const success = serving.exporter.samples().find((s) => s.name === 'posture_collection_success' && s.labels.source === 'directory');
    expect(success?.value).toBe(1);
  });

  it('the access settings refused for a missing permission (403) wait their hour, not 15 minutes', async () => {
    const { reads: roles } = await serveWithFault('/settings/usermanagement/roles', 403, 1_000, 70);
    expect(roles.map((q) => q.status)).toEqual([403, 403]);
    expect(roles[1]!.time - roles[0]!.time).toBeGreaterThanOrEqual(55 * MINUTE);
  });
});
