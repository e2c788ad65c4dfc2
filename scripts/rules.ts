/**
 * `npm run rules`: writes infra/prometheus/rules/posture-objectives.rules.yml, the rules of the
 * default objectives (what `posture-exporter rules` writes without `objectives` in the config), and
 * gives every alert of the other shipped rule files its `runbook_url` from the same template,
 * POSTURE_RUNBOOK_URL, or none when it is unset; each file's header says which, and how to set it.
 * test/objectives keeps the files equal to the generator; `npm run k8s` then makes their PrometheusRules.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadObjectives } from '../src/config/load.js';
import { DEFAULT_OBJECTIVES } from '../src/config/objectives.js';
import { runbookHeader, runbookUrl } from '../src/config/runbook.js';
import { objectiveRulesYaml } from '../src/objectives/rules.js';

const RULES_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'infra/prometheus/rules');
/** The shipped rule file of the default objectives. */
export const OBJECTIVES_RULES_FILE = join(RULES_DIR, 'posture-objectives.rules.yml');
/** The shipped rule files written by hand, whose runbook links the template sets. */
export const HAND_WRITTEN_RULE_FILES = [join(RULES_DIR, 'posture.rules.yml'), join(RULES_DIR, 'posture-shards.rules.yml')];

/** What the shipped objectives file holds. */
export function defaultObjectiveRules(template?: string): string {
  return objectiveRulesYaml(DEFAULT_OBJECTIVES, template, 'npm');
}

const indent = (line: string): number => line.length - line.trimStart().length;
const RUNBOOK_LINE = /^\s*runbook_url:/;
const HEADER_START = '# Runbook links:';

/** The header's runbook lines (HEADER_START and the lines after it, with the `#` line before it) replaced by the template's, at the end of the leading comments. */
function withRunbookHeader(lines: string[], template: string | undefined): string[] {
  const out = [...lines];
  const at = out.findIndex((l) => l.startsWith(HEADER_START));
  if (at >= 0) {
    let end = at + 1;
    while (end < out.length && out[end]!.startsWith('# ')) end++;
    out.splice(out[at - 1] === '#' ? at - 1 : at, out[at - 1] === '#' ? end - at + 1 : end - at);
  }
  const comments = out.findIndex((l) => !l.startsWith('#'));
  out.splice(comments < 0 ? out.length : comments, 0, '#', ...runbookHeader(template, 'npm').map((l) => `# ${l}`));
  return out;
}

/**
 * A hand-written rule file with each alert's `runbook_url` from `template` (the last of its
 * annotations), or none without a template, and its header saying which; everything else as it is.
 */
export function withRunbookUrls(text: string, template?: string): string {
  const lines = withRunbookHeader(text.split('\n'), template).filter((l) => !RUNBOOK_LINE.test(l));
  if (template === undefined) return lines.join('\n');
  const out: string[] = [];
  let alert: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    out.push(line);
    alert = /^\s*- alert: (\w+)\s*$/.exec(line)?.[1] ?? (/^\s*- record: /.test(line) ? undefined : alert);
    if (!/^\s*annotations:\s*$/.test(line)) continue;
    if (alert === undefined) throw new Error(`annotations outside an alert at line ${i + 1}`);
    // The annotations are the lines indented deeper than `annotations:`; the link goes after the last of them.
    let last = i;
    for (let j = i + 1; j < lines.length && (lines[j]!.trim() === '' || indent(lines[j]!) > indent(line)); j++) if (lines[j]!.trim() !== '') last = j;
    const entries = lines.slice(i + 1, last + 1).find((l) => l.trim() !== '');
    if (entries === undefined) throw new Error(`the annotations of ${alert} are empty at line ${i + 1}`);
    out.push(...lines.slice(i + 1, last + 1));
    // A YAML single-quoted scalar: a quote is written twice.
    out.push(`${' '.repeat(indent(entries))}runbook_url: '${runbookUrl(template, alert).replaceAll("'", "''")}'`);
    i = last;
  }
  return out.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // The same check as `posture-exporter rules` gives the setting (POSTURE_RUNBOOK_URL only: no config file here).
  const { runbookUrl: template } = loadObjectives({ env: { POSTURE_RUNBOOK_URL: process.env.POSTURE_RUNBOOK_URL } });
  writeFileSync(OBJECTIVES_RULES_FILE, defaultObjectiveRules(template));
  process.stdout.write('wrote infra/prometheus/rules/posture-objectives.rules.yml\n');
  for (const file of HAND_WRITTEN_RULE_FILES) {
    writeFileSync(file, withRunbookUrls(readFileSync(file, 'utf8'), template));
    process.stdout.write(`wrote the runbook links of ${file.slice(RULES_DIR.length - 'infra/prometheus/rules'.length)}${template === undefined ? ' (none: POSTURE_RUNBOOK_URL is unset)' : ''}\n`);
  }
}
