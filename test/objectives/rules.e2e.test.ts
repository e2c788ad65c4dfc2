/**
 * The rules `posture-exporter rules` writes, read by promtool: the built CLI on a config with two
 * objectives whose windows are not 28d, `promtool check rules` with every lint, then a promtool
 * unit test on synthetic series (test/fixtures/objectives/two-windows.test.yml, values by hand).
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBuiltCli } from '../support/cli.js';
import { REPO_ROOT, runPromtool } from '../infra/support.js';

const FIXTURES = join(REPO_ROOT, 'test/fixtures/objectives');
const OBJECTIVES_RULES = join(REPO_ROOT, 'infra/prometheus/rules/posture-objectives.rules.yml');
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'posture-objectives-'));
  copyFileSync(join(FIXTURES, 'config.yml'), join(dir, 'config.yml'));
  copyFileSync(join(FIXTURES, 'two-windows.test.yml'), join(dir, 'two-windows.test.yml'));
  const r = await runBuiltCli(['rules', '--config', join(dir, 'config.yml'), '--output', join(dir, 'rules.yml')], {});
  expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('posture-exporter rules, read by promtool', () => {
  it('writes rules that promtool check rules accepts with every lint and no finding', async () => {
    const r = await runPromtool(['check', 'rules', '--lint=all', '--lint-fatal', join(dir, 'rules.yml')]);
    expect(r.code, r.output).toBe(0);
    // 7d: 14 error ratios (the dashboards' 7, its own alert windows 7m, 14m, 28m, 1h24m, 5h36m, 16h48m, and 7d);
    // 30d: 8 (its alert windows are the dashboards'). Each: the budget left, the target, 2 burn-rate alerts, the exhausted budget.
    expect(r.output).toContain('SUCCESS: 32 rules found');
    expect(r.output).not.toMatch(/WARNING|duplicate/i);
  });

  it('passes the unit test on synthetic series: error ratios to 1e-9, the budget left, and which severities fire when', async () => {
    const r = await runPromtool(['test', 'rules', 'two-windows.test.yml'], dir);
    expect(r.code, r.output).toBe(0);
  }, 120_000);

  it('writes the same rules on stdout without --output', async () => {
    const r = await runBuiltCli(['rules', '--config', join(dir, 'config.yml')], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(readFileSync(join(dir, 'rules.yml'), 'utf8'));
  });

  it('ships default rules that promtool check rules accepts with every lint and no finding', async () => {
    const r = await runPromtool(['check', 'rules', '--lint=all', '--lint-fatal', OBJECTIVES_RULES]);
    expect(r.code, r.output).toBe(0);
    expect(r.output).not.toMatch(/WARNING|duplicate/i);
  });
});
