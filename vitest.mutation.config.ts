import { defineConfig } from 'vitest/config';
import { UNIT } from './vitest.config.js';

/**
 * The tests mutation testing runs (stryker.config.mjs): the unit tier only, with the same include,
 * exclude and setup as `npm run test:unit`. The end-to-end tier starts processes and waits on real
 * time, which a run per mutant cannot afford; Stryker's vitest runner takes one config file and no
 * project filter, hence this file. Stryker sets the pool and workers itself.
 *
 * Each test file imports its own module graph (vitest's default isolation), for every mutant run.
 * Sharing one graph across files and runs was a third faster, but a module-level cache (the catalogue's
 * label orders, the fold's product cache, the reader's agents) then carried what one mutant computed
 * into the runs of the next: mutants killed by another's leftovers, or hidden behind a value cached
 * before they were switched on.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    ...UNIT,
  },
});
