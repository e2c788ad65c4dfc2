/**
 * `serve`'s check of each portal's intervals, in the words a user reads: which constraint fails
 * (the hourly share, a run longer than its interval, or a run late minute by minute), the change to
 * make, and the setting named. Hourly figures worked by hand from docs/budget.md's formula; where
 * the minute by minute timeline moves a suggestion, the comment says why.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/load.js';
import { checkServeConfig, formatChange, lateWhy, stalenessMs } from '../../src/schedule/fit.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-fit-test-0123456789' };
const env = (more: Record<string, string>): Config => loadConfig({ env: { ...base, ...more }, flags: {} });
const tags = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`).join(',');
const problems = (c: Config) => checkServeConfig(c).map((e) => [e.setting, e.message]);
/** The access settings read daily, as the directory is: 4 requests a day, so a test of the live sources' arithmetic keeps its hour. */
const DAILY = { POSTURE_ACCESS_INTERVAL_SECONDS: '86400' };

describe('checkServeConfig', () => {
  it("gives the docs' message: one source, and POSTURE_INTERVAL_SECONDS as the alternative", () => {
    // Vitals 4 × 60 + /alerts 1 × 120 + devices 2 × 60 = 480 of 300. Vitals alone: 14400 / x ≤ 60 → 240 s,
    // and POSTURE_INTERVAL_SECONDS (Vitals and devices): 6 × 3600 / x ≤ 180 → 120 s, each exactly 300
    // per hour, which 5 requests per 61 s cannot keep up with: every source changes.
    // The resolved-alerts pass (1 request per run, every 3600 s by default) is planned beside the sources: 481 per hour, and the
    // stretched proportions are lowered around its hourly request minute by minute: 90, 80 and 100 s.
    // Or the share: 481 per hour needs 9/min (540 per hour; 8 allows 480), where a minute's 4 + 2 + 2 requests fit 9 per 61 s.
    // The access settings (3 requests every 3600 s) and the directory (1 every 86400 s) add 3.04: 485 per hour; their
    // requests, as the pass's, wait for the gaps that make no live run late: still 90, 80 and 100 s, or 9/min.

    expect(problems(env({ POSTURE_VITALS_TAGS: 'a,b,c', POSTURE_ALERTS_INTERVAL_SECONDS: '30', POSTURE_INTERVAL_SECONDS: '60' }))).toEqual([
      ['POSTURE_VITALS_INTERVAL_SECONDS', 'the intervals need 485 requests per hour but the share allows 300 (5/min): set POSTURE_VITALS_INTERVAL_SECONDS=90 POSTURE_ALERTS_INTERVAL_SECONDS=80 POSTURE_DEVICES_INTERVAL_SECONDS=100, or raise POSTURE_REQUESTS_PER_MINUTE to 9.'],
    ]);
  });

  it('names POSTURE_INTERVAL_SECONDS as the alternative when no interval is set at all', () => {
    // Share 1 (60 per hour), 10 tags, every source at the default 300 s: 132 + 12 + 24. Vitals alone
    // by the hour: 39600 / x ≤ 24 → 1,650 s, but a run of 11 requests then holds the share for 610 s
    // and the other sources' runs wait past their deadlines. All three: 14 × 3600 / x ≤ 60 → 840 s by
    // the hour, more minute by minute.
    // Or the share: 2/min allows 120 per hour; 3/min 180, and the 14 requests of every 300 s fit 3 per 61 s (14.75 in 300 s).
    // With the slow sources (the pass's 1 an hour, the access settings' 3, the directory's 1 a day) 173 per hour, and 940 s
    // minute by minute, where each window counts from the end of a request's second in flight; or 4/min.
    expect(problems(env({ POSTURE_REQUESTS_PER_MINUTE: '1', POSTURE_VITALS_TAGS: tags(10) }))).toEqual([
      ['POSTURE_INTERVAL_SECONDS', 'the intervals need 173 requests per hour but the share allows 60 (1/min): set POSTURE_INTERVAL_SECONDS=940, or raise POSTURE_REQUESTS_PER_MINUTE to 4.'],
    ]);
  });

  it('names POSTURE_INTERVAL_SECONDS alone, with no alternative, when it is the change', () => {
    // The resolved-alerts pass (1 request per run, every 3600 s by default) is planned beside the sources: 1 more per hour.
    // The access settings (3 every 3600 s) and the directory (1 every 86400 s): 1445; their 4 requests in the first
    // minute make 50 s late minute by minute: 60 s. No share helps: the portal's 10/min allow 600 per hour.
    expect(problems(env({ POSTURE_INTERVAL_SECONDS: '10' }))).toEqual([
      ['POSTURE_INTERVAL_SECONDS', 'the intervals need 1445 requests per hour but the share allows 300 (5/min): set POSTURE_INTERVAL_SECONDS=60.'],
    ]);
  });

  it('says when a run outlasts its interval within the hourly share', () => {
    // 70 tags at 10 a window: 71 requests span 8 windows, 7 × 61 = 427 s; 598.6 + 0.1 per hour of 600, and with the access
    // settings read daily (DAILY) 0.125 and the directory's 0.04 more.
    // The share is the portal's 10 already: no raise is named.
    const c = env({ POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_VITALS_TAGS: tags(70), POSTURE_VITALS_INTERVAL_SECONDS: '427', POSTURE_INTERVAL_SECONDS: '86400', ...DAILY });
    expect(problems(c)).toEqual([
      ['POSTURE_VITALS_INTERVAL_SECONDS', 'a run of vitals (71 requests at 10/min) takes at least 427 s, not less than its interval of 427 s: set POSTURE_VITALS_INTERVAL_SECONDS=460.'],
    ]);
    // At 428 s the run fits its interval, but its last request leaves less than 10 s to be read or retried.
    expect(problems(env({ POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_VITALS_TAGS: tags(70), POSTURE_VITALS_INTERVAL_SECONDS: '428', POSTURE_INTERVAL_SECONDS: '86400', ...DAILY }))).toEqual([
      ['POSTURE_VITALS_INTERVAL_SECONDS', 'serve would run /vitals late: its run that starts at +0 s could not send all its requests before its deadline +428 s at 10/min: set POSTURE_VITALS_INTERVAL_SECONDS=460.'],
    ]);
    // At 440 s its last request (at 7 × 62 = 434 s) leaves less than 10 s to be read or retried (the slow sources' first
    // requests take slots of its first windows too): 460 s runs.
    expect(problems(env({ POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_VITALS_TAGS: tags(70), POSTURE_VITALS_INTERVAL_SECONDS: '440', POSTURE_INTERVAL_SECONDS: '86400', ...DAILY }))).toEqual([
      ['POSTURE_VITALS_INTERVAL_SECONDS', 'serve would run /vitals late: its run that starts at +0 s could send its last request only at +434 s, less than 10 s before its deadline +440 s at 10/min: set POSTURE_VITALS_INTERVAL_SECONDS=460.'],
    ]);
    expect(problems(env({ POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_VITALS_TAGS: tags(70), POSTURE_VITALS_INTERVAL_SECONDS: '460', POSTURE_INTERVAL_SECONDS: '86400', ...DAILY }))).toEqual([]);
  });

  it('says the hour is too full before the run is too long, and names the interval that fixes both', () => {
    // 100 tags at 10 a window: 101 requests span 11 windows, 10 × 61 = 610 s. Per hour 101 × 3600 / 610
    // + 3 × 3600 / 2745 = 596.07 + 3.93 = 600, the share's capacity exactly, and the resolved-alerts pass's
    // request every 3600 s makes it 601, the access settings' 3 and the directory's 0.04 605: the hour is named first.
    // Vitals at 630 s: 577.1 + 3.9 + 1 + 3.04 = 585.1; each window counts from the end of a request's second in flight (62 s apart), and beside the slow
    // sources' first requests 650 s. The share is the
    // portal's 10 already: no raise is named.
    const c = env({ POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_VITALS_TAGS: tags(100), POSTURE_VITALS_INTERVAL_SECONDS: '610', POSTURE_INTERVAL_SECONDS: '2745' });
    expect(problems(c)).toEqual([
      // 10 × 62 = 620 s by the run's length, 10 s for its last request to be read or retried, and the slow sources' first requests: 650 s.
      ['POSTURE_VITALS_INTERVAL_SECONDS', 'the intervals need 605 requests per hour but the share allows 600 (10/min): set POSTURE_VITALS_INTERVAL_SECONDS=650.'],
    ]);
  });

  it('says that no interval fits when even the longest does not', () => {
    // 2,000 tags at 1 a window: 2,001 Vitals requests every 300 s are 24,012 per hour, plus 12 and 24, 1 of the resolved-alerts pass, 3 of the access settings and 0.04 of the directory.
    // The portal's 10/min (600 per hour) do not hold them either: only fewer tags help.
    expect(problems(env({ POSTURE_REQUESTS_PER_MINUTE: '1', POSTURE_VITALS_TAGS: tags(2_000) }))).toEqual([
      ['POSTURE_REQUESTS_PER_MINUTE', 'the intervals need 24053 requests per hour but the share allows 60 (1/min), and no interval up to 86400 s fits: give fewer POSTURE_VITALS_TAGS (no share up to 10/min fits these intervals).'],
    ]);
  });

  it('rounds the requests per hour up and names the portal when there are several', () => {
    // Portal b: Vitals every 11 s: 3600 / 11 = 327.3 + 12 + 24 = 363.3, 364 rounded up; alone 3600 / x ≤ 264 → 20 s
    // by the hour, where a window holding a devices run leaves 3 slots for Vitals every 20 s: 30 s. The slow sources (the
    // resolved-alerts pass 1 per hour, the access settings 3, the directory 0.04: 368) wait for the gaps that make no
    // Vitals run late: still 30 s. Or 9/min: 3600 / 11 = 327 Vitals requests an hour and 36 of the others fit 540.
    const c = loadConfig({
      env: {
        POSTURE_CONFIG: JSON.stringify({
          portals: [
            { portal: 'a', base_url: 'https://a.example.com/public-api/v1', api_key: 'k-a-0123456789' },
            { portal: 'b', base_url: 'https://b.example.com/public-api/v1', api_key: 'k-b-0123456789', vitals_interval_seconds: 11 },
          ],
        }),
      },
      flags: {},
    });
    expect(problems(c)).toEqual([
      ['POSTURE_VITALS_INTERVAL_SECONDS', 'portal b: the intervals need 368 requests per hour but the share allows 300 (5/min); any one of these fits:\n    set portals[1].vitals_interval_seconds: 30 in POSTURE_CONFIG\n    or raise portals[1].requests_per_minute to 9 (a new key) in POSTURE_CONFIG'],
    ]);
  });

  it('refuses entries of one portal that fit alone but not together, with the factor rounded up to a tenth', () => {
    // Each entry every 70 s: 4 × 3600 / 70 = 205.7 per hour, and 1 of its resolved-alerts pass, 413.4 together; 3.04 each of the
    // access settings and the directory: 419.5, 420, 1.4 times.
    // Or the share of both: 7/min holds 420 per hour, but 8 requests every 70 s where 7 start per 61 s leave no slot
    // for the passes; 8/min runs (480 per hour).
    const two = [
      { portal: 'red', base_url: 'https://acme.example.com/public-api/v1', api_key: 'k-red-0123456789' },
      { portal: 'blue', base_url: 'https://ACME.example.com/public-api/v1', api_key: 'k-blue-0123456789' },
    ];
    const c = loadConfig({ env: { POSTURE_CONFIG: JSON.stringify({ interval_seconds: 70, portals: two }) }, flags: {} });
    expect(problems(c)).toEqual([
      ['POSTURE_INTERVAL_SECONDS', 'portals red, blue read one portal (https://acme.example.com/public-api/v1) with one share: their intervals need 420 requests per hour together but the share allows 300 (5/min): lengthen their intervals about 1.4 times, or raise portals[0].requests_per_minute to 8 (a new key) in POSTURE_CONFIG and raise portals[1].requests_per_minute to 8 (a new key) in POSTURE_CONFIG, or read the portal with fewer keys.'],
    ]);
    // Every 85 s: 170.4 each with the pass, 340.8 together, and 3.04 each of the access settings and the directory: 347,
    // 1.16 times → 1.2 (1.1 would still be 315).
    expect(problems(loadConfig({ env: { POSTURE_CONFIG: JSON.stringify({ interval_seconds: 85, portals: two }) }, flags: {} }))[0]![1]).toContain('their intervals need 347 requests per hour together but the share allows 300 (5/min): lengthen their intervals about 1.2 times');
    // Every 96 s: 150 each, 1 each of the resolved-alerts passes and 3.04 each of the access settings and the directory:
    // 308.1 together, 309, above the share by the hour; 6/min holds 360 by the hour but not the slow sources' first
    // requests beside the live ones minute by minute, 6/min does.
    expect(problems(loadConfig({ env: { POSTURE_CONFIG: JSON.stringify({ interval_seconds: 96, portals: two }) }, flags: {} }))).toEqual([
      ['POSTURE_INTERVAL_SECONDS', 'portals red, blue read one portal (https://acme.example.com/public-api/v1) with one share: their intervals need 309 requests per hour together but the share allows 300 (5/min): lengthen their intervals about 1.1 times, or raise portals[0].requests_per_minute to 6 (a new key) in POSTURE_CONFIG and raise portals[1].requests_per_minute to 6 (a new key) in POSTURE_CONFIG, or read the portal with fewer keys.'],
    ]);
    // Every 100 s: 148 each with the slow sources, 296.1 together by the hour, but the live runs alone leave too little
    // minute by minute (5 requests per 61 s): what the slow sources' first requests push back makes blue's /alerts late.
    // Every 110 s: 134.9 each, 269.9 together, runs: the slow sources' requests find gaps that make no live run late.
    expect(problems(loadConfig({ env: { POSTURE_CONFIG: JSON.stringify({ interval_seconds: 100, portals: two }) }, flags: {} }))).toEqual([
      ['POSTURE_INTERVAL_SECONDS', "portals red, blue read one portal (https://acme.example.com/public-api/v1) with one share: serve would run blue's /alerts late: its run that starts at +241 s could not send all its requests before its deadline +341 s at 5/min: lengthen their intervals, or raise portals[0].requests_per_minute to 6 (a new key) in POSTURE_CONFIG and raise portals[1].requests_per_minute to 6 (a new key) in POSTURE_CONFIG, or read the portal with fewer keys."],
    ]);
    expect(problems(loadConfig({ env: { POSTURE_CONFIG: JSON.stringify({ interval_seconds: 110, portals: two }) }, flags: {} }))).toEqual([]);
    // One entry that does not fit alone (327.3 + 3 × 37.5 + 1 of its pass + 3.04 of the access settings and the directory
    // = 443.8) is reported alone, not again together: Vitals every 30 s, or 10/min.
    const c2 = loadConfig({ env: { POSTURE_CONFIG: JSON.stringify({ interval_seconds: 96, portals: [two[0], { ...two[1], vitals_interval_seconds: 11 }] }) }, flags: {} });
    expect(problems(c2)).toEqual([
      ['POSTURE_VITALS_INTERVAL_SECONDS', 'portal blue: the intervals need 444 requests per hour but the share allows 300 (5/min); any one of these fits:\n    set portals[1].vitals_interval_seconds: 30 in POSTURE_CONFIG\n    or raise portals[1].requests_per_minute to 10 (a new key) in POSTURE_CONFIG'],
    ]);
  });
});

describe('checkServeConfig at the capacity exactly, and minute by minute', () => {
  it('refuses intervals whose load is exactly the share by the hour: one request per 61 s falls behind', () => {
    // Share 1 (60 per hour): 3600 × (1/72 + 1/720 + 2/1800 + 1/4320 + 3/86400 + 1/86400) = 50 + 5 + 4 + 5/6 + 1/8 + 1/24 = 60,
    // the resolved-alerts pass, the access settings and the directory (both daily) included.
    // 2/min (120 per hour) holds them with room to spare.
    expect(problems(env({ POSTURE_REQUESTS_PER_MINUTE: '1', POSTURE_VITALS_INTERVAL_SECONDS: '72', POSTURE_ALERTS_INTERVAL_SECONDS: '720', POSTURE_DEVICES_INTERVAL_SECONDS: '1800', POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS: '4320', ...DAILY }))).toEqual([
      ['POSTURE_VITALS_INTERVAL_SECONDS', 'serve would run /vitals late: its run that starts at +72 s could not send all its requests before its deadline +144 s at 1/min: set POSTURE_VITALS_INTERVAL_SECONDS=100, or raise POSTURE_REQUESTS_PER_MINUTE to 2.'],
    ]);
  });

  it('two Vitals tags every 180 s and the other sources every 60 s: accepted at a share of 5, the slow sources in the gaps, and refused at 4 by the hour', () => {
    const at = (share: number) => env({ POSTURE_REQUESTS_PER_MINUTE: String(share), POSTURE_VITALS_TAGS: 'a,b', POSTURE_VITALS_INTERVAL_SECONDS: '180', POSTURE_ALERTS_INTERVAL_SECONDS: '60', POSTURE_DEVICES_INTERVAL_SECONDS: '60' });
    // 3 Vitals requests every 180 s, 2 device totals and 1 /alerts page every 60 s: 240 per hour, 6 in a
    // minute where every source is due, 1 of the resolved-alerts pass, 3 of the access settings and 0.04 of the
    // directory: 245. At 4 per 61 s that is more than the hour holds (240). At 5 the hour holds them, staggered, and the
    // slow sources' 5 first requests wait for the gaps that make no live run late.
    expect(problems(at(6))).toEqual([]);
    expect(problems(at(5))).toEqual([]);
    expect(problems(at(4))).toEqual([
      // Devices every 80 s (90 an hour): 215; or the share of 5.
      ['POSTURE_DEVICES_INTERVAL_SECONDS', 'the intervals need 245 requests per hour but the share allows 240 (4/min): set POSTURE_DEVICES_INTERVAL_SECONDS=80, or raise POSTURE_REQUESTS_PER_MINUTE to 5.'],
    ]);
  });
});

describe('formatChange', () => {
  it('names the variables when the settings do not say how they were set', () => {
    const portal = { ...env({}).portals[0]!, intervalSettings: undefined };
    expect(formatChange({}, portal, { sources: { devices: 600, vitals: 400 }, interval: 50 })).toBe('POSTURE_INTERVAL_SECONDS=50 POSTURE_VITALS_INTERVAL_SECONDS=400 POSTURE_DEVICES_INTERVAL_SECONDS=600');
  });
});

describe('stalenessMs', () => {
  it('is the setting for every source and the resolved-alerts pass, else two intervals of each', () => {
    const c = env({ POSTURE_VITALS_INTERVAL_SECONDS: '60', POSTURE_ALERTS_INTERVAL_SECONDS: '120' });
    // The pass's and the access settings' default interval is 3600 s, the directory's 86400 s.
    expect(stalenessMs(c, c.portals[0]!)).toEqual({ vitals: 120_000, alerts: 240_000, devices: 600_000, resolved: 7_200_000, access: 7_200_000, directory: 172_800_000 });
    const set = env({ POSTURE_VITALS_INTERVAL_SECONDS: '60', POSTURE_MAX_STALENESS_SECONDS: '900' });
    expect(stalenessMs(set, set.portals[0]!)).toEqual({ vitals: 900_000, alerts: 900_000, devices: 900_000, resolved: 900_000, access: 900_000, directory: 900_000 });
  });
});

describe('lateWhy', () => {
  it('names a late source by its endpoint and the resolved-alerts pass by its list, with the entry when there are several', () => {
    expect(lateWhy({ name: 'resolved', startsAt: 45_000, lastAt: Infinity, deadline: 3_645_000 }, 5)).toBe('serve would run the resolved-alerts pass (/alerts?filter=resolved) late: its run that starts at +45 s could not send all its requests before its deadline +3645 s at 5/min');
    expect(lateWhy({ name: 'acme/resolved', startsAt: 45_000, lastAt: Infinity, deadline: 3_645_000 }, 5)).toMatch(/^serve would run acme's resolved-alerts pass \(\/alerts\?filter=resolved\) late: /);
    expect(lateWhy({ name: 'acme/alerts', startsAt: 45_000, lastAt: 50_000, deadline: 55_000 }, 5)).toBe("serve would run acme's /alerts late: its run that starts at +45 s could send its last request only at +50 s, less than 10 s before its deadline +55 s at 5/min");
  });
});

