import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { withOwnState } from '../support/cli.js';
import { goTool } from '../support/go-tools.js';
import { freePort, queryPrometheusApi, startPrometheus, type Peer } from '../support/peers.js';

const run = promisify(execFile);
const KEY = 'sim-e2e-key-abcdef0123456789';
const CLI = new URL('../../dist/cli.js', import.meta.url).pathname;

let sim: Simulator;
let exporter: ChildProcess;
let prom: Peer;
let metricsUrl: string;
let stderr = '';

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}\n${stderr.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  sim = await startSimulator({ keys: [{ key: KEY }], alerts: 300, devices: 2000, moving: false });
  const port = await freePort();
  // The built CLI, as a user runs it.
  exporter = spawn(process.execPath, [CLI, 'serve', '--listen', `127.0.0.1:${port}`, '--interval-seconds', '60', '--cycle-timeout-seconds', '30'], {
    env: withOwnState({ PATH: process.env.PATH, POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'e2e', POSTURE_LOG_LEVEL: 'debug' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  exporter.stderr!.on('data', (d) => (stderr += String(d)));
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  await waitFor('the first collection', async () => {
    const text = await (await fetch(metricsUrl)).text();
    return text.includes('posture_alerts_open{') ? text : undefined;
  });
  prom = await startPrometheus({
    config: `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: posture\n    static_configs:\n      - targets: ['127.0.0.1:${port}']\n`,
  });
}, 60_000);

afterAll(async () => {
  exporter?.kill('SIGTERM');
  await prom?.stop();
  await sim?.close();
});

describe('Prometheus scraping serve every second', () => {
  it('receives the values the portal holds, in both text formats (OpenMetrics negotiated)', async () => {
    const rows = await waitFor('scraped series', async () => {
      const r = await queryPrometheusApi(prom.url, 'posture_alerts_open{job="posture"}');
      return r.length >= 3 ? r : undefined;
    });
    const open: Record<string, number> = {};
    for (const a of sim.data().alerts()) if (!a.resolved) open[a.state.toLowerCase()] = (open[a.state.toLowerCase()] ?? 0) + 1;
    for (const row of rows) expect(Number(row.value[1])).toBe(open[row.metric.severity!] ?? 0);
    const up = await queryPrometheusApi(prom.url, 'up{job="posture"}');
    expect(up[0]!.value[1]).toBe('1');
  });

  it('spends no API budget on scrapes', async () => {
    const before = sim.requests.length;
    await waitFor('five more scrapes', async () => {
      const r = await queryPrometheusApi(prom.url, 'count_over_time(up{job="posture"}[1m])');
      return Number(r[0]?.value[1] ?? 0) >= 5 ? r : undefined;
    });
    expect(sim.requests.length).toBe(before);
    expect(before).toBeLessThanOrEqual(5);
  });

  // Prometheus 2's promtool (Debian's) and 3's, whose linter has rules of its own.
  it.each([
    ['promtool 2', () => 'promtool'],
    ['promtool 3', () => goTool('promtool3')],
  ])('serves output that %s check metrics accepts', async (_name, promtool) => {
    const text = await (await fetch(metricsUrl)).text();
    const child = run(promtool(), ['check', 'metrics']);
    child.child.stdin!.end(text);
    const { stdout, stderr: err } = await child;
    expect(stdout + err).toBe('');
  });

  it('serves a landing page and /healthz, and never shows the key', async () => {
    expect((await fetch(metricsUrl.replace('/metrics', '/healthz'))).status).toBe(200);
    const page = await (await fetch(metricsUrl.replace('/metrics', '/'))).text();
    expect(page).toContain('/metrics');
    expect(stderr).not.toContain(KEY);
    expect(await (await fetch(metricsUrl)).text()).not.toContain(KEY);
  });

  it('stops cleanly on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => exporter.once('exit', (code) => resolve(code)));
    exporter.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
