/**
 * Setup of every test process (both tiers, vitest.config.ts): a state directory of its own, never
 * the user's. The exporter records each portal's requests under `$XDG_STATE_HOME/posture-exporter`
 * (else `~/.local/state/posture-exporter`), so without this a test that names no state directory,
 * or a process it starts with this environment, would write into the home of whoever runs the
 * suite. A test that sets its own (POSTURE_STATE_DIR, XDG_STATE_HOME or HOME in the environment it
 * passes, or in process.env) keeps it. The folder is under the run's (test/support/state-root.ts),
 * removed when the run ends.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { inject } from 'vitest';

const MINE = Symbol.for('posture-exporter.test-state-home');
const scope = globalThis as { [MINE]?: string };

// Once per process: vitest runs the setup again before each test file of a worker.
if (scope[MINE] === undefined) {
  const mine = mkdtempSync(join(inject('postureStateRoot'), 'process-'));
  scope[MINE] = mine;
  // What the processes a test starts with this environment inherit (the user's own is left alone).
  process.env.XDG_STATE_HOME = join(mine, 'state');
  delete process.env.POSTURE_STATE_DIR;
  // The loader falls back to the home directory when the environment a test passes it names no state
  // directory: a home of this process's own, for the code under test here (children keep theirs).
  const home = join(mine, 'home');
  mkdirSync(home);
  const os = createRequire(import.meta.url)('node:os') as { homedir: () => string };
  os.homedir = () => home;
  syncBuiltinESMExports();
}
