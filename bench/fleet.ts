// npm run bench, part `fleet`: one `once` process (the built CLI) collecting 1,000 and 10,000
// portals from a config file, against startFleet running in a separate process (bench/fleet-server.ts)
// so the exporter's CPU and peak RSS are its own. Checks every value of the 1,000 case (a sample of
// the 10,000 case) against the portals' own data, and that no portal went over its budget.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMeasured } from './measured.js';

const CLI = new URL('../dist/cli.js', import.meta.url).pathname;
const SERVER = new URL('./fleet-server.ts', import.meta.url).pathname;

/** Records one measured figure against its target. */
export type Check = (name: string, target: string, measured: string, ok: boolean) => void;

/** One measured fleet run. */
export interface FleetRun {
  portals: number;
  wallS: number;
  cpuS: number;
  peakRssMb: number;
  requests: number;
  checked: number;
}

interface Ready { type: 'ready'; portals: Array<{ portal: string; base_url: string; api_key: string }> }
interface Checked { type: 'checked'; expected: Record<string, Record<string, number>>; overBudget: string[]; requests: number }

async function measureOnce(config: string): Promise<{ code: number | null; stdout: string; stderr: string; wallS: number; cpuS: number; peakRssMb: number }> {
  const r = await runMeasured([CLI, 'once', '--format', 'json', '--config', config], {});
  return { code: r.code, stdout: r.stdout, stderr: r.stderr, wallS: r.wallS, cpuS: r.cpuUs / 1e6, peakRssMb: r.peakRssKb / 1024 };
}

/** Collects `n` portals in one `once` process and checks the result; returns the figures. */
async function runFleet(n: number, check: Check): Promise<FleetRun> {
  const server = fork(SERVER, [String(n)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = <T>() => new Promise<T>((resolve, reject) => {
    server.once('message', (m) => resolve(m as T));
    server.once('exit', (code) => reject(new Error(`fleet server exited (${code})`)));
  });
  const dir = mkdtempSync(join(tmpdir(), 'bench-fleet-'));
  try {
    const ready = await next<Ready>();
    const config = join(dir, 'portals.json');
    writeFileSync(config, JSON.stringify({ log_level: 'warn', portals: ready.portals }));
    const at = Date.now();
    const r = await measureOnce(config);
    const label = `fleet ${n.toLocaleString('en')} portals`;
    check(`${label}: exit code`, '0', String(r.code), r.code === 0);
    if (r.code !== 0) process.stderr.write(r.stderr.slice(-2000));
    const samples = r.code === 0 ? (JSON.parse(r.stdout) as { samples: Array<{ name: string; labels: Record<string, string>; value: number }> }).samples : [];
    // Every portal's three sources succeeded.
    const ok = new Map<string, number>();
    const got = new Map<string, Record<string, number>>();
    for (const s of samples) {
      const portal = s.labels.portal!;
      if (s.name === 'posture_collection_success' && s.value === 1) ok.set(portal, (ok.get(portal) ?? 0) + 1);
      const g = got.get(portal) ?? {};
      if (s.name === 'posture_alerts_open') g[s.labels.severity!] = s.value;
      if (s.name === 'posture_devices') g[s.labels.activity!] = s.value;
      got.set(portal, g);
    }
    const complete = ready.portals.filter((p) => ok.get(p.portal) === 3).length;
    check(`${label}: portals with all 3 sources collected`, String(n), String(complete), complete === n);
    // All of 1,000; every 20th of 10,000 (computing a portal's expected data costs about as much as serving it).
    const names = ready.portals.map((p) => p.portal).filter((_, i) => n <= 1000 || i % 20 === 0);
    server.send({ type: 'check', names, at });
    const c = await next<Checked>();
    const wrong = names.filter((name) => JSON.stringify(sorted(got.get(name))) !== JSON.stringify(sorted(c.expected[name])));
    check(`${label}: values exact (${names.length} portals checked)`, 'exact', wrong.length ? `${wrong.length} differ, e.g. ${wrong[0]}` : 'exact', wrong.length === 0);
    check(`${label}: portals over budget`, '0', String(c.overBudget.length), c.overBudget.length === 0);
    check(`${label}: wall time`, '(reported)', `${r.wallS.toFixed(1)} s`, true);
    check(`${label}: CPU (user+sys)`, '(reported)', `${r.cpuS.toFixed(1)} s (${((r.cpuS * 1000) / n).toFixed(2)} ms/portal)`, true);
    check(`${label}: peak RSS`, n <= 1000 ? '≤ 256 MB' : '(reported)', `${r.peakRssMb.toFixed(1)} MB (${((r.peakRssMb * 1024) / n).toFixed(1)} KB/portal)`, n > 1000 || r.peakRssMb <= 256);
    return { portals: n, wallS: r.wallS, cpuS: r.cpuS, peakRssMb: r.peakRssMb, requests: c.requests, checked: names.length };
  } finally {
    server.send({ type: 'close' });
    await new Promise((resolve) => server.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

function sorted(o: Record<string, number> | undefined): Array<[string, number]> {
  return Object.entries(o ?? {}).sort(([a], [b]) => a.localeCompare(b));
}

/** The fleet figures: 1,000 and 10,000 portals, and the growth per portal between them. */
export async function fleetBench(check: Check): Promise<FleetRun[]> {
  const runs = [await runFleet(1000, check), await runFleet(10_000, check)];
  const [small, big] = runs as [FleetRun, FleetRun];
  const perPortalKb = ((big.peakRssMb - small.peakRssMb) * 1024) / (big.portals - small.portals);
  const perPortalMs = ((big.cpuS - small.cpuS) * 1000) / (big.portals - small.portals);
  check('fleet: peak RSS growth per portal (1k → 10k)', '(reported)', `${perPortalKb.toFixed(1)} KB`, true);
  check('fleet: CPU growth per portal (1k → 10k)', '(reported)', `${perPortalMs.toFixed(2)} ms`, true);
  console.log(`\nFleet: ${runs.map((r) => `${r.portals} portals ${r.wallS.toFixed(1)} s wall, ${r.cpuS.toFixed(1)} s CPU, ${r.peakRssMb.toFixed(1)} MB peak RSS, ${r.requests} requests`).join('; ')}\n`);
  return runs;
}

// Run alone: node --import tsx bench/fleet.ts
if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const failures: string[] = [];
  await fleetBench((name, target, measured, ok) => {
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}  ${measured}  target ${target}`);
    if (!ok) failures.push(name);
  });
  process.exit(failures.length ? 1 : 0);
}
