import { setFlagsFromString } from 'node:v8';
import { createLogger, levelOr } from '../core/log.js';
import { main } from './cli.js';
import { tuneCompilerForShortRuns } from './v8-flags.js';

// A collector streams large lists through short-lived objects: keep the heap small rather than fast.
setFlagsFromString('--optimize-for-size');

// Node's own warnings (a deprecation, a listener leak) become log lines like any other, instead of
// Node's text on stderr: stderr stays one JSON object a line.
const warnings = createLogger({ level: levelOr(process.env.POSTURE_LOG_LEVEL) });
process.removeAllListeners('warning');
process.on('warning', (w: Error & { code?: string }) => warnings.warn(w.message, { warning: w.name, ...(w.code ? { code: w.code } : {}) }));

// The process edge: real env, streams and signals.
// Every signal is handled, not only the first: a signal to a process group (Ctrl-C, `kill -- -PGID`)
// reaches this process twice when `npm start` also passes it on, and the second must not cut the
// clean stop the first began.
const stopSignal = new Promise<void>((resolve) => {
  process.on('SIGTERM', () => resolve());
  process.on('SIGINT', () => resolve());
});

/** Set when a reader went away (EPIPE): nothing more can be written, so do not wait for it. */
let broken: NodeJS.WritableStream | undefined;
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    broken = stream;
  });
}

/**
 * Resolves once everything written to the stream so far has been handed to the OS. A pipe to a
 * slow reader buffers in the process; exiting before it drains loses the tail of the output.
 */
function drained(stream: NodeJS.WriteStream): Promise<void> {
  if (broken === stream || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once('error', () => resolve());
    // Writes complete in order: the callback of an empty write runs after every earlier one.
    stream.write('', () => resolve());
  });
}

async function exit(code: number): Promise<never> {
  process.exitCode = code;
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
  // Long-running commands have stopped cleanly; do not wait on idle keep-alive sockets.
  return process.exit(code);
}

main(process.argv.slice(2), {
  env: process.env,
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
  stderrIsTTY: process.stderr.isTTY === true,
  stopSignal,
  // Before the first request of a command that reads a portal, not in check-config, rules or simulate.
  beforeReading: tuneCompilerForShortRuns,
}).then(
  (code) => exit(code),
  (err) => {
    process.stderr.write(`posture-exporter: ${(err as Error)?.stack ?? String(err)}\n`);
    return exit(1);
  },
);
