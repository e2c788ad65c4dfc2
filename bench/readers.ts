// Compares /alerts readers on the same body (100,000 unresolved alerts from the simulated portal,
// received once, fed again in the chunks undici delivered), each followed by the same fold
// (AlertsSink): `node --import tsx bench/readers.ts [--prof]`. Prints the CPU time of each (median
// of 9, interleaved); with --prof, writes one .cpuprofile per reader under bench/profiles/readers/
// and prints its heaviest functions.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'undici';
import { AlertsSink } from '../src/collect/alerts.js';
import { startSimulator } from '../src/simulator/index.js';
import { EnvelopeParser as Splitter } from '../src/upstream/json-stream.js';
import { EnvelopeParser as CharScanner } from './readers/char-scanner.js';
import { EnvelopeParser as FieldScanner } from './readers/field-scanner.js';

const FIELDS = ['state', 'product', 'status', 'ownerName', 'timestamp', 'resolved', 'acknowledged', 'inactiveUntil'];
const BODY = new URL('./profiles/readers/body.json', import.meta.url).pathname;
const NOW = Date.UTC(2026, 10, 22) / 1000;

interface Writer { write(chunk: Uint8Array): void; end(): unknown }
const READERS: Record<string, (onRecord: (r: unknown) => void) => Writer> = {
  'splitter + JSON.parse (src)': (f) => new Splitter('/alerts', f),
  'field-extracting scanner': (f) => new FieldScanner('/alerts', f, { fields: FIELDS }),
  'previous character scanner': (f) => new CharScanner('/alerts', f),
};

function fold(chunks: Buffer[], reader: string): number {
  const sink = new AlertsSink(NOW);
  if (reader === 'whole body + JSON.parse') {
    for (const r of (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: unknown[] }).data) sink.record(r);
  } else {
    const p = READERS[reader]!((r) => sink.record(r));
    for (const c of chunks) p.write(c);
    p.end();
  }
  const a = sink.finish();
  return Object.values(a.open).reduce((n, v) => n + v, 0) + a.invalid;
}

const names = [...Object.keys(READERS), 'whole body + JSON.parse'];

if (process.argv[2] === '--child') {
  // One reader under --cpu-prof: read the saved body in 64 KiB chunks and fold it 5 times.
  const body = readFileSync(BODY);
  const chunks: Buffer[] = [];
  for (let i = 0; i < body.length; i += 65_536) chunks.push(body.subarray(i, i + 65_536));
  for (let r = 0; r < 5; r++) fold(chunks, process.argv[3]!);
  process.exit(0);
}

mkdirSync(new URL('./profiles/readers/', import.meta.url), { recursive: true });
const KEY = 'sim-bench-key-0123456789abcdef';
const sim = await startSimulator({ keys: [{ key: KEY }], moving: false, rateLimit: false, alerts: 100_000, devices: 10 });
const res = await request(`${sim.baseUrl}/alerts?filter=allunresolved&limit=0`, { headers: { 'X-Service-ApiKey': KEY } });
const chunks: Buffer[] = [];
for await (const c of res.body) chunks.push(c as Buffer);
await sim.close();
const bytes = chunks.reduce((n, c) => n + c.length, 0);
writeFileSync(BODY, Buffer.concat(chunks));

const expected = fold(chunks, names[0]!);
const times: Record<string, number[]> = {};
for (let r = 0; r < 9; r++) {
  for (const name of names) {
    const before = process.cpuUsage();
    const n = fold(chunks, name);
    const used = process.cpuUsage(before);
    if (n !== expected) throw new Error(`${name} read ${n} records, expected ${expected}`);
    (times[name] ??= []).push((used.user + used.system) / 1000);
  }
}
console.log(`\n${expected} alerts, ${(bytes / 1e6).toFixed(1)} MB in ${chunks.length} chunks; CPU of read + fold, median of 9 interleaved runs`);
for (const name of names) {
  const xs = times[name]!.sort((a, b) => a - b);
  console.log(`  ${name.padEnd(28)} ${xs[4]!.toFixed(0).padStart(5)} ms  (min ${xs[0]!.toFixed(0)})`);
}

if (process.argv.includes('--prof')) {
  for (const name of names) {
    const dir = new URL(`./profiles/readers/${name.replace(/\W+/g, '-')}`, import.meta.url).pathname;
    rmSync(dir, { recursive: true, force: true });
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, '--import', 'tsx', new URL(import.meta.url).pathname, '--child', name], { stdio: 'inherit' });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${name}: exit ${code}`))));
    });
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!;
    const prof = JSON.parse(readFileSync(`${dir}/${file}`, 'utf8')) as { nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>; samples: number[]; timeDeltas: number[] };
    const byNode = new Map<number, number>();
    prof.samples.forEach((id, i) => byNode.set(id, (byNode.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
    const self = new Map<string, number>();
    for (const n of prof.nodes) {
      const key = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').pop() ?? ''}`;
      self.set(key, (self.get(key) ?? 0) + (byNode.get(n.id) ?? 0));
    }
    console.log(`\n${name}: ${dir}/${file} (5 folds), heaviest self time:`);
    for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 6)) console.log(`  ${(us / 5000).toFixed(0).padStart(5)} ms/fold  ${k}`);
  }
}
