/**
 * The burn-rate alerts of objectives over 1d, 7d, 28d and 30d windows, as Prometheus evaluates
 * them: the built CLI writes the rules (`rules --config`), promtool runs them on synthetic
 * per-minute series, and the alerts expected at each minute come from the SRE workbook's method
 * applied naively to the same samples (test/objectives/workbook.ts), not from the generator.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runBuiltCli } from '../support/cli.js';
import { runPromtool } from '../infra/support.js';
import { firingAt } from './workbook.js';

/** Each objective watches its own integration (named after it); budgets written out by hand. */
const OBJECTIVES = [
  { name: 'day-90', window: '1d', target: 0.9, budget: 0.1 },
  { name: 'day-95', window: '1d', target: 0.95, budget: 0.05 },
  { name: 'week-90', window: '7d', target: 0.9, budget: 0.1 },
  { name: 'week-95', window: '7d', target: 0.95, budget: 0.05 },
  { name: 'four-weeks-95', window: '28d', target: 0.95, budget: 0.05 },
  { name: 'month-95', window: '30d', target: 0.95, budget: 0.05 },
] as const;
const DEVICES = 1000;
/**
 * The burn test evaluates half a minute after each sample: no window then starts on a sample, so a
 * window W holds W/1m samples on Prometheus 2 and 3 alike (on the minute, 2 also selects the sample
 * on the left end).
 */
const HALF_MINUTE = 0.5;

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'posture-burn-rates-'));
  const config = { objectives: OBJECTIVES.map(({ name, window, target }) => ({ name, integration: name, target, window })) };
  writeFileSync(join(dir, 'config.yml'), stringify(config));
  const r = await runBuiltCli(['rules', '--config', join(dir, 'config.yml'), '--output', join(dir, 'rules.yml')], {});
  expect([r.code, r.stdout, r.stderr]).toEqual([0, '', '']);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** promtool's expanding notation for per-minute values: runs of one value as `vxN` (N + 1 samples). */
function notation(values: readonly number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < values.length; ) {
    let j = i;
    while (j + 1 < values.length && values[j + 1] === values[i]) j++;
    runs.push(j === i ? `${values[i]}` : `${values[i]}x${j - i}`);
    i = j + 1;
  }
  return runs.join(' ');
}

/** The two funnel series of one integration on `portal`: DEVICES eligible, (1 - bad share) of them compliant. */
function funnel(portal: string, integration: string, bad: readonly number[]) {
  const labels = `portal="${portal}",integration="${integration}",stage="configuration",job="posture",instance="a:9877"`;
  return [
    { series: `posture_vitals_eligible_devices{${labels}}`, values: notation(bad.map(() => DEVICES)) },
    { series: `posture_vitals_compliant_devices{${labels}}`, values: notation(bad.map((b) => DEVICES * (1 - b))) },
  ];
}

const firingAlerts = 'ALERTS{alertname="PostureObjectiveBurnRate",alertstate="firing"}';

/** Runs a promtool unit test file written from `doc` next to the rules; fails with promtool's output. */
async function promtoolTest(name: string, doc: unknown): Promise<void> {
  writeFileSync(join(dir, name), stringify(doc, { lineWidth: 0 }));
  const r = await runPromtool(['test', 'rules', name], dir);
  if (r.code !== 0) expect.fail(`promtool test rules ${name} failed:\n${r.output}`);
}

describe('burn-rate alerts scaled to 1d, 7d, 28d and 30d windows, in promtool', () => {
  it('raise nothing of any severity on steady burn rates below 1 (0.5 and 0.95), the budget left 1 - burn rate', async () => {
    const minutes = 18 * 60;
    const steady = (share: number) => Array.from({ length: minutes + 1 }, () => share);
    const rates = { half: 0.5, near: 0.95 };
    const input = Object.entries(rates).flatMap(([portal, rate]) => OBJECTIVES.flatMap((o) => funnel(portal, o.name, steady(rate * o.budget))));
    const times = Array.from({ length: minutes / 60 + 1 }, (_, h) => h * 60);
    // The workbook agrees: nothing fires, and nothing is close to a threshold.
    for (const [, rate] of Object.entries(rates)) {
      for (const o of OBJECTIVES) {
        for (const t of times) expect(firingAt(steady(rate * o.budget), t, o.window, o.budget)).toEqual({ severities: new Set(), tooClose: false });
      }
    }
    await promtoolTest('steady.test.yml', {
      rule_files: ['rules.yml'],
      evaluation_interval: '5m',
      tests: [
        {
          name: 'steady burn rates below 1 for 18 hours',
          interval: '1m',
          input_series: input,
          alert_rule_test: times.flatMap((t) => ['PostureObjectiveBurnRate', 'PostureObjectiveBudgetExhausted'].map((alertname) => ({ eval_time: `${t}m`, alertname, exp_alerts: [] }))),
          promql_expr_test: Object.entries(rates).map(([portal, rate]) => ({
            expr: `abs(posture:objective_error_budget_remaining:ratio{portal="${portal}"} - ${1 - rate}) < bool 1e-9`,
            eval_time: `${minutes}m`,
            exp_samples: OBJECTIVES.map((o) => ({ labels: `{portal="${portal}",integration="${o.name}",objective="${o.name}"}`, value: 1 })),
          })),
        },
      ],
    });
  }, 240_000);

  it('page within the hour of every device going non-compliant (burn rate 20 at 95 %, 10 at 90 %), when the workbook says', async () => {
    // Two healthy hours, then every device non-compliant from minute 121 to 200.
    const onset = 121;
    const bad = Array.from({ length: 201 }, (_, i) => (i < onset ? 0 : 1));
    const firstPage = Object.fromEntries(
      OBJECTIVES.map((o) => {
        const t = bad.findIndex((_, m) => firingAt(bad, m + HALF_MINUTE, o.window, o.budget).severities.has('critical'));
        return [o.name, t];
      }),
    );
    // Worked out by hand from the windows, half a minute after the minute: the 1d page at 95 % over
    // 5m and 5m (4 of 5 samples above 0.72; its 6 pair too, 4 of 12 above 0.3), at 90 % by its 6 pair
    // over 12m and 5m (8 of 12 above 0.6); 7d 14m (11 of 14 above 0.72), at 90 % 1h24m (51 of 84
    // above 0.6); 28d 56m (41 of 56); 30d 1h (44 of 60).
    expect(Object.fromEntries(Object.entries(firstPage).map(([name, t]) => [name, t - onset]))).toEqual({
      'day-90': 7, 'day-95': 3, 'week-90': 50, 'week-95': 10, 'four-weeks-95': 40, 'month-95': 43,
    });
    // A minute where a burn rate is a factor on paper (51 of 85 is 0.6) is left out: floats may fall either side.
    const clear = (t: number) => OBJECTIVES.every((o) => !firingAt(bad, t + HALF_MINUTE, o.window, o.budget).tooClose);
    const before = (t: number): number => (clear(t - 1) ? t - 1 : before(t - 1));
    for (const t of Object.values(firstPage)) expect(clear(t), `the first page at ${t}m is too close to a threshold to assert`).toBe(true);
    const times = [...new Set([...Object.values(firstPage).flatMap((t) => [before(t), t]), onset - 1, onset + 59, 200])].filter(clear).sort((a, b) => a - b);
    const expected = (t: number) =>
      OBJECTIVES.flatMap((o) =>
        [...firingAt(bad, t + HALF_MINUTE, o.window, o.budget).severities].map((severity) => ({
          labels: `${firingAlerts.slice(0, -1)},severity="${severity}",objective="${o.name}",portal="acme",integration="${o.name}"}`,
          value: 1,
        })),
      );
    // Every objective pages an hour after the onset.
    expect(expected(onset + 59).filter((s) => s.labels.includes('critical'))).toHaveLength(OBJECTIVES.length);
    await promtoolTest('burn.test.yml', {
      rule_files: ['rules.yml'],
      evaluation_interval: '30s',
      tests: [
        {
          name: 'every device non-compliant from minute 121',
          interval: '1m',
          input_series: OBJECTIVES.flatMap((o) => funnel('acme', o.name, bad)),
          promql_expr_test: times.map((t) => ({ expr: firingAlerts, eval_time: `${t}m30s`, exp_samples: expected(t) })),
        },
      ],
    });
  }, 240_000);
});
