// Where the CPU of a measured process goes, by stage: a `--cpu-prof` profile of the process (its
// main thread), each sample given to the stage of the innermost function on its stack that has one
// (dist/ functions are named by their source file through the bundles' source maps), and the CPU
// the profile does not see (V8's compiler and collector threads, the kernel's share of the other
// threads) taken from the process's own resource usage. docs/performance.md, "Where the CPU goes".
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import { runMeasured } from './measured.js';

/** The stages, in the order of the table. */
export const STAGES = [
  'start-up and module load',
  'the state directory',
  'receiving',
  'scanning and splitting records',
  'decoding and JSON.parse of the whole body',
  'folding alerts',
  'folding resolved alerts',
  'folding the other sources',
  'scheduling and collecting',
  'rendering',
  'the push (the output written)',
  'garbage collection (main thread)',
  'other on the main thread',
  'off the main thread (compilers, GC helpers)',
] as const;
export type Stage = (typeof STAGES)[number];

/** A profiled run: its CPU (user + system, all threads) and the CPU of each stage, in µs. */
export interface StageRun {
  cpuUs: number;
  peakRssKb: number;
  stages: Record<Stage, number>;
  /** Each stage's share of the main thread's sampled time (none off it). */
  mainShares: Record<Stage, number>;
  /** The heaviest functions (self time) the stages could not name, for a look when "other" grows. */
  unnamed: Array<[string, number]>;
  code: number | null;
  stdout: string;
  stderr: string;
}

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The stage of a source file of src/ (a path relative to the repository), or undefined. */
function stageOfSource(source: string): Stage | undefined {
  if (source.startsWith('src/state/')) return 'the state directory';
  if (/^src\/upstream\/(json-stream|fast-path|record-splitter|value-scanner|json-bytes|limits|alert-scan)\.ts$/.test(source)) return 'scanning and splitting records';
  if (source === 'src/upstream/reader.ts' || source.startsWith('src/net/')) return 'receiving';
  // The resolved-alerts pass (alert response times), where it exists: a file of its own under src/sources/.
  if (/^src\/sources\/.*resolved/.test(source)) return 'folding resolved alerts';
  // The record check and the timestamps run for the fold (the alert record check is most of schemas.ts' use).
  if (source.startsWith('src/sources/alerts/') || source === 'src/upstream/timestamps.ts' || source === 'src/upstream/schemas.ts' || source === 'src/sources/invalid.ts' || source === 'src/core/utf8.ts') return 'folding alerts';
  if (source.startsWith('src/sources/')) return 'folding the other sources';
  if (source.startsWith('src/metrics/')) return 'rendering';
  if (source.startsWith('src/sinks/')) return 'the push (the output written)';
  if (/^src\/(schedule|collect|exporter|shard)\//.test(source)) return 'scheduling and collecting';
  // Reading the settings and the CLI's own work before and after the collection.
  if (/^src\/(config|runtime|core)\//.test(source) || /^src\/[^/]+\.ts$/.test(source)) return 'start-up and module load';
  return undefined;
}

/** Names the source file of each function of dist/ through the bundle's source map; caches per file. */
class Sources {
  private readonly maps = new Map<string, SourceMap | undefined>();
  private readonly root: string;

  constructor(root: string) {
    this.root = root.endsWith('/') ? root : root + '/';
  }

  /** The repository-relative source of the function at (line, column) of the bundle at `url`. */
  of(url: string, line: number, column: number): string | undefined {
    let map = this.maps.get(url);
    if (!this.maps.has(url)) {
      const file = fileURLToPath(url);
      map = existsSync(file + '.map') ? new SourceMap(JSON.parse(readFileSync(file + '.map', 'utf8'))) : undefined;
      this.maps.set(url, map);
    }
    if (!map) return undefined;
    const entry = map.findEntry(line, column) as { originalSource?: string };
    if (!entry.originalSource) return undefined;
    // Sources are relative to the map's directory.
    const abs = new URL(entry.originalSource, url).pathname;
    return abs.startsWith(this.root) ? abs.slice(this.root.length) : abs;
  }
}

/** Functions that a script of the floor (bench/floor.mjs) names for its stages. */
const FLOOR_FUNCTIONS: Record<string, Stage> = { parseBody: 'decoding and JSON.parse of the whole body' };

/** The stage of one frame, or undefined to look further out on the stack. */
function stageOfFrame(frame: CallFrame, sources: Sources): Stage | undefined {
  const { url, functionName } = frame;
  if (url.startsWith('node:internal/modules/') || url.startsWith('node:internal/main/') || url === 'node:internal/process/pre_execution' || url === 'node:internal/bootstrap/realm' || functionName === 'compileForInternalLoader') return 'start-up and module load';
  // Sockets, TLS and Node's HTTP client (the transport's; its parser is native code, counted for the JavaScript that calls it).
  if (url === 'node:net' || url === 'node:_tls_wrap' || url === 'node:tls' || /^node:_http_(client|common|incoming|agent|outgoing)$/.test(url)) return 'receiving';
  // WebAssembly (undici's llhttp in a push, the alert scanner) belongs to the stage of the JavaScript that called it.
  if (url.startsWith('wasm://')) return undefined;
  if (url.endsWith('/undici.cjs') || url.includes('/node_modules/undici/')) return 'receiving';
  if (url.endsWith('/floor.mjs')) return FLOOR_FUNCTIONS[functionName] ?? 'receiving';
  if (url.endsWith('/naive-peer.mjs')) return functionName === 'get' ? 'decoding and JSON.parse of the whole body' : undefined;
  if (url.startsWith('file:') && url.includes('/dist/')) {
    // A module's own top level (its evaluation at load).
    if (functionName === '' && frame.lineNumber === 0 && frame.columnNumber === 0) return 'start-up and module load';
    const source = sources.of(url, frame.lineNumber, frame.columnNumber);
    return source === undefined ? undefined : stageOfSource(source);
  }
  return undefined;
}

/** Splits a profile's samples into stages (µs of the main thread); also the heaviest unnamed functions. */
export function attribute(profile: Profile, root: string): { stages: Record<Stage, number>; unnamed: Array<[string, number]>; busyUs: number } {
  const sources = new Sources(root);
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const stageOfNode = new Map<number, Stage | 'idle'>();
  const stageOf = (id: number): Stage | 'idle' => {
    const known = stageOfNode.get(id);
    if (known !== undefined) return known;
    const leaf = byId.get(id)!.callFrame;
    let stage: Stage | 'idle' | undefined;
    if (leaf.functionName === '(idle)') stage = 'idle';
    else if (leaf.functionName === '(garbage collector)') stage = 'garbage collection (main thread)';
    else {
      // A write to stdout or stderr: the CLI's io.stdout wraps process.stdout.write (dist/cli.js).
      for (let at: number | undefined = id; at !== undefined && stage === undefined; at = parent.get(at)) {
        const frame = byId.get(at)!.callFrame;
        if (frame.functionName === 'writeOrBuffer' || frame.functionName === '_write' || frame.functionName === 'writeUtf8String' || frame.functionName === 'writeGeneric') {
          stage = 'the push (the output written)';
          break;
        }
        stage = stageOfFrame(frame, sources);
      }
    }
    // Socket reads that no function of ours, Node's HTTP client's or undici's is on the stack of (libuv's callback into the stream).
    if (stage === undefined) for (let at: number | undefined = id; at !== undefined && stage === undefined; at = parent.get(at)) if (byId.get(at)!.callFrame.functionName === 'onStreamRead') stage = 'receiving';
    stage ??= 'other on the main thread';
    stageOfNode.set(id, stage);
    return stage;
  };
  const stages = Object.fromEntries(STAGES.map((s) => [s, 0])) as Record<Stage, number>;
  const unnamedSelf = new Map<string, number>();
  let busyUs = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const stage = stageOf(id);
    if (stage === 'idle') return;
    busyUs += us;
    stages[stage] += us;
    if (stage === 'other on the main thread') {
      const f = byId.get(id)!.callFrame;
      const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
      unnamedSelf.set(key, (unnamedSelf.get(key) ?? 0) + us);
    }
  });
  return { stages, unnamed: [...unnamedSelf].sort((a, b) => b[1] - a[1]).slice(0, 8), busyUs };
}

/**
 * Runs `node <args>` under `--cpu-prof` with the measuring preload and splits its CPU into stages.
 * The profile's sampled time is scaled to the process's own main-thread share: the samples give
 * the shares on the main thread, resource usage the CPU (the profiler's own cost is not counted).
 */
export async function profileStages(args: string[], env: Record<string, string>, root: string, dir: string): Promise<StageRun> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const { code, stdout, stderr, cpuUs, mainUs, peakRssKb } = await runMeasured(['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '250', ...args], env);
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (code !== 0 || !file) {
    const none = Object.fromEntries(STAGES.map((s) => [s, NaN])) as Record<Stage, number>;
    return { cpuUs, peakRssKb, stages: none, mainShares: none, unnamed: [], code, stdout, stderr };
  }
  const { stages, unnamed, busyUs } = attribute(JSON.parse(readFileSync(`${dir}/${file}`, 'utf8')) as Profile, root);
  // The samples are wall time (on a loaded machine the thread also waits for a core): they give
  // the main thread's shares, its own CPU time their sum; the rest of the process's CPU ran on
  // other threads (without schedstat, the sampled time stands for the main thread's).
  const main = Number.isFinite(mainUs) ? Math.min(mainUs, cpuUs) : Math.min(busyUs, cpuUs);
  const mainShares = Object.fromEntries(STAGES.map((s) => [s, busyUs > 0 ? stages[s] / busyUs : 0])) as Record<Stage, number>;
  for (const s of STAGES) stages[s] = mainShares[s] * main;
  stages['off the main thread (compilers, GC helpers)'] = cpuUs - main;
  return { cpuUs, peakRssKb, stages, mainShares, unnamed: unnamed.map(([k, us]) => [k, (us * main) / Math.max(1, busyUs)]), code, stdout, stderr };
}

/** The median over runs of each stage's share of the main thread. */
export function medianStages(runs: readonly StageRun[]): { mainShares: Record<Stage, number> } {
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  return { mainShares: Object.fromEntries(STAGES.map((s) => [s, med(runs.map((r) => r.mainShares[s]))])) as Record<Stage, number> };
}
