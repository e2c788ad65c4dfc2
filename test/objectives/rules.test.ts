import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { defaultObjectiveRules, OBJECTIVES_RULES_FILE } from '../../scripts/rules.js';
import type { Objective } from '../../src/config/objectives.js';
import { objectiveRuleGroups, objectiveRulesYaml, type AlertingRule, type RecordingRule } from '../../src/objectives/rules.js';

const RUNBOOKS = readFileSync(new URL('../../docs/runbooks.md', import.meta.url), 'utf8');
const RUNBOOK_BASE = 'https://github.com/posture-exporter/posture-exporter/blob/main/docs/runbooks.md#';

// Written out from the issue, not imported: the windows every objective records, and the pairs.
const WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'];
const HOURS: Record<string, number> = { '1h': 1, '6h': 6, '1d': 24, '3d': 72, '7d': 168, '28d': 672, '30d': 720 };
const SHARE: Record<string, number> = { '1h': 0.02, '6h': 0.05, '1d': 0.1, '3d': 0.1 };
const PAIRS = { critical: [['1h', '5m'], ['6h', '30m']], warning: [['1d', '2h'], ['3d', '6h']] } as const;

const objective = (o: Partial<Objective> & Pick<Objective, 'name'>): Objective => ({ stage: 'configuration', target: 0.95, window: '28d', ...o });
const isAlert = (r: RecordingRule | AlertingRule): r is AlertingRule => 'alert' in r;

/** The thresholds of a burn-rate alert's expression: `/ <budget> > <threshold>`, in order. */
function thresholds(expr: string): { budget: number; threshold: number }[] {
  return [...expr.matchAll(/\/ ([\d.]+) > ([\d.]+)/g)].map((m) => ({ budget: Number(m[1]), threshold: Number(m[2]) }));
}

describe('burn-rate thresholds', () => {
  // The SRE workbook's (30d) and the figures, rounded as the issue gives them.
  it.each([
    ['30d', [14.4, 6, 3, 1]],
    ['28d', [13.44, 5.6, 2.8, 0.93]],
    ['7d', [3.36, 1.4, 0.7, 0.23]],
  ])('are share × window / long window for a %s window (%j)', (window, rounded) => {
    const o = objective({ name: 'x', target: 0.99, window });
    const alerts = objectiveRuleGroups([o])[0]!.rules.filter(isAlert).filter((r) => r.alert === 'PostureObjectiveBurnRate');
    expect(alerts.map((a) => a.labels.severity)).toEqual(['critical', 'warning']);
    const longs = [...PAIRS.critical, ...PAIRS.warning].map(([long]) => long);
    const expected = longs.map((long) => (SHARE[long]! * HOURS[window]!) / HOURS[long]!);
    expect(expected.map((x) => Math.round(x * 100) / 100)).toEqual(rounded);
    // Each pair's two comparisons use the long window's threshold, on the burn rate (ratio / (1 - target)).
    const found = alerts.flatMap((a) => thresholds(a.expr));
    expect(found).toHaveLength(8);
    found.forEach((t, i) => {
      expect(t.budget).toBeCloseTo(0.01, 12);
      expect(t.threshold).toBeCloseTo(expected[Math.floor(i / 2)]!, 9);
    });
  });

  it('pairs each long window with its short window, critical 1h/5m or 6h/30m, warning 1d/2h or 3d/6h', () => {
    const alerts = objectiveRuleGroups([objective({ name: 'x' })])[0]!.rules.filter(isAlert).filter((r) => r.alert === 'PostureObjectiveBurnRate');
    for (const alert of alerts) {
      const windows = [...alert.expr.matchAll(/:rate(\w+)\{/g)].map((m) => m[1]);
      const pairs = PAIRS[alert.labels.severity as keyof typeof PAIRS];
      expect(windows).toEqual(pairs.flat());
      // (long and short) or (long and short): both of a pair must be above.
      expect(alert.expr.replace(/\s+/g, ' ').trim()).toMatch(/^\( \S+ \/ [\d.]+ > [\d.]+ and \S+ \/ [\d.]+ > [\d.]+ \) or \( \S+ \/ [\d.]+ > [\d.]+ and \S+ \/ [\d.]+ > [\d.]+ \)$/);
    }
  });
});

describe('error ratios', () => {
  it('records 1 - sum of compliant / sum of eligible over every alert window and the objective window, of the stage, whole portal only, per portal and integration', () => {
    const [group] = objectiveRuleGroups([objective({ name: 'edr', integration: 'crowdstrike|s1', stage: 'function', window: '30d' })]);
    const records = group!.rules.filter((r): r is RecordingRule => !isAlert(r));
    const ratios = records.filter((r) => r.record.startsWith('posture:objective_error_ratio:'));
    expect(ratios.map((r) => r.record)).toEqual([...WINDOWS, '30d'].map((w) => `posture:objective_error_ratio:rate${w}`));
    for (const [i, r] of ratios.entries()) {
      const w = [...WINDOWS, '30d'][i]!;
      const selector = '{stage="function",tag="",integration=~"crowdstrike|s1"}';
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
    expect(group!.rules[0]!.expr).toContain('integration=~"a\\"b\\\\.c"');
  });

  it('records a window that is also an alert window once', () => {
    const [group] = objectiveRuleGroups([objective({ name: 'day', window: '3d' })]);
    const names = group!.rules.filter((r): r is RecordingRule => !isAlert(r)).map((r) => r.record);
    expect(names.filter((n) => n === 'posture:objective_error_ratio:rate3d')).toHaveLength(1);
    // The seven alert windows, the budget left and the target.
    expect(names).toHaveLength(WINDOWS.length + 2);
  });

  it('gives each objective its group, and no two rules of a file the same name and labels (promtool lint)', () => {
    const groups = objectiveRuleGroups([objective({ name: 'a', window: '7d' }), objective({ name: 'b', window: '30d', stage: 'deployment' })]);
    expect(groups.map((g) => g.name)).toEqual(['posture-objective-a', 'posture-objective-b']);
    const keys = groups.flatMap((g) => g.rules.map((r) => JSON.stringify([isAlert(r) ? r.alert : r.record, Object.entries(r.labels).sort()])));
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('alerts', () => {
  const rules = objectiveRuleGroups([objective({ name: 'a' })])[0]!.rules.filter(isAlert);
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
  it('is YAML with one groups list, the objectives in its header', () => {
    const text = objectiveRulesYaml([objective({ name: 'a', window: '7d', target: 0.99 })]);
    expect(text).toMatch(/^# {3}a: 99 % at the configuration stage of every integration over 7d; 3\.36, 1\.4, 0\.7, 0\.23$/m);
    const doc = parse(text) as { groups: unknown[] };
    expect(doc.groups).toEqual(objectiveRuleGroups([objective({ name: 'a', window: '7d', target: 0.99 })]));
    expect(text).not.toMatch(/[&*]a\d/);
  });

  it('is written for no objectives as an empty list', () => {
    expect(parse(objectiveRulesYaml([]))).toEqual({ groups: [] });
  });

  it('ships for the default objective as infra/prometheus/rules/posture-objectives.rules.yml, up to date (npm run rules)', () => {
    expect(readFileSync(OBJECTIVES_RULES_FILE, 'utf8')).toBe(defaultObjectiveRules());
    const doc = parse(readFileSync(OBJECTIVES_RULES_FILE, 'utf8')) as { groups: Array<{ name: string; rules: Array<{ labels: Record<string, string> }> }> };
    expect(doc.groups.map((g) => g.name)).toEqual(['posture-objective-configuration']);
    expect(doc.groups[0]!.rules[0]!.labels).toEqual({ objective: 'configuration' });
  });
});
