/**
 * Whatever check-config accepts, serve runs on time: for random configurations it accepts (shares,
 * Vitals tags, intervals, one or two entries of one portal), three simulated hours of the real
 * `serve` (its scheduler, its loops, its phases) against the simulated portal on the fake clock,
 * with no late or failed run and no 60 s window at the portal over the share. The oracle is the
 * portal's own request log and the runs' results, not the plan's model of them.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { startServe } from '../../src/runtime/serve.js';
import { checkServeConfig } from '../../src/schedule/fit.js';
import { startSimulator } from '../../src/simulator/index.js';
import { maxInAnyWindow } from '../support/window.js';
import { serveAfterEach, T0 } from './support.js';

const KEYS = ['sim-plan-property-key-a-0123456789', 'sim-plan-property-key-b-0123456789'] as const;
const HOURS = 3;
const { closing, stopping } = serveAfterEach();

/** Random configurations (a fixed seed), as a user writes them: only those check-config accepts. */
function* accepted(baseUrl: string): Generator<{ config: Config; described: string }> {
  let seed = 0x51f15e;
  const rand = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const pick = <T>(xs: readonly T[]) => xs[rand(xs.length)]!;
  // Intervals and shares that load the share heavily: most accepted plans are near its edge.
  const intervals = [30, 40, 60, 70, 90, 120, 180] as const;
  for (;;) {
    const entries = 1 + rand(2);
    const top = { requests_per_minute: 2 + rand(5), vitals_tags: Array.from({ length: rand(4) }, (_, i) => `t${i}`) };
    const portals = Array.from({ length: entries }, (_, i) => ({
      portal: `p${i}`,
      base_url: baseUrl,
      api_key: KEYS[i],
      vitals_interval_seconds: pick(intervals),
      alerts_interval_seconds: pick(intervals),
      devices_interval_seconds: pick(intervals),
    }));
    const config = loadConfig({ env: { POSTURE_CONFIG: JSON.stringify({ ...top, portals }), POSTURE_LISTEN: '127.0.0.1:0' } });
    if (checkServeConfig(config).length === 0) yield { config, described: JSON.stringify({ ...top, portals: portals.map(({ api_key: _k, ...p }) => p) }) };
  }
}

describe('every plan check-config accepts runs on time in serve', () => {
  it(`property: ${HOURS} simulated hours of serve for random accepted configurations, no late run, never over the share`, async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = closing(await startSimulator({ clock, keys: KEYS.map((key) => ({ key })), alerts: 30, moving: false }));
    const configs = accepted(sim.baseUrl);
    for (let n = 0; n < 6; n++) {
      const { config, described } = configs.next().value!;
      const logger = memoryLogger({ secrets: [...KEYS] });
      const from = clock.now();
      const before = sim.requests.length;
      const serving = await startServe(config, { clock, logger });
      while (clock.now() < from + HOURS * 3_600_000) await serving.nextCycle();
      await serving.stop();
      const failed = logger.records().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('collecting '));
      expect(failed, described).toEqual([]);
      const requests = sim.requests.slice(before);
      expect(requests.every((q) => q.status === 200), described).toBe(true);
      expect(maxInAnyWindow(requests.map((q) => q.time)), described).toBeLessThanOrEqual(config.portals[0]!.requestsPerMinute);
      // The next configuration starts on a window this one left empty.
      await clock.sleep(61_000);
    }
  }, 120_000);

  it('two Vitals tags every 180 s and the other sources every 60 s at a share of 5: 400 s with no late or failed run and no 429', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = closing(await startSimulator({ clock, keys: [{ key: KEYS[0] }], alerts: 30, moving: false }));
    const config = loadConfig({
      env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEYS[0], POSTURE_LISTEN: '127.0.0.1:0', POSTURE_REQUESTS_PER_MINUTE: '5', POSTURE_VITALS_TAGS: 'laptops,servers', POSTURE_VITALS_INTERVAL_SECONDS: '180', POSTURE_ALERTS_INTERVAL_SECONDS: '60', POSTURE_DEVICES_INTERVAL_SECONDS: '60' },
    });
    expect(checkServeConfig(config)).toEqual([]);
    const logger = memoryLogger({ secrets: [KEYS[0]] });
    const serving = stopping(await startServe(config, { clock, logger }));
    while (clock.now() < T0 + 400_000) await serving.nextCycle();
    expect(logger.records().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('collecting '))).toEqual([]);
    const runs = logger.records().filter((l) => l.msg === 'run finished');
    // Every run of the 400 s: Vitals at 0, 180, 360 s; devices and /alerts every 60 s from their phases.
    expect(runs.every((r) => r.ok === true)).toBe(true);
    expect(runs.filter((r) => r.source === 'vitals')).toHaveLength(3);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
    expect(maxInAnyWindow(sim.requests.map((q) => q.time))).toBeLessThanOrEqual(5);
  }, 60_000);
});
