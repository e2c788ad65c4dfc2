/**
 * Running the exporter's CLI in tests and collecting what it said: the built CLI (`npm run build`)
 * as a child process, as a user runs it, or `main()` in this process with injected I/O.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from '../../src/core/io.js';
import { main } from '../../src/runtime/cli.js';

let stateRoot: string | undefined;

/**
 * `env` with a state directory of its own when it names none (nor XDG_STATE_HOME or HOME): the
 * runs of a test never count each other's requests, nor write into the user's home, unless the
 * test shares a POSTURE_STATE_DIR on purpose.
 */
export function withOwnState<E extends Record<string, string | undefined>>(env: E): E {
  if (env.POSTURE_STATE_DIR !== undefined || env.XDG_STATE_HOME !== undefined || env.HOME !== undefined || /state_dir/.test(env.POSTURE_CONFIG ?? '')) return env;
  if (stateRoot === undefined) {
    const root = mkdtempSync(join(tmpdir(), 'posture-test-state-'));
    stateRoot = root;
    process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  }
  return { ...env, XDG_STATE_HOME: mkdtempSync(join(stateRoot, 'run-')) };
}

/** How a command ended and everything it wrote. */
export interface Ran<Code = number | null> {
  code: Code;
  stdout: string;
  stderr: string;
}

/** The built CLI; tests that spawn it need `npm run build` first. */
export const BUILT_CLI = new URL('../../dist/cli.js', import.meta.url).pathname;

/** Runs `cmd args` to its end, with exactly `env` (nothing inherited, but a state directory of its own: withOwnState) and stdin closed. */
export function runProcess(cmd: string, args: readonly string[], opts: { env: Record<string, string | undefined>; cwd?: string }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: withOwnState(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    // Decoded as streams, so a character split across two chunks stays whole.
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `node dist/cli.js ...args` with PATH and `env` only, as a user (or a container) runs it. */
export function runBuiltCli(args: readonly string[], env: Record<string, string>): Promise<Ran> {
  return runProcess(process.execPath, [BUILT_CLI, ...args], { env: { PATH: process.env.PATH, ...env } });
}

/**
 * `main(argv)` in this process with stdout and stderr collected; `onStderr`, when given, sees all
 * of stderr so far after each write (to stop a long run at a point in its progress).
 */
export async function runMain(argv: string[], io: Omit<CliIo, 'stdout' | 'stderr'> & { onStderr?: (all: string) => void }): Promise<Ran<number>> {
  const { onStderr, ...rest } = io;
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    ...rest,
    env: withOwnState(rest.env),
    stdout: (t) => (stdout += t),
    stderr: (t) => {
      stderr += t;
      onStderr?.(stderr);
    },
  });
  return { code, stdout, stderr };
}

/** Whether a failed run failed only as late: it logged failures, and each was a source with no slot before its deadline. */
export function failedOnlyAsLate(stderr: string): boolean {
  const failures = stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: string; reason?: string })
    .filter((l) => l.level === 'error' || l.reason !== undefined);
  return failures.length > 0 && failures.every((l) => l.reason === 'late');
}
