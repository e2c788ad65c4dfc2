import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { AuthenticationError, ListMismatchError, PermissionError } from '../../src/errors.js';
import { Exporter } from '../../src/exporter/exporter.js';
import type { Simulator, SimulatorOptions } from '../../src/simulator/index.js';
import type { Sample } from '../../src/metrics/sample.js';
import { parseApiTimestamp } from '../../src/upstream/timestamps.js';
import { closeAfterEach } from '../support/closing.js';
import { maxInAnyWindow } from '../support/window.js';
import { facts, portalWithConfig } from './support.js';

const KEY = 'sim-integration-key-0123456789';
const closing = closeAfterEach();

/** The portal, our config for it, and an exporter whose retries wait half their backoff. */
async function setup(opts: SimulatorOptions = {}, env: Record<string, string> = {}) {
  const run = await portalWithConfig(closing, [KEY], opts, env);
  const exporter = new Exporter(run.config, { clock: run.clock, logger: run.logger, runtime: 'once', random: () => 0.5 });
  return { ...run, exporter };
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
const served = (s: Simulator, path: string) => s.requests.filter((r) => r.path.endsWith(path));

/** Expected alert numbers, computed independently from the simulator's own data. */
function expectedAlerts(s: Simulator, at: number) {
  const open: Record<string, number> = { red: 0, amber: 0, green: 0 };
  const snoozed: Record<string, number> = { red: 0, amber: 0, green: 0 };
  const unassigned: Record<string, number> = { red: 0, amber: 0, green: 0 };
  let n = 0;
  for (const a of s.data(at).alerts()) {
    if (a.resolved) continue;
    n++;
    const sev = a.state.toLowerCase();
    open[sev] = (open[sev] ?? 0) + 1;
    if (a.ownerName === '') unassigned[sev] = (unassigned[sev] ?? 0) + 1;
    const until = parseApiTimestamp(a.inactiveUntil);
    if (until != null && until > at / 1000) snoozed[sev] = (snoozed[sev] ?? 0) + 1;
  }
  return { open, snoozed, unassigned, n };
}

describe('one cycle against the simulated portal', () => {
  it('collects exact values within 5 requests for about a thousand alerts', async () => {
    const { clock, sim, exporter, logger } = await setup({ alerts: 1000, devices: 10_000, integrations: 8 });
    const at = clock.now();
    const [r] = await exporter.collect();
    expect(r!.vitals.ok && r!.alerts.ok && r!.devices.ok).toBe(true);
    const samples = exporter.samplesOf([r!], facts);
    const exp = expectedAlerts(sim, at);
    expect(exp.n).toBeGreaterThan(500);
    for (const sev of ['red', 'amber', 'green']) {
      expect(value(samples, 'posture_alerts_open', { severity: sev })).toBe(exp.open[sev]);
      expect(value(samples, 'posture_alerts_snoozed', { severity: sev })).toBe(exp.snoozed[sev]);
      expect(value(samples, 'posture_alerts_unassigned', { severity: sev })).toBe(exp.unassigned[sev]);
    }
    const devices = [...sim.data(at).devices()];
    const active = devices.filter((d) => (parseApiTimestamp(d.lastOnline) ?? 0) >= at / 1000 - 30 * 86400).length;
    expect(value(samples, 'posture_devices', { activity: 'active' })).toBe(active);
    expect(value(samples, 'posture_devices', { activity: 'inactive' })).toBe(devices.length - active);
    const withRatio = sim.data(at).vitals().filter((v) => v.vitalsEnabled && v.agentDeployedPossibleCompliant! > 0);
    expect(withRatio.length).toBeGreaterThan(0);
    for (const v of withRatio) {
      expect(value(samples, 'posture_vitals_health_ratio', { integration: v.key })).toBeCloseTo(v.configurationCompliant! / v.agentDeployedPossibleCompliant!, 12);
    }
    // 1 vitals + 2 device totals + 2 alert requests: a page of 500, then the rest (the last request the share leaves).
    expect(sim.requests.map((q) => `${q.path} ${q.query.filter ?? ''} ${q.query.limit ?? ''}`)).toEqual([
      '/vitals  ',
      '/devices active 1',
      '/devices inactive 1',
      '/alerts allunresolved 500',
      `/alerts allunresolved ${exp.n - 500 <= 500 ? '500' : '0'}`,
    ]);
    expect(logger.lines.join('\n')).not.toContain(KEY);
  });

  it('honours a 429 Retry-After, halves the share for the unexplained 429, and still completes every source', async () => {
    // Frozen: the pause and the lowered share spread the /alerts pages over minutes, and an alert
    // that opens or resolves between them would (rightly) drop the run's alerts as changed while paged.
    const { clock, sim, exporter, logger } = await setup({ alerts: 1000, devices: 10_000, moving: false });
    sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, retryAfter: '7' } });
    const at = clock.now();
    const [r] = await exporter.collect();
    expect(r!.vitals.ok && r!.alerts.ok && r!.devices.ok).toBe(true);
    const [first, second] = served(sim, '/vitals');
    expect(first!.status).toBe(429);
    expect(second!.time - first!.time).toBeGreaterThanOrEqual(7000);
    // Nothing at all was sent during the pause.
    expect(sim.requests.filter((q) => q !== first && q.time >= first!.time && q.time < first!.time + 7000)).toEqual([]);
    expect(r!.requests.get('/vitals\u0000429')).toBe(1);
    const samples = exporter.samplesOf([r!], facts);
    expect(value(samples, 'posture_alerts_open', { severity: 'red' })).toBe(expectedAlerts(sim, at).open.red);
    // Cut to 2 by the 429, then won back one per clean window while the run went on.
    expect(logger.records().filter((l) => String(l.msg).includes('share is lowered')).map((l) => l.share)).toEqual([2]);
    expect(value(samples, 'posture_budget_share', { kind: 'effective' })).toBe(exporter.portals[0]!.scheduler.share.effective);
    expect(value(samples, 'posture_budget_share', { kind: 'configured' })).toBe(5);
    expect(value(samples, 'posture_budget_rate_limited_responses_last_hour')).toBe(1);
    expect(maxInAnyWindow(sim.requests.map((q) => q.time))).toBeLessThanOrEqual(5);
  });

  it('rides out a 429 storm without Retry-After by backing off, never over the share, and completes', async () => {
    const { sim, exporter } = await setup({ alerts: 100 });
    sim.addFault({ path: '/vitals', times: 3, fault: { kind: 'status', status: 429 } });
    const [r] = await exporter.collect();
    expect([r!.vitals, r!.alerts, r!.devices].map((x) => (x.ok ? 'ok' : x.error.message))).toEqual(['ok', 'ok', 'ok']);
    expect(served(sim, '/vitals').map((q) => q.status)).toEqual([429, 429, 429, 200]);
    // Three 429s others caused: the share went 5 → 2 → 1 → 1, and the window never held more.
    const starts = sim.requests.map((q) => q.time);
    expect(maxInAnyWindow(starts)).toBeLessThanOrEqual(5);
    expect(sim.requests).toHaveLength(7);
  });

  it('plans a larger /alerts page for 100,000 alerts: two requests, exact counts, within 12 requests', async () => {
    // No resolved history: this run makes no pass, and the oracle need not walk 35 days of it (2 million alerts).
    const { sim, exporter, clock, logger } = await setup({ alerts: 100_000, devices: 100_000, integrations: 12, resolvedHistoryDays: 0 });
    const at = clock.now();
    const [r] = await exporter.collect();
    expect(r!.alerts.ok).toBe(true);
    const samples = exporter.samplesOf([r!], facts);
    const exp = expectedAlerts(sim, at);
    expect(value(samples, 'posture_alerts_open', { severity: 'red' })).toBe(exp.open.red);
    const total = (['red', 'amber', 'green'] as const).reduce((n, s) => n + value(samples, 'posture_alerts_open', { severity: s })!, 0);
    expect(total).toBe(exp.n);
    // The share of 5 leaves 2 requests for /alerts beside Vitals and the two device totals.
    expect(served(sim, '/alerts').map((q) => q.query.limit)).toEqual(['500', '0']);
    expect(sim.requests).toHaveLength(5);
    expect(value(samples, 'posture_collection_alerts_page_size')).toBe(0);
    expect(logger.records().some((l) => String(l.msg).includes('planned a larger /alerts page'))).toBe(true);
  }, 60_000);

  it('keeps the other sources when one fails, and never reports zeros for the failed one', async () => {
    const { sim, exporter } = await setup();
    sim.addFault({ path: '/alerts', times: Infinity, fault: { kind: 'status', status: 500 } });
    const [r] = await exporter.collect();
    expect(r!.alerts.ok).toBe(false);
    expect(r!.vitals.ok && r!.devices.ok).toBe(true);
    const samples = exporter.samplesOf([r!], facts);
    expect(samples.filter((s) => s.name.startsWith('posture_alerts_'))).toEqual([]);
    expect(value(samples, 'posture_collection_success', { source: 'alerts' })).toBe(0);
    expect(value(samples, 'posture_collection_success', { source: 'vitals' })).toBe(1);
  });

  it('keeps serving the last alerts for the staleness window when /alerts fails, then drops them', async () => {
    const { sim, exporter, clock } = await setup({}, { POSTURE_INTERVAL_SECONDS: '300' });
    await exporter.collect();
    const before = value(exporter.samples(), 'posture_alerts_open', { severity: 'red' });
    expect(before).toBeTypeOf('number');
    sim.addFault({ path: '/alerts', times: Infinity, fault: { kind: 'status', status: 503 } });
    clock.advance(300_000);
    await exporter.collect();
    expect(value(exporter.samples(), 'posture_alerts_open', { severity: 'red' })).toBe(before);
    expect(value(exporter.samples(), 'posture_collection_success', { source: 'alerts' })).toBe(0);
    clock.advance(301_000);
    // Past two intervals since the last success: gone, not zero; the last-success time stays.
    expect(value(exporter.samples(), 'posture_alerts_open', { severity: 'red' })).toBeUndefined();
    expect(value(exporter.samples(), 'posture_collection_last_success_timestamp_seconds', { source: 'alerts' })).toBeTypeOf('number');
  });

  it('stops after a rejected key instead of spending budget on every source', async () => {
    const { sim, exporter, config } = await setup();
    expect(exporter.portals).toHaveLength(1);
    const wrong = new Exporter({ ...config, portals: [{ ...config.portals[0]!, key: { kind: 'value', value: 'wrong-key-000' } }] }, { clock: new FakeClock(), logger: memoryLogger(), runtime: 'once' });
    const [r] = await wrong.collect();
    expect(r!.vitals.ok).toBe(false);
    expect(!r!.vitals.ok && r!.vitals.error).toBeInstanceOf(AuthenticationError);
    expect(!r!.alerts.ok && r!.alerts.error).toBeInstanceOf(AuthenticationError);
    expect(sim.requests).toHaveLength(1);
    expect(sim.requests[0]!.status).toBe(401);
  });

  it('reports a key without the Vitals permission as a permission problem and collects the rest', async () => {
    const { sim, config } = await setup({ keys: [{ key: KEY, permissions: { deny: ['/vitals'] } }] });
    const exporter = new Exporter(config, { clock: new FakeClock(), logger: memoryLogger(), runtime: 'once' });
    const [r] = await exporter.collect();
    expect(!r!.vitals.ok && r!.vitals.error).toBeInstanceOf(PermissionError);
    expect(!r!.vitals.ok && r!.vitals.error.message).toMatch(/permission|role/i);
    expect(r!.alerts.ok && r!.devices.ok).toBe(true);
    expect(sim.requests.length).toBe(4);
  });

  it('fails /alerts rather than serve a wrong count when the list moves between pages', async () => {
    const { sim, exporter } = await setup({ alerts: 1000 });
    // The first /alerts page is clean; the second reports a different total.
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'latency', ms: 1 } });
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'total-mismatch', delta: 3 } });
    const [r] = await exporter.collect();
    expect(!r!.alerts.ok && r!.alerts.error).toBeInstanceOf(ListMismatchError);
  });

  it('counts and skips malformed records, keeping the rest', async () => {
    const { sim, exporter, logger } = await setup({ alerts: 200 });
    sim.addFault({ path: '/alerts', fault: { kind: 'bad-records', count: 4, how: 'mistyped' } });
    const [r] = await exporter.collect();
    expect(r!.alerts.ok).toBe(true);
    const samples = exporter.samplesOf([r!], facts);
    expect(value(samples, 'posture_collection_invalid_records', { source: 'alerts' })).toBe(4);
    expect(logger.records().filter((l) => l.msg === 'skipped a malformed record').length).toBe(4);
  });

  it('retries a truncated body without double counting', async () => {
    const { clock, sim, exporter } = await setup({ alerts: 300 });
    const at = clock.now();
    sim.addFault({ path: '/alerts', fault: { kind: 'truncate', afterBytes: 5000 } });
    const [r] = await exporter.collect();
    expect(r!.alerts.ok).toBe(true);
    const samples = exporter.samplesOf([r!], facts);
    expect(value(samples, 'posture_alerts_open', { severity: 'red' })).toBe(expectedAlerts(sim, at).open.red);
  });

  it('collects Vitals per tag with a tag label beside the whole-portal series', async () => {
    const { sim, exporter, clock } = await setup({}, { POSTURE_VITALS_TAGS: 'laptops,servers' });
    const [r] = await exporter.collect();
    expect(r!.vitals.ok).toBe(true);
    const samples = exporter.samplesOf([r!], facts);
    const info = samples.filter((s) => s.name === 'posture_vitals_integration_info');
    expect(new Set(info.map((s) => s.labels.tag))).toEqual(new Set([undefined, 'laptops', 'servers']));
    expect(served(sim, '/vitals').map((q) => q.query.tag)).toEqual([undefined, 'laptops', 'servers']);
    const enabled = sim.data(clock.now()).vitals('laptops').filter((v) => v.vitalsEnabled);
    expect(enabled.length).toBeGreaterThan(0);
    for (const v of enabled) {
      expect(value(samples, 'posture_vitals_compliant_devices', { integration: v.key, stage: 'configuration', tag: 'laptops' })).toBe(v.configurationCompliant);
    }
  });

  it("applies the portal's series cap to a one-shot run's samples, folding the rest into __other__", async () => {
    const { clock, sim, exporter, config } = await setup({ alerts: 400, alertIntegrations: 40 }, { POSTURE_MAX_SERIES_PER_FAMILY: '10' });
    const at = clock.now();
    const [r] = await exporter.collect();
    expect(r!.alerts.ok).toBe(true);
    const family = 'posture_alerts_open_by_integration';
    const open = expectedAlerts(sim, at).n;
    const capped = exporter.samplesOf([r!], facts);
    const series = capped.filter((s) => s.name === family);
    expect(series.length).toBeLessThanOrEqual(10);
    expect(series.some((s) => s.labels.integration === '__other__')).toBe(true);
    expect(series.reduce((n, s) => n + s.value, 0)).toBe(open);
    expect(value(capped, 'posture_series_folded', { family })).toBeGreaterThan(0);
    // The same run under the default cap (1,000) keeps a series per integration, severity and type.
    const byDefault = new Exporter({ ...config, portals: config.portals.map((p) => ({ ...p, maxSeriesPerFamily: 1000 })) }, { clock, logger: memoryLogger(), runtime: 'once' });
    const all = byDefault.samplesOf([r!], facts).filter((s) => s.name === family);
    expect(all.length).toBeGreaterThan(10);
    expect(all.some((s) => s.labels.integration === '__other__')).toBe(false);
    expect(all.reduce((n, s) => n + s.value, 0)).toBe(open);
  });
});
