/** Helpers for the infra tests: promtool (Debian's 2.x and Prometheus 3's), and the rule files read as data. */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { goTool } from '../support/go-tools.js';

/** Repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** A promtool that the rules must satisfy: users run Prometheus 2 and 3. */
export interface Promtool {
  /** How a failure names it, e.g. `promtool 3`. */
  readonly name: string;
  /** Its binary (Prometheus 3's is looked up when first run: it is built by scripts/ensure-tools.sh). */
  readonly path: () => string;
}

/** Debian's promtool (2.42) and Prometheus 3's. */
export const PROMTOOLS: readonly Promtool[] = [
  { name: 'promtool 2', path: () => '/usr/bin/promtool' },
  { name: 'promtool 3', path: () => goTool('promtool3') },
];
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

/** Runs one promtool with `args`; never rejects on a non-zero exit (the result carries it). */
function runOnePromtool(promtool: Promtool, args: readonly string[], cwd: string): Promise<PromtoolResult> {
  return new Promise((resolve, reject) => {
    execFile(promtool.path(), [...args], { cwd, timeout: 110_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`;
      if (!error) return resolve({ code: 0, output });
      if (typeof error.code === 'number') return resolve({ code: error.code, output });
      reject(new Error(`${promtool.name} ${args.join(' ')} did not run: ${error.message}\n${output}`, { cause: error }));
    });
  });
}

/**
 * Runs `promtool` with `args`, by default every one of PROMTOOLS (side by side): then the code is
 * the first non-zero one (0 when each passed) and the output is each one's, headed by its name.
 * Never rejects on a non-zero exit (the result carries it).
 */
export async function runPromtool(args: readonly string[], cwd: string = REPO_ROOT, promtool?: Promtool): Promise<PromtoolResult> {
  if (promtool) return runOnePromtool(promtool, args, cwd);
  const results = await Promise.all(PROMTOOLS.map((p) => runOnePromtool(p, args, cwd)));
  return {
    code: results.find((r) => r.code !== 0)?.code ?? 0,
    output: results.map((r, i) => `--- ${PROMTOOLS[i]!.name} (exit ${r.code}):\n${r.output}`).join('\n'),
  };
}
