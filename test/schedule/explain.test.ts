/**
 * `check-config`'s plan in words, line by line, against docs/budget.md's example and figures worked
 * by hand: requests per run and per hour of each source, the share's 60 × R per hour, the one-shot
 * time (the windows its requests and retries span at 61 s each, a pause of up to 60 s, 30 s to
 * read) and the Lambda timeout (that plus POSTURE_LAMBDA_MARGIN_SECONDS, 10 s by default).
 */
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/load.js';
import { explainPlan } from '../../src/schedule/explain.js';

const URL = 'https://x.example.com/public-api/v1';
const env = (more: Record<string, string>): Config => loadConfig({ env: { POSTURE_BASE_URL: URL, POSTURE_API_KEY: 'k-explain-0123456789', ...more }, flags: {} });
const KEYS = { red: 'k-red-0123456789', blue: 'k-blue-0123456789' };
const two = [
  { portal: 'acme-red', base_url: 'https://acme.example.com/public-api/v1', api_key: KEYS.red },
  { portal: 'acme-blue', base_url: 'https://acme.example.com/public-api/v1/', api_key: KEYS.blue },
];
/** The plan's lines by the hour (the minute-by-minute line has tests of its own below). */
const hourly = (c: Config) => explainPlan(c).filter((l) => !l.startsWith('  serve minute by minute'));
const file = (top: object, portals: object[] = two): Config => loadConfig({ env: { POSTURE_CONFIG: JSON.stringify({ ...top, portals }) }, flags: {} });

describe('explainPlan', () => {
  it("prints the docs' example: three tags, /alerts every 30 s, the rest every 60 s", () => {
    // Vitals 4 per run × 60 per hour = 240, /alerts 1 × 120 = 120, devices 2 × 60 = 120, and the resolved-alerts
    // pass 1 × 1, the access settings 3 × 1 and the directory 1 every 86400 s (0.04): 484.04 of 300. Once (with every slow
    // source): 4 + 1 + 2 + 1 + 3 + 1 requests + 3 retries = 15 at 5 span three windows: 122 + 60 + 30 = 212 s. The
    // suggestion is the stretched proportions lowered minute by minute; the slow sources' requests wait for the gaps that
    // make no live run late, so it is the live sources' own: 90, 80 and 100 s.
    expect(hourly(env({ POSTURE_VITALS_TAGS: 'a,b,c', POSTURE_ALERTS_INTERVAL_SECONDS: '30', POSTURE_INTERVAL_SECONDS: '60' }))).toEqual([
      'portal x.example.com (https://x.example.com/public-api/v1, key from value): share 5 requests per 60 s (300 per hour)',
      '  vitals  every    60 s: 4 request(s) per run (whole portal + 3 tag(s)), 240 per hour',
      '  alerts  every    30 s: 1 request(s) per run (page 500, grown so one run uses at most 1 request(s) once the total is known), 120 per hour',
      '  devices every    60 s: 2 request(s) per run (active and inactive totals), 120 per hour',
      '  resolved every  3600 s: 1 request(s) per run (the resolved-alerts pass: /alerts?filter=resolved paged as /alerts, 1 while its total is unknown, below every live source), 1 per hour',
      "  access  every  3600 s: 3 request(s) per run (the portal's accounts, roles and teams: /settings/usermanagement/users, /roles and /teams, 1 each (more when the portal caps pages), below every live source), 3 per hour",
      "  directory every 86400 s: 1 request(s) per run (the directory's users: /users?filter=all paged as /alerts, 1 while its total is unknown, below every live source), 0.04 per hour",
      '  serve: 484.0 of 300 requests per hour — does NOT fit; once/Lambda: one run of every source and every slow one with 3 retries takes up to 212 s (give the Lambda a timeout of at least 222 s)',
      '  smallest intervals that fit: POSTURE_VITALS_INTERVAL_SECONDS=90 POSTURE_ALERTS_INTERVAL_SECONDS=80 POSTURE_DEVICES_INTERVAL_SECONDS=100',
    ]);
  });

  it('prints a plan that fits with no suggestion, tenths of a request per hour, and the one-shot cap', () => {
    // Share 10, no tags: /alerts pages allowed 10 − 1 − 2 = 7, and 7 pages every 300 s beside a Vitals request
    // every 70 s and 2 device totals every 300 s run on time: 7 per run. Vitals every 70 s: 3600 / 70 = 51.4 per
    // hour; /alerts 84 and devices 24; the resolved-alerts pass 1, the access settings 3, the directory 0.04; 163.5 of 600.
    // Once (the total unknown, one /alerts request): 9 requests (the slow sources' included), no retries, fit one window;
    // Retry-After up to 20 s:
    // 20 + 30 = 50 s.
    const c = env({ POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_VITALS_INTERVAL_SECONDS: '70', POSTURE_MAX_RETRIES: '0', POSTURE_MAX_RETRY_AFTER_SECONDS: '20', POSTURE_CYCLE_TIMEOUT_SECONDS: '45' });
    expect(hourly(c)).toEqual([
      'portal x.example.com (https://x.example.com/public-api/v1, key from value): share 10 requests per 60 s (600 per hour)',
      '  vitals  every    70 s: 1 request(s) per run (whole portal), 51.4 per hour',
      '  alerts  every   300 s: 7 request(s) per run (page 500, grown so one run uses at most 7 request(s) once the total is known, 6 in a once/Lambda run that runs a slow source (the resolved-alerts pass, access, directory)), 84 per hour',
      '  devices every   300 s: 2 request(s) per run (active and inactive totals), 24 per hour',
      '  resolved every  3600 s: 1 request(s) per run (the resolved-alerts pass: /alerts?filter=resolved paged as /alerts, 1 while its total is unknown, below every live source), 1 per hour',
      "  access  every  3600 s: 3 request(s) per run (the portal's accounts, roles and teams: /settings/usermanagement/users, /roles and /teams, 1 each (more when the portal caps pages), below every live source), 3 per hour",
      "  directory every 86400 s: 1 request(s) per run (the directory's users: /users?filter=all paged as /alerts, 1 while its total is unknown, below every live source), 0.04 per hour",
      '  serve: 163.5 of 600 requests per hour; once/Lambda: one run of every source and every slow one with 0 retries takes up to 50 s (capped by POSTURE_CYCLE_TIMEOUT_SECONDS at 45 s) (give the Lambda a timeout of at least 60 s)',
    ]);
  });

  it('prints, for entries of one portal, the other entries and whether they fit together', () => {
    // Each entry: 1 + 1 + 2 requests every 60 s = 240 per hour, 1 of its resolved-alerts pass, 3 of its access settings
    // and 0.04 of its directory: 244.04, 488.1 together, of 300. Once: both entries' 18 requests (the slow sources'
    // included) and 2 × 3 retries, 24 at 5, span five windows: 244 + 60 + 30 = 334 s.
    const lines = explainPlan(file({ interval_seconds: 60 }));
    expect(lines.filter((l) => l.startsWith('portal') || l.startsWith('  serve:'))).toEqual([
      'portal acme-red (https://acme.example.com/public-api/v1, key from value): share 5 requests per 60 s (300 per hour), shared with acme-blue (the same portal)',
      '  serve: 244.0 (488.1 with acme-blue — together they do NOT fit) of 300 requests per hour; once/Lambda: one run of every source and every slow one with 3 retries takes up to 334 s (give the Lambda a timeout of at least 344 s)',
      'portal acme-blue (https://acme.example.com/public-api/v1, key from value): share 5 requests per 60 s (300 per hour), shared with acme-red (the same portal)',
      '  serve: 244.0 (488.1 with acme-red — together they do NOT fit) of 300 requests per hour; once/Lambda: one run of every source and every slow one with 3 retries takes up to 334 s (give the Lambda a timeout of at least 344 s)',
    ]);
    // Every 96 s: 150 each and 4.04 of each one's slow sources, 308.1 together: above the 300.
    expect(hourly(file({ interval_seconds: 96 }))[7]).toBe(
      '  serve: 154.0 (308.1 with acme-blue — together they do NOT fit) of 300 requests per hour; once/Lambda: one run of every source and every slow one with 3 retries takes up to 334 s (give the Lambda a timeout of at least 344 s)',
    );
    // Every 100 s: 148.04 each with the slow sources, 296.1 together.
    expect(hourly(file({ interval_seconds: 100 }))[7]).toBe(
      '  serve: 148.0 (296.1 with acme-blue) of 300 requests per hour; once/Lambda: one run of every source and every slow one with 3 retries takes up to 334 s (give the Lambda a timeout of at least 344 s)',
    );
  });

  it('lists every other entry of the portal, comma-separated', () => {
    const three = [...two, { portal: 'acme-green', base_url: 'https://acme.example.com/public-api/v1', api_key: 'k-green-0123456789' }];
    // Each entry every 300 s: 1 Vitals request, 2 device totals and up to 2 /alerts pages (5 − 1 − 2): 5 requests, 15
    // for the three, where 5 start per 61 s (24.6 in 300 s): 60 per hour and 4.04 of its slow sources, 192.1 for the three.
    const lines = hourly(file({}, three));
    expect(lines[0]).toBe('portal acme-red (https://acme.example.com/public-api/v1, key from value): share 5 requests per 60 s (300 per hour), shared with acme-blue, acme-green (the same portal)');
    expect(lines[7]).toMatch(/^ {2}serve: 64\.0 \(192\.1 with acme-blue, acme-green\) of 300 requests per hour;/);
  });

  it('prints no suggestion line when even the longest intervals do not fit', () => {
    // 2,000 tags at 1 a window: a Vitals run spans 2,000 windows, longer than any interval.
    const lines = hourly(env({ POSTURE_REQUESTS_PER_MINUTE: '1', POSTURE_VITALS_TAGS: Array.from({ length: 2_000 }, (_, i) => `t${i}`).join(',') }));
    // The portal line, the three sources, the slow ones (the resolved-alerts pass, the access settings, the directory) and the serve line.
    expect(lines).toHaveLength(8);
    expect(lines[1]).toBe('  vitals  every   300 s: 2001 request(s) per run (whole portal + 2000 tag(s)), 24012 per hour');
    expect(lines[7]).toMatch(/^ {2}serve: 24052\.0 of 60 requests per hour — does NOT fit; /);
  });

  it('prints the plan minute by minute: each source\'s first run, spread over the shortest interval in priority order where at once would be late, and the busiest 60 s', () => {
    // Three sources and the three slow ones over the shortest interval, 60 s: Vitals at +0 s, devices at +10 s,
    // /alerts at +20 s, the pass at +30 s, the access settings at +40 s, the directory at +50 s. 3 Vitals requests at
    // +0 s and 2 device totals at +10 s: 5 in a minute, the share; the slow sources' 5 requests wait for the gaps that
    // make no live run late. At 6 every source starts at once; at 4 the hour does not hold them (245 of 240).
    const at = (share: number) => env({ POSTURE_REQUESTS_PER_MINUTE: String(share), POSTURE_VITALS_TAGS: 'a,b', POSTURE_VITALS_INTERVAL_SECONDS: '180', POSTURE_ALERTS_INTERVAL_SECONDS: '60', POSTURE_DEVICES_INTERVAL_SECONDS: '60' });
    expect(explainPlan(at(6))).toContain('  serve minute by minute: every source at once; busiest 60 s: 6 of 6 requests');
    expect(explainPlan(at(5))).toContain('  serve minute by minute: first runs at vitals +0 s, devices +10 s, alerts +20 s, resolved +30 s, access +40 s, directory +50 s; busiest 60 s: 5 of 5 requests');
    expect(explainPlan(at(4)).find((l) => l.startsWith('  serve minute by minute'))).toBe(
      '  serve minute by minute: first runs at vitals +0 s, devices +10 s, alerts +20 s, resolved +30 s, access +40 s, directory +50 s; busiest 60 s: 4 of 4 requests — NOT on time: serve would run /devices late: its run that starts at +10 s could send its last request only at +62 s, less than 10 s before its deadline +70 s at 4/min',
    );
    // Where every source can start at once and run on time, it does: two entries every 110 s.
    expect(explainPlan(file({ interval_seconds: 110 })).filter((l) => l.startsWith('  serve minute by minute'))[0]).toMatch(/^ {2}serve minute by minute: every source at once; busiest 60 s: \d of 5 requests$/);
  });
});
