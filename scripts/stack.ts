/**
 * `npm run stack` (`node --import tsx scripts/stack.ts`): the simulated portal, the exporter's
 * `serve` against it and Debian's Prometheus with the repository's rules, all on 127.0.0.1, as
 * three child processes. Prints the URLs; Ctrl-C or SIGTERM stops every process it started and
 * removes its temporary directory.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigErrors } from '../src/errors.js';
import { parseStackOptions, STACK_USAGE, type StackOptions } from './stack/options.js';
import { runStack, type StackIo } from './stack/run.js';

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const io: StackIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };
  let options: StackOptions | undefined;
  try {
    options = parseStackOptions(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof ConfigErrors)) throw err;
    for (const p of err.problems) io.err(`stack: ${p.message}\n`);
    process.exitCode = 2;
  }
  if (options?.help) io.out(STACK_USAGE);
  else if (options) process.exitCode = await runStack(options, io);
  // Idle keep-alive sockets of the readiness checks would hold the process open for seconds.
  process.exit();
}
