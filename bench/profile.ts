// A CPU profile of `once` (or of the naive peer with `--peer`) against a simulated portal with
// 100,000 unresolved alerts and 100,000 devices: `node --import tsx bench/profile.ts [--peer] [alerts]`.
// Writes the .cpuprofile under bench/profiles/ (open it in Chrome DevTools) and prints the
// functions with the most self time.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { startSimulator } from '../src/simulator/index.js';

const KEY = 'sim-bench-key-0123456789abcdef';
const peer = process.argv.includes('--peer');
const alerts = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 100_000);
const dir = new URL(`./profiles/${peer ? 'peer' : 'once'}`, import.meta.url).pathname;
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

const sim = await startSimulator({ keys: [{ key: KEY }], moving: false, rateLimit: false, alerts, devices: 100_000 });
const script = peer ? new URL('./naive-peer.mjs', import.meta.url).pathname : new URL('../dist/cli.js', import.meta.url).pathname;
// spawnSync blocks this process, which serves the portal: run the child asynchronously instead.
const { spawn } = await import('node:child_process');
await new Promise<void>((resolve, reject) => {
  const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '200', script, ...(peer ? [] : ['once', '--format', 'json'])], {
    env: { PATH: process.env.PATH, POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.on('error', reject);
  child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
});
await sim.close();
void spawnSync;

interface Node { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!;
const prof = JSON.parse(readFileSync(`${dir}/${file}`, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byNode = new Map<number, number>();
prof.samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
const self = new Map<string, number>();
let total = 0;
for (const n of prof.nodes) {
  const us = byNode.get(n.id) ?? 0;
  total += us;
  const where = n.callFrame.url ? `${n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}` : '';
  const key = `${n.callFrame.functionName || '(anonymous)'} ${where}`;
  self.set(key, (self.get(key) ?? 0) + us);
}
console.log(`${dir}/${file}: ${(total / 1000).toFixed(0)} ms sampled`);
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)} %  ${k}`);
