/** Helpers for the infra tests: promtool, and the rule files read as data. */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** Repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Debian's promtool. */
const PROMTOOL = '/usr/bin/promtool';
/** Directory of the Prometheus rule files. */
const RULES_DIR = join(REPO_ROOT, 'infra/prometheus/rules');
/** Directory of the promtool unit tests. */
export const RULE_TESTS_DIR = join(REPO_ROOT, 'infra/prometheus/tests');

/** One recording or alerting rule, as written in a rule file. */
export interface RuleExpression {
  readonly file: string;
  readonly group: string;
  readonly kind: 'record' | 'alert';
  /** Recorded metric name or alert name. */
  readonly name: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

interface RawRule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yml') || f.endsWith('.yaml'))
    .sort()
    .map((f) => join(dir, f));
}

/** Absolute paths of the rule files. */
export function ruleFiles(dir: string = RULES_DIR): string[] {
  return yamlFiles(dir);
}

/** Absolute paths of the promtool unit-test files. */
export function ruleTestFiles(dir: string = RULE_TESTS_DIR): string[] {
  return yamlFiles(dir);
}

/** Every rule of the given rule files (all of them by default), in file order. */
export function loadRuleExpressions(files: readonly string[] = ruleFiles()): RuleExpression[] {
  const out: RuleExpression[] = [];
  for (const file of files) {
    const doc = parse(readFileSync(file, 'utf8')) as { groups: Array<{ name: string; rules: RawRule[] }> };
    for (const group of doc.groups) {
      for (const rule of group.rules) {
        const kind = rule.record !== undefined ? 'record' : 'alert';
        out.push({
          file,
          group: group.name,
          kind,
          name: (rule.record ?? rule.alert)!,
          expr: rule.expr.trim(),
          ...(rule.for !== undefined ? { for: rule.for } : {}),
          labels: rule.labels ?? {},
          annotations: rule.annotations ?? {},
        });
      }
    }
  }
  return out;
}

/** What promtool printed and its exit code. */
export interface PromtoolResult {
  readonly code: number;
  readonly output: string;
}

/** Runs promtool with `args`; never rejects on a non-zero exit (the result carries it). */
export function runPromtool(args: readonly string[], cwd: string = REPO_ROOT): Promise<PromtoolResult> {
  return new Promise((resolve, reject) => {
    execFile(PROMTOOL, [...args], { cwd, timeout: 110_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      if (!error) return resolve({ code: 0, output });
      if (typeof error.code === 'number') return resolve({ code: error.code, output });
      reject(new Error(`promtool ${args.join(' ')} did not run: ${error.message}\n${output}`, { cause: error }));
    });
  });
}
