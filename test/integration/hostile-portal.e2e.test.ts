import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { LateError, ListMismatchError, TimeoutError } from '../../src/errors.js';
import { Exporter } from '../../src/exporter/exporter.js';
import { startSimulator, type Fault, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { runBuiltCli } from '../support/cli.js';
import { followRealTime } from '../support/real-time.js';

const KEY = 'sim-hostile-key-0123456789abcdef';
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const facts = { version: 'test', runtime: 'once' as const };
let sim: Simulator | undefined;

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

function openBySeverity(s: Simulator): Record<string, number> {
  const open: Record<string, number> = { red: 0, amber: 0, green: 0 };
  for (const a of s.data().alerts()) if (!a.resolved) open[a.state.toLowerCase()] = (open[a.state.toLowerCase()] ?? 0) + 1;
  return open;
}

describe('a portal that caps its pages', () => {
  it('is paged by what it returns, counted exactly, and the plan learns the cap', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    sim = await startSimulator({ clock, keys: [{ key: KEY }], alerts: 1_000, maxPageSize: 100, moving: false });
    const logger = memoryLogger();
    const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'capped' } });
    const exporter = new Exporter(config, { clock, logger, runtime: 'once', random: () => 0.5 });
    const [r] = await exporter.collect();
    expect([r!.vitals.ok, r!.alerts.ok, r!.devices.ok]).toEqual([true, true, true]);
    const samples = exporter.samplesOf([r!], facts);
    const open = openBySeverity(sim);
    const total = open.red! + open.amber! + open.green!;
    expect(total).toBeGreaterThan(500);
    for (const sev of ['red', 'amber', 'green']) expect(samples.find((x) => x.name === 'posture_alerts_open' && x.labels.severity === sev)?.value).toBe(open[sev]);
    const pages = sim.requests.filter((q) => q.path === '/alerts');
    // The first page asked for 500 and got 100; every later page asks for the cap.
    expect(pages).toHaveLength(Math.ceil(total / 100));
    expect(pages.slice(1).every((q) => q.query.limit === '100')).toBe(true);
    expect(exporter.portals[0]!.memory.pageCap).toBe(100);
    expect(logger.records().some((l) => String(l.msg).includes('caps /alerts pages'))).toBe(true);
    // More requests than one window holds: the run waited for windows instead of failing.
    const starts = sim.requests.map((q) => q.time);
    for (let i = 5; i < starts.length; i++) expect(starts[i]! - starts[i - 5]!).toBeGreaterThanOrEqual(60_000);
  });

  it('still fails a list that really is truncated (a page returns nothing before the total)', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    sim = await startSimulator({ clock, keys: [{ key: KEY }], alerts: 300, moving: false });
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'total-mismatch', delta: 50 } });
    const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PAGE_SIZE: '100' } });
    const exporter = new Exporter(config, { clock, logger: memoryLogger(), runtime: 'once', random: () => 0.5 });
    const [r] = await exporter.collect();
    expect(!r!.alerts.ok && r!.alerts.error).toBeInstanceOf(ListMismatchError);
  });
});

describe('bodies that never end, against the deadline', () => {
  async function cut(fault: Fault, opts: SimulatorOptions = {}) {
    const clock = new FakeClock(T0, { autoAdvance: true });
    sim = await startSimulator({ clock, keys: [{ key: KEY }], alerts: 200, moving: false, ...opts });
    sim.addFault({ path: '/alerts', times: Infinity, fault });
    const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_CYCLE_TIMEOUT_SECONDS: '2' } });
    const exporter = new Exporter(config, { clock, logger: memoryLogger(), runtime: 'once', random: () => 0.5 });
    const started = Date.now();
    // The bodies take real time: the fake clock follows it, so the deadline on it comes.
    const stop = followRealTime(clock);
    const [r] = await exporter.collect().finally(stop);
    return { r: r!, exporter, seconds: (Date.now() - started) / 1000 };
  }

  it.each([
    ['an endless /alerts body', { kind: 'endless' } as Fault],
    ['an /alerts body that drips a byte at a time', { kind: 'drip', intervalMs: 200 } as Fault],
  ])('cuts %s at the deadline, keeps Vitals and device totals, and reports alerts late', async (_name, fault) => {
    const { r, exporter, seconds } = await cut(fault);
    expect(seconds).toBeLessThan(10);
    expect(r.vitals.ok && r.devices.ok).toBe(true);
    expect(r.alerts.ok).toBe(false);
    const error = !r.alerts.ok ? r.alerts.error : undefined;
    expect(error instanceof TimeoutError || error instanceof LateError).toBe(true);
    expect(error!.message).toContain('/alerts is late');
    const samples = exporter.samplesOf([r], facts);
    expect(samples.filter((s) => s.name.startsWith('posture_alerts_'))).toEqual([]);
    expect(samples.find((s) => s.name === 'posture_devices' && s.labels.activity === 'active')?.value).toBeGreaterThan(0);
  });

  it('the built CLI: once with POSTURE_CYCLE_TIMEOUT_SECONDS ends an endless body in time, exits 1 naming alerts, prints devices', async () => {
    sim = await startSimulator({ keys: [{ key: KEY }], alerts: 200, devices: 500, moving: false });
    sim.addFault({ path: '/alerts', times: Infinity, fault: { kind: 'endless' } });
    const started = Date.now();
    const r = await runBuiltCli(['once'], { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_CYCLE_TIMEOUT_SECONDS: '3', POSTURE_LOG_LEVEL: 'warn' });
    expect((Date.now() - started) / 1000).toBeLessThan(15);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('collection failed for: alerts');
    expect(r.stdout).toMatch(/^posture_devices\{portal="127\.0\.0\.1",activity="active"\} \d+$/m);
    expect(r.stdout).toMatch(/^posture_collection_success\{portal="127\.0\.0\.1",source="alerts"\} 0$/m);
    expect(r.stdout).not.toMatch(/^posture_alerts_open\{/m);
  }, 30_000);
});
