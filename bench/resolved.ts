// The resolved-alerts pass's memory target (docs/metrics.md, "Response times"): 300,000 resolved
// alerts read in one pass within 128 MB peak RSS, and the exact count of those resolved in the last
// 30 days. The pass (bench/resolved-pass.ts, bundled as the CLI is) runs in a process of its own,
// measured by bench/peak-rss.cjs, against the simulated portal on 127.0.0.1 in this one.
// Run: node --import tsx bench/resolved.ts   (RESOLVED_ALERTS=n for another size)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { startSimulator } from '../src/simulator/index.js';
import { parseApiTimestamp } from '../src/upstream/timestamps.js';

const KEY = 'sim-bench-key-0123456789abcdef';
const PRELOAD = new URL('./peak-rss.cjs', import.meta.url).pathname;
const WANTED = Number(process.env.RESOLVED_ALERTS ?? 300_000);
const PEAK_RSS_MB = 128;
/** Resolved alerts the simulated portal serves per open one: its 35 days of history over its 38 h mean life. */
const RESOLVED_PER_OPEN = (35 * 24) / 38;

const dir = mkdtempSync(join(tmpdir(), 'bench-resolved-'));
const bundle = join(dir, 'resolved-pass.mjs');
await build({
  entryPoints: [new URL('./resolved-pass.ts', import.meta.url).pathname],
  outfile: bundle, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning',
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url); globalThis.__zod_globalConfig ??= { jitless: true };" },
});

const sim = await startSimulator({ keys: [{ key: KEY }], rateLimit: false, moving: false, alerts: Math.ceil((1.02 * WANTED) / RESOLVED_PER_OPEN), seed: 3, resolvedHistoryDays: 35 });
try {
  const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', PRELOAD, bundle], { env: { PATH: process.env.PATH, POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  const peakMb = Number(/BENCH_PEAK_RSS_KB=(\d+)/.exec(run.stderr)?.[1] ?? NaN) / 1024;
  const cpuS = Number(/BENCH_CPU_US=(\d+)/.exec(run.stderr)?.[1] ?? NaN) / 1e6;
  const got = run.code === 0 ? (JSON.parse(run.stdout) as { nowSeconds: number; resolved30d: Record<string, number>; invalid: number; requests: Record<string, number> }) : undefined;
  // The oracle: the portal's own (frozen) list, counted here against the pass's own time.
  const at = got?.nowSeconds ?? Date.now() / 1000;
  let total = 0;
  const want: Record<string, number> = {};
  for (const a of sim.data().alerts()) {
    if (!a.resolved) continue;
    total++;
    const t = parseApiTimestamp(a.resolvedTime);
    if (typeof t === 'number' && t > at - 30 * 86_400) want[a.state.toLowerCase()] = (want[a.state.toLowerCase()] ?? 0) + 1;
  }
  const exact = got !== undefined && ['red', 'amber', 'green'].every((s) => got.resolved30d[s] === (want[s] ?? 0));
  console.log(`resolved alerts served: ${total} (${WANTED} wanted)`);
  console.log(`resolved in 30d, counted here: ${JSON.stringify(want)}; by the pass: ${JSON.stringify(got?.resolved30d)}; requests: ${JSON.stringify(got?.requests)}`);
  console.log(`peak RSS ${peakMb.toFixed(1)} MB (target ≤ ${PEAK_RSS_MB} MB), CPU ${cpuS.toFixed(2)} s, exit ${run.code}`);
  // The pass's cost per thousand resolved alerts: the whole process's CPU (its start included) over the list read.
  console.log(`CPU per thousand resolved alerts: ${((cpuS * 1e6) / total).toFixed(2)} ms`);
  const ok = run.code === 0 && exact && peakMb <= PEAK_RSS_MB && total >= WANTED;
  if (!ok) {
    process.stderr.write(run.stderr.slice(-2000));
    console.log('FAIL');
    process.exitCode = 1;
  } else console.log('ok');
} finally {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}
