/**
 * `npm run rules`: writes infra/prometheus/rules/posture-objectives.rules.yml, the rules of the
 * default objectives (what `posture-exporter rules` writes without `objectives` in the config).
 * test/objectives keeps the file equal to the generator; `npm run k8s` then makes its PrometheusRule.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_OBJECTIVES } from '../src/config/objectives.js';
import { objectiveRulesYaml } from '../src/objectives/rules.js';

/** The shipped rule file of the default objectives. */
export const OBJECTIVES_RULES_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', 'infra/prometheus/rules/posture-objectives.rules.yml');

/** What the shipped file holds. */
export function defaultObjectiveRules(): string {
  return objectiveRulesYaml(DEFAULT_OBJECTIVES);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(OBJECTIVES_RULES_FILE, defaultObjectiveRules());
  process.stdout.write('wrote infra/prometheus/rules/posture-objectives.rules.yml\n');
}
