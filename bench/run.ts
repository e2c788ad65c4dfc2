// npm run bench: the speed and memory targets (docs/performance.md), measured on the built
// CLI against the simulated portal on 127.0.0.1, beside a naive peer exporter in the same run.
// Exits non-zero when a target is missed. `BENCH_ONLY=scenarios,compare,stages,deopts,growth,huge,resolved,start,fleet`
// runs a subset; BENCH_PAIRS, BENCH_STAGE_ROUNDS and BENCH_BASELINE (another build's dist/cli.js) are read by compare and stages.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { parseApiTimestamp } from '../src/upstream/timestamps.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../src/simulator/index.js';
import { fleetBench } from './fleet.js';
import { runMeasured } from './measured.js';
import { resolvedBench } from './resolved.js';
import { medianStages, profileStages, STAGES, type Stage } from './stages.js';

const CLI = new URL('../dist/cli.js', import.meta.url).pathname;
const LAMBDA = new URL('../dist/lambda/index.mjs', import.meta.url).href;
const NAIVE = new URL('./naive-peer.mjs', import.meta.url).pathname;
const FLOOR = new URL('./floor.mjs', import.meta.url).pathname;
const ROOT = new URL('..', import.meta.url).pathname;
/** Another build's CLI (e.g. a copy of dist/ before a change): `compare` then runs it in each round too, before ours. */
const BASELINE = process.env.BENCH_BASELINE;
const KEY = 'sim-bench-key-0123456789abcdef';
const ONLY = process.env.BENCH_ONLY?.split(',');
const wanted = (part: string) => !ONLY || ONLY.includes(part);

interface Outcome { name: string; target: string; measured: string; ok: boolean }
const outcomes: Outcome[] = [];
const check = (name: string, target: string, measured: string, ok: boolean) => outcomes.push({ name, target, measured, ok });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (x: number) => `${x.toFixed(1)} MB`;

interface Run { code: number | null; stdout: string; stderr: string; peakRssMb: number; cpuS: number; mainS: number; wallS: number }

/** Runs `node <args>` with the measuring preload; CPU and peak RSS come from the child itself at exit. */
async function measure(args: string[], env: Record<string, string>): Promise<Run> {
  const r = await runMeasured(args, env);
  if (r.code !== 0) process.stderr.write(r.stderr.slice(-2000));
  return { code: r.code, stdout: r.stdout, stderr: r.stderr, peakRssMb: r.peakRssKb / 1024, cpuS: r.cpuUs / 1e6, mainS: r.mainUs / 1e6, wallS: r.wallS };
}

const simEnv = (sim: Simulator, extra: Record<string, string> = {}) => ({ POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_LOG_LEVEL: 'warn', ...extra });

/**
 * One `once`, with a state directory of its own: sharing one, each run would count the requests of
 * the runs before it against the portal's budget and wait up to a minute for the window (an idle
 * minute after which V8 has shrunk the heap, so the run collects more often: 10 to 20 % more CPU).
 */
async function runOnce(sim: Simulator, extra?: Record<string, string>, cli = CLI): Promise<Run> {
  const stateDir = mkdtempSync(join(tmpdir(), 'bench-state-'));
  try {
    return await measure([cli, 'once', '--format', 'json'], simEnv(sim, { POSTURE_STATE_DIR: stateDir, ...extra }));
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}
const runNaive = (sim: Simulator) => measure([NAIVE], simEnv(sim));

interface Expected { open: Record<string, number>; active: number; inactive: number }

/** What the portal serves, computed independently from the simulator's data. */
function expected(sim: Simulator, at: number): Expected {
  const open: Record<string, number> = { red: 0, amber: 0, green: 0 };
  for (const a of sim.data(at).alerts()) if (!a.resolved) open[a.state.toLowerCase()] = (open[a.state.toLowerCase()] ?? 0) + 1;
  let active = 0;
  let all = 0;
  for (const d of sim.data(at).devices()) {
    all++;
    if ((parseApiTimestamp(d.lastOnline) ?? 0) >= at / 1000 - 30 * 86400) active++;
  }
  return { open, active, inactive: all - active };
}

/** Whether `once --format json` output has exactly the expected counts; the reason when not. */
function onceExact(r: Run, want: Expected): string | undefined {
  if (r.code !== 0) return `exit code ${r.code}`;
  const samples = JSON.parse(r.stdout).samples as Array<{ name: string; labels: Record<string, string>; value: number }>;
  const get = (n: string, l: Record<string, string>) => samples.find((s) => s.name === n && Object.entries(l).every(([k, v]) => s.labels[k] === v))?.value;
  const got = { open: Object.fromEntries(['red', 'amber', 'green'].map((s) => [s, get('posture_alerts_open', { severity: s })])), active: get('posture_devices', { activity: 'active' }), inactive: get('posture_devices', { activity: 'inactive' }) };
  return JSON.stringify(got) === JSON.stringify(want) ? undefined : `got ${JSON.stringify(got)} want ${JSON.stringify(want)}`;
}

function naiveExact(r: Run, want: Expected): string | undefined {
  if (r.code !== 0) return `exit code ${r.code}`;
  const got = JSON.parse(r.stdout) as { open: Record<string, number>; devices: { active: number; inactive: number } };
  const g = { open: { red: got.open.red, amber: got.open.amber, green: got.open.green }, active: got.devices.active, inactive: got.devices.inactive };
  return JSON.stringify(g) === JSON.stringify(want) ? undefined : `got ${JSON.stringify(g)} want ${JSON.stringify(want)}`;
}

/**
 * A portal for the scenarios of unresolved alerts: no resolved history unless asked (the acceptance
 * portals hold only unresolved alerts), so every `once`, a first run with a state directory of its
 * own, makes the resolved-alerts pass as one request of an empty list. The simulator's default 35
 * days of history would be 22 resolved alerts per open one, 2.2 million at 100k: a pass measured on
 * its own (bench/resolved.ts, and its line per thousand in the stages).
 */
async function withSim<T>(options: SimulatorOptions, fn: (sim: Simulator) => Promise<T>): Promise<T> {
  const sim = await startSimulator({ keys: [{ key: KEY }], moving: false, resolvedHistoryDays: 0, ...options });
  try {
    return await fn(sim);
  } finally {
    await sim.close();
  }
}

/** The original scenarios: exit code, exact counts, request count, peak RSS. */
async function scenario(name: string, options: SimulatorOptions, maxRequests: number, maxRssMb: number | undefined, prepare?: (s: Simulator) => void) {
  await withSim(options, async (sim) => {
    prepare?.(sim);
    const at = Date.now();
    const r = await runOnce(sim);
    const wrong = onceExact(r, expected(sim, at));
    check(`${name}: exit code`, '0', String(r.code), r.code === 0);
    check(`${name}: counts exact`, "alerts by severity and devices equal the portal's", wrong ?? 'exact', !wrong);
    check(`${name}: requests`, `≤ ${maxRequests}`, String(sim.requests.length), sim.requests.length <= maxRequests);
    if (maxRssMb !== undefined) check(`${name}: peak RSS of once`, `≤ ${maxRssMb} MB`, mb(r.peakRssMb), r.peakRssMb <= maxRssMb);
    check(`${name}: wall time`, '(reported)', `${r.wallS.toFixed(2)} s`, true);
  });
}

/** Pairs of `once` and the naive peer (the acceptance asks for five; seven by default here). */
const PAIRS = Number(process.env.BENCH_PAIRS ?? 7);
/** The CPU of `once` over the naive peer's, pair by pair, median: the target, and where 0.3 is the aim. */
const CPU_RATIO_TARGET = 0.4;

/**
 * `once` and the naive peer against the same portal: back-to-back pairs (ours, then the peer), the
 * CPU ratio of each pair, and its median (pairs cancel most of a shared machine's drift). With
 * BENCH_BASELINE, that build's `once` runs first in each round, and its ratio to ours is reported.
 */
async function compare(): Promise<void> {
  await withSim({ alerts: 100_000, devices: 100_000, rateLimit: false }, async (sim) => {
    const want = expected(sim, Date.now());
    const ours: Run[] = [];
    const peer: Run[] = [];
    const base: Run[] = [];
    for (let i = 0; i < PAIRS; i++) {
      if (BASELINE) base.push(await runOnce(sim, undefined, BASELINE));
      ours.push(await runOnce(sim));
      peer.push(await runNaive(sim));
    }
    const oursWrong = ours.map((r) => onceExact(r, want)).find((w) => w);
    const peerWrong = peer.map((r) => naiveExact(r, want)).find((w) => w);
    check(`100k+100k: once counts exact (${PAIRS} runs)`, 'exact', oursWrong ?? 'exact', !oursWrong);
    check(`100k+100k: naive peer counts exact (${PAIRS} runs)`, 'exact', peerWrong ?? 'exact', !peerWrong);
    const ratios = ours.map((r, i) => r.cpuS / peer[i]!.cpuS);
    const ratio = median(ratios);
    const cpu = [median(ours.map((r) => r.cpuS)), median(peer.map((r) => r.cpuS))] as const;
    const rss = [median(ours.map((r) => r.peakRssMb)), median(peer.map((r) => r.peakRssMb))] as const;
    console.log(`\n100,000 unresolved alerts + 100,000 devices, ${PAIRS} back-to-back pairs (medians)`);
    console.log('|                | once      | naive peer | ratio |');
    console.log('|----------------|-----------|------------|-------|');
    console.log(`| CPU (user+sys) | ${cpu[0].toFixed(2)} s    | ${cpu[1].toFixed(2)} s     | ${ratio.toFixed(2)}  |`);
    console.log(`| peak RSS       | ${rss[0].toFixed(0)} MB     | ${rss[1].toFixed(0)} MB     | ${(rss[0] / rss[1]).toFixed(2)}  |`);
    console.log(`  pairs (once / peer CPU): ${ours.map((r, i) => `${r.cpuS.toFixed(2)}/${peer[i]!.cpuS.toFixed(2)}=${ratios[i]!.toFixed(2)}`).join('  ')}`);
    if (BASELINE) {
      const vs = ours.map((r, i) => r.cpuS / base[i]!.cpuS);
      console.log(`  against ${BASELINE}: ${median(base.map((r) => r.cpuS)).toFixed(3)} s -> ${cpu[0].toFixed(3)} s, ratio ${median(vs).toFixed(3)} (lower in ${vs.filter((v) => v < 1).length} of ${PAIRS}; peer ratio before ${median(base.map((r, i) => r.cpuS / peer[i]!.cpuS)).toFixed(3)})`);
    }
    console.log('');
    check(`100k+100k: CPU of once / naive peer (median of ${PAIRS} pairs' ratios)`, `≤ ${CPU_RATIO_TARGET.toFixed(2)}`, `${ratio.toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`, ratio <= CPU_RATIO_TARGET);
    check('100k+100k: peak RSS of once / naive peer', '≤ 0.25', (rss[0] / rss[1]).toFixed(2), rss[0] / rss[1] <= 0.25);
    check('100k+100k: peak RSS of once', '≤ 128 MB', mb(rss[0]), rss[0] <= 128);
  });
}

/**
 * Each stage's budget: the most of `once`'s CPU (100k alerts + 100k devices) it may take, as a share.
 * Set from the shares measured on the current build (docs/performance.md, "Where the CPU goes"),
 * about the highest of several runs on a loaded machine plus a few points; a stage past its
 * budget fails the benchmark.
 */
const STAGE_BUDGETS: Partial<Record<Stage, number>> = {
  'start-up and module load': 0.25,
  'the state directory': 0.04,
  receiving: 0.28,
  'scanning and splitting records': 0.2,
  'folding alerts': 0.1,
  'folding the other sources': 0.03,
  'scheduling and collecting': 0.05,
  rendering: 0.02,
  'the push (the output written)': 0.03,
  'garbage collection (main thread)': 0.16,
  'other on the main thread': 0.12,
  'off the main thread (compilers, GC helpers)': 0.2,
};
const STAGE_ROUNDS = Number(process.env.BENCH_STAGE_ROUNDS ?? 3);

/**
 * Where the CPU of `once` goes, by stage (bench/stages.ts), beside the floor (bench/floor.mjs:
 * receiving the same bodies alone; receiving, decoding and JSON.parse of each whole), all measured
 * the same way: per round, a profiled run for the main thread's shares and an unprofiled one for the
 * CPU (its main thread's, from schedstat, split by those shares; the rest is off the main thread).
 */
async function stages(): Promise<void> {
  await withSim({ alerts: 100_000, devices: 100_000, rateLimit: false }, async (sim) => {
    const resolved = [...sim.data(Date.now()).alerts()].filter((a) => a.resolved).length;
    const kinds = { once: [CLI, 'once', '--format', 'json'], receive: [FLOOR, 'receive'], parse: [FLOOR, 'parse'] } as const;
    const profiled: Record<keyof typeof kinds, Awaited<ReturnType<typeof profileStages>>[]> = { once: [], receive: [], parse: [] };
    const plain: Record<keyof typeof kinds, Run[]> = { once: [], receive: [], parse: [] };
    for (let i = 0; i < STAGE_ROUNDS; i++) {
      for (const [kind, args] of Object.entries(kinds) as Array<[keyof typeof kinds, readonly string[]]>) {
        const stateDir = mkdtempSync(join(tmpdir(), 'bench-state-'));
        try {
          const env = simEnv(sim, { POSTURE_STATE_DIR: stateDir });
          const p = await profileStages([...args], env, ROOT, join(tmpdir(), `bench-prof-${kind}`));
          if (p.code !== 0) throw new Error(`profiled ${kind} failed: ${p.stderr.slice(-500)}`);
          profiled[kind].push(p);
          const r = await measure([...args], env);
          if (r.code !== 0) throw new Error(`${kind} failed: ${r.stderr.slice(-500)}`);
          plain[kind].push(r);
        } finally {
          rmSync(stateDir, { recursive: true, force: true });
        }
      }
    }
    /** Each stage's CPU in ms: the median main-thread share times the median main-thread CPU; the rest of the median CPU off it. */
    const split = (kind: keyof typeof kinds) => {
      const shares = medianStages(profiled[kind]).mainShares;
      const main = median(plain[kind].map((r) => Math.min(r.mainS, r.cpuS))) * 1000;
      const cpu = median(plain[kind].map((r) => r.cpuS)) * 1000;
      const ms = Object.fromEntries(STAGES.map((s) => [s, s === 'off the main thread (compilers, GC helpers)' ? cpu - main : shares[s] * main])) as Record<Stage, number>;
      return { cpu, ms };
    };
    const once = split('once');
    const receive = split('receive');
    const parse = split('parse');
    const cell = (x: { cpu: number; ms: Record<Stage, number> }, s: Stage) => (x.ms[s] >= 0.5 ? `${x.ms[s].toFixed(0)} ms (${((100 * x.ms[s]) / x.cpu).toFixed(0)} %)` : '');
    console.log(`\nWhere the CPU goes: 100,000 unresolved alerts + 100,000 devices, medians of ${STAGE_ROUNDS} rounds`);
    console.log('| stage | once | budget | floor: receive only | floor: receive + JSON.parse |');
    console.log('|---|---|---|---|---|');
    for (const s of STAGES) {
      const budget = STAGE_BUDGETS[s];
      console.log(`| ${s} | ${cell(once, s)} | ${budget === undefined ? '' : `≤ ${(budget * 100).toFixed(0)} %`} | ${cell(receive, s)} | ${cell(parse, s)} |`);
    }
    // The resolved-alerts pass (alert response times) has its own line: its CPU per thousand resolved alerts.
    // n/a here, where the portal holds no resolved history (withSim); bench/resolved.ts reads 1,000,000 and prints the figure.
    const resolvedMs = once.ms['folding resolved alerts'];
    console.log(`| resolved alerts, per thousand (${resolved.toLocaleString('en')} resolved in the portal) | ${resolvedMs > 0 && resolved > 0 ? `${((resolvedMs * 1000) / resolved).toFixed(2)} ms` : 'n/a'} | | | |`);
    console.log(`| **CPU (user + system, every thread)** | **${once.cpu.toFixed(0)} ms** | | **${receive.cpu.toFixed(0)} ms** | **${parse.cpu.toFixed(0)} ms** |\n`);
    for (const s of STAGES) {
      const budget = STAGE_BUDGETS[s];
      if (budget === undefined) continue;
      const share = once.ms[s] / once.cpu;
      check(`stage share of once's CPU: ${s}`, `≤ ${(budget * 100).toFixed(0)} %`, `${(share * 100).toFixed(1)} %`, share <= budget);
    }
  });
}

/** Peak RSS and CPU of `once` at 10k, 100k and 1M unresolved alerts. */
async function growth(): Promise<void> {
  const rows: Array<{ alerts: number; rss: number; cpu: number }> = [];
  for (const alerts of [10_000, 100_000, 1_000_000]) {
    await withSim({ alerts, devices: 1_000, rateLimit: false }, async (sim) => {
      const want = expected(sim, Date.now());
      const r = await runOnce(sim);
      const wrong = onceExact(r, want);
      check(`growth ${alerts}: counts exact`, 'exact', wrong ?? 'exact', !wrong);
      const n = want.open.red! + want.open.amber! + want.open.green!;
      rows.push({ alerts: n, rss: r.peakRssMb, cpu: r.cpuS });
    });
  }
  console.log('\nGrowth of once with the list (1,000 devices)');
  console.log('| unresolved alerts | peak RSS | CPU     | CPU per alert |');
  console.log('|-------------------|----------|---------|---------------|');
  for (const r of rows) console.log(`| ${String(r.alerts).padStart(17)} | ${r.rss.toFixed(1).padStart(5)} MB | ${r.cpu.toFixed(2).padStart(5)} s | ${((r.cpu / r.alerts) * 1e6).toFixed(2).padStart(8)} µs   |`);
  console.log('');
  const [, mid, big] = rows as [typeof rows[0], typeof rows[0], typeof rows[0]];
  check('growth: peak RSS at 1M minus at 100k', '≤ 10 MB', mb(big.rss - mid.rss), big.rss - mid.rss <= 10);
  const perMid = mid.cpu / mid.alerts;
  const perBig = big.cpu / big.alerts;
  check('growth: CPU per alert at 1M vs 100k', '≤ 1.00', (perBig / perMid).toFixed(2), perBig <= perMid);
}

/** One alert whose unused `issue` is a 64 MB string. */
async function huge(): Promise<void> {
  await withSim({ alerts: 1_000, devices: 1_000, rateLimit: false }, async (sim) => {
    const want = expected(sim, Date.now());
    sim.addFault({ path: '/alerts', fault: { kind: 'huge-string', field: 'issue', bytes: 64 * 1024 * 1024 } });
    const r = await runOnce(sim);
    const wrong = onceExact(r, want);
    check('64 MB unused string: counts exact', 'exact', wrong ?? 'exact', !wrong);
    check('64 MB unused string: peak RSS of once', '≤ 128 MB', mb(r.peakRssMb), r.peakRssMb <= 128);
    check('64 MB unused string: CPU', '(reported)', `${r.cpuS.toFixed(2)} s`, true);
  });
}

/**
 * Code TurboFan compiled and then threw away: `once` at 100k alerts + 100k devices under V8's
 * `--trace-deopt`, every eager or soft bailout counted. Each one costs a second compile of a hot
 * function (the record fold inlined into the scanner's loop: 10 to 30 ms) and the time it runs
 * unoptimized until then. The budget is 10 requests a minute here, so the first run's resolved-alerts
 * pass goes without waiting a window (the flag changes nothing else that is measured).
 */
async function deopts(): Promise<void> {
  await withSim({ alerts: 100_000, devices: 100_000, rateLimit: false }, async (sim) => {
    const stateDir = mkdtempSync(join(tmpdir(), 'bench-state-'));
    try {
      const r = await measure(['--trace-deopt', CLI, 'once', '--format', 'json'], simEnv(sim, { POSTURE_STATE_DIR: stateDir, POSTURE_REQUESTS_PER_MINUTE: '10' }));
      if (r.code !== 0) throw new Error(`once --trace-deopt failed: ${r.stderr.slice(-500)}`);
      const bailouts = [...r.stdout.matchAll(/^\[bailout \(kind: deopt-(?:eager|soft)[^\n]*/gm)].map((m) => m[0]);
      const named = bailouts.map((b) => `${/<JSFunction (\S*)/.exec(b)?.[1] ?? '?'} (${/reason: ([^)]*)/.exec(b)?.[1] ?? '?'})`);
      console.log(`\nDeoptimizations of once (100k + 100k): ${named.length ? named.join('; ') : 'none'}\n`);
      check('100k+100k: compiled code thrown away (eager and soft deoptimizations)', '0', String(bailouts.length), bailouts.length === 0);
    } finally {
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
}

/** Bytes of a module and every module it imports statically (what an import compiles; dynamic imports wait). */
function staticClosureBytes(entry: string): number {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:^|[;\s}])import\s*(?:[\w${},\s*]+from\s*)?["'](\.{1,2}\/[^"']+)["']/g)) visit(resolvePath(dirname(file), m[1]!));
  };
  visit(entry);
  return [...seen].reduce((sum, f) => sum + statSync(f).size, 0);
}

/**
 * What a cold start pays. The Lambda bundle's import measured inside a fresh process
 * (`performance.now()` around `await import()`), median of 5; check-config's wall time above a bare
 * `node -e 0`, median of 10, interleaved.
 */
async function startup(): Promise<void> {
  const env = { POSTURE_BASE_URL: 'http://127.0.0.1:9/public-api/v1', POSTURE_API_KEY: KEY };
  const importMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await measure(['--input-type=module', '-e', `const t = performance.now(); await import(${JSON.stringify(LAMBDA)}); console.log(performance.now() - t);`], env);
    if (r.code !== 0) throw new Error(`import of the Lambda bundle failed: ${r.stderr.slice(-500)}`);
    importMs.push(Number(r.stdout.trim()));
  }
  const times: Record<string, number[]> = { bare: [], checkConfig: [] };
  for (let i = 0; i < 10; i++) {
    for (const [name, args] of Object.entries({ bare: ['-e', '0'], checkConfig: [CLI, 'check-config'] })) {
      const r = await measure(args, env);
      if (r.code !== 0) throw new Error(`${name} failed: ${r.stderr.slice(-500)}`);
      times[name]!.push(r.wallS * 1000);
    }
  }
  const lambda = median(importMs);
  const cc = median(times.checkConfig!) - median(times.bare!);
  console.log(`\nCold start: import of the Lambda bundle ${importMs.map((t) => t.toFixed(0)).join(', ')} ms (median ${lambda.toFixed(0)}); check-config +${cc.toFixed(0)} ms above bare node (median of 10)\n`);
  check('cold start: import of dist/lambda/index.mjs, inside the process (median of 5)', '≤ 60 ms', `${lambda.toFixed(0)} ms`, lambda <= 60);
  check('cold start: check-config above bare node', '≤ 100 ms', `${cc.toFixed(0)} ms`, cc <= 100);
  const kb = staticClosureBytes(new URL(LAMBDA).pathname) / 1024;
  check('Lambda bundle compiled at import (entry and its static imports, minified)', '≤ 800 KB', `${kb.toFixed(0)} KB`, kb <= 800);
}

if (wanted('scenarios')) {
  await scenario('1k alerts, 10k devices, a 429 with Retry-After', { alerts: 1000, devices: 10_000 }, 8, undefined, (s) =>
    s.addFault({ path: '/alerts', fault: { kind: 'status', status: 429, retryAfter: '1' } }),
  );
  await scenario('100k alerts, 100k devices', { alerts: 100_000, devices: 100_000 }, 12, 128);
}
if (wanted('compare')) await compare();
if (wanted('stages')) await stages();
if (wanted('deopts')) await deopts();
if (wanted('growth')) await growth();
if (wanted('huge')) await huge();
if (wanted('resolved')) await resolvedBench(check);
if (wanted('start')) await startup();
if (wanted('fleet')) await fleetBench(check);

const width = Math.max(...outcomes.map((o) => o.name.length));
for (const o of outcomes) console.log(`${o.ok ? 'ok  ' : 'FAIL'} ${o.name.padEnd(width)}  ${o.measured.padEnd(14)} target ${o.target}`);
const failed = outcomes.filter((o) => !o.ok).length;
console.log(`${outcomes.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
