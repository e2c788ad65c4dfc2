/**
 * Setup of the unit tier (`npm run test:unit`): its tests run in this process, briefly. A test there
 * that starts a process (the built CLI, Prometheus, promtool, buildah, openssl, ...) or waits on
 * real time for long fails with the fix, instead of slowing the inner loop down unnoticed;
 * vitest.config.ts says which files are end-to-end.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { promisify } from 'node:util';
import { afterEach, beforeEach } from 'vitest';

/** A unit-tier test that runs this long, its beforeEach and afterEach included, mostly waiting on timers, fails. */
const WAITING = { seconds: 10, busy: 0.05 };
/** No unit-tier test runs longer than this, however busy (the slowest take a few seconds). */
const LONGEST_SECONDS = 60;

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

// Whatever timeout a test gives itself: a test that waits through real time (budget windows,
// timeouts) passes its own timeout but does not belong in the inner loop. A test that waits shows
// as wall time with the CPU idle; a busy machine stretches a CPU-bound test's wall time, not that.
let started = { wall: 0, cpu: { user: 0, system: 0 } };
beforeEach(() => {
  started = { wall: performance.now(), cpu: process.cpuUsage() };
});
afterEach((ctx) => {
  const wall = (performance.now() - started.wall) / 1000;
  const { user, system } = process.cpuUsage(started.cpu);
  const busy = (user + system) / 1e6 / wall;
  if ((wall > WAITING.seconds && busy < WAITING.busy) || wall > LONGEST_SECONDS) {
    throw new Error(
      `"${ctx.task.name}" took ${wall.toFixed(1)} s (${Math.round(busy * 100)} % of it on the CPU), too long for the unit tier: ` +
        'wait on a FakeClock instead of real time, or name its file *.e2e.test.ts (see vitest.config.ts)',
    );
  }
});
