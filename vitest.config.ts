import { defineConfig } from 'vitest/config';

/**
 * The end-to-end tests: they start processes (the built CLI, Prometheus, the Pushgateway,
 * VictoriaMetrics, promtool, openssl, buildah, kubectl, osls) or wait on real time. `npm test` runs
 * them with the rest; `npm run test:unit` leaves them out. A new one is named `*.e2e.test.ts`; the
 * unit tier refuses to start a process (test/support/unit-tier.ts), so one that is not fails there.
 */
const E2E = [
  'test/**/*.e2e.test.ts',
  'test/e2e/**/*.test.ts',
  'test/image/**/*.test.ts',
  'test/k8s/**/*.test.ts',
  'test/serverless/**/*.test.ts',
];

/** The unit tier: every other test file, in-process. Mutation testing (vitest.mutation.config.ts) runs this tier alone. */
export const UNIT = {
  include: ['test/**/*.test.ts'],
  exclude: E2E,
  setupFiles: ['test/support/unit-tier.ts'],
};

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          ...UNIT,
        },
      },
      { extends: true, test: { name: 'e2e', include: E2E } },
    ],
  },
});
