// Soak: `serve` (startServe) against the simulated portal for thousands of collection cycles on a
// fake clock (each 60 s interval passes at once), while clients scrape /metrics concurrently over
// real loopback HTTP. Checks that RSS, the heap after GC and the open handles stay flat and that
// every scrape is answered. Prints a few lines; exits 1 when a check fails.
//
//   node --import tsx bench/soak.ts [--cycles 3000] [--clients 4]
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadConfig } from '../src/config/load.js';
import { FakeClock } from '../src/core/clock.js';
import { createLogger } from '../src/core/log.js';
import { startServe } from '../src/runtime/serve.js';
import { startSimulator } from '../src/simulator/index.js';

const { values } = parseArgs({ options: { cycles: { type: 'string', default: '3000' }, clients: { type: 'string', default: '4' } } });
const CYCLES = Number(values.cycles);
const CLIENTS = Number(values.clients);
const KEY = 'sim-soak-key-0123456789abcdef';
const MB = 1024 * 1024;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** One sample of what must stay flat. */
interface Point {
  cycle: number;
  rssMb: number;
  heapMb: number;
  handles: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<number> {
  const clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0), { autoAdvance: true });
  // Data moves with the fake clock, so every cycle sees new alerts and the folds do real work.
  const sim = await startSimulator({ clock, keys: [{ key: KEY }], devices: 300, alerts: 200, integrations: 12 });
  const config = loadConfig({
    env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_INTERVAL_SECONDS: '60', POSTURE_CYCLE_TIMEOUT_SECONDS: '60', POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_LISTEN: '127.0.0.1:0' },
  });
  // Warnings and errors logged while running (the stop itself may cut a cycle short), and process
  // warnings such as MaxListenersExceededWarning (listeners piling up on a long-lived signal).
  const problems: string[] = [];
  let running = true;
  const logger = createLogger({
    level: 'warn',
    clock,
    write: (line) => {
      if (running && problems.length < 5) problems.push(line);
    },
  });
  process.on('warning', (w) => problems.push(`${w.name}: ${w.message}`));
  const serve = await startServe(config, { clock, logger });

  // Scrapers: keep-alive clients and one that opens a new connection per scrape.
  let scrapes = 0;
  let failures = 0;
  const agents = Array.from({ length: CLIENTS }, (_, i) => new Agent({ keepAlive: i > 0 }));
  const scrape = (agent: Agent) =>
    new Promise<void>((resolve) => {
      const req = request(`${serve.url}/metrics`, { agent, headers: { accept: scrapes % 2 ? 'application/openmetrics-text' : 'text/plain' } }, (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => (bytes += d.length));
        res.on('end', () => {
          scrapes++;
          if (res.statusCode !== 200 || bytes === 0) failures++;
          resolve();
        });
      });
      req.setTimeout(10_000, () => req.destroy(new Error('scrape timed out')));
      req.on('error', () => {
        scrapes++;
        failures++;
        resolve();
      });
      req.end();
    });
  const clients = agents.map(async (agent) => {
    while (running) await scrape(agent);
  });

  const points: Point[] = [];
  const started = Date.now();
  const every = Math.max(1, Math.floor(CYCLES / 40));
  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    await serve.nextCycle();
    if (cycle % every === 0) {
      gc();
      const mem = process.memoryUsage();
      points.push({ cycle, rssMb: mem.rss / MB, heapMb: mem.heapUsed / MB, handles: process.getActiveResourcesInfo().length });
    }
  }
  running = false;
  await Promise.all(clients);
  const seconds = (Date.now() - started) / 1000;
  const ready = serve.exporter.ready;
  await serve.stop();
  for (const a of agents) a.destroy();
  await sim.close();

  // Flat: the median of the last quarter against the median of the second (the first warms up).
  const q = Math.floor(points.length / 4);
  const early = points.slice(q, 2 * q);
  const late = points.slice(-q);
  const growth = (k: 'rssMb' | 'heapMb' | 'handles') => median(late.map((p) => p[k])) - median(early.map((p) => p[k]));
  const checks: Array<[string, boolean, string]> = [
    ['cycles', ready && points.length >= 8, `${CYCLES} cycles (${((clock.now() - Date.UTC(2026, 10, 22, 12, 0, 0)) / 3_600_000).toFixed(1)} h of fake time) in ${seconds.toFixed(1)} s`],
    ['scrapes answered', scrapes > CYCLES && failures === 0, `${scrapes} scrapes by ${CLIENTS} clients, ${failures} failed`],
    ['RSS flat', growth('rssMb') <= 24, `RSS ${median(early.map((p) => p.rssMb)).toFixed(1)} → ${median(late.map((p) => p.rssMb)).toFixed(1)} MB (at most +24 MB)`],
    ['heap flat', growth('heapMb') <= 8, `heap after GC ${median(early.map((p) => p.heapMb)).toFixed(1)} → ${median(late.map((p) => p.heapMb)).toFixed(1)} MB (at most +8 MB)`],
    ['handles flat', growth('handles') <= CLIENTS, `open handles ${median(early.map((p) => p.handles))} → ${median(late.map((p) => p.handles))} (at most +${CLIENTS})`],
    ['no warnings', problems.length === 0, problems.length ? `first warning: ${problems[0]!.slice(0, 300)}` : 'no warning or error logged, no process warning'],
  ];
  for (const [name, ok, detail] of checks) console.log(`${ok ? 'ok  ' : 'FAIL'} soak ${name}: ${detail}`);
  return checks.every(([, ok]) => ok) ? 0 : 1;
}

process.exitCode = await main();
