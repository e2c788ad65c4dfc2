/**
 * Prometheus rules for posture objectives: device-weighted error ratios over the Vitals funnel,
 * the error budget left, and multiwindow, multi-burn-rate alerts (the Google SRE workbook's). Pure:
 * objectives in, rule groups (or their YAML) out.
 */
import { stringify } from 'yaml';
import { durationMs, errorBudget, percent, type Objective } from '../config/objectives.js';
import { runbookHeader, runbookUrl, type RulesWriter } from '../config/runbook.js';
import { burnRateAlerts, burnRateLines, WINDOW_FLOOR, type BurnPair, type BurnRateAlert } from './windows.js';

/** A recording rule. */
export interface RecordingRule {
  readonly record: string;
  readonly expr: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** An alerting rule. */
export interface AlertingRule {
  readonly alert: string;
  readonly expr: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
}

/** A rule group as Prometheus reads it. */
export interface RuleGroup {
  readonly name: string;
  readonly rules: ReadonlyArray<RecordingRule | AlertingRule>;
}

/**
 * The windows every objective's error ratio is recorded over, whatever its window, for the
 * dashboards: the alert windows of a 30-day objective (the SRE workbook's). An objective's own
 * alert windows and its window are recorded besides.
 */
export const ALERT_WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'] as const;

const ERROR_RATIO = 'posture:objective_error_ratio';
/** The recorded error budget left over the objective's window, per portal and integration. */
export const BUDGET_REMAINING = 'posture:objective_error_budget_remaining:ratio';
/** The objective's target as a series (labelled `objective` only), so a dashboard can divide by the budget (1 - target) and draw the target. */
export const OBJECTIVE_TARGET = 'posture:objective_target:ratio';

/** A number as PromQL and the annotations print it: 12 significant digits, no float noise (13.44, not 13.440000000000001). */
function num(x: number): string {
  return String(Number(x.toPrecision(12)));
}

/** A PromQL string literal (Go's escapes are a superset of JSON's). */
function quote(s: string): string {
  return JSON.stringify(s);
}

/** The recording name of the error ratio over `window`. */
export function errorRatioName(window: string): string {
  return `${ERROR_RATIO}:rate${window}`;
}

/**
 * The selector of the objective's whole-portal funnel series at its stage. The integration pattern
 * goes in `(?s:…)`: Prometheus 3 lets `.` match a newline and Prometheus 2 does not, so without the
 * flag `edr.*` would select a key with a newline in one and not the other.
 */
function funnelSelector(o: Objective): string {
  return `{stage=${quote(o.stage)},tag=""${o.integration === undefined ? '' : `,integration=~${quote(`(?s:${o.integration})`)}`}}`;
}

/** 1 - compliant/eligible over `window`, both summed over every sample (device-weighted); absent when nothing was eligible. */
function errorRatioExpr(o: Objective, window: string): string {
  const sum = (family: string) => `sum by (portal, integration) (sum_over_time(${family}${funnelSelector(o)}[${window}]))`;
  return `1 - (\n  ${sum('posture_vitals_compliant_devices')}\n  /\n  (${sum('posture_vitals_eligible_devices')} > 0)\n)\n`;
}

/** The windows an objective's error ratio is recorded over: the dashboards', then its alert windows from the shortest, then its own window (each once). */
function recordedWindows(o: Objective): string[] {
  const alertWindows = burnRateAlerts(o).flatMap((a) => a.pairs.flatMap((p) => [p.long, p.short]));
  const byLength = [...new Set(alertWindows)].sort((x, y) => durationMs(x)! - durationMs(y)!);
  return [...new Set([...ALERT_WINDOWS, ...byLength, o.window])];
}

/** What an objective asks, in words, for the descriptions. */
function objectiveWords(o: Objective): string {
  return `${percent(o.target)} % of devices compliant at the ${o.stage} stage over ${o.window}`;
}

function burnRateAlert(o: Objective, { severity, pairs }: BurnRateAlert, runbook: string | undefined): AlertingRule {
  const budget = num(errorBudget(o));
  const sel = `{objective=${quote(o.name)}}`;
  const pair = (p: BurnPair) =>
    `(\n  ${errorRatioName(p.long)}${sel} / ${budget} > ${num(p.factor)}\n  and\n  ${errorRatioName(p.short)}${sel} / ${budget} > ${num(p.factor)}\n)`;
  const [a, b] = pairs;
  return {
    alert: 'PostureObjectiveBurnRate',
    expr: `${pair(a)}\nor\n${pair(b)}\n`,
    labels: { severity, objective: o.name },
    annotations: {
      summary: severity === 'critical' ? 'A posture objective is burning its error budget fast.' : 'A posture objective is burning its error budget.',
      description:
        `Integration {{ $labels.integration }} on portal {{ $labels.portal }} is spending the error budget of objective {{ $labels.objective }} ` +
        `(${objectiveWords(o)}) {{ printf "%.2f" $value }} times as fast as the objective allows ` +
        `(threshold ${num(a.factor)} over ${a.long} and ${a.short}, or ${num(b.factor)} over ${b.long} and ${b.short}).`,
      ...runbookOf(runbook, 'PostureObjectiveBurnRate'),
    },
  };
}

/** The rule group of one objective: its error ratios, the budget left, then the alerts that read them (one evaluation). */
function objectiveGroup(o: Objective, runbook: string | undefined): RuleGroup {
  const labels = { objective: o.name };
  const ratios: RecordingRule[] = recordedWindows(o).map((w) => ({ record: errorRatioName(w), expr: errorRatioExpr(o, w), labels }));
  const budget: RecordingRule = { record: BUDGET_REMAINING, expr: `1 - ${errorRatioName(o.window)}{objective=${quote(o.name)}} / ${num(errorBudget(o))}\n`, labels };
  const target: RecordingRule = { record: OBJECTIVE_TARGET, expr: `vector(${num(o.target)})\n`, labels };
  const exhausted: AlertingRule = {
    alert: 'PostureObjectiveBudgetExhausted',
    expr: `${BUDGET_REMAINING}{objective=${quote(o.name)}} <= 0\n`,
    labels: { severity: 'warning', objective: o.name },
    annotations: {
      summary: 'A posture objective has used up its error budget.',
      description:
        `Integration {{ $labels.integration }} on portal {{ $labels.portal }} has missed objective {{ $labels.objective }} (${objectiveWords(o)}): ` +
        `more than ${percent(errorBudget(o))} % of its eligible devices were non-compliant over the window; the budget left is {{ $value | humanizePercentage }}.`,
      ...runbookOf(runbook, 'PostureObjectiveBudgetExhausted'),
    },
  };
  return {
    name: `posture-objective-${o.name}`,
    rules: [...ratios, budget, target, ...burnRateAlerts(o).map((a) => burnRateAlert(o, a, runbook)), exhausted],
  };
}

/** The `runbook_url` annotation of `alert` from the template, none without one. */
function runbookOf(runbook: string | undefined, alert: string): { runbook_url?: string } {
  return runbook === undefined ? {} : { runbook_url: runbookUrl(runbook, alert) };
}

/** The rule groups of the objectives, one per objective; `runbook` is the `runbook_url` template (none when undefined). */
export function objectiveRuleGroups(objectives: readonly Objective[], runbook?: string): RuleGroup[] {
  return objectives.map((o) => objectiveGroup(o, runbook));
}

/** The header of the rule file: what made it, its runbook links, how the alerts work, and each objective with its windows and thresholds. */
function header(objectives: readonly Objective[], runbook: string | undefined, writer: RulesWriter): string {
  const lines = [
    'posture-exporter objectives: recording and alerting rules, generated by `posture-exporter rules`',
    '(docs/objectives.md). Regenerate them from the config file rather than editing them.',
    '',
    ...runbookHeader(runbook, writer),
    '',
    ...(objectives.length
      ? [
          'Burn rate: the error ratio over a window / the error budget (1 - target). Each alert fires when',
          'either of its pairs has the burn rate above the pair\'s factor over both its windows. The factors',
          'are the SRE workbook\'s; the long windows scale with the objective\'s window (window / 720, / 120,',
          `/ 30, / 10: 1h, 6h, 1d, 3d at 30d), each short window is a twelfth of its long one, none under ${WINDOW_FLOOR}.`,
          '',
          ...objectives.flatMap((o) => {
            const scope = o.integration === undefined ? 'every integration' : `integrations matching ${JSON.stringify(o.integration)}`;
            return [`  ${o.name}: ${percent(o.target)} % at the ${o.stage} stage of ${scope} over ${o.window}; error budget ${percent(errorBudget(o))} %`, ...burnRateLines(o).map((l) => `    ${l}`)];
          }),
        ]
      : ['No objectives.']),
  ];
  return lines.map((l) => (l === '' ? '#' : `# ${l}`)).join('\n') + '\n\n';
}

/** The objectives' rule file (YAML), as `posture-exporter rules` writes it (`npm run rules` for the shipped one: `writer`). */
export function objectiveRulesYaml(objectives: readonly Objective[], runbook?: string, writer: RulesWriter = 'rules'): string {
  return header(objectives, runbook, writer) + stringify({ groups: objectiveRuleGroups(objectives, runbook) }, { lineWidth: 0, blockQuote: 'literal', aliasDuplicateObjects: false });
}
