// The interval change check-config suggests (PortalPlan.change, docs/budget.md): the fewest sources
// first, then the fewest requests per hour given up; the figures below are worked out by hand by the
// hour, then checked minute by minute (the plan's timeline).
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { formatChange, planOf } from '../../src/schedule/fit.js';
import { alertsPagesAllowed, planPortal } from '../../src/schedule/plan.js';

describe('the least interval change', () => {
  it('prefers one source moved further over POSTURE_INTERVAL_SECONDS moving all three, even when that gives up more requests', () => {
    // 12/min is 720 requests per hour. /alerts: 393 alerts, pages capped at 50 by the portal: 8 requests
    // whatever the plan would allow. At 45 s: Vitals 2·80 + alerts 8·80 + devices 2·80 = 960 > 720.
    const plan = planPortal({ requestsPerMinute: 12, pageSize: 50, vitalsTags: ['t0'], intervals: { vitals: 45, alerts: 45, devices: 45 }, inherited: ['vitals', 'alerts', 'devices'], alertsTotal: 393, pageCap: 50 });
    expect(plan.sources.map((s) => s.requestsPerRun)).toEqual([2, 8, 2]);
    expect(plan.fits).toBe(false);
    // All three at 60 s: 12·60 = 720, the whole hour, which one window's 1 s margin cannot keep up
    // with; 70 s: 617 per hour runs. /alerts alone at 90 s: 160 + 320 + 160 = 640, within 12 requests per 62 s (each
    // window counts from the end of a request's second in flight: 696.8 per hour); 80 s: 680 does not keep up.
    expect(plan.intervalAlone).toBe(70);
    expect(plan.change).toEqual({ sources: { alerts: 90 }, intervals: { vitals: 45, alerts: 90, devices: 45 } });
    const at = (alerts: number) => planPortal({ requestsPerMinute: 12, pageSize: 50, vitalsTags: ['t0'], intervals: { vitals: 45, alerts, devices: 45 }, alertsTotal: 393, pageCap: 50 });
    expect(at(80).fits).toBe(false);
    expect(at(90).fits).toBe(true);
  });

  it('when no single setting fixes it, names only the sources whose interval changes, and has no POSTURE_INTERVAL_SECONDS value when none inherits it', () => {
    // 3/min: 180 per hour. Vitals 3 requests (2 tags) every 15 s = 720, /alerts 1 every 600 s = 6, devices 2 every 20 s = 360.
    const plan = planPortal({ requestsPerMinute: 3, pageSize: 10, vitalsTags: ['t0', 't1'], intervals: { vitals: 15, alerts: 600, devices: 20 }, inherited: [] });
    expect(plan.requestsPerHour).toBe(1086);
    expect(plan.capacityPerHour).toBe(180);
    // Stretched by 1086/180: Vitals 100, /alerts 3620, devices 130; lowered /alerts first: 600 (108 + 6 + 55.4 fits),
    // then Vitals: 10800/v ≤ 180 - 6 - 55.4 → 100, then devices: 7200/v ≤ 180 - 108 - 6 → 110 by the hour, where
    // 174 of 180 per hour falls behind minute by minute; 120 (168 per hour) runs.
    expect(plan.suggested).toEqual({ vitals: 100, alerts: 600, devices: 120 });
    expect(plan.change).toEqual({ sources: { vitals: 100, devices: 120 }, intervals: { vitals: 100, alerts: 600, devices: 120 } });
    expect(plan).not.toHaveProperty('intervalAlone');
  });

  it('Vitals takes one request for the whole portal and one per tag, whatever the other sources', () => {
    const plan = planPortal({ requestsPerMinute: 10, pageSize: 100, vitalsTags: ['a', 'b', 'c'], intervals: { vitals: 60, alerts: 60, devices: 60 } });
    expect(plan.sources.find((s) => s.source === 'vitals')!.requestsPerRun).toBe(4);
    // 10 - 4 (Vitals) - 2 (devices) pages of /alerts per window.
    expect(alertsPagesAllowed({ requestsPerMinute: 10, vitalsTags: ['a', 'b', 'c'] })).toBe(4);
  });
});

describe('a portal built without its interval settings (not from a config)', () => {
  it('has every source inherit POSTURE_INTERVAL_SECONDS, and names the per-source variables', () => {
    const c = loadConfig({ env: { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-plan-test-1234', POSTURE_INTERVAL_SECONDS: '10' }, flags: {} });
    const { intervalSettings: _, ...bare } = c.portals[0]!;
    // 5/min is 300 per hour; 1 + 1 + 2 requests every v s: 14400/v ≤ 300 → v ≥ 48 → 50, but the slow sources' first
    // requests (the resolved-alerts pass's 1, the access settings' 3, the directory's 1) make 50 s late minute by minute: 60.
    expect(planOf(bare).intervalAlone).toBe(60);
    expect(formatChange(c, bare, { sources: { alerts: 20 } })).toBe('POSTURE_ALERTS_INTERVAL_SECONDS=20');
  });
});
