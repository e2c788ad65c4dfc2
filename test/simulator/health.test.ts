/**
 * The default simulated portal (what `npm start` serves: seed 1, 250 devices, 8 integrations) meets
 * the shipped objective, 95 % at the configuration stage over 28d, and `--regress` breaks it on
 * demand. Counted from the served records against the objective's numbers, written by hand.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { ConfigError } from '../../src/errors.js';
import { stageRegression } from '../../src/simulator/command.js';
import { startSimulator } from '../../src/simulator/index.js';
import { runMain } from '../support/cli.js';
import { thrownBy } from '../support/errors.js';

const DAY = 86_400_000;
// The shipped objective's error budget and its page's lowest error ratio (6 × 0.05).
const BUDGET = 0.05;
const LOWEST_PAGE = 0.3;

describe('the default simulated portal', () => {
  it('meets the shipped objective over a week: within the budget per integration, and no sample bad enough to page', async () => {
    const start = Date.UTC(2026, 0, 5);
    const sim = await startSimulator({ clock: new FakeClock(start), rateLimit: false });
    try {
      const sums = new Map<string, { bad: number; eligible: number; worst: number }>();
      for (let t = start; t < start + 7 * DAY; t += 5 * 60_000) {
        for (const r of sim.data(t).vitals()) {
          if (!r.vitalsEnabled) continue;
          const s = sums.get(r.key) ?? { bad: 0, eligible: 0, worst: 0 };
          s.bad += r.configurationPossibleCompliant! - r.configurationCompliant!;
          s.eligible += r.configurationPossibleCompliant!;
          s.worst = Math.max(s.worst, 1 - r.configurationCompliant! / r.configurationPossibleCompliant!);
          sums.set(r.key, s);
        }
      }
      expect([...sums.keys()].sort()).toEqual(['crowdstrike', 'defender', 'intune', 'jamf', 'sentinelone']);
      for (const [key, s] of sums) {
        // A burn rate under 0.8: the budget holds, with room to spare.
        expect(s.bad / s.eligible, key).toBeLessThan(BUDGET * 0.8);
        // The automatic dips included: no sample, held for ever, would page.
        expect(s.worst, key).toBeLessThan(LOWEST_PAGE);
      }
    } finally {
      await sim.close();
    }
  });

  it('loses 80 % of one integration\'s configuration-compliant devices with --regress INTEGRATION, or the fraction given', async () => {
    const sim = await startSimulator({ clock: new FakeClock(), rateLimit: false });
    try {
      const before = new Map(sim.data().vitals().map((r) => [r.key, r]));
      expect(stageRegression(sim, 'crowdstrike')).toBe('regression (--regress): crowdstrike has 80 % fewer configuration-compliant devices from now on\n');
      const after = new Map(sim.data().vitals().map((r) => [r.key, r]));
      expect(after.get('crowdstrike')!.configurationCompliant).toBe(Math.round(before.get('crowdstrike')!.configurationCompliant! * 0.2));
      expect(after.get('intune')).toEqual(before.get('intune'));
      stageRegression(sim, 'Microsoft Intune=0.25');
      expect(new Map(sim.data().vitals().map((r) => [r.key, r])).get('intune')!.configurationCompliant).toBe(Math.round(before.get('intune')!.configurationCompliant! * 0.75));
    } finally {
      await sim.close();
    }
  });

  it.each([
    ['okta', '--regress="okta": the simulated portal has no integration "okta" with Vitals: give the key of an integration with Vitals (crowdstrike, intune, jamf, sentinelone, defender), optionally =FRACTION from 0 to 1 (default 0.8).'],
    ['crowdstrike=2', '--regress="crowdstrike=2" is not valid: give the key of an integration with Vitals (crowdstrike, intune, jamf, sentinelone, defender), optionally =FRACTION from 0 to 1 (default 0.8).'],
    ['crowdstrike=0', '--regress="crowdstrike=0" is not valid: give the key of an integration with Vitals (crowdstrike, intune, jamf, sentinelone, defender), optionally =FRACTION from 0 to 1 (default 0.8).'],
    ['=0.5', '--regress="=0.5" is not valid: give the key of an integration with Vitals (crowdstrike, intune, jamf, sentinelone, defender), optionally =FRACTION from 0 to 1 (default 0.8).'],
  ])('refuses --regress %j naming the integrations that can regress', async (raw, message) => {
    const sim = await startSimulator({ clock: new FakeClock(), rateLimit: false });
    try {
      const err = thrownBy(() => stageRegression(sim, raw), ConfigError);
      expect([err.setting, err.message]).toEqual(['--regress', message]);
    } finally {
      await sim.close();
    }
  });
});

describe('--regress on the command line', () => {
  it('simulate says the regression it staged', async () => {
    const r = await runMain(['simulate', '--listen', '127.0.0.1:0', '--regress', 'jamf=0.5'], { env: {}, stopSignal: Promise.resolve() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('\nregression (--regress): jamf has 50 % fewer configuration-compliant devices from now on\n');
  });

  it('simulate refuses it with --portals, and an unknown integration, exit 2', async () => {
    const fleet = await runMain(['simulate', '--listen', '127.0.0.1:0', '--portals', '2', '--regress', 'jamf'], { env: {}, stopSignal: Promise.resolve() });
    expect([fleet.code, fleet.stderr]).toEqual([2, 'config error: --regress stages a regression in one simulated portal: drop --portals, or --regress.\n']);
    const unknown = await runMain(['simulate', '--listen', '127.0.0.1:0', '--regress', 'okta'], { env: {}, stopSignal: Promise.resolve() });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^config error: --regress="okta": the simulated portal has no integration "okta" with Vitals/);
  });

  it('demo (npm start) says it under the metrics address; other commands refuse it', async () => {
    const demo = await runMain(['demo', '--regress', 'crowdstrike'], { env: { POSTURE_LISTEN: '127.0.0.1:0' }, stopSignal: Promise.resolve() });
    expect(demo.code).toBe(0);
    expect(demo.stderr).toMatch(/\n {2}metrics: {2}http:\/\/127\.0\.0\.1:\d+\/metrics \(collected every 60 s\)\n {2}regression \(--regress\): crowdstrike has 80 % fewer configuration-compliant devices from now on\n/);
    const once = await runMain(['once', '--regress', 'crowdstrike'], { env: {} });
    expect([once.code, once.stderr]).toEqual([2, 'usage error: --regress belongs to simulate and demo (npm start): it stages a regression in the simulated portal (see --help)\n']);
    const real = await runMain(['demo', '--regress', 'crowdstrike'], { env: { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-secret-value-123' } });
    expect(real.code).toBe(2);
    expect(real.stderr).toBe('config error: --regress stages a regression in the simulated portal, but a portal is configured: drop --regress, or the portal settings for the simulated one.\n');
  });
});
