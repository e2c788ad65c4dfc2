import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import { Exporter, type ExporterDeps } from './exporter.js';
import { startMetricsServer } from './server.js';

/** A running `serve`: stop it to end the loop and close the server. */
export interface ServeHandle {
  readonly url: string;
  readonly exporter: Exporter;
  /** Resolves after each finished cycle (tests wait on it instead of on time). */
  nextCycle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Collects on the interval and serves the last collection on /metrics. Polling on a timer is
 * the documented exception to "collect at scrape time": the portal allows 10 requests a minute.
 */
export async function startServe(config: Config, deps: Omit<ExporterDeps, 'runtime'> & { clock: Clock; logger: Logger }): Promise<ServeHandle> {
  const exporter = new Exporter(config, { ...deps, runtime: 'serve' });
  const stopper = new AbortController();
  let lastCycle: string | undefined;
  const server = await startMetricsServer(
    {
      samples: () => exporter.samples(),
      get ready() {
        return exporter.ready;
      },
      describe: () => ({ portals: config.portals.map((p) => p.name), intervalSeconds: config.intervalSeconds, lastCycle }),
    },
    { host: config.listen.host, port: config.listen.port, logger: deps.logger, webConfigFile: config.webConfigFile },
  );
  deps.logger.info('serving metrics', { url: `${server.url}/metrics`, intervalSeconds: config.intervalSeconds, portals: config.portals.map((p) => p.name) });

  let waiters: Array<() => void> = [];
  const loop = (async () => {
    const start = deps.clock.now();
    for (let k = 0; !stopper.signal.aborted; ) {
      const at = deps.clock.now();
      const deadline = Math.min(at + config.cycleTimeoutSeconds * 1000, start + (k + 1) * config.intervalSeconds * 1000);
      try {
        await exporter.collect({ deadline, signal: stopper.signal });
        lastCycle = new Date(deps.clock.now()).toISOString();
      } catch (err) {
        if (!stopper.signal.aborted) deps.logger.error('collection cycle failed', { err });
      }
      const done = waiters;
      waiters = [];
      for (const w of done) w();
      // Next slot on the fixed grid; a cycle that overran skips the slots it missed.
      k = Math.max(k + 1, Math.floor((deps.clock.now() - start) / (config.intervalSeconds * 1000)) + 1);
      try {
        await deps.clock.sleep(start + k * config.intervalSeconds * 1000 - deps.clock.now(), stopper.signal);
      } catch {
        break;
      }
    }
  })();

  return {
    url: server.url,
    exporter,
    nextCycle: () => new Promise<void>((resolve) => waiters.push(resolve)),
    stop: async () => {
      stopper.abort(new Error('stopping'));
      await loop;
      await server.close();
      deps.logger.info('stopped');
    },
  };
}
