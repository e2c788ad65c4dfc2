/**
 * The plan's figures against docs/budget.md's sizing formula, worked by hand: pages allowed
 * A = max(1, R − V − D), the /alerts page size and requests per run, requests per hour against
 * 60 × R, the run-length rule (ceil(n / R) − 1) × 61 s < interval, and one-shot times.
 */
import { describe, expect, it } from 'vitest';
import { oneShotSeconds, portalOneShotSeconds } from '../../src/schedule/one-shot.js';
import { alertsLimit, alertsPagesAllowed, planPortal, runSeconds, type PlanInput, type SlowSource } from '../../src/schedule/plan.js';

/** The resolved-alerts pass, due, its total unknown: one request. */
const PASS: SlowSource = { job: 'resolved', intervalSeconds: 3600, requests: { paged: true } };
const tags = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);
const input = (over: Partial<PlanInput>): PlanInput => ({ requestsPerMinute: 5, pageSize: 500, vitalsTags: [], intervals: { vitals: 300, alerts: 300, devices: 300 }, ...over });
/** Requests per run of each source, as [alerts, vitals, devices] (the docs' table order). */
const perRun = (p: ReturnType<typeof planPortal>) => ['alerts', 'vitals', 'devices'].map((s) => p.sources.find((x) => x.source === s)!.requestsPerRun);

describe('alertsPagesAllowed: what one window leaves beside Vitals and the two device totals', () => {
  it.each([
    // share, tags → pages; pages in a run with the resolved-alerts pass (one request left to it)
    [5, 0, 2, 1],
    [10, 0, 7, 6],
    [10, 3, 4, 3],
    [5, 2, 1, 1],
    [5, 3, 1, 1],
    [1, 0, 1, 1],
  ])('share %i with %i tag(s): %i, or %i with the resolved-alerts pass in the same run', (requestsPerMinute, n, pages, withPass) => {
    expect(alertsPagesAllowed({ requestsPerMinute, vitalsTags: tags(n) })).toBe(pages);
    expect(alertsPagesAllowed({ requestsPerMinute, vitalsTags: tags(n) }, true)).toBe(withPass);
  });
});

describe('alertsLimit', () => {
  it.each([
    // pageSize, remaining, pagesAllowed, pageCap → limit
    [500, 500, 1, undefined, 500],
    [500, 501, 1, undefined, 0],
    [500, 501, 0, undefined, 0],
    [500, undefined, 1, undefined, 0],
    [500, undefined, 2, undefined, 500],
    [500, 1_000, 2, undefined, 500],
    [500, 1_001, 2, undefined, 501],
    [500, 1_001, 3, undefined, 500],
    [500, 100_000, 2, undefined, 50_000],
    [500, 100_000, 3, undefined, 33_334],
    [500, 0, 1, undefined, 500],
    // A portal that caps its pages is asked for at most its cap.
    [500, 5_000, 1, 100, 100],
    [500, 20_000, 2, 100, 100],
    [500, 1_001, 2, 501, 501],
    [500, 1_001, 2, 600, 501],
    [500, 400, 2, 100, 100],
    [500, 400, 2, 500, 500],
    // A cap of 0 is no cap.
    [500, 5_000, 1, 0, 0],
    [500, 1_001, 2, 0, 501],
  ])('page size %i, %s left, %i page(s) allowed, cap %s: limit=%i', (pageSize, remaining, pagesAllowed, pageCap, limit) => {
    expect(alertsLimit({ pageSize, remaining, pagesAllowed, ...(pageCap !== undefined && { pageCap }) })).toBe(limit);
  });
});

describe('planPortal: the docs\' worked examples (share 5, 300 requests per hour)', () => {
  it.each([
    ['small', 0, 200, undefined, [300, 300, 300], [1, 1, 2], 48, true],
    ['busy alerts', 0, 200, undefined, [30, 120, 120], [1, 1, 2], 210, true],
    ['large', 2, 5_000, undefined, [60, 300, 300], [1, 3, 2], 120, true],
    ['100k alerts', 3, 100_000, undefined, [120, 600, 600], [1, 4, 2], 66, true],
    ['100k alerts, no tags', 0, 100_000, undefined, [60, 300, 300], [2, 1, 2], 156, true],
    ['pages capped at 100', 0, 20_000, 100, [300, 300, 300], [200, 1, 2], 2_436, false],
  ] as const)('%s', (_name, n, alertsTotal, pageCap, [alerts, vitals, devices], runs, perHour, fits) => {
    const plan = planPortal(input({ vitalsTags: tags(n), alertsTotal, ...(pageCap !== undefined && { pageCap }), intervals: { vitals, alerts, devices } }));
    expect(perRun(plan)).toEqual(runs);
    expect(plan.requestsPerHour).toBeCloseTo(perHour, 9);
    expect(plan.capacityPerHour).toBe(300);
    expect(plan.fits).toBe(fits);
  });

  it('suggests intervals that run minute by minute when the pages are capped at 100', () => {
    const plan = planPortal(input({ alertsTotal: 20_000, pageCap: 100 }));
    // 2,436 per hour over 300: no single source fixes it (/alerts alone needs 200 pages every
    // 2,730 s, and then 200 requests in a row hold every window for 40 windows, past the other
    // sources' 300 s). The same proportions, 2,440 s by the hour, need 2,510 s minute by minute (40
    // windows that each count from the end of a request's second in flight, 62 s apart), and no source can go lower.
    expect(plan.suggested).toEqual({ vitals: 2_510, alerts: 2_510, devices: 2_510 });
    expect(plan.change).toEqual({ sources: { vitals: 2_510, alerts: 2_510, devices: 2_510 }, intervals: { vitals: 2_510, alerts: 2_510, devices: 2_510 } });
    expect(planPortal(input({ alertsTotal: 20_000, pageCap: 100, intervals: plan.suggested! })).fits).toBe(true);
    expect(plan.intervalAlone).toBeUndefined();
  });

  it('plans the /alerts pages a run of serve may use: up to what one window leaves, no more than the last total needs, and no more than keep every run on time', () => {
    // Share 5, every source every 300 s: one window leaves /alerts 5 − 1 − 2 = 2 pages, and 1 + 2 + 2 = 5
    // requests every 300 s run on time. While the total is unknown a run may use both.
    expect(perRun(planPortal(input({})))).toEqual([2, 1, 2]);
    expect(planPortal(input({})).pages).toEqual({ alerts: 2, slow: 1 });
    // Once known: the pages of 500 it needs, at most 2 (1,001 alerts in 2 grown pages).
    expect(perRun(planPortal(input({ alertsTotal: 0 })))).toEqual([1, 1, 2]);
    expect(perRun(planPortal(input({ alertsTotal: 1 })))).toEqual([1, 1, 2]);
    expect(perRun(planPortal(input({ alertsTotal: 1_000 })))).toEqual([2, 1, 2]);
    expect(perRun(planPortal(input({ alertsTotal: 1_001 })))).toEqual([2, 1, 2]);
    // Every source every 60 s with 1,000 open alerts: 2 pages would make 5 requests a minute where 5 can
    // start per 61 s, and the runs fall behind; 1 page (everything, limit=0) makes 4 a minute, and the
    // resolved-alerts pass aside (none here) runs on time: 60 + 60 + 120 = 240 per hour.
    const minute = planPortal(input({ intervals: { vitals: 60, alerts: 60, devices: 60 }, alertsTotal: 1_000 }));
    expect(minute.fits).toBe(true);
    expect(minute.pages.alerts).toBe(1);
    expect(perRun(minute)).toEqual([1, 1, 2]);
    expect(minute.requestsPerHour).toBe(240);
  });

  it('refuses a load of exactly the share\'s capacity: each window\'s 1 s margin, counted from the end of a request\'s second in flight, makes the share 5 per 62 s, and the runs fall behind', () => {
    // 3600 × (1/60 + 2/60 + 1/30) = 60 + 120 + 120 = 300 per hour: 5 every 60 s, where at most 5 can
    // start every 62 s. Every minute the runs fall two seconds further behind, until /alerts (every
    // 30 s, the lowest priority) has no slot before its deadline.
    const at = planPortal(input({ intervals: { vitals: 60, devices: 60, alerts: 30 }, inherited: [] }));
    expect(at.requestsPerHour).toBe(300);
    expect(at.fits).toBe(false);
    expect(at.late).toMatchObject({ name: 'alerts', lastAt: Infinity });
    // Vitals every 70 s: 51.4 + 240 = 291.4 per hour, more than 5 per 62 s (290.3); every 80 s: 285, which runs.
    expect(at.change).toEqual({ sources: { vitals: 80 }, intervals: { vitals: 80, devices: 60, alerts: 30 } });
    expect(planPortal(input({ intervals: { vitals: 70, devices: 60, alerts: 30 }, inherited: [] })).fits).toBe(false);
    expect(planPortal(input({ intervals: { vitals: 80, devices: 60, alerts: 30 }, inherited: [] })).fits).toBe(true);
  });

  it('refuses a load of exactly the capacity that floating point sums a hair above it', () => {
    // Share 1: 3600 × (1/70 + 1/700 + 2/2100) = 360/7 + 36/7 + 24/7 = 60, the hourly capacity, which
    // one request per 61 s cannot keep up with.
    const plan = planPortal(input({ requestsPerMinute: 1, intervals: { vitals: 70, alerts: 700, devices: 2_100 } }));
    expect(plan.requestsPerHour).toBe(60);
    expect(plan.fits).toBe(false);
  });

  it('refuses a run that does not end 10 s before its source is due again, even within the hourly share', () => {
    // 70 tags at 10 a window: 71 Vitals requests span 8 windows, 7 × 61 s = 427 s by the one-shot rule; 71
    // per 427 s is 598.6 per hour of 600. In serve's model each window counts from the end of a request's
    // second in flight, 62 s apart: the last request goes at 7 × 62 = 434 s and must leave 10 s
    // (HEADROOM_MS) to be read or retried: an interval of at least 444 s, 450 s in multiples of 10.
    const base = { requestsPerMinute: 10, vitalsTags: tags(70) };
    const long = { alerts: 86_400, devices: 86_400 };
    expect(runSeconds(71, 10)).toBe(427);
    const at = planPortal(input({ ...base, intervals: { vitals: 427, ...long } }));
    expect(at.requestsPerHour).toBeLessThan(600);
    expect(at.fits).toBe(false);
    expect(at.change).toEqual({ sources: { vitals: 450 }, intervals: { vitals: 450, ...long } });
    expect(planPortal(input({ ...base, intervals: { vitals: 443, ...long } })).late).toMatchObject({ name: 'vitals', startsAt: 0, lastAt: 434_000, deadline: 443_000 });
    expect(planPortal(input({ ...base, intervals: { vitals: 444, ...long } })).fits).toBe(true);
  });

  it('names POSTURE_INTERVAL_SECONDS alone for the inheriting sources at the smallest multiple of 10 s that fits', () => {
    // Every source at 10 s: 3600 × 4 / x ≤ 300 → x ≥ 48 → 50.
    const plan = planPortal(input({ intervals: { vitals: 10, alerts: 10, devices: 10 }, inherited: ['vitals', 'alerts', 'devices'] }));
    expect(plan.intervalAlone).toBe(50);
    expect(plan.change).toEqual({ sources: {}, interval: 50, intervals: { vitals: 50, alerts: 50, devices: 50 } });
    // Only /alerts and devices inherit, from 10 s, and Vitals is at 60 s (60 per hour): 3 × 3600 / x ≤ 240 → 45 → 50.
    const two = planPortal(input({ intervals: { vitals: 60, alerts: 10, devices: 10 }, inherited: ['alerts', 'devices'] }));
    expect(two.intervalAlone).toBe(50);
    expect(two.change).toEqual({ sources: {}, interval: 50, intervals: { vitals: 60, alerts: 50, devices: 50 } });
  });

  it('never suggests a POSTURE_INTERVAL_SECONDS below an inheriting source\'s interval', () => {
    // /alerts at 10 s and devices at 300 s both inherit: devices alone at 40 s would fit (3 × 3600 / 40 +
    // 12 = 282), but the setting only goes up: 300 s for both (12 + 12 + 24 = 48) is the smallest.
    const plan = planPortal(input({ intervals: { vitals: 300, alerts: 10, devices: 300 }, inherited: ['alerts', 'devices'] }));
    expect(plan.intervalAlone).toBe(300);
  });

  it('prefers one source to POSTURE_INTERVAL_SECONDS, and of the sources that fit alone the one that gives up the fewest requests per hour', () => {
    // Vitals at 20 s (180 per hour), /alerts at 300 s (12), devices at 60 s (120): 312 of 300.
    // Vitals alone: 3600 / x ≤ 168 → 30 s, 252 per hour. Devices alone at 70 s would be 294.9 per
    // hour, within the hour's 300 but not minute by minute. POSTURE_INTERVAL_SECONDS alone: 300 s,
    // two sources changed.
    const plan = planPortal(input({ intervals: { vitals: 20, alerts: 300, devices: 60 }, inherited: ['vitals', 'alerts', 'devices'] }));
    expect(plan.requestsPerHour).toBe(312);
    expect(plan.change).toEqual({ sources: { vitals: 30 }, intervals: { vitals: 30, alerts: 300, devices: 60 } });
    expect(planPortal(input({ intervals: { vitals: 20, alerts: 300, devices: 70 } })).fits).toBe(false);
    expect(plan.intervalAlone).toBe(300);
  });

  it('lowers /alerts first, then Vitals, then devices, from the same-proportions stretch, as far as each runs minute by minute', () => {
    // Share 1 (60 per hour, one request per 62 s in serve's model): every source at 10 s except devices at 300 s: 744
    // per hour, a factor of 12.4, then each lowered while the timeline still runs.
    const plan = planPortal(input({ requestsPerMinute: 1, intervals: { vitals: 10, alerts: 10, devices: 300 } }));
    expect(plan.suggested).toEqual({ vitals: 190, alerts: 200, devices: 360 });
    expect(planPortal(input({ requestsPerMinute: 1, intervals: plan.suggested! })).fits).toBe(true);
    for (const s of ['vitals', 'alerts', 'devices'] as const) expect(planPortal(input({ requestsPerMinute: 1, intervals: { ...plan.suggested!, [s]: plan.suggested![s] - 10 } })).fits).toBe(false);
  });

  it('has no suggestion when even the longest intervals do not fit', () => {
    // 100 tags at 1 a window: 101 Vitals requests take 100 windows (6,100 s) — fits at 86,400 s.
    expect(planPortal(input({ requestsPerMinute: 1, vitalsTags: tags(100), intervals: { vitals: 10, alerts: 10, devices: 10 } })).suggested).toBeDefined();
    // 2,000 tags at 1 a window: 2,001 requests take 2,000 windows, 122,000 s, longer than any interval.
    const none = planPortal(input({ requestsPerMinute: 1, vitalsTags: tags(2_000), intervals: { vitals: 10, alerts: 10, devices: 10 } }));
    expect(none.fits).toBe(false);
    expect(none.suggested).toBeUndefined();
    expect(none.change).toBeUndefined();
    expect(none.intervalAlone).toBeUndefined();
  });
});

describe('runSeconds', () => {
  it.each([
    [0, 5, -61],
    [1, 5, 0],
    [5, 5, 0],
    [6, 5, 61],
    [10, 5, 61],
    [11, 5, 122],
    [3, 1, 122],
  ])('%i request(s) at %i per window take at least %i s', (requests, share, seconds) => {
    expect(runSeconds(requests, share)).toBe(seconds);
  });
});

describe('one-shot time of a portal read by several entries', () => {
  it('queues every entry\'s requests and retries on the one share', () => {
    const entry = { requestsPerMinute: 5, pageSize: 500, vitalsTags: [] };
    // One entry: 1 + 2 + 1 = 4 requests with no retries fit one window: 60 s pause + 30 s reading.
    expect(portalOneShotSeconds([entry], 0, 120)).toBe(90);
    // Two: 8 requests at 5 span two windows: + 61 s.
    expect(portalOneShotSeconds([entry, entry], 0, 120)).toBe(151);
    // With 3 retries each: 8 + 6 = 14 at 5 span three windows: + 122 s.
    expect(portalOneShotSeconds([entry, entry], 3, 120)).toBe(212);
    expect(portalOneShotSeconds([entry], 3, 120)).toBe(151);
  });

  it('plans the /alerts pages the last total needs', () => {
    // 100,000 alerts, no tags, share 5: 2 pages of 50,000; 1 + 2 + 2 + 3 retries = 8 at 5 span two windows.
    expect(oneShotSeconds({ requestsPerMinute: 5, pageSize: 500, vitalsTags: [], alertsTotal: 100_000 }, 3, 120)).toBe(61 + 60 + 30);
    // Capped at 100 per page: 1,000 pages + 3 + 3 = 1,006 at 5 span 202 windows.
    expect(oneShotSeconds({ requestsPerMinute: 5, pageSize: 500, vitalsTags: [], alertsTotal: 100_000, pageCap: 100 }, 3, 120)).toBe(201 * 61 + 60 + 30);
  });

  it('fits a run with the resolved-alerts pass in one window when the open alerts can leave it a request', () => {
    // 100,000 alerts, no tags, share 5, the pass due: the alerts in 1 request, leaving 1 to the pass; 1 + 2 + 1 + 1 = 5 fit one window.
    expect(oneShotSeconds({ requestsPerMinute: 5, pageSize: 500, vitalsTags: [], alertsTotal: 100_000, slow: [PASS] }, 0, 120)).toBe(90);
    // (Were the alerts to take the 2 requests the window leaves, the pass would start a second window: 151 s.)
    // Share 10: the alerts in 6 pages, the pass in the one left: 1 + 2 + 6 + 1 = 10.
    expect(oneShotSeconds({ requestsPerMinute: 10, pageSize: 500, vitalsTags: [], alertsTotal: 100_000, slow: [PASS] }, 0, 120)).toBe(90);
    // A single share leaves nothing to give: 1 + 2 + 1 + 1 = 5 at 1 span five windows.
    expect(oneShotSeconds({ requestsPerMinute: 1, pageSize: 500, vitalsTags: [], alertsTotal: 100_000, slow: [PASS] }, 0, 120)).toBe(4 * 61 + 90);
  });

  it('refuses a portal with no entry', () => {
    expect(() => portalOneShotSeconds([], 3, 120)).toThrow(new RangeError('portalOneShotSeconds: a portal has at least one entry'));
  });
});
