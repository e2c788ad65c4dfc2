// A CPU profile of `once` (or of the naive peer with `--peer`, of the floor with `--receive` or
// `--parse`) against a simulated portal with 100,000 unresolved alerts and 100,000 devices:
// `node --import tsx bench/profile.ts [--peer|--receive|--parse] [alerts]`. Writes the .cpuprofile
// under bench/profiles/ (open it in Chrome DevTools) and prints the CPU by stage (bench/stages.ts)
// and the functions with the most self time.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSimulator } from '../src/simulator/index.js';
import { profileStages, STAGES } from './stages.js';

const KEY = 'sim-bench-key-0123456789abcdef';
const ROOT = new URL('..', import.meta.url).pathname;
const kind = process.argv.includes('--peer') ? 'peer' : process.argv.includes('--receive') ? 'receive' : process.argv.includes('--parse') ? 'parse' : 'once';
const alerts = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 100_000);
const dir = new URL(`./profiles/${kind}`, import.meta.url).pathname;

const args = {
  once: [new URL('../dist/cli.js', import.meta.url).pathname, 'once', '--format', 'json'],
  peer: [new URL('./naive-peer.mjs', import.meta.url).pathname],
  receive: [new URL('./floor.mjs', import.meta.url).pathname, 'receive'],
  parse: [new URL('./floor.mjs', import.meta.url).pathname, 'parse'],
}[kind];

// No resolved history: the portal of the compare (bench/run.ts), the pass one request of an empty list.
const sim = await startSimulator({ keys: [{ key: KEY }], moving: false, rateLimit: false, alerts, devices: 100_000, resolvedHistoryDays: 0 });
const stateDir = mkdtempSync(join(tmpdir(), 'bench-state-'));
let run;
try {
  run = await profileStages(args, { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_LOG_LEVEL: 'warn', POSTURE_STATE_DIR: stateDir }, ROOT, dir);
} finally {
  await sim.close();
  rmSync(stateDir, { recursive: true, force: true });
}
if (run.code !== 0) throw new Error(`exit ${run.code}: ${run.stderr.slice(-2000)}`);

console.log(`${kind}, ${alerts} alerts: ${(run.cpuUs / 1000).toFixed(0)} ms of CPU, peak RSS ${(run.peakRssKb / 1024).toFixed(0)} MB`);
for (const s of STAGES) if (run.stages[s] > 0) console.log(`${(run.stages[s] / 1000).toFixed(1).padStart(8)} ms ${((100 * run.stages[s]) / run.cpuUs).toFixed(1).padStart(5)} %  ${s}`);
if (run.unnamed.length) console.log(`\nnot in a stage (main thread): ${run.unnamed.map(([k, us]) => `${k} ${(us / 1000).toFixed(1)} ms`).join('; ')}`);

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!;
const prof = JSON.parse(readFileSync(`${dir}/${file}`, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byNode = new Map<number, number>();
prof.samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
const self = new Map<string, number>();
let total = 0;
for (const n of prof.nodes) {
  const us = byNode.get(n.id) ?? 0;
  if (n.callFrame.functionName === '(idle)') continue;
  total += us;
  const where = n.callFrame.url ? `${n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${n.callFrame.lineNumber + 1}` : '';
  const key = `${n.callFrame.functionName || '(anonymous)'} ${where}`;
  self.set(key, (self.get(key) ?? 0) + us);
}
console.log(`\n${dir}/${file}: ${(total / 1000).toFixed(0)} ms sampled on the main thread (wall time while busy), by self time:`);
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${(us / 1000).toFixed(1).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)} %  ${k}`);
