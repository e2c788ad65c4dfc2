import { setFlagsFromString } from 'node:v8';
import { main } from './cli.js';

// A collector streams large lists through short-lived objects: keep the heap small rather than fast.
setFlagsFromString('--optimize-for-size');

// The process edge: real env, streams and signals.
const stopSignal = new Promise<void>((resolve) => {
  process.once('SIGTERM', () => resolve());
  process.once('SIGINT', () => resolve());
});

main(process.argv.slice(2), {
  env: process.env,
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  stderrIsTTY: process.stderr.isTTY === true,
  stopSignal,
}).then(
  (code) => {
    process.exitCode = code;
    // Long-running commands have stopped cleanly; do not wait on idle keep-alive sockets.
    setImmediate(() => process.exit(code));
  },
  (err) => {
    process.stderr.write(`posture-exporter: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
