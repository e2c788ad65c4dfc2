import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock, type Clock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { Exporter } from '../../src/exporter/exporter.js';
import { startServe } from '../../src/runtime/serve.js';
import { startSimulator } from '../../src/simulator/index.js';
import { maxInAnyWindow } from '../support/window.js';
import { serveAfterEach, T0 } from './support.js';

const KEY = 'sim-wall-clock-key-0123456789abcd';
const MINUTE = 60_000;
const { closing, stopping } = serveAfterEach();

/** The portal keeps its own time: our wall clock stepping back does not move the portal's. */
function portalTime(clock: FakeClock): Clock {
  return { now: () => clock.monotonic(), monotonic: () => clock.monotonic(), sleep: (ms, signal) => clock.sleep(ms, signal), hold: () => clock.hold() };
}

async function setup(env: Record<string, string>) {
  const clock = new FakeClock(T0, { autoAdvance: true });
  const sim = closing(await startSimulator({ clock: portalTime(clock), keys: [{ key: KEY }], alerts: 100, moving: false }));
  const logger = memoryLogger({ secrets: [KEY] });
  const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'wall', ...env } });
  return { clock, sim, logger, config };
}

const value = (samples: ReturnType<Exporter['samples']>, name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

describe('budgets, pauses and deadlines on the monotonic clock', () => {
  it('keeps serving on time when the wall clock steps back 10 minutes: no late run, never over the share, timestamps on the wall clock', async () => {
    const { clock, sim, logger, config } = await setup({ POSTURE_ALERTS_INTERVAL_SECONDS: '30', POSTURE_VITALS_INTERVAL_SECONDS: '60', POSTURE_DEVICES_INTERVAL_SECONDS: '120', POSTURE_REQUESTS_PER_MINUTE: '5' });
    const serving = stopping(await startServe(config, { clock, logger }));
    while (clock.monotonic() < T0 + 10 * MINUTE) await serving.nextCycle();
    clock.stepWall(-10 * MINUTE);
    const stepped = clock.monotonic();
    while (clock.monotonic() < T0 + 30 * MINUTE) await serving.nextCycle();

    // Every run after the step was on time and succeeded: 2 /alerts, 1 /vitals, 1 /devices a minute.
    const after = sim.requests.filter((q) => q.time >= stepped && q.time < T0 + 30 * MINUTE);
    expect(after.filter((q) => q.path === '/alerts')).toHaveLength(40);
    expect(after.filter((q) => q.path === '/vitals')).toHaveLength(20);
    expect(after.filter((q) => q.path === '/devices')).toHaveLength(20);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
    expect(maxInAnyWindow(sim.requests.map((q) => q.time))).toBeLessThanOrEqual(5);
    expect(logger.records().filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    // The last-success timestamp is wall time: 10 minutes behind the monotonic reading.
    const samples = serving.exporter.samples();
    // Within one interval of the source (the resolved-alerts pass's request at the start staggers the sources' first runs).
    for (const [source, interval] of [['vitals', MINUTE], ['alerts', MINUTE / 2], ['devices', 2 * MINUTE]] as const) {
      expect(value(samples, 'posture_collection_success', { source })).toBe(1);
      const at = value(samples, 'posture_collection_last_success_timestamp_seconds', { source })! * 1000;
      expect(at).toBeLessThanOrEqual(clock.now());
      expect(at).toBeGreaterThan(clock.now() - interval - 10_000);
    }
  }, 60_000);

  // The wall clock steps before the serve starts, or once its sources have run (0: no step).
  it.each([
    ['a day ahead since the last success', 0, 86_400_000],
    ['a day ahead since before the last success', 86_400_000, 0],
    ['10 minutes behind since before the last success', -10 * MINUTE, 0],
  ])("counts a failed source's staleness limit from its last success on the monotonic clock, the wall clock %s", async (_, stepBefore, stepAfter) => {
    const { clock, sim, logger, config } = await setup({ POSTURE_INTERVAL_SECONDS: '60', POSTURE_MAX_STALENESS_SECONDS: '150' });
    clock.stepWall(stepBefore);
    const serving = stopping(await startServe(config, { clock, logger }));
    while (!serving.exporter.ready) await serving.nextCycle();
    sim.addFault({ path: '/devices', times: Infinity, fault: { kind: 'status', status: 403 } });
    // A day ahead from here (the first row): a staleness counted on the wall clock would drop the devices at once.
    clock.stepWall(stepAfter);
    // The portal's clock is the monotonic one: its last 200 on /devices is the last success.
    const lastGood = Math.max(...sim.requests.filter((q) => q.path === '/devices' && q.status === 200).map((q) => q.time));
    while (clock.monotonic() < lastGood + 2 * MINUTE) await serving.nextCycle();
    expect(value(serving.exporter.samples(), 'posture_collection_success', { source: 'devices' })).toBe(0);
    expect(value(serving.exporter.samples(), 'posture_devices', { activity: 'active' })).toBeTypeOf('number');
    while (clock.monotonic() < lastGood + 3 * MINUTE) await serving.nextCycle();
    expect(value(serving.exporter.samples(), 'posture_devices', { activity: 'active' })).toBeUndefined();
  }, 60_000);

  it('cuts a one-shot run at its deadline on the fake clock, not on real time', async () => {
    const clock = new FakeClock(T0);
    const sim = closing(await startSimulator({ clock, keys: [{ key: KEY }], alerts: 50, moving: false }));
    sim.addFault({ path: '/alerts', times: Infinity, fault: { kind: 'stall', afterBytes: 100 } });
    const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_CYCLE_TIMEOUT_SECONDS: '5' } });
    const exporter = new Exporter(config, { clock, logger: memoryLogger({ secrets: [KEY] }), runtime: 'once' });
    const pending = exporter.collect();
    while (!sim.requests.some((q) => q.path === '/alerts')) await new Promise((r) => setTimeout(r, 5));
    // Real time passes, fake time does not: the stalled body is not cut.
    await new Promise((r) => setTimeout(r, 300));
    let done = false;
    void pending.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    clock.advance(5_000);
    const [r] = await pending;
    expect(r!.alerts.ok).toBe(false);
    expect(!r!.alerts.ok && r!.alerts.error.message).toContain('/alerts is late');
    expect(r!.vitals.ok && r!.devices.ok).toBe(true);
  });

  it.each([
    ['a day ahead of', 86_400_000, '2026-11-23T12:00:05.000Z'],
    ['10 minutes behind', -10 * MINUTE, '2026-11-22T11:50:05.000Z'],
  ])('names the deadline that cut a run as wall-clock time, the wall clock %s the monotonic one', async (_, step, wall) => {
    const clock = new FakeClock(T0);
    clock.stepWall(step);
    const sim = closing(await startSimulator({ clock: portalTime(clock), keys: [{ key: KEY }], alerts: 50, moving: false }));
    // /vitals goes first and stalls: /alerts waits for it, and the deadline cuts /alerts while it waits.
    sim.addFault({ path: '/vitals', times: Infinity, fault: { kind: 'stall', afterBytes: 100 } });
    const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_CYCLE_TIMEOUT_SECONDS: '5' } });
    const exporter = new Exporter(config, { clock, logger: memoryLogger({ secrets: [KEY] }), runtime: 'once' });
    const pending = exporter.collect();
    while (!sim.requests.some((q) => q.path === '/vitals')) await new Promise((r) => setTimeout(r, 5));
    clock.advance(5_000);
    const [r] = await pending;
    // The run started at T0 (monotonic) with 5 s to go: its deadline on the wall clock is T0 + step + 5 s.
    expect(wall).toBe(new Date(T0 + step + 5_000).toISOString());
    expect(!r!.alerts.ok && r!.alerts.error.message).toContain(`cut at its deadline ${wall} `);
  });
});
