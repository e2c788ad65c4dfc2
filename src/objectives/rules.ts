/**
 * Prometheus rules for posture objectives: device-weighted error ratios over the Vitals funnel,
 * the error budget left, and multiwindow, multi-burn-rate alerts (the Google SRE workbook's). Pure:
 * objectives in, rule groups (or their YAML) out.
 */
import { stringify } from 'yaml';
import { durationMs, errorBudget, percent, type Objective } from '../config/objectives.js';

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

/** The windows every objective's error ratio is recorded over (besides its own window). */
export const ALERT_WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'] as const;
type AlertWindow = (typeof ALERT_WINDOWS)[number];

/** One pair of a burn-rate alert: both windows above the long window's threshold; `share` of the budget spent over `long`. */
interface BurnPair {
  readonly long: AlertWindow;
  readonly short: AlertWindow;
  readonly share: number;
}

/** The burn-rate alerts: severity, then the pairs of which either fires it (SRE workbook, table 5-8). */
const BURN_RATE_ALERTS: ReadonlyArray<{ readonly severity: 'critical' | 'warning'; readonly pairs: readonly [BurnPair, BurnPair] }> = [
  { severity: 'critical', pairs: [{ long: '1h', short: '5m', share: 0.02 }, { long: '6h', short: '30m', share: 0.05 }] },
  { severity: 'warning', pairs: [{ long: '1d', short: '2h', share: 0.1 }, { long: '3d', short: '6h', share: 0.1 }] },
];

const ERROR_RATIO = 'posture:objective_error_ratio';
/** The recorded error budget left over the objective's window, per portal and integration. */
export const BUDGET_REMAINING = 'posture:objective_error_budget_remaining:ratio';
/** The objective's target as a series (labelled `objective` only), so a dashboard can divide by the budget (1 - target) and draw the target. */
export const OBJECTIVE_TARGET = 'posture:objective_target:ratio';
const RUNBOOK = 'https://github.com/posture-exporter/posture-exporter/blob/main/docs/runbooks.md#';

/** A number as PromQL and the annotations print it: 12 significant digits, no float noise (13.44, not 13.440000000000001). */
function num(x: number): string {
  return String(Number(x.toPrecision(12)));
}

/** A threshold as people read it: two decimals (13.44, 0.93), or two significant digits below 0.1. */
function shown(x: number): string {
  return String(x >= 0.1 ? Math.round(x * 100) / 100 : Number(x.toPrecision(2)));
}

/**
 * The burn rate above which a pair fires: `share` of the budget spent over `long`, as a multiple
 * of the rate that spends exactly the budget over the objective's window (share × window / long).
 */
function burnRateThreshold(window: string, long: string, share: number): number {
  return Number(((share * durationMs(window)!) / durationMs(long)!).toPrecision(12));
}

/** A PromQL string literal (Go's escapes are a superset of JSON's). */
function quote(s: string): string {
  return JSON.stringify(s);
}

/** The recording name of the error ratio over `window`. */
export function errorRatioName(window: string): string {
  return `${ERROR_RATIO}:rate${window}`;
}

/** The selector of the objective's whole-portal funnel series at its stage. */
function funnelSelector(o: Objective): string {
  return `{stage=${quote(o.stage)},tag=""${o.integration === undefined ? '' : `,integration=~${quote(o.integration)}`}}`;
}

/** 1 - compliant/eligible over `window`, both summed over every sample (device-weighted); absent when nothing was eligible. */
function errorRatioExpr(o: Objective, window: string): string {
  const sum = (family: string) => `sum by (portal, integration) (sum_over_time(${family}${funnelSelector(o)}[${window}]))`;
  return `1 - (\n  ${sum('posture_vitals_compliant_devices')}\n  /\n  (${sum('posture_vitals_eligible_devices')} > 0)\n)\n`;
}

/** The windows an objective's error ratio is recorded over: the alert windows, then its own (unless it is one of them). */
function recordedWindows(o: Objective): string[] {
  return (ALERT_WINDOWS as readonly string[]).includes(o.window) ? [...ALERT_WINDOWS] : [...ALERT_WINDOWS, o.window];
}

/** What an objective asks, in words, for the descriptions. */
function objectiveWords(o: Objective): string {
  return `${percent(o.target)} % of devices compliant at the ${o.stage} stage over ${o.window}`;
}

function burnRateAlert(o: Objective, severity: 'critical' | 'warning', pairs: readonly [BurnPair, BurnPair]): AlertingRule {
  const budget = num(errorBudget(o));
  const sel = `{objective=${quote(o.name)}}`;
  const thresholds = pairs.map((p) => {
    const value = burnRateThreshold(o.window, p.long, p.share);
    return { ...p, value, threshold: num(value) };
  });
  const pair = (p: (typeof thresholds)[number]) =>
    `(\n  ${errorRatioName(p.long)}${sel} / ${budget} > ${p.threshold}\n  and\n  ${errorRatioName(p.short)}${sel} / ${budget} > ${p.threshold}\n)`;
  const [a, b] = thresholds as [(typeof thresholds)[number], (typeof thresholds)[number]];
  return {
    alert: 'PostureObjectiveBurnRate',
    expr: `${pair(a)}\nor\n${pair(b)}\n`,
    labels: { severity, objective: o.name },
    annotations: {
      summary: severity === 'critical' ? 'A posture objective is burning its error budget fast.' : 'A posture objective is burning its error budget.',
      description:
        `Integration {{ $labels.integration }} on portal {{ $labels.portal }} is spending the error budget of objective {{ $labels.objective }} ` +
        `(${objectiveWords(o)}) {{ printf "%.2f" $value }} times as fast as the objective allows ` +
        `(threshold ${shown(a.value)} over ${a.long} and ${a.short}, or ${shown(b.value)} over ${b.long} and ${b.short}).`,
      runbook_url: `${RUNBOOK}postureobjectiveburnrate`,
    },
  };
}

/** The rule group of one objective: its error ratios, the budget left, then the alerts that read them (one evaluation). */
function objectiveGroup(o: Objective): RuleGroup {
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
      runbook_url: `${RUNBOOK}postureobjectivebudgetexhausted`,
    },
  };
  return {
    name: `posture-objective-${o.name}`,
    rules: [...ratios, budget, target, ...BURN_RATE_ALERTS.map((a) => burnRateAlert(o, a.severity, a.pairs)), exhausted],
  };
}

/** The rule groups of the objectives, one per objective. */
export function objectiveRuleGroups(objectives: readonly Objective[]): RuleGroup[] {
  return objectives.map(objectiveGroup);
}

/** The header of the rule file: what made it, and each objective with its thresholds. */
function header(objectives: readonly Objective[]): string {
  const lines = [
    'posture-exporter objectives: recording and alerting rules, generated by `posture-exporter rules`',
    '(docs/objectives.md). Regenerate them from the config file rather than editing them.',
    '',
    ...(objectives.length ? ['Objective: target, window; burn-rate thresholds (critical: 1h and 5m, 6h and 30m; warning: 1d and 2h, 3d and 6h)'] : ['No objectives.']),
    ...objectives.map((o) => {
      const t = BURN_RATE_ALERTS.flatMap((a) => a.pairs.map((p) => shown(burnRateThreshold(o.window, p.long, p.share))));
      const scope = o.integration === undefined ? 'every integration' : `integrations matching ${JSON.stringify(o.integration)}`;
      return `  ${o.name}: ${percent(o.target)} % at the ${o.stage} stage of ${scope} over ${o.window}; ${t.join(', ')}`;
    }),
  ];
  return lines.map((l) => (l === '' ? '#' : `# ${l}`)).join('\n') + '\n\n';
}

/** The objectives' rule file (YAML), as `posture-exporter rules` writes it. */
export function objectiveRulesYaml(objectives: readonly Objective[]): string {
  return header(objectives) + stringify({ groups: objectiveRuleGroups(objectives) }, { lineWidth: 0, blockQuote: 'literal', aliasDuplicateObjects: false });
}
