import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import { INTERVAL_BOUNDS } from '../../src/config/intervals.js';
import { objectiveRulesYaml } from '../../src/objectives/rules.js';
import { PROMTOOLS, REPO_ROOT, RULE_TESTS_DIR, loadRuleExpressions, ruleFiles, ruleTestFiles, runPromtool } from './support.js';

// The objective tests evaluate hours of 1-minute samples (about 2 s of promtool's CPU alone); several
// run at once, on a shared machine.
const PROMTOOL_TEST_TIMEOUT = 120_000;
const PROMTOOL_3 = PROMTOOLS.find((p) => p.name === 'promtool 3')!;
const ALERTS = [
  'PostureVitalsHealthRegression',
  'PostureVitalsStageRegression',
  'PostureVitalsHealthLow',
  'PostureRedAlertsOpen',
  'PostureAlertsOverSla',
  'PostureAlertsResolvedOverSla',
  'PostureCollectionFailing',
  'PostureVitalsFunnelInconsistent',
  'PostureShardsDisagree',
  'PostureShardMissing',
  'PosturePortalUncollected',
  'PosturePortalDuplicated',
  'PostureObjectiveBurnRate',
  'PostureObjectiveBudgetExhausted',
  'PosturePortalPrivilegedWithoutMfa',
  'PosturePortalSuperAdminsChanged',
  'PostureDirectoryInactiveUsers',
] as const;
// The two sharding alerts about the shard set as a whole have no portal to name.
const SHARD_SET_ALERTS = new Set(['PostureShardsDisagree', 'PostureShardMissing']);
const CATALOGUE_NAMES = new Set<string>(CATALOGUE.map((m) => m.name));
// The objective recordings (posture-objectives.rules.yml, generated) are named by the objectives,
// not after one catalogue metric: posture:objective_error_ratio:rate<W>, the budget left and the target.
const OBJECTIVES_FILE = 'posture-objectives.rules.yml';
const OBJECTIVE_RECORDS = new Set(['objective_error_ratio', 'objective_error_budget_remaining', 'objective_target']);
const rules = loadRuleExpressions();
const alerts = rules.filter((r) => r.kind === 'alert');
const records = rules.filter((r) => r.kind === 'record');

/** Fails with promtool's whole output, so a broken rule or test explains itself. */
function expectPromtoolOk(result: { code: number; output: string }, what: string): void {
  if (result.code !== 0) expect.fail(`${what} failed (exit ${result.code}):\n${result.output}`);
}

/** GitHub's anchor for a Markdown heading. */
function githubAnchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

// Users run Prometheus 2 and 3: every rule file and unit test on Debian's promtool (2.42) and on Prometheus 3's.
describe.each(PROMTOOLS.map((p) => ({ ...p, promtool: p })))('$name', ({ promtool }) => {
  it('accepts every rule file (promtool check rules)', async () => {
    expectPromtoolOk(await runPromtool(['check', 'rules', ...ruleFiles()], REPO_ROOT, promtool), `${promtool.name} check rules`);
  });

  it.concurrent.each(ruleTestFiles().map((f) => [basename(f), f]))('passes the unit tests in %s (promtool test rules)', async (_name, file) => {
    expectPromtoolOk(await runPromtool(['test', 'rules', file], RULE_TESTS_DIR, promtool), `${promtool.name} test rules ${file}`);
  }, PROMTOOL_TEST_TIMEOUT);
});

describe('rule loader', () => {
  it('reads every recording and alerting rule with its expression', () => {
    expect(records.length).toBeGreaterThan(0);
    expect(new Set(alerts.map((a) => a.name))).toEqual(new Set(ALERTS));
    for (const r of rules) expect(r.expr, r.name).not.toBe('');
  });
});

describe('alert conventions', () => {
  const runbooks = readFileSync(join(REPO_ROOT, 'docs/runbooks.md'), 'utf8');
  const anchors = new Set([...runbooks.matchAll(/^#{1,6} (.+)$/gm)].map((m) => githubAnchor(m[1]!)));

  it.each(alerts.map((a) => [a.name, a]))('%s has a severity, a summary, a description naming the portal, and a runbook that exists', (_name, alert) => {
    expect(['critical', 'warning', 'info']).toContain(alert.labels.severity);
    expect(alert.annotations.summary).toBeTruthy();
    expect(alert.annotations.description).toContain(SHARD_SET_ALERTS.has(alert.name) ? '$labels.job' : '$labels.portal');
    // No link without a template (npm run rules, POSTURE_RUNBOOK_URL unset); with one, {alert_lower} is its section of docs/runbooks.md.
    const anchor = alert.name.toLowerCase();
    expect(alert.annotations.runbook_url).toBeUndefined();
    expect(anchors.has(anchor), `docs/runbooks.md has no heading for ${alert.name}`).toBe(true);
  });

  it('gives PostureAlertsOverSla the monitoring-mixin annotations: a plain summary, a templated description', () => {
    const [rule, ...more] = alerts.filter((a) => a.name === 'PostureAlertsOverSla');
    expect(more).toEqual([]);
    expect(rule!.annotations.summary).not.toContain('{{');
    expect(rule!.annotations.summary).toMatch(/^[A-Z][^{}]*\.$/);
    expect(rule!.annotations.description).toContain('{{ $value }}');
  });

  it('names the integration in the description of every Vitals alert', () => {
    const vitals = alerts.filter((a) => a.name.startsWith('PostureVitals'));
    expect(vitals.length).toBeGreaterThan(0);
    for (const a of vitals) expect(a.annotations.description, a.name).toContain('$labels.integration');
  });

  it('names recording rules level:metric:operations after a catalogue metric', () => {
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      const parts = r.name.split(':');
      expect(parts, r.name).toHaveLength(3);
      expect(parts[0], r.name).toMatch(/^[a-z]+(_[a-z]+)*$/);
      const known = basename(r.file) === OBJECTIVES_FILE ? OBJECTIVE_RECORDS : CATALOGUE_NAMES;
      expect(known.has(parts[1]!), `${r.name}: ${parts[1]} is not in the catalogue`).toBe(true);
      expect(parts[2], r.name).toMatch(/^[a-z0-9]+(_[a-z0-9]+)*$/);
    }
  });

  it('reads only catalogue metrics and recorded series', () => {
    const known = new Set([...CATALOGUE_NAMES, ...records.map((r) => r.name)]);
    const read = rules.flatMap((r) => [...r.expr.matchAll(/(?<![A-Za-z0-9_:])((?:[a-z_]+:)?posture_[a-z0-9_]+(?::[a-z0-9_]+)?)/g)].map((m) => `${r.name} reads ${m[1]!}`));
    expect(read.length).toBeGreaterThanOrEqual(rules.length);
    expect(read.filter((line) => !known.has(line.slice(line.lastIndexOf(' ') + 1)))).toEqual([]);
  });

  it('has, for every alert, a promtool case where it fires and one where it stays quiet', () => {
    const firing = new Set<string>();
    const quiet = new Set<string>();
    for (const file of ruleTestFiles()) {
      const doc = parse(readFileSync(file, 'utf8')) as { tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts?: unknown[] }> }> };
      for (const t of doc.tests) {
        for (const a of t.alert_rule_test ?? []) (a.exp_alerts?.length ? firing : quiet).add(a.alertname);
      }
    }
    for (const name of ALERTS) {
      expect(firing.has(name), `${name} never fires in a test`).toBe(true);
      expect(quiet.has(name), `${name} is never asserted quiet`).toBe(true);
    }
  });
});

/** PostureCollectionFailing's stale threshold as the rules write it. */
const STALE_THRESHOLD = '2 * portal_source:posture_collection_interval_seconds:last3d + 600';

describe('PostureCollectionFailing on the longest interval a setting allows', () => {
  const SECONDS = { m: 60, h: 3_600, d: 86_400 } as const;

  it('remembers a source\'s last success, interval and success for longer than such a source takes to go stale (twice its interval plus the margin)', () => {
    const failing = alerts.filter((a) => a.name === 'PostureCollectionFailing');
    const [, factor, margin] = /(\d+) \* portal_source:posture_collection_interval_seconds:last3d \+ (\d+)/.exec(failing.find((a) => a.labels.reason === 'stale')!.expr)!;
    const read = new Set(failing.flatMap((a) => [...a.expr.matchAll(/portal_source:posture_[a-z_]+:[a-z0-9]+/g)].map((m) => m[0])));
    const exprs = [...failing.map((a) => a.expr), ...records.filter((r) => read.has(r.name)).map((r) => r.expr)];
    const ranges = exprs.flatMap((e) => [...e.matchAll(/\[(\d+)([mhd])\]/g)].map((m) => Number(m[1]) * SECONDS[m[2] as keyof typeof SECONDS]));
    // The last success's and the interval's recordings, and the never-succeeded rule's success.
    expect(ranges).toHaveLength(3);
    for (const r of ranges) expect(r).toBeGreaterThan(Number(factor) * INTERVAL_BOUNDS.max + Number(margin));
  });
});

describe('the promtool tests catch broken rules', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  // Each mutation undoes one safeguard; the named test file must then fail.
  const mutations: Array<[string, string, (rules: string) => string]> = [
    ['tagged views counted as the whole portal', 'health.test.yml', (s) => s.replaceAll('{tag=""}', '')],
    ['no float tolerance on the thresholds', 'stage.test.yml', (s) => s.replaceAll(' - 1e-9', '')],
    ['no fleet-shrink guard', 'stage.test.yml', (s) => {
      const start = s.lastIndexOf('\n', s.indexOf('and on (portal, integration, stage)'));
      return start < 0 ? s : s.slice(0, start + 1) + s.slice(s.lastIndexOf('\n', s.indexOf('for: 30m', start)) + 1);
    }],
    ['exporters of one portal added up in the SLA alert', 'alert-sla.test.yml', (s) => s.replace('max by (portal, severity) (last_over_time(posture_alerts_over_sla[15m]))', 'sum by (portal, severity) (last_over_time(posture_alerts_over_sla[15m]))')],
    ['no push-gap bridge in the SLA alert', 'alert-sla.test.yml', (s) => s.replace('max by (portal, severity) (last_over_time(posture_alerts_over_sla[15m]))', 'max by (portal, severity) (posture_alerts_over_sla)')],
    ['no memory for series that stopped arriving', 'collection.test.yml', (s) => s.replace('max_over_time(posture_collection_last_success_timestamp_seconds[3d])', 'posture_collection_last_success_timestamp_seconds')],
    // The stale rule's threshold, twice the interval plus a margin, changed four ways.
    ...([
      ['one staleness threshold for every source (the hourly pass fires between its runs)', '0 * portal_source:posture_collection_interval_seconds:last3d + 1800'],
      ['no margin over two intervals (a run\'s length, a push\'s delay)', '2 * portal_source:posture_collection_interval_seconds:last3d'],
      ['a margin that lets a stopped source wait past two intervals and 15 minutes', '2 * portal_source:posture_collection_interval_seconds:last3d + 900'],
      ['three intervals instead of two', '3 * portal_source:posture_collection_interval_seconds:last3d + 600'],
    ] as const).map(([what, to]): [string, string, (rules: string) => string] => [what, 'collection.test.yml', (s) => s.replace(STALE_THRESHOLD, to)]),
    ['no interval memory for series that stopped arriving', 'collection.test.yml', (s) => s.replace('last_over_time(posture_collection_interval_seconds[3d])', 'posture_collection_interval_seconds')],
    // A memory of one day, as before the daily directory: its last sample is gone before it is stale.
    ...([
      ['a last-success memory of one day (a daily source stopped after one push never fires)', 'max_over_time(posture_collection_last_success_timestamp_seconds[3d])'],
      ['an interval memory of one day (a daily source stopped after one push is judged by 1800 s)', 'last_over_time(posture_collection_interval_seconds[3d])'],
      ['a never-succeeded memory of one day (a daily source whose one run failed goes quiet after a day)', 'last_over_time(posture_collection_success[3d])'],
    ] as const).map(([what, memory]): [string, string, (rules: string) => string] => [what, 'collection-days.test.yml', (s) => s.replace(memory, memory.replace('[3d]', '[1d]'))]),
    ['a resolved-over-SLA share at the threshold that fires', 'response.test.yml', (s) => s.replace('ratio{window="7d"}) > 0.20', 'ratio{window="7d"}) >= 0.20')],
    ['the over-SLA share of every window', 'response.test.yml', (s) => s.replace('ratio{window="7d"}) > 0.20', 'ratio) > 0.20')],
    ['no pass-gap bridge in the response recordings', 'response.test.yml', (s) => s.replaceAll('(last_over_time(posture_alerts_resolved_over_sla[2h]))', '(posture_alerts_resolved_over_sla)')],
    ['exporters of one portal added up in the response means', 'response.test.yml', (s) => s.replace('max by (portal, severity, window) (last_over_time(posture_alerts_time_to_resolve_mean_seconds[2h]))', 'sum by (portal, severity, window) (last_over_time(posture_alerts_time_to_resolve_mean_seconds[2h]))')],
    ['exporters of one portal added up in the over-SLA share\'s denominator', 'response.test.yml', (s) => s.replace('(max by (portal, severity, window) (last_over_time(posture_alerts_time_to_resolve_alerts[2h])) > 0)', '(sum by (portal, severity, window) (last_over_time(posture_alerts_time_to_resolve_alerts[2h])) > 0)')],
    ['accounts with SSO counted as without MFA', 'access.test.yml', (s) => s.replace('enabled="true",mfa!="enabled",sso!="enabled"', 'enabled="true",mfa!="enabled"')],
    ['disabled accounts counted as privileged', 'access.test.yml', (s) => s.replace('posture_portal_users{enabled="true",mfa!="enabled"', 'posture_portal_users{mfa!="enabled"')],
    ['a permission held at any level counted as privileged', 'access.test.yml', (s) => s.replace('ssoSetup|integrations",level="Manage"}', 'ssoSetup|integrations"}')],
    ['no read-gap bridge in the access recordings', 'access.test.yml', (s) => s.replace('(last_over_time(posture_portal_users{enabled="true",mfa!="enabled",sso!="enabled"}[2h]))', '(posture_portal_users{enabled="true",mfa!="enabled",sso!="enabled"})')],
    ['no 0 when the last superAdmin is gone', 'access.test.yml', (s) => s.replace(/\n\s*or on \(portal\)\n\s*0 \* max by \(portal\) \(last_over_time\(posture_portal_role_info\[2h\]\)\)/, '')],
    ['the inactive share at the threshold that fires', 'access.test.yml', (s) => s.replace('ratio{days="45"} > 0.10', 'ratio{days="45"} >= 0.10')],
    ['no daily bridge in the directory share', 'access.test.yml', (s) => s.replace('max by (portal, days) (last_over_time(posture_directory_users_inactive[25h]))', 'max by (portal, days) (last_over_time(posture_directory_users_inactive[2h]))')],
  ];

  // The same for the objectives' rules (generated: the mutation stands for a wrong generator).
  const objectiveMutations: Array<[string, string, (rules: string) => string, string]> = [
    ['tagged views counted in an objective', 'objectives.test.yml', (s) => s.replaceAll(',tag=""', ''), OBJECTIVES_FILE],
    ['every stage counted in an objective', 'objectives.test.yml', (s) => s.replaceAll('stage="configuration",', ''), OBJECTIVES_FILE],
    // The specification's error: the thresholds scaled to the 28d window (share × window / long window) instead of the windows.
    ['the thresholds scaled instead of the windows', 'objectives.test.yml', (s) => s.replaceAll('> 14.4\n', '> 13.44\n').replaceAll('> 6\n', '> 5.6\n').replaceAll('> 3\n', '> 2.8\n').replaceAll('> 1\n', '> 0.933333333333\n'), OBJECTIVES_FILE],
    ['the 30d windows kept for a 28d objective', 'objectives.test.yml', (s) => s.replaceAll('rate56m{', 'rate1h{').replaceAll('rate5h36m{', 'rate6h{').replaceAll('rate28m{', 'rate30m{'), OBJECTIVES_FILE],
    ['no short window in the page', 'objectives.test.yml', (s) => s.replaceAll('rate5m{objective="configuration"} / 0.05 > 14.4', 'rate56m{objective="configuration"} / 0.05 > 14.4'), OBJECTIVES_FILE],
    // Sloth's raw SLI over the 1h window only (a subquery per evaluation over 28d would take minutes).
    ['the ratio of the sums replaced by the average of ratios', 'objectives.test.yml', (s) => s.replace(/1 - \(\n\s*sum by \(portal, integration\) \(sum_over_time\((posture_vitals_compliant_devices\{[^}]*\})\[1h\]\)\)\n\s*\/\n\s*\(sum by \(portal, integration\) \(sum_over_time\((posture_vitals_eligible_devices\{[^}]*\})\[1h\]\)\) > 0\)\n\s*\)/, '1 - avg by (portal, integration) (avg_over_time(($1 / on (job, instance, integration, portal) $2)[1h:1m]))'), OBJECTIVES_FILE],
  ];

  it.concurrent.each([...mutations.map(([a, b, c]) => [a, b, c, 'posture.rules.yml'] as const), ...objectiveMutations])('fails when the rules have %s', async (_what, testFile, mutate, ruleFile) => {
    const dir = mkdtempSync(join(tmpdir(), 'posture-rules-'));
    dirs.push(dir);
    cpSync(join(REPO_ROOT, 'infra/prometheus'), dir, { recursive: true });
    const rulesFile = join(dir, 'rules', ruleFile);
    const original = readFileSync(rulesFile, 'utf8');
    const mutated = mutate(original);
    expect(mutated, 'the mutation changed nothing').not.toBe(original);
    writeFileSync(rulesFile, mutated);
    expectPromtoolOk(await runPromtool(['check', 'rules', rulesFile]), 'promtool check rules on the mutated file');
    // On Prometheus 3's promtool alone: the test files pass on both versions with the rules as they
    // are, so one version shows that they catch the broken rule (the objectives' tests take seconds
    // of CPU each; twice would double it).
    const result = await runPromtool(['test', 'rules', testFile], join(dir, 'tests'), PROMTOOL_3);
    expect(result.code, result.output).not.toBe(0);
  }, PROMTOOL_TEST_TIMEOUT);
});

describe('an objective\'s integration pattern on Prometheus 2 and 3', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  // Prometheus 3 lets `.` match a newline, 2 does not; the generated rules must select the same keys on both.
  it.each(PROMTOOLS.map((p) => [p.name, p]))('%s counts a key with a newline in it as `edr.*` matching it', async (_name, promtool) => {
    const dir = mkdtempSync(join(tmpdir(), 'posture-rules-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'rules.yml'), objectiveRulesYaml([{ name: 'edr', integration: 'edr.*', stage: 'configuration', target: 0.9, window: '1d' }]));
    const funnel = (integration: string, compliant: number) =>
      ['eligible', 'compliant'].map((kind) => ({
        series: `posture_vitals_${kind}_devices{portal="acme",integration=${JSON.stringify(integration)},stage="configuration"}`,
        values: `${kind === 'eligible' ? 100 : compliant}x10`,
      }));
    const test = {
      rule_files: ['rules.yml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [...funnel('edr', 100), ...funnel('edr\nlab', 50), ...funnel('mdm', 0)],
          promql_expr_test: [
            {
              expr: 'posture:objective_error_ratio:rate5m',
              eval_time: '5m',
              exp_samples: [
                { labels: 'posture:objective_error_ratio:rate5m{portal="acme",integration="edr",objective="edr"}', value: 0 },
                { labels: 'posture:objective_error_ratio:rate5m{portal="acme",integration="edr\\nlab",objective="edr"}', value: 0.5 },
              ],
            },
          ],
        },
      ],
    };
    writeFileSync(join(dir, 'newline.test.yml'), stringify(test));
    expectPromtoolOk(await runPromtool(['test', 'rules', 'newline.test.yml'], dir, promtool), `${promtool.name} test rules newline.test.yml`);
  });
});
