// A measured `node` process: run with the preload (peak-rss.cjs) that reports, at its exit, the
// process's own CPU, its main thread's CPU and its peak RSS on stderr. Every benchmark that measures
// a process starts it here.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

const PRELOAD = new URL('./peak-rss.cjs', import.meta.url).pathname;

/** A measured run: its exit, its output and what the preload reported (NaN where it could not tell). */
export interface MeasuredRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** CPU of every thread, user and system, µs. */
  cpuUs: number;
  /** The main thread's own CPU, µs (what a `--cpu-prof` profile samples). */
  mainUs: number;
  peakRssKb: number;
  wallS: number;
}

/** A `BENCH_*=<n>` figure of the preload's report, NaN when it said `unknown` or nothing. */
const figure = (stderr: string, name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(stderr)?.[1] ?? NaN);

/** Runs `node <args>` (node's own flags first) with the preload, in an environment of PATH and `env` only. */
export function runMeasured(args: readonly string[], env: Record<string, string>): Promise<MeasuredRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--require', PRELOAD, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      const stderr = Buffer.concat(err).toString('utf8');
      resolve({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr,
        cpuUs: figure(stderr, 'BENCH_CPU_US'),
        mainUs: figure(stderr, 'BENCH_MAIN_US'),
        peakRssKb: figure(stderr, 'BENCH_PEAK_RSS_KB'),
        wallS: (performance.now() - started) / 1000,
      });
    });
  });
}
