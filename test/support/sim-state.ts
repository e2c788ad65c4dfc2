/**
 * The setup of the tests that run the built CLI's processes against one simulated portal with one
 * state directory between them (test/e2e/budget-processes.test.ts, restarts.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';

/**
 * A simulated portal on 127.0.0.1 answering `key` (its data not moving) and an empty state directory
 * named from `prefix`: fresh for each test (`each`) or one for the file (`all`), closed and removed
 * after. Read `sim` and `stateDir` inside tests and hooks: they are set when the hook has run.
 */
export function simulatorWithStateDir(key: string, prefix: string, per: 'each' | 'all'): { readonly sim: Simulator; readonly stateDir: string } {
  const set: { sim?: Simulator; stateDir?: string } = {};
  (per === 'each' ? beforeEach : beforeAll)(async () => {
    set.sim = await startSimulator({ keys: [{ key }], moving: false });
    set.stateDir = mkdtempSync(join(tmpdir(), prefix));
  });
  (per === 'each' ? afterEach : afterAll)(async () => {
    await set.sim?.close();
    if (set.stateDir !== undefined) rmSync(set.stateDir, { recursive: true, force: true });
  });
  return {
    get sim() {
      if (set.sim === undefined) throw new Error('simulatorWithStateDir: sim is read before its hook ran');
      return set.sim;
    },
    get stateDir() {
      if (set.stateDir === undefined) throw new Error('simulatorWithStateDir: stateDir is read before its hook ran');
      return set.stateDir;
    },
  };
}
