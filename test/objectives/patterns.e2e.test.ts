/**
 * `integration` patterns as Prometheus reads them: for each pattern, the built CLI's `rules`
 * either writes rules that promtool accepts, or refuses the pattern naming it and Go's reason (as
 * written by hand), and then promtool refuses a rule holding it too. promtool is the oracle.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runBuiltCli } from '../support/cli.js';
import { runPromtool } from '../infra/support.js';

const dir = mkdtempSync(join(tmpdir(), 'posture-patterns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Whether promtool accepts a rule matching `pattern` (quoted as a PromQL string, as JSON quotes it), and what it says. */
async function promtoolTakes(pattern: string, file: string): Promise<{ ok: boolean; output: string }> {
  const rules = { groups: [{ name: 'x', rules: [{ record: 'a:b:c', expr: `up{job=~${JSON.stringify(pattern)}}` }] }] };
  writeFileSync(file, stringify(rules));
  const r = await runPromtool(['check', 'rules', file]);
  return { ok: r.code === 0, output: r.output };
}

describe('integration patterns, as promtool reads them', () => {
  it.each([
    // JavaScript takes each of these; Go's regexp does not.
    ['crowd\\u0073trike', 'invalid escape sequence: `\\u`'],
    ['x{1001}', 'invalid repeat count: `{1001}`'],
    ['(?!intune).*', 'invalid or unsupported Perl syntax: `(?!`'],
    // Current Go reads `(?<` as a named group (Debian's promtool, built with an older Go, calls it unsupported syntax).
    ['(?<=edr)-lab', 'invalid named capture: `(?<=edr)-lab`'],
    ['(edr)\\1', 'invalid escape sequence: `\\1`'],
    ['\\cA', 'invalid escape sequence: `\\c`'],
    ['a**', 'invalid nested repetition operator: `**`'],
    // Balanced only inside the anchors Prometheus adds: it parses the pattern alone too.
    ['a)|(b', 'unexpected ): `a)|(b`'],
    ['crowd(strike', 'missing closing ): `crowd(strike`'],
  ])('refuses %j naming it and the reason, as promtool refuses it', async (pattern, reason) => {
    const config = join(dir, 'refused.yml');
    writeFileSync(config, stringify({ objectives: [{ name: 'edr', integration: pattern, target: 0.95 }] }));
    const r = await runBuiltCli(['rules', '--config', config], {});
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`objectives[0].integration=${JSON.stringify(pattern)} is not valid (Prometheus refuses it: ${reason}):`);
    const promtool = await promtoolTakes(pattern, join(dir, 'refused.rules.yml'));
    expect(promtool.ok, promtool.output).toBe(false);
    // promtool's reason may quote the anchored pattern, `^(?:crowd(strike)$`.
    expect(promtool.output).toContain('error parsing regexp: ');
  }, 60_000);

  it.each([
    'crowdstrike|sentinelone',
    'edr(\\.eu)?',
    '(?i)EDR.*',
    '\\pL+',
    '[[:alpha:]-]+',
    '\\Qa.b\\E',
    'x{1000}',
    '(?P<agent>edr)',
    '\\x{41}\\d\\s\\w\\v\\0\\_',
    'é+',
  ])('takes %j, and promtool takes the rules written', async (pattern) => {
    const config = join(dir, 'taken.yml');
    const out = join(dir, 'taken.rules.yml');
    writeFileSync(config, stringify({ objectives: [{ name: 'edr', integration: pattern, target: 0.95 }] }));
    const r = await runBuiltCli(['rules', '--config', config, '--output', out], {});
    expect([r.code, r.stderr]).toEqual([0, '']);
    const check = await runPromtool(['check', 'rules', out]);
    expect(check.code, check.output).toBe(0);
    expect((await promtoolTakes(pattern, join(dir, 'taken.check.yml'))).ok).toBe(true);
  }, 60_000);
});
