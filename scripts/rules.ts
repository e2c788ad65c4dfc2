/**
 * `npm run rules`: writes infra/prometheus/rules/posture-objectives.rules.yml, the rules of the
 * default objectives (what `posture-exporter rules` writes without `objectives` in the config), and
 * gives every alert of the other shipped rule files its `runbook_url` from the same template:
 * POSTURE_RUNBOOK_URL when set, else the default (package.json's repository).
 * test/objectives keeps the files equal to the generator; `npm run k8s` then makes their PrometheusRules.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadObjectives } from '../src/config/load.js';
import { DEFAULT_OBJECTIVES } from '../src/config/objectives.js';
import { DEFAULT_RUNBOOK_URL, runbookUrl } from '../src/config/runbook.js';
import { objectiveRulesYaml } from '../src/objectives/rules.js';

const RULES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'infra/prometheus/rules');
/** The shipped rule file of the default objectives. */
export const OBJECTIVES_RULES_FILE = join(RULES_DIR, 'posture-objectives.rules.yml');
/** The shipped rule files written by hand, whose runbook links the template sets. */
export const HAND_WRITTEN_RULE_FILES = [join(RULES_DIR, 'posture.rules.yml'), join(RULES_DIR, 'posture-shards.rules.yml')];

/** What the shipped objectives file holds. */
export function defaultObjectiveRules(template: string = DEFAULT_RUNBOOK_URL): string {
  return objectiveRulesYaml(DEFAULT_OBJECTIVES, template);
}

/** A hand-written rule file with each alert's `runbook_url` line from `template`; everything else as it is. */
export function withRunbookUrls(text: string, template: string = DEFAULT_RUNBOOK_URL): string {
  let alert: string | undefined;
  return text
    .split('\n')
    .map((line) => {
      alert = /^\s*- alert: (\w+)\s*$/.exec(line)?.[1] ?? alert;
      const m = /^(\s*runbook_url: )'[^']*'$/.exec(line);
      if (!m) return line;
      if (alert === undefined) throw new Error(`a runbook_url before any alert: ${line.trim()}`);
      // A YAML single-quoted scalar: a quote is written twice.
      return `${m[1]}'${runbookUrl(template, alert).replaceAll("'", "''")}'`;
    })
    .join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // The same check as `posture-exporter rules` gives the setting (POSTURE_RUNBOOK_URL only: no config file here).
  const { runbookUrl: template } = loadObjectives({ env: { POSTURE_RUNBOOK_URL: process.env.POSTURE_RUNBOOK_URL } });
  writeFileSync(OBJECTIVES_RULES_FILE, defaultObjectiveRules(template));
  process.stdout.write('wrote infra/prometheus/rules/posture-objectives.rules.yml\n');
  for (const file of HAND_WRITTEN_RULE_FILES) {
    writeFileSync(file, withRunbookUrls(readFileSync(file, 'utf8'), template));
    process.stdout.write(`wrote the runbook links of ${file.slice(RULES_DIR.length - 'infra/prometheus/rules'.length)}\n`);
  }
}
