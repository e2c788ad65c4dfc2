/**
 * The process tree under a PID, read from /proc: what a command really started, independent of
 * what it says it started, so a test can check every one of them is gone after a signal; and the
 * ledger's claimer processes (test/support/claimer.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { ClaimerOptions } from './claimer.js';

/** Direct children of `pid`. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces: fields after the last ')' are fixed.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // Exited while reading.
    }
  }
  return out;
}

/** Every process below `pid`. */
export function descendantsOf(pid: number): number[] {
  const kids = childrenOf(pid);
  return [...kids, ...kids.flatMap(descendantsOf)];
}

/** The command line of `pid`, '' once it is gone. */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** Whether `pid` still exists (a zombie counts until its parent reaps it). */
export function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Polls `fn` every 100 ms until it returns a value; throws naming `what`, `fn`'s last error and `detail()` after `ms`. */
export async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms: number, detail: () => string = () => ''): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    const v = await Promise.resolve()
      .then(fn)
      .catch((err: unknown) => {
        last = err;
        return undefined;
      });
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last === undefined ? '' : `: ${String(last)}`}\n${detail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What a claimer printed: each request's arrival at the portal (virtual ms), and its last line. */
export interface Claimed {
  readonly arrivals: number[];
  readonly result: { granted?: number; released?: number; claims?: number; due?: boolean } | undefined;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/** Starts a claimer process (test/support/claimer.ts) with `options` and `env`; `done` resolves when it ends, whatever way. */
export function claimer(options: ClaimerOptions, env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Claimed> } {
  const script = new URL('./claimer.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(options)], { cwd: new URL('../..', import.meta.url).pathname, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<Claimed>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      // A process killed mid-write may leave half a line.
      const lines = out.split('\n').filter((l) => l.endsWith('}')).map((l) => JSON.parse(l) as { arrival?: number });
      const arrivals = lines.filter((l) => l.arrival !== undefined).map((l) => l.arrival!);
      const last = lines.at(-1);
      resolve({ arrivals, result: last && last.arrival === undefined ? (last as Claimed['result']) : undefined, code, signal, stderr });
    });
  });
  return { child, done };
}
