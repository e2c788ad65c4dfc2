// check-config's interval suggestions: each, applied alone the way a user would (the settings added and the
// config loaded again), makes the plan fit; the least change is preferred; the smallest intervals are minimal.
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/load.js';
import { checkServeConfig, formatChange, planOf } from '../../src/schedule/fit.js';
import { SOURCES, type Source } from '../../src/domain.js';
import { MAX_INTERVAL_SECONDS } from '../../src/schedule/plan.js';
import { SETTING_BY_KEY } from '../../src/config/settings.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-plan-test-1234' };
type Flags = Record<string, string>;

/** Applies `NAME=value` settings as a user would: a flag replaces the flag, a variable is added to the environment. */
function apply(text: string, env: Record<string, string>, flags: Flags): { env: Record<string, string>; flags: Flags } {
  const e = { ...env };
  const f = { ...flags };
  for (const part of text.split(' ')) {
    const [name, value] = part.split('=') as [string, string];
    if (name.startsWith('--')) f[name.slice(2).replace(/-/g, '_')] = value;
    else e[name] = value;
  }
  return { env: e, flags: f };
}

const load = (env: Record<string, string>, flags: Flags): Config => loadConfig({ env, flags });

/** Every suggestion check-config gives for the first portal: the least change, the POSTURE_INTERVAL_SECONDS one, the smallest intervals. */
function suggestions(c: Config): string[] {
  const p = c.portals[0]!;
  const plan = planOf(p);
  const out: string[] = [];
  if (plan.change) out.push(formatChange(c, p, plan.change));
  if (plan.intervalAlone !== undefined) out.push(formatChange(c, p, { sources: {}, interval: plan.intervalAlone }));
  if (plan.suggested) out.push(formatChange(c, p, { sources: plan.suggested }));
  return out;
}

describe('interval suggestions', () => {
  it('with --alerts-interval-seconds 10 names that flag, at the smallest multiple of 10 that fits, and leaves the rest', () => {
    const c = load(base, { alerts_interval_seconds: '10' });
    const plan = planOf(c.portals[0]!);
    // /alerts every 20 s is 180 + 12 + 24 = 216 per hour, but a window that holds a Vitals run and a
    // devices run (3 requests) leaves 2 slots for 3 /alerts runs, and one waits past its deadline's
    // 10 s of headroom; every 30 s, 2 runs a window fit beside them. The slow sources' first requests (the resolved-alerts
    // pass's 1, the access settings' 3, the directory's 1) wait for the gaps that make no live run late: still 30 s.
    expect(plan.change).toEqual({ sources: { alerts: 30 }, intervals: { vitals: 300, alerts: 30, devices: 300 } });
    expect(planOf({ ...c.portals[0]!, intervals: { vitals: 300, alerts: 20, devices: 300 } }).late).toMatchObject({ name: 'alerts' });
    // Raising POSTURE_INTERVAL_SECONDS cannot help: the explicit /alerts interval alone overspends.
    expect(plan.intervalAlone).toBeUndefined();
    expect(plan.suggested).toEqual({ vitals: 300, alerts: 30, devices: 300 });
    // 396 per hour, 1 of the resolved-alerts pass (every 3600 s), 3 of the access settings and 0.04 of the directory. At the portal's 10/min the 6 /alerts
    // requests a minute fit beside the others, the slow ones waiting for the gaps.
    expect(checkServeConfig(c).map((e) => e.message)).toEqual(['the intervals need 401 requests per hour but the share allows 300 (5/min): set --alerts-interval-seconds=30, or raise POSTURE_REQUESTS_PER_MINUTE to 10.']);
    const fixed = apply('--alerts-interval-seconds=30', base, { alerts_interval_seconds: '10' });
    expect(checkServeConfig(load(fixed.env, fixed.flags))).toEqual([]);
  });

  it('never names a live interval past the 4-hour horizon that the check would see only once: at 9/min, /alerts every 20 s, not Vitals every 14,410 s', () => {
    // /alerts every 10 s, 1 request, beside Vitals and devices every 300 s: the /alerts run that meets them at +300 s
    // starts late. Vitals moved past 4 hours would be checked in one alignment only and its other meetings with devices
    // (14,410 s is 10 s past a multiple of 300 s) never; /alerts every 20 s leaves each run 10 s to wait.
    const c = load({ ...base, POSTURE_REQUESTS_PER_MINUTE: '9' }, { alerts_interval_seconds: '10' });
    expect(checkServeConfig(c).map((e) => e.message.replace(/^.*: set /, 'set '))).toEqual(['set --alerts-interval-seconds=20, or raise POSTURE_REQUESTS_PER_MINUTE to 10.']);
  });

  it('with --interval-seconds 400 as well, still only /alerts changes', () => {
    const c = load(base, { alerts_interval_seconds: '10', interval_seconds: '400' });
    expect(suggestions(c)).toEqual(['--alerts-interval-seconds=30', 'POSTURE_VITALS_INTERVAL_SECONDS=400 --alerts-interval-seconds=30 POSTURE_DEVICES_INTERVAL_SECONDS=400']);
  });

  it('names POSTURE_INTERVAL_SECONDS when every source inherits it and one source alone cannot fix it', () => {
    // Every 50 s the live sources send 4 requests, 4.9 of the 5 each 61 s holds: what a slow source's request pushes back
    // drains for minutes, and a later /alerts run is late. Every 60 s leaves the slow sources their gaps.
    const env = { ...base, POSTURE_INTERVAL_SECONDS: '10' };
    const c = load(env, {});
    expect(suggestions(c)).toEqual(['POSTURE_INTERVAL_SECONDS=60', 'POSTURE_INTERVAL_SECONDS=60', 'POSTURE_VITALS_INTERVAL_SECONDS=60 POSTURE_ALERTS_INTERVAL_SECONDS=40 POSTURE_DEVICES_INTERVAL_SECONDS=60']);
  });

  it('names the key of a portal in a config file', () => {
    const file = JSON.stringify({ portals: [{ portal: 'a', base_url: base.POSTURE_BASE_URL, api_key: 'k1', alerts_interval_seconds: 10 }] });
    const c = load({ POSTURE_CONFIG: file }, {});
    expect(suggestions(c)[0]).toBe('portals[0].alerts_interval_seconds: 30 in POSTURE_CONFIG');
  });

  it('the longest interval a setting takes is the one suggestions stop at', () => {
    expect(SETTING_BY_KEY.interval_seconds.max).toBe(MAX_INTERVAL_SECONDS);
    for (const s of SOURCES) expect(SETTING_BY_KEY[`${s}_interval_seconds`].max).toBe(MAX_INTERVAL_SECONDS);
  });

  it('property: over random intervals, shares and tags, every suggestion applied alone fits, and the smallest intervals are minimal', () => {
    let seed = 0x2545f491;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const interval = () => String([10, 15, 20, 30, 45, 60, 90, 120, 300, 600, 3600][rand(11)]);
    let checked = 0;
    for (let i = 0; i < 60; i++) {
      const env: Record<string, string> = { ...base, POSTURE_REQUESTS_PER_MINUTE: String(1 + rand(10)), POSTURE_VITALS_TAGS: Array.from({ length: rand(12) }, (_, k) => `t${k}`).join(',') };
      const flags: Flags = {};
      if (rand(2)) env.POSTURE_INTERVAL_SECONDS = interval();
      if (rand(2)) flags.interval_seconds = interval();
      for (const s of SOURCES) {
        const r = rand(3);
        if (r === 1) env[`POSTURE_${s.toUpperCase()}_INTERVAL_SECONDS`] = interval();
        if (r === 2) flags[`${s}_interval_seconds`] = interval();
      }
      const c = load(env, flags);
      const p = c.portals[0]!;
      const plan = planOf(p);
      expect(checkServeConfig(c).length === 0).toBe(plan.fits);
      if (plan.fits) continue;
      checked++;
      expect(plan.change, JSON.stringify({ env, flags })).toBeDefined();
      for (const text of suggestions(c)) {
        const applied = apply(text, env, flags);
        const again = load(applied.env, applied.flags);
        expect(planOf(again.portals[0]!).fits, `${text} with ${JSON.stringify({ env, flags })}`).toBe(true);
        expect(checkServeConfig(again)).toEqual([]);
      }
      // Minimal: no interval can go 10 s lower (or back to as configured) with the plan still fitting,
      // where the search tries every multiple of 10 s (the first 300 s above the configured value).
      const smallest = plan.suggested!;
      for (const s of SOURCES) {
        expect(smallest[s]).toBeGreaterThanOrEqual(p.intervals[s]);
        if (smallest[s] === p.intervals[s]) continue;
        expect(smallest[s] % 10, JSON.stringify({ s, smallest, intervals: p.intervals, env, flags })).toBe(0);
        if (smallest[s] - p.intervals[s] > 300) continue;
        const lower = smallest[s] - 10 > p.intervals[s] ? smallest[s] - 10 : p.intervals[s];
        const tried: Record<Source, number> = { ...smallest, [s]: lower };
        expect(planOf({ ...p, intervals: tried }).fits, `${s} lower than ${smallest[s]} in ${JSON.stringify(smallest)}`).toBe(false);
      }
      // The least change: no single source alone can fit with a smaller interval than the one suggested for it.
      for (const s of SOURCES) {
        const v = plan.change!.sources[s];
        if (v === undefined) continue;
        const lower = v - 10 > p.intervals[s] ? v - 10 : p.intervals[s];
        expect(planOf({ ...p, intervals: { ...p.intervals, [s]: lower } }).fits).toBe(false);
      }
    }
    expect(checked).toBeGreaterThan(15);
  });
});
