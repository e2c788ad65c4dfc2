import { defineConfig } from 'vitest/config';
import { UNIT } from './vitest.config.js';

/**
 * The tests mutation testing runs (stryker.config.mjs): the unit tier only, with the same include,
 * exclude and setup as `npm run test:unit`. The end-to-end tier starts processes and waits on real
 * time, which a run per mutant cannot afford; Stryker's vitest runner takes one config file and no
 * project filter, hence this file. Stryker sets the pool and workers itself.
 */
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    ...UNIT,
  },
});
