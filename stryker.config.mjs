// Mutation testing (`npm run mutation`, docs/testing.md): StrykerJS changes one expression of the
// code at a time and runs the unit tests that cover it; a change no test notices is a survivor.

/**
 * What is mutated, by part: the score is read per part, and scripts/mutation.mjs runs one part per
 * Stryker run (a run holds one part's mutants in memory and its own incremental file).
 */
export const PARTS = {
  shard: ['src/config/shard.ts'],
  schedule: ['src/schedule/**/*.ts'],
  sources: ['src/sources/**/*.ts', '!src/sources/resolved/**'],
  resolved: ['src/sources/resolved/**/*.ts'],
  metrics: ['src/metrics/**/*.ts'],
  upstream: ['src/upstream/**/*.ts'],
  net: ['src/net/**/*.ts'],
  collect: ['src/collect/**/*.ts'],
  state: ['src/state/**/*.ts'],
};

/** The parts held to more than 80 %: the code whose mistakes cost the most (issue 45): the resolved-alerts pass and the ledger. */
const BREAK_AT = { resolved: 90, state: 90 };

// Set by scripts/mutation.mjs (not a POSTURE_* name: the exporter refuses POSTURE_* variables that are
// not its settings, and some unit tests hand the environment on); without it (`npx stryker run`) every part at once.
const part = process.env.MUTATION_PART;
if (part !== undefined && !(part in PARTS)) throw new Error(`MUTATION_PART: '${part}' is not a part: give one of ${Object.keys(PARTS).join(', ')}`);
const out = `reports/mutation/${part ?? 'all'}`;

/** StrykerJS options (its PartialStrykerOptions). */
export default {
  testRunner: 'vitest',
  // The unit tier alone; `related` runs only the test files that import the mutated file.
  vitest: { configFile: 'vitest.mutation.config.ts', related: true },
  coverageAnalysis: 'perTest',
  // A mutant in code that runs only when its module loads (a schema, a constant table) is covered
  // by no test in particular, so Stryker would run the whole unit tier for each; such "static"
  // mutants are left out of the run and the score (docs/testing.md).
  ignoreStatic: true,
  mutate: part ? PARTS[part] : Object.values(PARTS).flat(),
  // A re-run tests only the mutants whose code or covering tests changed since the last run.
  incremental: true,
  incrementalFile: `${out}/incremental.json`,
  // At most two test processes: the machine it runs on is shared.
  concurrency: 2,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: `${out}/index.html` },
  jsonReporter: { fileName: `${out}/report.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true, reportMutants: true },
  // Below 80 % the run fails (exit 1): the bar every part is held to, and a higher one for the parts
  // in BREAK_AT.
  thresholds: { high: 90, low: 80, break: BREAK_AT[part] ?? 80 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
