import { loadConfig, type Config } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { afterEach } from 'vitest';
import type { ServeHandle } from '../../src/runtime/serve.js';
import { closeAfterEach } from '../support/closing.js';

/** When every integration test's portal clock starts. */
export const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

/** The build facts the integration tests render samples with. */
export const facts = { version: 'test', runtime: 'once' as const };

/**
 * The simulated portal on an auto-advancing FakeClock at T0, accepting `keys` (the exporter's is
 * the first) and closed by `closing` after the test; a logger that must never show a key; and the
 * exporter's config for that portal (named `test`), with `env` on top.
 */
export async function portalWithConfig(
  closing: ReturnType<typeof closeAfterEach>,
  keys: readonly [string, ...string[]],
  opts: SimulatorOptions = {},
  env: Record<string, string> = {},
): Promise<{ clock: FakeClock; sim: Simulator; logger: ReturnType<typeof memoryLogger>; config: Config }> {
  const clock = new FakeClock(T0, { autoAdvance: true });
  const sim = closing(await startSimulator({ clock, keys: keys.map((key) => ({ key })), ...opts }));
  const logger = memoryLogger({ secrets: [...keys] });
  const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: keys[0], POSTURE_PORTAL: 'test', ...env } });
  return { clock, sim, logger, config };
}

/**
 * For a file whose tests start `serve` against simulated portals: `closing` closes what it is
 * handed after each test, and `stopping` stops the serve it is handed before that, so the server
 * stops before its portal. Call once, at the top of the file.
 */
export function serveAfterEach(): { closing: ReturnType<typeof closeAfterEach>; stopping: (serve: ServeHandle) => ServeHandle } {
  // Registered before the server's afterEach, so it runs after it.
  const closing = closeAfterEach();
  let serving: ServeHandle | undefined;
  afterEach(async () => {
    await serving?.stop();
    serving = undefined;
  });
  return { closing, stopping: (serve) => (serving = serve) };
}
