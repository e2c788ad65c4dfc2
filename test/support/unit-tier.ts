/**
 * Setup of the unit tier (`npm run test:unit`): its tests run in this process, briefly. A test there
 * that starts a process (the built CLI, Prometheus, promtool, buildah, openssl, ...) or runs for
 * longer than UNIT_TEST_SECONDS fails with the fix, instead of slowing the inner loop down
 * unnoticed; vitest.config.ts says which files are end-to-end.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { promisify } from 'node:util';
import { afterEach, beforeEach } from 'vitest';

/** Longest a unit-tier test may take, its beforeEach and afterEach included: seconds of real time mean an end-to-end test. */
const UNIT_TEST_SECONDS = 15;

const require = createRequire(import.meta.url);
const childProcess = require('node:child_process') as Record<string, unknown>;
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  const refuse = (): never => {
    throw new Error(`the unit tier starts no processes (child_process.${name}): name this test file *.e2e.test.ts (see vitest.config.ts)`);
  };
  // promisify(execFile) would otherwise turn the refusal into a rejected promise without a child.
  childProcess[name] = Object.assign(refuse, { [promisify.custom]: refuse });
}
// `import { spawn } from 'node:child_process'` sees the stand-ins too.
syncBuiltinESMExports();

// Wall time, whatever timeout the test gives itself: a test that waits through real budget windows
// passes its own timeout but does not belong in the inner loop.
let started = 0;
beforeEach(() => {
  started = performance.now();
});
afterEach((ctx) => {
  const seconds = (performance.now() - started) / 1000;
  if (seconds > UNIT_TEST_SECONDS) {
    throw new Error(`"${ctx.task.name}" took ${seconds.toFixed(1)} s, over the unit tier's ${UNIT_TEST_SECONDS} s: make it faster (FakeClock) or name its file *.e2e.test.ts (see vitest.config.ts)`);
  }
});
