import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import { Exporter } from '../../src/exporter/exporter.js';
import { startServe } from '../../src/runtime/serve.js';
import { renderText } from '../../src/metrics/render.js';
import { portalWithConfig, serveAfterEach, T0 } from './support.js';

const KEY = 'sim-counters-key-0123456789';
const { closing, stopping } = serveAfterEach();
const MINUTE = 60_000;

/** The value of one series in a Prometheus text exposition, or undefined when absent. */
function valueIn(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('counters in serve', () => {
  it('counts requests by endpoint and code and 429s since the start, from 0, across runs (the gauges cover the last run only)', async () => {
    const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { alerts: 30, moving: false }, { POSTURE_INTERVAL_SECONDS: '60', POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_LISTEN: '127.0.0.1:0' });
    const serving = stopping(await startServe(config, { clock, logger }));
    const scrape = async () => (await request(`${serving.url}/metrics`)).body.text();

    // From the start: every endpoint's 200 and 429 at 0 (the slow sources' too: spec 2.8 to 2.10 and 4.2), and no 429 yet.
    const first = await scrape();
    for (const endpoint of ['/vitals', '/alerts', '/devices', '/settings/usermanagement/users', '/settings/usermanagement/roles', '/settings/usermanagement/teams', '/users']) {
      for (const code of ['200', '429']) expect(valueIn(first, `posture_api_requests_total{portal="test",endpoint="${endpoint}",code="${code}"}`)).toBe(0);
    }
    expect(valueIn(first, 'posture_budget_rate_limited_responses_total{portal="test"}')).toBe(0);
    expect(first).toContain('# TYPE posture_api_requests_total counter');

    // One 429 on /alerts in the second minute (the share, halved, still fits every run); five minutes of runs.
    while (clock.monotonic() < T0 + MINUTE) await serving.nextCycle();
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'status', status: 429, retryAfter: '2' } });
    while (clock.monotonic() < T0 + 5 * MINUTE) await serving.nextCycle();
    const later = await scrape();
    const sent = (path: string, status: number) => sim.requests.filter((q) => q.path === path && q.status === status).length;
    for (const endpoint of ['/vitals', '/alerts', '/devices']) {
      // Counted as each answer is read: a request the portal has answered may still be in flight here.
      const counted = valueIn(later, `posture_api_requests_total{portal="test",endpoint="${endpoint}",code="200"}`)!;
      expect(counted).toBeLessThanOrEqual(sent(endpoint, 200));
      expect(counted).toBeGreaterThanOrEqual(sent(endpoint, 200) - 1);
    }
    expect(sent('/alerts', 200)).toBeGreaterThanOrEqual(5);
    expect(valueIn(later, 'posture_api_requests_total{portal="test",endpoint="/alerts",code="429"}')).toBe(1);
    expect(valueIn(later, 'posture_budget_rate_limited_responses_total{portal="test"}')).toBe(1);
    // The gauge says what the last run of each source sent, unlike the counter: the last /alerts run's one request
    // and the pages of the resolved-alerts pass, its one pass so far (it reads /alerts too).
    const passPages = sim.requests.filter((q) => q.path === '/alerts' && q.query.filter === 'resolved' && q.status === 200);
    expect(passPages.filter((q) => q.query.offset === '0')).toHaveLength(1);
    expect(valueIn(later, 'posture_collection_api_requests{portal="test",endpoint="/alerts",code="200"}')).toBe(1 + passPages.length);
  }, 60_000);

  it('leaves the counters out of once and Lambda output (a push would reset them every run)', async () => {
    const { clock, logger, config } = await portalWithConfig(closing, [KEY], { alerts: 10, moving: false });
    const exporter = new Exporter(config, { clock, logger, runtime: 'once' });
    const results = await exporter.collect();
    const text = await renderText(exporter.samplesOf(results, { version: 'test', runtime: 'once' }), 'prometheus', CATALOGUE);
    expect(text).toContain('posture_collection_api_requests{');
    expect(text).not.toContain('_total');
  });
});
