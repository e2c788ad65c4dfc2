import { describe, expect, it } from 'vitest';
import { loadConfig, loadObjectives } from '../../src/config/load.js';
import { describeObjective, durationMs } from '../../src/config/objectives.js';
import { ConfigErrors } from '../../src/errors.js';
import { thrownBy } from '../support/errors.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-secret-value-123' };
const FILE = '/etc/posture.yaml';

/** loadConfig over a YAML config file holding `yaml`. */
function load(yaml: string) {
  return loadConfig({ env: { ...base, POSTURE_CONFIG_FILE: FILE }, readFile: () => yaml });
}

/** The messages loadConfig refuses `yaml` with. */
function problems(yaml: string): string[] {
  return thrownBy(() => load(yaml), ConfigErrors).problems.map((p) => p.message);
}

describe('objectives in the config file', () => {
  it('reads each entry, filling in the documented defaults (every integration, configuration stage, 28d)', () => {
    const c = load(`
objectives:
  - name: edr-configured
    integration: crowdstrike|sentinelone
    stage: function
    target: 0.99
    window: 7d
  - name: all
    target: 0.9
`);
    expect(c.objectives).toEqual([
      { name: 'edr-configured', integration: 'crowdstrike|sentinelone', stage: 'function', target: 0.99, window: '7d' },
      { name: 'all', stage: 'configuration', target: 0.9, window: '28d' },
    ]);
  });

  it('has one default objective when the file has no `objectives` (configuration stage, 95 %, 28d, every integration), and none for []', () => {
    expect(loadConfig({ env: base }).objectives).toEqual([{ name: 'configuration', stage: 'configuration', target: 0.95, window: '28d' }]);
    expect(load('objectives: []\n').objectives).toEqual([]);
  });

  it('is read from inline JSON (POSTURE_CONFIG) too', () => {
    const c = loadConfig({ env: { ...base, POSTURE_CONFIG: JSON.stringify({ objectives: [{ name: 'x', target: 0.5 }] }) } });
    expect(c.objectives).toEqual([{ name: 'x', stage: 'configuration', target: 0.5, window: '28d' }]);
  });

  const at = `config file ${FILE}: objectives`;
  const INTEGRATION_FIX = 'give a regular expression in Prometheus\'s syntax (RE2, as Go reads it) matched against the whole integration key (e.g. "crowdstrike|sentinelone"), or leave it out for every integration.';
  it.each([
    ['a name with capitals', '- {name: EDR, target: 0.9}', `${at}[0].name="EDR" is not valid: give a name of lower-case letters, digits and hyphens (it becomes the \`objective\` label).`],
    ['a missing name', '- {target: 0.9}', `${at}[0].name is missing: give a name of lower-case letters, digits and hyphens (it becomes the \`objective\` label).`],
    ['a repeated name', '- {name: a, target: 0.9}\n  - {name: a, target: 0.8}', `${at}[1].name="a" repeats an earlier objective's name: give each objective a distinct name.`],
    ['an integration that is not a regular expression', '- {name: a, target: 0.9, integration: "crowd(strike"}', `${at}[0].integration="crowd(strike" is not valid (Prometheus refuses it: missing closing ): \`crowd(strike\`): ${INTEGRATION_FIX}`],
    ['an integration with a lookahead (RE2 has none)', '- {name: a, target: 0.9, integration: "(?!intune).*"}', `${at}[0].integration="(?!intune).*" is not valid (Prometheus refuses it: invalid or unsupported Perl syntax: \`(?!\`): ${INTEGRATION_FIX}`],
    // JavaScript reads \u0073 as "s"; Go's regexp has no \u escape, and Prometheus refused the whole rule file.
    ['an integration with a \\u escape', "- {name: a, target: 0.9, integration: 'crowd\\u0073trike'}", `${at}[0].integration="crowd\\\\u0073trike" is not valid (Prometheus refuses it: invalid escape sequence: \`\\u\`): ${INTEGRATION_FIX}`],
    ['an integration repeated more than 1000 times', "- {name: a, target: 0.9, integration: 'x{1001}'}", `${at}[0].integration="x{1001}" is not valid (Prometheus refuses it: invalid repeat count: \`{1001}\`): ${INTEGRATION_FIX}`],
    ['an integration with a backreference', "- {name: a, target: 0.9, integration: '(edr)\\1'}", `${at}[0].integration="(edr)\\\\1" is not valid (Prometheus refuses it: invalid escape sequence: \`\\1\`): ${INTEGRATION_FIX}`],
    ['an integration balanced only once anchored', "- {name: a, target: 0.9, integration: 'a)|(b'}", `${at}[0].integration="a)|(b" is not valid (Prometheus refuses it: unexpected ): \`a)|(b\`): ${INTEGRATION_FIX}`],
    ['an empty integration', '- {name: a, target: 0.9, integration: ""}', `${at}[0].integration="" is not valid: ${INTEGRATION_FIX}`],
    ['an unknown stage', '- {name: a, target: 0.9, stage: health}', `${at}[0].stage="health" is not valid: use one of deployment, function, configuration (default configuration).`],
    ['a target of 1', '- {name: a, target: 1}', `${at}[0].target=1 is not valid: give a number between 0 and 1, both excluded (0.95 for 95 % of devices).`],
    ['a target of 0', '- {name: a, target: 0}', `${at}[0].target=0 is not valid: give a number between 0 and 1, both excluded (0.95 for 95 % of devices).`],
    ['a target as a percentage', '- {name: a, target: 95%}', `${at}[0].target="95%" is not valid: give a number between 0 and 1, both excluded (0.95 for 95 % of devices).`],
    ['a missing target', '- {name: a}', `${at}[0].target is missing: give a number between 0 and 1, both excluded (0.95 for 95 % of devices).`],
    ['a window that is not a Prometheus duration', '- {name: a, target: 0.9, window: 28 days}', `${at}[0].window="28 days" is not valid: give a Prometheus duration of at least 1d, such as 7d, 28d or 4w (default 28d).`],
    ['a window shorter than a day', '- {name: a, target: 0.9, window: 12h}', `${at}[0].window="12h" is not valid: give a Prometheus duration of at least 1d, such as 7d, 28d or 4w (default 28d).`],
    ['a window as a number', '- {name: a, target: 0.9, window: 28}', `${at}[0].window=28 is not valid: give a Prometheus duration of at least 1d, such as 7d, 28d or 4w (default 28d).`],
    ['an unknown key', '- {name: a, target: 0.9, slo: 0.9}', `${at}[0] has an unknown key \`slo\`: use name, integration, stage, target, window.`],
    ['an entry that is not a mapping', '- edr', `${at}[0] must be a mapping with name, target and optionally integration, stage, window (got "edr").`],
  ])('refuses %s with one line naming it and the fix', (_what, entries, message) => {
    expect(problems(`objectives:\n  ${entries}\n`)).toEqual([message]);
  });

  it('refuses `objectives` that is not a list', () => {
    expect(problems('objectives: {name: a, target: 0.9}\n')).toEqual([`${at} must be a list of objectives (each a mapping with name, target and optionally integration, stage, window), or [] for none.`]);
  });

  it('reports every bad value of every entry at once', () => {
    expect(problems('objectives:\n  - {name: A, target: 2, window: 1x}\n  - {name: ok, target: 0.5}\n')).toHaveLength(3);
  });

  it('names its setting `objectives` on each error', () => {
    expect(thrownBy(() => load('objectives: [{name: A, target: 0.9}]'), ConfigErrors).problems.map((p) => p.setting)).toEqual(['objectives']);
  });
});

describe('loadObjectives (the rules command)', () => {
  it('needs no portal: only the objectives of the file', () => {
    const { objectives } = loadObjectives({ env: {}, flags: { config_file: FILE }, readFile: () => 'objectives: [{name: a, target: 0.9, window: 30d}]' });
    expect(objectives).toEqual([{ name: 'a', stage: 'configuration', target: 0.9, window: '30d' }]);
    expect(loadObjectives({ env: {} }).objectives).toEqual([{ name: 'configuration', stage: 'configuration', target: 0.95, window: '28d' }]);
  });

  it('refuses bad objectives and unknown keys of the file', () => {
    const err = thrownBy(() => loadObjectives({ env: { POSTURE_CONFIG: '{"objectives":[{"name":"a","target":1.5}],"objective":1}' } }), ConfigErrors);
    expect(err.problems.map((p) => p.message)).toEqual([
      'POSTURE_CONFIG: unknown setting `objective`: did you mean `objectives`? Rename it, or remove it.',
      'POSTURE_CONFIG: objectives[0].target=1.5 is not valid: give a number between 0 and 1, both excluded (0.95 for 95 % of devices).',
    ]);
  });
});

describe('Prometheus durations', () => {
  it.each([
    ['28d', 28 * 86_400_000],
    ['4w', 28 * 86_400_000],
    ['1y', 365 * 86_400_000],
    ['1h30m', 5_400_000],
    ['1d12h', 36 * 3_600_000],
    ['500ms', 500],
  ])('reads %s', (text, ms) => {
    expect(durationMs(text)).toBe(ms);
  });

  it.each(['', '1', 'd', '1.5d', '1h1d', '28 d', '-1d', '1D'])('refuses %j', (text) => {
    expect(durationMs(text)).toBeUndefined();
  });
});

describe('check-config line', () => {
  it('says the error budget in devices over the window', () => {
    expect(describeObjective({ name: 'configuration', stage: 'configuration', target: 0.95, window: '28d' })).toBe('objective configuration: configuration stage of every integration, target 95 %: error budget 5 % of devices over 28d');
    expect(describeObjective({ name: 'edr', integration: 'crowdstrike', stage: 'function', target: 0.999, window: '7d' })).toBe('objective edr: function stage of integrations matching /crowdstrike/, target 99.9 %: error budget 0.1 % of devices over 7d');
  });
});
