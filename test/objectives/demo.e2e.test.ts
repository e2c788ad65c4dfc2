/**
 * The shipped objective's rules on what `npm start` serves: the simulated portal with its defaults,
 * collected by `once`, its Vitals funnel held for 2½ hours in promtool. Every three hours over two
 * simulated days, the steady state pages no one; with `--regress` (80 % of one integration's
 * configuration compliance gone) the page fires at once.
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { FakeClock } from '../../src/core/clock.js';
import { stageRegression } from '../../src/simulator/command.js';
import { startSimulator } from '../../src/simulator/index.js';
import { runMain } from '../support/cli.js';
import { REPO_ROOT, runPromtool } from '../infra/support.js';

const dir = mkdtempSync(join(tmpdir(), 'posture-demo-objectives-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HOUR = 3_600_000;
const FUNNEL = /^(posture_vitals_(?:eligible|compliant)_devices\{[^}]*\}) (\S+)$/;

/** The whole-portal Vitals funnel series `once` serves for the default simulated portal at `at`, optionally with `--regress`. */
async function funnelAt(at: number, regress?: string): Promise<Array<{ series: string; value: number }>> {
  const sim = await startSimulator({ clock: new FakeClock(at), rateLimit: false });
  try {
    if (regress !== undefined) stageRegression(sim, regress);
    const r = await runMain(['once'], { env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: sim.apiKey, POSTURE_PORTAL: 'demo' } });
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout.split('\n').flatMap((line) => {
      const m = FUNNEL.exec(line);
      return m && !m[1]!.includes('tag=') ? [{ series: m[1]!, value: Number(m[2]) }] : [];
    });
    expect(out.length).toBeGreaterThan(0);
    return out;
  } finally {
    await sim.close();
  }
}

/** A promtool test of the series held for 150 minutes, a sample a minute, asking which pages fire at 5m, 1h and 2h30m. */
function heldTest(name: string, funnel: Array<{ series: string; value: number }>, pages: string[]) {
  return {
    name,
    interval: '1m',
    input_series: funnel.map(({ series, value }) => ({ series, values: `${value}x150` })),
    promql_expr_test: ['5m', '60m', '150m'].map((t) => ({
      expr: 'ALERTS{alertname="PostureObjectiveBurnRate",alertstate="firing",severity="critical"}',
      eval_time: t,
      exp_samples: pages.map((integration) => ({ labels: `ALERTS{alertname="PostureObjectiveBurnRate",alertstate="firing",severity="critical",objective="configuration",portal="demo",integration="${integration}"}`, value: 1 })),
    })),
  };
}

describe('the shipped objective on the demo portal', () => {
  it('pages no one in steady state, and pages for the integration --regress breaks', async () => {
    const start = Date.UTC(2026, 2, 2);
    const tests = [];
    for (let i = 0; i < 16; i++) {
      const at = start + i * 3 * HOUR;
      tests.push(heldTest(`steady state at ${new Date(at).toISOString()}`, await funnelAt(at), []));
    }
    tests.push(heldTest('--regress crowdstrike', await funnelAt(start, 'crowdstrike'), ['crowdstrike']));
    copyFileSync(join(REPO_ROOT, 'infra/prometheus/rules/posture-objectives.rules.yml'), join(dir, 'rules.yml'));
    writeFileSync(join(dir, 'demo.test.yml'), stringify({ rule_files: ['rules.yml'], evaluation_interval: '1m', tests }, { lineWidth: 0 }));
    const r = await runPromtool(['test', 'rules', 'demo.test.yml'], dir);
    expect(r.code, r.output).toBe(0);
  }, 300_000);
});
