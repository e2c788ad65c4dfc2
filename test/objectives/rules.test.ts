import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { defaultObjectiveRules, HAND_WRITTEN_RULE_FILES, OBJECTIVES_RULES_FILE, withRunbookUrls } from '../../scripts/rules.js';
import type { Objective } from '../../src/config/objectives.js';
import { objectiveRuleGroups, objectiveRulesYaml, type AlertingRule, type RecordingRule } from '../../src/objectives/rules.js';

const RUNBOOKS = readFileSync(new URL('../../docs/runbooks.md', import.meta.url), 'utf8');
// A template of one's own, as a user gives it: the project names no address of its own.
const RUNBOOK_BASE = 'https://docs.example.com/posture/runbooks.html#';

// Written out from the issue, not imported: the windows every objective records for the dashboards,
// and each window's burn-rate pairs worked out by hand (long windows of window / 720, / 120, / 30,
// / 10; short ones a twelfth of the long; nothing under 5m). The factors never change.
const WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'];
const FACTORS = [14.4, 6, 3, 1];
const PAIRS: Record<string, Array<[string, string]>> = {
  // The SRE workbook's own.
  '30d': [['1h', '5m'], ['6h', '30m'], ['1d', '2h'], ['3d', '6h']],
  // 672h / 720 = 56m, its twelfth 4m40s raised to 5m; 5h36m and 28m; 22h24m and 1h52m; 2d19h12m and 5h36m.
  '28d': [['56m', '5m'], ['5h36m', '28m'], ['22h24m', '1h52m'], ['2d19h12m', '5h36m']],
  // 168h / 720 = 14m (its twelfth 70 s, raised to 5m); 1h24m and 7m; 5h36m and 28m; 16h48m and 1h24m.
  '7d': [['14m', '5m'], ['1h24m', '7m'], ['5h36m', '28m'], ['16h48m', '1h24m']],
  // 24h / 720 = 2m and its 10 s both raised to 5m; 12m (1m raised); 48m (4m raised); 2h24m and 12m.
  '1d': [['5m', '5m'], ['12m', '5m'], ['48m', '5m'], ['2h24m', '12m']],
};

const objective = (o: Partial<Objective> & Pick<Objective, 'name'>): Objective => ({ stage: 'configuration', target: 0.95, window: '28d', ...o });
const isAlert = (r: RecordingRule | AlertingRule): r is AlertingRule => 'alert' in r;
const burnRateAlerts = (o: Objective) => objectiveRuleGroups([o])[0]!.rules.filter(isAlert).filter((r) => r.alert === 'PostureObjectiveBurnRate');

/** The comparisons of a burn-rate alert's expression, in order: `rate<W>{...} / <budget> > <factor>`. */
function comparisons(expr: string): { window: string; budget: number; factor: number }[] {
  return [...expr.matchAll(/:rate(\w+)\{[^}]*\} \/ ([\d.]+) > ([\d.]+)/g)].map((m) => ({ window: m[1]!, budget: Number(m[2]), factor: Number(m[3]) }));
}

describe('burn-rate alerts', () => {
  it.each(Object.entries(PAIRS))('use the workbook\'s factors over windows scaled to a %s window (%j)', (window, pairs) => {
    const alerts = burnRateAlerts(objective({ name: 'x', target: 0.99, window }));
    expect(alerts.map((a) => a.labels.severity)).toEqual(['critical', 'warning']);
    // Each pair's two comparisons use its factor, on the burn rate (ratio / (1 - target)): long window, then short.
    const found = alerts.flatMap((a) => comparisons(a.expr));
    expect(found).toEqual(pairs.flatMap(([long, short], i) => [long, short].map((w) => ({ window: w, budget: 0.01, factor: FACTORS[i]! }))));
  });

  it('keep the factors whatever the target, and pair long and short windows as (long and short) or (long and short)', () => {
    for (const alert of burnRateAlerts(objective({ name: 'x', target: 0.9, window: '7d' }))) {
      expect(alert.expr.replace(/\s+/g, ' ').trim()).toMatch(/^\( \S+ \/ 0\.1 > [\d.]+ and \S+ \/ 0\.1 > [\d.]+ \) or \( \S+ \/ 0\.1 > [\d.]+ and \S+ \/ 0\.1 > [\d.]+ \)$/);
    }
    expect(burnRateAlerts(objective({ name: 'x', target: 0.9, window: '7d' })).flatMap((a) => comparisons(a.expr).map((c) => c.factor))).toEqual([14.4, 14.4, 6, 6, 3, 3, 1, 1]);
  });

  it('name the windows and factors in the description', () => {
    const [page, ticket] = burnRateAlerts(objective({ name: 'x', window: '28d' }));
    expect(page!.annotations.description).toContain('(threshold 14.4 over 56m and 5m, or 6 over 5h36m and 28m).');
    expect(ticket!.annotations.description).toContain('(threshold 3 over 22h24m and 1h52m, or 1 over 2d19h12m and 5h36m).');
  });

  it('carry no runbook_url without a template', () => {
    for (const rule of objectiveRuleGroups([objective({ name: 'a' })])[0]!.rules.filter(isAlert)) expect(Object.keys(rule.annotations).sort()).toEqual(['description', 'summary']);
  });

  it('stay exactly as they were for a 30d objective (the groups of test/fixtures/objectives/thirty-days.rules.yml)', () => {
    const config = parse(readFileSync(new URL('../fixtures/objectives/thirty-days.yml', import.meta.url), 'utf8')) as { objectives: Array<Omit<Objective, 'stage'> & { stage: Objective['stage'] }> };
    const before = readFileSync(new URL('../fixtures/objectives/thirty-days.rules.yml', import.meta.url), 'utf8');
    const now = objectiveRulesYaml(config.objectives);
    expect(now.slice(now.indexOf('\ngroups:\n') + 1)).toBe(before.slice(before.indexOf('groups:\n')));
  });
});

describe('error ratios', () => {
  it('records 1 - sum of compliant / sum of eligible over every dashboard window and the objective window, of the stage, whole portal only, per portal and integration', () => {
    const [group] = objectiveRuleGroups([objective({ name: 'edr', integration: 'crowdstrike|s1', stage: 'function', window: '30d' })]);
    const records = group!.rules.filter((r): r is RecordingRule => !isAlert(r));
    const ratios = records.filter((r) => r.record.startsWith('posture:objective_error_ratio:'));
    expect(ratios.map((r) => r.record)).toEqual([...WINDOWS, '30d'].map((w) => `posture:objective_error_ratio:rate${w}`));
    for (const [i, r] of ratios.entries()) {
      const w = [...WINDOWS, '30d'][i]!;
      const selector = '{stage="function",tag="",integration=~"(?s:crowdstrike|s1)"}';
      expect(r.expr.replace(/\s+/g, ' ').trim()).toBe(
        `1 - ( sum by (portal, integration) (sum_over_time(posture_vitals_compliant_devices${selector}[${w}])) / (sum by (portal, integration) (sum_over_time(posture_vitals_eligible_devices${selector}[${w}])) > 0) )`,
      );
      expect(r.labels).toEqual({ objective: 'edr' });
    }
    const budget = records.find((r) => r.record === 'posture:objective_error_budget_remaining:ratio')!;
    expect(budget.expr.trim()).toBe('1 - posture:objective_error_ratio:rate30d{objective="edr"} / 0.05');
    expect(budget.labels).toEqual({ objective: 'edr' });
  });

  it('records the target as a series labelled with the objective, for dashboards (burn rate = error ratio / (1 - target))', () => {
    const [group] = objectiveRuleGroups([objective({ name: 'edr', target: 0.995, window: '7d' })]);
    const target = group!.rules.filter((r): r is RecordingRule => !isAlert(r)).filter((r) => r.record === 'posture:objective_target:ratio');
    expect(target.map((r) => [r.expr.trim(), r.labels])).toEqual([['vector(0.995)', { objective: 'edr' }]]);
  });

  it('leaves the integration matcher out for every integration', () => {
    const [group] = objectiveRuleGroups([objective({ name: 'all' })]);
    expect(group!.rules[0]!.expr).toContain('posture_vitals_compliant_devices{stage="configuration",tag=""}[5m]');
  });

  it('quotes the expression as a PromQL string', () => {
    const [group] = objectiveRuleGroups([objective({ name: 'q', integration: 'a"b\\.c' })]);
    expect(group!.rules[0]!.expr).toContain('integration=~"(?s:a\\"b\\\\.c)"');
  });

  it('records the dashboards\' windows, then the objective\'s own alert windows from the shortest, then its window, each once', () => {
    const names = (window: string) =>
      objectiveRuleGroups([objective({ name: 'day', window })])[0]!.rules.filter((r): r is RecordingRule => !isAlert(r)).map((r) => r.record.replace('posture:objective_error_ratio:rate', ''));
    // 1d: its alert windows 5m, 12m, 48m, 2h24m; 5m and 1d are dashboard windows already.
    expect(names('1d')).toEqual([...WINDOWS, '12m', '48m', '2h24m', 'posture:objective_error_budget_remaining:ratio', 'posture:objective_target:ratio']);
    expect(names('28d')).toEqual([...WINDOWS, '28m', '56m', '1h52m', '5h36m', '22h24m', '2d19h12m', '28d', 'posture:objective_error_budget_remaining:ratio', 'posture:objective_target:ratio']);
    expect(names('30d')).toEqual([...WINDOWS, '30d', 'posture:objective_error_budget_remaining:ratio', 'posture:objective_target:ratio']);
  });

  it('gives each objective its group, and no two rules of a file the same name and labels (promtool lint)', () => {
    const groups = objectiveRuleGroups([objective({ name: 'a', window: '7d' }), objective({ name: 'b', window: '30d', stage: 'deployment' })]);
    expect(groups.map((g) => g.name)).toEqual(['posture-objective-a', 'posture-objective-b']);
    const keys = groups.flatMap((g) => g.rules.map((r) => JSON.stringify([isAlert(r) ? r.alert : r.record, Object.entries(r.labels).sort()])));
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('alerts', () => {
  const rules = objectiveRuleGroups([objective({ name: 'a' })], `${RUNBOOK_BASE}{alert_lower}`)[0]!.rules.filter(isAlert);
  const anchors = new Set([...RUNBOOKS.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')));

  it('are the two burn-rate severities and the exhausted budget, labelled with the objective', () => {
    expect(rules.map((r) => [r.alert, r.labels])).toEqual([
      ['PostureObjectiveBurnRate', { severity: 'critical', objective: 'a' }],
      ['PostureObjectiveBurnRate', { severity: 'warning', objective: 'a' }],
      ['PostureObjectiveBudgetExhausted', { severity: 'warning', objective: 'a' }],
    ]);
    expect(rules[2]!.expr.trim()).toBe('posture:objective_error_budget_remaining:ratio{objective="a"} <= 0');
  });

  it.each(rules.map((r) => [`${r.alert} ${r.labels.severity}`, r]))('%s follows the monitoring-mixin annotation conventions', (_name, rule) => {
    const { summary, description, runbook_url: runbook, ...rest } = rule.annotations;
    expect(rest).toEqual({});
    expect(summary).not.toContain('{{');
    expect(summary).toMatch(/^[A-Z].*\.$/);
    expect(description).toContain('{{ $labels.integration }}');
    expect(description).toContain('{{ $labels.portal }}');
    expect(description).toContain('$value');
    expect(runbook!.startsWith(RUNBOOK_BASE)).toBe(true);
    const anchor = runbook!.slice(RUNBOOK_BASE.length);
    expect(anchor).toBe(rule.alert.toLowerCase());
    expect(anchors.has(anchor), `docs/runbooks.md has no heading for ${rule.alert}`).toBe(true);
  });
});

describe('the rule file', () => {
  it('is YAML with one groups list, each objective in its header with its windows and thresholds', () => {
    const text = objectiveRulesYaml([objective({ name: 'a', window: '7d', target: 0.99 })]);
    expect(text).toContain(
      [
        '#   a: 99 % at the configuration stage of every integration over 7d; error budget 1 %',
        '#     page (critical): burn rate above 14.4 over 14m and 5m (error ratio above 0.144), or above 6 over 1h24m and 7m (error ratio above 0.06)',
        '#     ticket (warning): burn rate above 3 over 5h36m and 28m (error ratio above 0.03), or above 1 over 16h48m and 1h24m (error ratio above 0.01)',
        '',
        'groups:',
      ].join('\n'),
    );
    const doc = parse(text) as { groups: unknown[] };
    expect(doc.groups).toEqual(objectiveRuleGroups([objective({ name: 'a', window: '7d', target: 0.99 })]));
    expect(text).not.toMatch(/[&*]a\d/);
  });

  it('says in its header which pair can never fire (factor × budget above 1), and still writes the alert', () => {
    const o = objective({ name: 'loose', window: '30d', target: 0.9 });
    expect(objectiveRulesYaml([o])).toContain('\n#     the pair 14.4 over 1h and 5m can never fire: the burn rate is at most 1 / 0.1 = 10 (every device non-compliant); the other pairs still alert\n');
    expect(burnRateAlerts(o).map((a) => a.labels.severity)).toEqual(['critical', 'warning']);
    // At 95 % every pair can fire (14.4 × 0.05 = 0.72).
    expect(objectiveRulesYaml([objective({ name: 'tight', window: '30d' })])).not.toContain('can never fire');
  });

  it('is written for no objectives as an empty list', () => {
    expect(parse(objectiveRulesYaml([]))).toEqual({ groups: [] });
  });

  it('says in its header that it has no runbook links, and how to give them', () => {
    expect(objectiveRulesYaml([])).toContain(
      "\n# Runbook links: none (no runbook_url template was given). To give every alert a `runbook_url`,\n# write this file with a URL template: posture-exporter rules --runbook-url 'https://wiki.example.com/posture/{alert}'\n",
    );
    expect(defaultObjectiveRules()).toContain("\n# write this file with a URL template: POSTURE_RUNBOOK_URL='https://wiki.example.com/posture/{alert}' npm run rules\n");
    expect(objectiveRulesYaml([], 'https://wiki.example.com/p/{alert}')).toContain(
      "\n# Runbook links: each alert's `runbook_url` is https://wiki.example.com/p/{alert} with the alert's name, written by\n# posture-exporter rules --runbook-url 'https://wiki.example.com/p/{alert}' (without the template, none).\n",
    );
  });

  it('ships for the default objective as infra/prometheus/rules/posture-objectives.rules.yml, up to date (npm run rules)', () => {
    expect(readFileSync(OBJECTIVES_RULES_FILE, 'utf8')).toBe(defaultObjectiveRules());
    const doc = parse(readFileSync(OBJECTIVES_RULES_FILE, 'utf8')) as { groups: Array<{ name: string; rules: Array<{ labels: Record<string, string> }> }> };
    expect(doc.groups.map((g) => g.name)).toEqual(['posture-objective-configuration']);
    expect(doc.groups[0]!.rules[0]!.labels).toEqual({ objective: 'configuration' });
  });

  it('gives every alert the runbook_url of the template, the alert named as written or in lower case', () => {
    const groups = objectiveRuleGroups([objective({ name: 'a' })], 'https://wiki.example.com/posture/{alert}?from={alert_lower}');
    expect(groups[0]!.rules.filter(isAlert).map((r) => r.annotations.runbook_url)).toEqual([
      'https://wiki.example.com/posture/PostureObjectiveBurnRate?from=postureobjectiveburnrate',
      'https://wiki.example.com/posture/PostureObjectiveBurnRate?from=postureobjectiveburnrate',
      'https://wiki.example.com/posture/PostureObjectiveBudgetExhausted?from=postureobjectivebudgetexhausted',
    ]);
  });
});

describe('the hand-written shipped rule files (npm run rules)', () => {
  it.each(HAND_WRITTEN_RULE_FILES)('%s has no runbook link, and says so in its header (POSTURE_RUNBOOK_URL unset)', (file) => {
    const text = readFileSync(file, 'utf8');
    expect(withRunbookUrls(text)).toBe(text);
    expect(text).not.toContain('runbook_url:');
    expect(text).toContain("# write this file with a URL template: POSTURE_RUNBOOK_URL='https://wiki.example.com/posture/{alert}' npm run rules\n");
  });

  const FILE = [
    '# rules.',
    '',
    'groups:',
    '  - name: g',
    '    rules:',
    '      - record: r',
    '        expr: up',
    '      - alert: PostureRedAlertsOpen',
    '        expr: up == 0',
    '        annotations:',
    "          summary: 'x'",
    '          description: |',
    '            two lines',
    '',
    '            of text',
    '',
    '      - alert: PostureShardMissing',
    '        expr: up == 1',
    '        annotations:',
    "          summary: 'y'",
    '',
  ];
  const HEADER_NONE = [
    '#',
    '# Runbook links: none (no runbook_url template was given). To give every alert a `runbook_url`,',
    "# write this file with a URL template: POSTURE_RUNBOOK_URL='https://wiki.example.com/posture/{alert}' npm run rules",
    '# ({alert} is the alert\'s name, {alert_lower} the name in lower case; docs/alerting.md, "Loading the rules").',
  ];
  const linked = (template: string, [red, shard]: [string, string]) => [
    '# rules.',
    '#',
    `# Runbook links: each alert's \`runbook_url\` is ${template} with the alert's name, written by`,
    `# POSTURE_RUNBOOK_URL='${template}' npm run rules (without the template, none).`,
    ...FILE.slice(1, 14),
    '            of text',
    `          runbook_url: '${red}'`,
    '',
    ...FILE.slice(16, 20),
    `          runbook_url: '${shard}'`,
    '',
  ];

  it('adds each alert its runbook_url after its annotations, from the alert above it, quoted for YAML, and says so in the header', () => {
    const text = withRunbookUrls(FILE.join('\n'), "https://wiki.example.com/it's/{alert}");
    expect(text.split('\n')).toEqual(linked("https://wiki.example.com/it's/{alert}", ["https://wiki.example.com/it''s/PostureRedAlertsOpen", "https://wiki.example.com/it''s/PostureShardMissing"]));
    expect(parse(text)).toMatchObject({ groups: [{ rules: [{}, { annotations: { runbook_url: "https://wiki.example.com/it's/PostureRedAlertsOpen", description: 'two lines\n\nof text\n' } }, { annotations: { runbook_url: "https://wiki.example.com/it's/PostureShardMissing" } }] }] });
  });

  it('replaces the links and the header of another template, and removes both without one, back to the file as it was', () => {
    const once = withRunbookUrls(FILE.join('\n'), 'https://a.example.com/{alert}');
    expect(withRunbookUrls(once, 'https://b.example.com/{alert_lower}').split('\n')).toEqual(linked('https://b.example.com/{alert_lower}', ['https://b.example.com/postureredalertsopen', 'https://b.example.com/postureshardmissing']));
    expect(withRunbookUrls(once).split('\n')).toEqual([FILE[0], ...HEADER_NONE, ...FILE.slice(1)]);
  });
});
