import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { startServe } from '../../src/runtime/serve.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { serveAfterEach, T0 } from './support.js';

const KEY = 'sim-serve-early-key-0123456789';
const { closing, stopping } = serveAfterEach();

/**
 * serve against the simulated portal on a clock that moves only when the test says: a 429 with a
 * Retry-After holds every request to the portal until the test advances the clock.
 */
async function setup(env: Record<string, string> = {}) {
  const clock = new FakeClock(T0);
  const sim: Simulator = closing(await startSimulator({ clock, keys: [{ key: KEY }], alerts: 50, moving: false }));
  const logger = memoryLogger({ secrets: [KEY] });
  const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'test', POSTURE_LISTEN: '127.0.0.1:0', POSTURE_INTERVAL_SECONDS: '300', ...env } });
  return { clock, sim, logger, config };
}

async function get(url: string): Promise<string> {
  const res = await request(url);
  return res.body.text();
}

/** The series names of a Prometheus text exposition, with their labels. */
const lines = (text: string) => text.split('\n').filter((l) => l.startsWith('posture_'));
const has = (text: string, prefix: string) => lines(text).some((l) => l.startsWith(prefix));

describe('serve before every source has run', () => {
  it('serves build info and the budget before any run ends, and no per-source series', async () => {
    const { clock, sim, logger, config } = await setup();
    // The first request (Vitals goes first) answers 429 for 60 s: no run can end until the clock moves.
    sim.addFault({ path: '/vitals', times: 1, fault: { kind: 'status', status: 429, retryAfter: '60' } });
    const serving = stopping(await startServe(config, { clock, logger }));
    const text = await get(`${serving.url}/metrics`);
    expect(text).toMatch(/posture_exporter_build_info\{[^}]*runtime="serve"[^}]*\} 1/);
    expect(text).toMatch(/posture_budget_share\{portal="test",kind="configured"\} 5/);
    // Of the collection series, only each source's configured interval (known before any run).
    expect(lines(text).filter((l) => l.startsWith('posture_collection_') && !l.startsWith('posture_collection_interval_seconds{'))).toEqual([]);
    expect(has(text, 'posture_vitals_') || has(text, 'posture_devices') || has(text, 'posture_alerts_')).toBe(false);
    expect(await get(`${serving.url}/healthz`)).toBe('ok (first collection pending)\n');
  });

  it('serves Vitals and device totals while /alerts waits out a 429, then /alerts when it ends', async () => {
    const { clock, sim, logger, config } = await setup();
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'status', status: 429, retryAfter: '60' } });
    const serving = stopping(await startServe(config, { clock, logger }));
    const state = serving.exporter.portals[0]!.state;
    const view = () => state.view(clock.now(), 0);
    while (view().vitals.success === undefined || view().devices.success === undefined) await serving.nextCycle();
    // /alerts goes after them and is then held by its Retry-After (60 s on a clock that does not move).
    while (!sim.requests.some((q) => q.path === '/alerts')) await new Promise((r) => setTimeout(r, 10));
    expect(sim.requests.filter((q) => q.path === '/alerts').map((q) => q.status)).toEqual([429]);
    expect(view().alerts.success).toBeUndefined();
    const text = await get(`${serving.url}/metrics`);
    expect(text).toMatch(/posture_vitals_eligible_devices\{portal="test",/);
    expect(text).toMatch(/posture_devices\{portal="test",activity="active"\} \d+/);
    expect(text).toMatch(/posture_collection_success\{portal="test",source="vitals"\} 1/);
    expect(text).toMatch(/posture_collection_success\{portal="test",source="devices"\} 1/);
    expect(text).toMatch(/posture_exporter_build_info\{[^}]*runtime="serve"[^}]*\} 1/);
    expect(lines(text).filter((l) => l.includes('source="alerts"'))).toEqual(['posture_collection_interval_seconds{portal="test",source="alerts"} 300']);
    expect(has(text, 'posture_alerts_')).toBe(false);
    expect(await get(`${serving.url}/healthz`)).toBe('ok (first collection pending)\n');

    // Past the Retry-After, then a second at a time (the lowered share waits for the window) until /alerts ends.
    clock.advance(60_000);
    while (view().alerts.success === undefined) {
      await new Promise((r) => setTimeout(r, 5));
      if (!clock.held) clock.advance(1_000);
    }
    expect(clock.now()).toBeLessThan(T0 + 300_000);
    const after = await get(`${serving.url}/metrics`);
    expect(after).toMatch(/posture_alerts_open\{portal="test",severity="red"\} \d+/);
    expect(after).toMatch(/posture_collection_success\{portal="test",source="alerts"\} 1/);
    expect(after).toMatch(/posture_devices\{portal="test",activity="active"\} \d+/);
    expect(await get(`${serving.url}/healthz`)).toBe('ok\n');
  });

  it('still serves every source 9 s after a good run with a 5 s staleness, and drops a failed one once past it', async () => {
    const { clock, sim, logger, config } = await setup({ POSTURE_MAX_STALENESS_SECONDS: '5', POSTURE_INTERVAL_SECONDS: '60' });
    const serving = stopping(await startServe(config, { clock, logger }));
    while (!serving.exporter.ready) await serving.nextCycle();
    clock.advance(9_000);
    const text = await get(`${serving.url}/metrics`);
    for (const family of ['posture_vitals_eligible_devices{', 'posture_alerts_open{', 'posture_devices{']) expect(has(text, family), family).toBe(true);
    // The next /alerts run (due at 60 s, started at 70 s when the first requests have left the window) fails: its last good values are past 5 s.
    sim.addFault({ path: '/alerts', times: Infinity, fault: { kind: 'status', status: 403 } });
    const alerts = () => serving.exporter.samples().find((s) => s.name === 'posture_collection_success' && s.labels.source === 'alerts')?.value;
    clock.advance(61_000);
    while (alerts() !== 0) await serving.nextCycle();
    const failed = await get(`${serving.url}/metrics`);
    // The open alerts' families go (the resolved-alerts pass's, on its own interval and staleness, stay).
    expect(has(failed, 'posture_alerts_open')).toBe(false);
    expect(has(failed, 'posture_alerts_time_to_acknowledge_')).toBe(false);
    expect(has(failed, 'posture_devices{')).toBe(true);
    expect(failed).toMatch(/posture_collection_last_success_timestamp_seconds\{portal="test",source="alerts"\} /);
  });
});
