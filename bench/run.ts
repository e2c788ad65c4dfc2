// npm run bench: the speed and memory targets, measured on the built CLI against the simulated
// portal on 127.0.0.1. Exits non-zero when a target is missed.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { parseApiTimestamp } from '../src/collect/timestamps.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../src/simulator/index.js';

const CLI = new URL('../dist/cli.js', import.meta.url).pathname;
const PRELOAD = new URL('./peak-rss.cjs', import.meta.url).pathname;
const KEY = 'sim-bench-key-0123456789abcdef';

interface Outcome { name: string; target: string; measured: string; ok: boolean }
const outcomes: Outcome[] = [];
const check = (name: string, target: string, measured: string, ok: boolean) => outcomes.push({ name, target, measured, ok });

function runOnce(sim: Simulator, extraEnv: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; peakRssMb: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--require', PRELOAD, CLI, 'once', '--format', 'json'], {
      env: { PATH: process.env.PATH, POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_LOG_LEVEL: 'warn', ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      const kb = Number(/BENCH_PEAK_RSS_KB=(\d+)/.exec(stderr)?.[1] ?? NaN);
      if (code !== 0) process.stderr.write(stderr.slice(-2000));
      resolve({ code, stdout, peakRssMb: kb / 1024, seconds: (performance.now() - started) / 1000 });
    });
  });
}

function expectedOpen(sim: Simulator, at: number): Record<string, number> {
  const open: Record<string, number> = { red: 0, amber: 0, green: 0 };
  for (const a of sim.data(at).alerts()) if (!a.resolved) open[a.state.toLowerCase()] = (open[a.state.toLowerCase()] ?? 0) + 1;
  return open;
}

function activeDevices(sim: Simulator, at: number): [number, number] {
  let active = 0;
  let all = 0;
  for (const d of sim.data(at).devices()) {
    all++;
    if ((parseApiTimestamp(d.lastOnline) ?? 0) >= at / 1000 - 30 * 86400) active++;
  }
  return [active, all - active];
}

async function scenario(name: string, options: SimulatorOptions, maxRequests: number, maxRssMb: number | undefined, prepare?: (s: Simulator) => void) {
  const sim = await startSimulator({ keys: [{ key: KEY }], moving: false, ...options });
  try {
    prepare?.(sim);
    const at = Date.now();
    const r = await runOnce(sim);
    const samples = JSON.parse(r.stdout).samples as Array<{ name: string; labels: Record<string, string>; value: number }>;
    const get = (n: string, l: Record<string, string>) => samples.find((s) => s.name === n && Object.entries(l).every(([k, v]) => s.labels[k] === v))?.value;
    const open = expectedOpen(sim, at);
    const [active, inactive] = activeDevices(sim, at);
    const exact = ['red', 'amber', 'green'].every((s) => get('posture_alerts_open', { severity: s }) === open[s]) && get('posture_devices', { activity: 'active' }) === active && get('posture_devices', { activity: 'inactive' }) === inactive;
    check(`${name}: exit code`, '0', String(r.code), r.code === 0);
    check(`${name}: counts exact`, 'alerts by severity and devices equal the portal\'s', exact ? 'exact' : `got ${JSON.stringify(samples.filter((s) => s.name === 'posture_alerts_open').map((s) => s.value))} want ${JSON.stringify(open)}`, exact);
    check(`${name}: requests`, `≤ ${maxRequests}`, String(sim.requests.length), sim.requests.length <= maxRequests);
    if (maxRssMb !== undefined) check(`${name}: peak RSS of once`, `≤ ${maxRssMb} MB`, `${r.peakRssMb.toFixed(1)} MB`, r.peakRssMb <= maxRssMb);
    check(`${name}: wall time`, '(reported)', `${r.seconds.toFixed(2)} s`, true);
  } finally {
    await sim.close();
  }
}

await scenario('1k alerts, 10k devices, a 429 with Retry-After', { alerts: 1000, devices: 10_000 }, 8, undefined, (s) =>
  s.addFault({ path: '/alerts', fault: { kind: 'status', status: 429, retryAfter: '1' } }),
);
await scenario('100k alerts, 100k devices', { alerts: 100_000, devices: 100_000 }, 12, 128);

const width = Math.max(...outcomes.map((o) => o.name.length));
for (const o of outcomes) console.log(`${o.ok ? 'ok  ' : 'FAIL'} ${o.name.padEnd(width)}  ${o.measured.padEnd(14)} target ${o.target}`);
const failed = outcomes.filter((o) => !o.ok).length;
console.log(`${outcomes.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
