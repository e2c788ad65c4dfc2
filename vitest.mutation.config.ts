import { defineConfig } from 'vitest/config';
import { UNIT } from './vitest.config.js';

/**
 * The tests mutation testing runs (stryker.config.mjs): the unit tier only, with the same include,
 * exclude and setup as `npm run test:unit`. The end-to-end tier starts processes and waits on real
 * time, which a run per mutant cannot afford; Stryker's vitest runner takes one config file and no
 * project filter, hence this file. Stryker sets the pool and workers itself.
 *
 * Test files share one module graph (`isolate: false`): a mutant is switched on and off at run time
 * through a global, so nothing needs a fresh import, and re-importing each file's graph for every
 * mutant was a third of the time of a run. The unit tier holds no module mocks or global stubs that
 * one file could leave to the next (it passes whole both ways).
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    isolate: false,
    ...UNIT,
  },
});
