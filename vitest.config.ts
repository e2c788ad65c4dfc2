import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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

/**
 * Every test process records its requests in a temporary state directory, never the user's: a test
 * that sets its own (POSTURE_STATE_DIR, XDG_STATE_HOME, HOME) keeps it.
 */
const STATE_HOME = 'test/support/state-home.ts';
/** The run's folder of those state directories, removed when the run ends. */
const STATE_ROOT = 'test/support/state-root.ts';

/** The unit tier: every other test file, in-process. Mutation testing (vitest.mutation.config.ts) runs this tier alone. */
export const UNIT = {
  include: ['test/**/*.test.ts'],
  exclude: E2E,
  setupFiles: [STATE_HOME, 'test/support/unit-tier.ts'],
  globalSetup: [STATE_ROOT],
};

/**
 * The files that take minutes, waiting on real 60 s budget windows (restarts, the CLI's once, the
 * Lambda bundle), building (the image, the serverless packages, the npm package) or running promtool
 * 2 and 3 over every rule file, interleaved so
 * that the waiting ones do not hold every worker at once. Started first, they run beside the rest
 * instead of after it. (Once vitest has timed a run, it starts the slowest files first by itself;
 * this is for a fresh clone.)
 */
const LONGEST = [
  'test/e2e/restarts.test.ts',
  'test/infra/rules.e2e.test.ts',
  'test/image/image.test.ts',
  'test/lambda/bundle.e2e.test.ts',
  'test/serverless/package.test.ts',
  'test/e2e/budget-realtime.test.ts',
  'test/e2e/budget-processes.test.ts',
  'test/e2e/ledger-checks.test.ts',
  'test/lambda/table.e2e.test.ts',
  'test/package/exports.e2e.test.ts',
  'test/docs/commands.e2e.test.ts',
  'test/objectives/burn-rates.e2e.test.ts',
];
const missing = LONGEST.filter((f) => !existsSync(new URL(f, import.meta.url)));
if (missing.length > 0) throw new Error(`vitest.config.ts: LONGEST names files that do not exist: ${missing.join(', ')}`);

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification): number => {
      const i = LONGEST.findIndex((f) => spec.moduleId.endsWith(`/${f}`));
      return i === -1 ? LONGEST.length : i;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    pool: 'forks',
    // Most of the suite's time is waiting (real budget windows, child processes, peers starting),
    // not computing: two workers more than cores keep the cores busy. vitest's default, cores - 1,
    // ran the whole suite one file at a time on two cores.
    maxWorkers: availableParallelism() + 2,
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          ...UNIT,
          // As long as test/support/unit-tier.ts lets a unit test run, however busy the machine.
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        // Hang guards, not speed limits: the slowest (promtool, tsc, builds) take 20-30 s with the
        // other workers busy on two cores, and a test that waits on something has its own deadline.
        test: { name: 'e2e', include: E2E, setupFiles: [STATE_HOME], globalSetup: [STATE_ROOT], testTimeout: 120_000, hookTimeout: 120_000 },
      },
    ],
  },
});
