/**
 * `serve` with many portals keeps the abort listeners on every signal it waits on bounded: each
 * loop (one per portal and source) waits on its own signal, and removes its listeners when a wait
 * ends. One signal shared by every loop collected one listener per portal and source at a time,
 * and Node warned (MaxListenersExceededWarning, not a JSON line) from 4 portals on.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock, type Clock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { startServe } from '../../src/runtime/serve.js';
import { startFleet } from '../../src/simulator/fleet.js';
import { serveAfterEach, T0 } from './support.js';

const PORTALS = 12;
const { closing, stopping } = serveAfterEach();

const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
afterEach(() => {
  process.off('warning', onWarning);
});

describe('serve with many portals', () => {
  it('waits on signals that never hold more than a few abort listeners, over several runs of every source', async () => {
    process.on('warning', onWarning);
    const fake = new FakeClock(T0, { autoAdvance: true });
    /** The most abort listeners seen on a signal handed to a wait, counted before the wait adds its own. */
    let most = 0;
    let waits = 0;
    // The clock sees every wait serve makes (the pause to the next slot, each run's deadline, retries).
    const clock: Clock = {
      now: () => fake.now(),
      monotonic: () => fake.monotonic(),
      hold: () => fake.hold(),
      sleep: (ms, signal) => {
        if (signal) {
          waits++;
          most = Math.max(most, getEventListeners(signal, 'abort').length);
        }
        return fake.sleep(ms, signal);
      },
    };
    const fleet = closing(await startFleet({ portals: PORTALS, clock: fake, moving: false }));
    const config = loadConfig({
      env: { POSTURE_LISTEN: '127.0.0.1:0', POSTURE_INTERVAL_SECONDS: '60', POSTURE_CONFIG: JSON.stringify({ portals: fleet.names.map((n) => ({ portal: n, base_url: fleet.baseUrl(n), api_key: fleet.apiKey(n) })) }) },
    });
    const logger = memoryLogger();
    const serving = stopping(await startServe(config, { clock, logger }));
    const runs = () => logger.records().filter((r) => r.msg === 'run finished').length;
    // Three runs of every source of every portal.
    while (runs() < PORTALS * 3 * 3) await serving.nextCycle();
    expect(logger.records().filter((r) => r.msg === 'run finished' && r.ok !== true)).toEqual([]);
    expect(waits).toBeGreaterThan(PORTALS * 3 * 3);
    expect(most).toBeLessThanOrEqual(2);
    await serving.stop();
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  });
});
