import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { OBJECTIVES_RULES_FILE } from '../../scripts/rules.js';
import { runMain } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'posture-rules-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONFIG = join(dir, 'posture.yaml');
writeFileSync(CONFIG, 'objectives:\n  - {name: edr, integration: crowdstrike, target: 0.99, window: 7d}\n  - {name: deployed, stage: deployment, target: 0.9, window: 30d}\n');

describe('posture-exporter rules', () => {
  it('writes the default objective\'s rules on stdout without a config (the shipped file), needing no portal', async () => {
    const r = await runMain(['rules'], { env: {} });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // The same file but for the command its header says to write it with (the shipped one: npm run rules).
    const shipped = readFileSync(OBJECTIVES_RULES_FILE, 'utf8');
    const npm = "POSTURE_RUNBOOK_URL='https://wiki.example.com/posture/{alert}' npm run rules";
    expect(shipped).toContain(npm);
    expect(r.stdout).toBe(shipped.replace(npm, "posture-exporter rules --runbook-url 'https://wiki.example.com/posture/{alert}'"));
  });

  it('writes one group per objective of --config into --output', async () => {
    const out = join(dir, 'objectives.rules.yml');
    const r = await runMain(['rules', '--config', CONFIG, '--output', out], { env: {} });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
    const doc = parse(readFileSync(out, 'utf8')) as { groups: Array<{ name: string; rules: Array<{ record?: string }> }> };
    expect(doc.groups.map((g) => g.name)).toEqual(['posture-objective-edr', 'posture-objective-deployed']);
    expect(doc.groups[0]!.rules.map((r) => r.record).filter(Boolean)).toContain('posture:objective_error_ratio:rate7d');
    expect(doc.groups[1]!.rules.map((r) => r.record).filter(Boolean)).toContain('posture:objective_error_ratio:rate30d');
  });

  it('reads the config file from POSTURE_CONFIG_FILE too', async () => {
    const r = await runMain(['rules'], { env: { POSTURE_CONFIG_FILE: CONFIG } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('name: posture-objective-deployed');
  });

  it.each([
    [['rules', '--page-size', '10'], 'rules takes only --config, --runbook-url and --output: drop --page-size.'],
    [['rules', '--days', '3', '--resume'], 'rules takes only --config, --runbook-url and --output: drop --days, --resume.'],
  ])('refuses flags it does not read: %j', async (argv, message) => {
    const r = await runMain(argv, { env: {} });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`config error: ${message}\n`);
    expect(r.stdout).toBe('');
  });

  it('refuses an invalid objective with one line naming it, exit 2, writing nothing', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'objectives:\n  - {name: edr, target: 0.99, window: 1 week}\n');
    const r = await runMain(['rules', '--config', bad], { env: {} });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`config error: config file ${bad}: objectives[0].window="1 week" is not valid: give a Prometheus duration of at least 1d, such as 7d, 28d or 4w (default 28d).\n`);
    expect(r.stdout).toBe('');
  });

  it('links every alert to the runbook_url template of --runbook-url, POSTURE_RUNBOOK_URL or the config file', async () => {
    const links = (out: string) => (parse(out) as { groups: Array<{ rules: Array<{ annotations?: { runbook_url: string } }> }> }).groups.flatMap((g) => g.rules.flatMap((r) => (r.annotations ? [r.annotations.runbook_url] : [])));
    const byFlag = await runMain(['rules', '--runbook-url', 'https://wiki.example.com/{alert}'], { env: {} });
    expect(byFlag.code).toBe(0);
    expect(links(byFlag.stdout)).toEqual(['https://wiki.example.com/PostureObjectiveBurnRate', 'https://wiki.example.com/PostureObjectiveBurnRate', 'https://wiki.example.com/PostureObjectiveBudgetExhausted']);
    const byEnv = await runMain(['rules'], { env: { POSTURE_RUNBOOK_URL: 'https://env.example.com/#{alert_lower}' } });
    expect(links(byEnv.stdout)).toContain('https://env.example.com/#postureobjectivebudgetexhausted');
    const file = join(dir, 'runbooks.yaml');
    writeFileSync(file, 'runbook_url: https://file.example.com/{alert}\n');
    expect(links((await runMain(['rules', '--config', file], { env: {} })).stdout)).toContain('https://file.example.com/PostureObjectiveBurnRate');
  });

  it('refuses a runbook_url that names no alert, writing nothing', async () => {
    const r = await runMain(['rules', '--runbook-url', 'https://wiki.example.com/runbooks'], { env: {} });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^config error: --runbook-url="https:\/\/wiki.example.com\/runbooks" is not valid: it names no alert/);
  });

  it('says when --output cannot be written', async () => {
    const out = join(dir, 'missing-folder', 'rules.yml');
    const r = await runMain(['rules', '--output', out], { env: {} });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`config error: --output ${out}: cannot write it (ENOENT): give a path in a folder that exists and may be written.\n`);
  });
});
