/**
 * Figures the docs quote from the code, taken from the code: the one-shot run time `check-config`
 * prints for the defaults with three Vitals tags, the Lambda's default timeout and margin, and
 * budget.md's `check-config` example, run as shown. A change to the plan that moves a figure fails
 * here, naming the file and the figure, instead of leaving the docs behind.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { SETTING_BY_KEY } from '../../src/config/settings.js';
import { explainPlan } from '../../src/schedule/explain.js';
import { runMain } from '../support/cli.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
/** A file's text with its line breaks and comment markers as single spaces, so a sentence reads whole. */
const flat = (file: string) => read(file).replace(/\n\s*#?\s*/g, ' ');

/** What check-config says of a one-shot run with the defaults and three tags: how long it takes, and the Lambda timeout it asks for. */
function threeTags(): { run: number; lambda: number } {
  const lines = explainPlan(loadConfig({ env: { POSTURE_BASE_URL: 'https://x.example.com/public-api/v1', POSTURE_API_KEY: 'k-figures', POSTURE_VITALS_TAGS: 'a,b,c' } }));
  const m = /takes up to (\d+) s \(give the Lambda a timeout of at least (\d+) s\)/.exec(lines.join('\n'));
  expect(m, lines.join('\n')).not.toBeNull();
  return { run: Number(m![1]), lambda: Number(m![2]) };
}

/** serverless.yml's default timeout (`timeout: ${param:timeout, N}`). */
function lambdaTimeout(): number {
  return Number(/^\s+timeout: \$\{param:timeout, (\d+)\}$/m.exec(read('serverless.yml'))![1]);
}

const MARGIN = Number(SETTING_BY_KEY.lambda_margin_seconds.default);

/** Each statement of a figure: the file, the sentence with the figure as its one capture, and the figure from the code. */
const STATEMENTS: Array<[file: string, sentence: RegExp, figure: () => number]> = [
  ['docs/budget.md', /With the defaults and three tags a run takes up to (\d+) s;/g, () => threeTags().run],
  ['docs/budget.md', /`serverless\.yml` defaults to a (\d+) s timeout/g, lambdaTimeout],
  ['docs/serverless.md', /\((\d+) s with three tags and the defaults\)/g, () => threeTags().run],
  ['docs/serverless.md', /against the plan's (\d+) s for a run with three Vitals tags/g, () => threeTags().run],
  ['docs/serverless.md', /With the defaults \(timeout (\d+) s, margin \d+ s\)/g, lambdaTimeout],
  ['docs/serverless.md', /With the defaults \(timeout \d+ s, margin (\d+) s\)/g, () => MARGIN],
  ['docs/serverless.md', /With the defaults \(timeout \d+ s, margin \d+ s\) that is (\d+) s/g, () => lambdaTimeout() - MARGIN],
  ['serverless.yml', /three Vitals tags and the retries allowed, the plan needs up to (\d+) s/g, () => threeTags().run],
];

describe('figures the docs take from the code', () => {
  it.each(STATEMENTS.map(([file, sentence, figure]) => [file, String(sentence), sentence, figure] as const))('%s: %s', (file, _name, sentence, figure) => {
    const found = [...flat(file).matchAll(sentence)].map((m) => Number(m[1]));
    expect(found).toEqual([figure()]);
  });

  it("serverless.yml's default timeout holds the three-tag run and the margin check-config asks for", () => {
    expect(threeTags().lambda).toBe(threeTags().run + MARGIN);
    expect(lambdaTimeout()).toBeGreaterThanOrEqual(threeTags().lambda);
  });
});

describe("docs/budget.md's check-config example", () => {
  const doc = read('docs/budget.md');
  const block = /```\n\$ (POSTURE_\S+=\S+(?: POSTURE_\S+=\S+)*) posture-exporter check-config\n([\s\S]*?)```/.exec(doc);

  it('is what check-config prints for the settings it shows, line by line (a line cut with "..." up to the cut)', async () => {
    expect(block).not.toBeNull();
    const env = Object.fromEntries(block![1]!.split(' ').map((a) => a.split('=') as [string, string]));
    // The portal the example names (x), with a key: what the example leaves out.
    const r = await runMain(['check-config'], { env: { POSTURE_BASE_URL: 'https://x.example.com/public-api/v1', POSTURE_PORTAL: 'x', POSTURE_API_KEY: 'k-figures', ...env } });
    const printed = (r.stdout + r.stderr).trimEnd().split('\n');
    const shown = block![2]!.trimEnd().split('\n');
    expect(shown.length).toBeGreaterThan(5);
    // Each printed line as the example shows it: cut where the example cuts it.
    const asShown = printed.map((p, i) => {
      const cut = shown[i]?.indexOf('...') ?? -1;
      return cut >= 0 && p.startsWith(shown[i]!.slice(0, cut)) ? shown[i] : p;
    });
    expect(asShown).toEqual(shown);
  });
});

describe("docs/budget.md's ledger in serverless.yml", () => {
  it('says serverless.yml sets the DynamoDB table, not a state directory, as it does', () => {
    const yml = read('serverless.yml');
    expect(yml).toMatch(/^ {4}POSTURE_STATE_TABLE:\n {6}Ref: StateTable$/m);
    expect(yml).not.toMatch(/^\s+POSTURE_STATE_DIR:/m);
    expect(flat('docs/budget.md')).toContain('`serverless.yml` sets the DynamoDB table instead (below); a Lambda records in a state directory only when one is set');
  });
});
