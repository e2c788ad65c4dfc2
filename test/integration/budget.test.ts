import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parseApiTimestamp } from '../../src/upstream/timestamps.js';
import type { Sample } from '../../src/metrics/sample.js';
import { Exporter } from '../../src/exporter/exporter.js';
import { startServe } from '../../src/runtime/serve.js';
import type { Simulator, SimulatorOptions } from '../../src/simulator/index.js';
import { maxInAnyWindow } from '../support/window.js';
import { facts, portalWithConfig, serveAfterEach, T0 } from './support.js';

const KEY = 'sim-budget-key-0123456789';
const OTHER = 'sim-other-client-key-0123456789';
const { closing, stopping } = serveAfterEach();

/** The portal (shared by us and another client), and our config for it with a loopback listener. */
const setup = (opts: SimulatorOptions = {}, env: Record<string, string> = {}) => portalWithConfig(closing, [KEY, OTHER], opts, { POSTURE_LISTEN: '127.0.0.1:0', ...env });

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && (labels.tag !== undefined || s.labels.tag === undefined))?.value;
const ours = (s: Simulator) => s.requests.filter((r) => r.keyIndex === 0);

/** Every value the three sources yield, checked against the portal's own data at `at`. */
function expectExact(samples: Sample[], s: Simulator, at: number, tags: readonly string[] = []) {
  const open: Record<string, number> = { red: 0, amber: 0, green: 0 };
  for (const a of s.data(at).alerts()) if (!a.resolved) open[a.state.toLowerCase()] = (open[a.state.toLowerCase()] ?? 0) + 1;
  for (const sev of ['red', 'amber', 'green']) expect(value(samples, 'posture_alerts_open', { severity: sev }), sev).toBe(open[sev]);
  const devices = [...s.data(at).devices()];
  const active = devices.filter((d) => (parseApiTimestamp(d.lastOnline) ?? 0) >= at / 1000 - 30 * 86400).length;
  expect(value(samples, 'posture_devices', { activity: 'active' })).toBe(active);
  expect(value(samples, 'posture_devices', { activity: 'inactive' })).toBe(devices.length - active);
  let checked = 0;
  for (const tag of [undefined, ...tags]) {
    for (const v of s.data(at).vitals(tag)) {
      if (!v.vitalsEnabled) continue;
      const labels = { integration: v.key, stage: 'configuration', ...(tag === undefined ? {} : { tag }) };
      expect(value(samples, 'posture_vitals_compliant_devices', labels), JSON.stringify(labels)).toBe(v.configurationCompliant);
      checked++;
    }
  }
  expect(checked).toBeGreaterThan(tags.length);
}

/** Another client of the portal spends `n` requests now. */
async function spend(s: Simulator, n: number) {
  for (let i = 0; i < n; i++) {
    const res = await request(`${s.baseUrl}/devices?filter=all&limit=1`, { headers: { 'X-Service-ApiKey': OTHER } });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
  }
}

describe('the budget scheduler against the simulated portal', () => {
  it('completes three tags and two 429s across windows at a share of 5: exact values, never over 5 a window, retries after Retry-After', async () => {
    const tags = ['laptops', 'servers', 'cloud'];
    const { clock, sim, logger, config } = await setup({ alerts: 1200, moving: false }, { POSTURE_VITALS_TAGS: tags.join(','), POSTURE_REQUESTS_PER_MINUTE: '5' });
    sim.addFault({ path: '/devices', times: 1, fault: { kind: 'status', status: 429, retryAfter: '2' } });
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'status', status: 429, retryAfter: '2' } });
    const exporter = new Exporter(config, { clock, logger, runtime: 'once', random: () => 0.5 });
    const [r] = await exporter.collect();
    expect([r!.vitals.ok, r!.alerts.ok, r!.devices.ok]).toEqual([true, true, true]);
    expectExact(exporter.samplesOf([r!], facts), sim, T0, tags);
    const log = sim.requests;
    expect(log.filter((q) => q.status === 429)).toHaveLength(2);
    expect(maxInAnyWindow(log.map((q) => q.time))).toBeLessThanOrEqual(5);
    for (const limited of log.filter((q) => q.status === 429)) {
      const next = log.find((q) => q.time > limited.time || (q !== limited && q.time === limited.time && log.indexOf(q) > log.indexOf(limited)));
      expect(next!.time - limited.time).toBeGreaterThanOrEqual(2_000);
    }
    // 4 Vitals + 2 device totals leave no page of the share for /alerts beside them: all 1,200 in one request; + 2 retries.
    expect(log).toHaveLength(9);
    expect(log.filter((q) => q.path === '/alerts').map((q) => q.query.limit)).toEqual(['0', '0']);
    expect(clock.now() - T0).toBeLessThan(300_000);
    expect(logger.lines.join('\n')).not.toContain(KEY);
  });

  it('when another client spent 8 of the 10, waits out the Retry-After without sending anything, then completes exact', async () => {
    const { clock, sim, logger, config } = await setup({ alerts: 300, moving: false });
    await spend(sim, 8);
    const exporter = new Exporter(config, { clock, logger, runtime: 'once', random: () => 0.5 });
    const [r] = await exporter.collect();
    expect([r!.vitals.ok, r!.alerts.ok, r!.devices.ok]).toEqual([true, true, true]);
    expectExact(exporter.samplesOf([r!], facts), sim, T0);
    const mine = ours(sim);
    const limited = mine.filter((q) => q.status === 429);
    expect(limited).toHaveLength(1);
    // The portal frees its window 60 s after the other client's requests: nothing of ours in between.
    const after = mine.filter((q) => q.time > limited[0]!.time);
    expect(after.length).toBeGreaterThan(0);
    expect(after[0]!.time).toBeGreaterThanOrEqual(T0 + 60_000);
    expect(maxInAnyWindow(mine.map((q) => q.time))).toBeLessThanOrEqual(5);
    expect(logger.records().some((l) => String(l.msg).includes('other clients are using the budget'))).toBe(true);
  });

  it('runs each source on its own interval in serve for two hours: request counts match, never over the share', async () => {
    const { clock, sim, logger, config } = await setup(
      { alerts: 200, moving: false },
      { POSTURE_ALERTS_INTERVAL_SECONDS: '30', POSTURE_VITALS_INTERVAL_SECONDS: '120', POSTURE_DEVICES_INTERVAL_SECONDS: '120', POSTURE_REQUESTS_PER_MINUTE: '5' },
    );
    const serving = stopping(await startServe(config, { clock, logger }));
    const end = T0 + 2 * 3_600_000;
    while (clock.now() < end) await serving.nextCycle();
    const before = (path: string) => sim.requests.filter((q) => q.path === path && q.query.filter !== 'resolved' && q.time < end).length;
    expect(before('/alerts')).toBe(240);
    // The resolved-alerts pass: hourly, 1 request each, twice in two hours.
    expect(sim.requests.filter((q) => q.query.filter === 'resolved' && q.time < end)).toHaveLength(2);
    expect(before('/vitals')).toBe(60);
    expect(before('/devices')).toBe(120);
    expect(maxInAnyWindow(sim.requests.map((q) => q.time))).toBeLessThanOrEqual(5);
    const samples = serving.exporter.samples();
    expect(value(samples, 'posture_collection_success', { source: 'alerts' })).toBe(1);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
  }, 60_000);

  it('lowers the share after 429s other clients caused and wins it back one request per clean window', async () => {
    const { clock, sim, logger, config } = await setup({ alerts: 50, moving: false }, { POSTURE_INTERVAL_SECONDS: '60', POSTURE_REQUESTS_PER_MINUTE: '8' });
    sim.addFault({ path: '/vitals', times: 2, fault: { kind: 'status', status: 429, retryAfter: '1' } });
    const serving = stopping(await startServe(config, { clock, logger }));
    const effective = () => value(serving.exporter.samples(), 'posture_budget_share', { kind: 'effective' });
    while (serving.exporter.portals[0]!.scheduler.share.effective === 8) await serving.nextCycle();
    while (!serving.exporter.ready) await serving.nextCycle();
    expect(effective()).toBeLessThanOrEqual(4);
    const low = effective()!;
    const seen = [low];
    while (clock.now() < T0 + 20 * 60_000 && seen.at(-1)! < 8) {
      await serving.nextCycle();
      const e = effective()!;
      if (e !== seen.at(-1)) seen.push(e);
    }
    // Back to the configured share, one step at a time.
    expect(seen.at(-1)).toBe(8);
    for (let i = 1; i < seen.length; i++) expect(seen[i]! - seen[i - 1]!).toBe(1);
    expect(value(serving.exporter.samples(), 'posture_budget_rate_limited_responses_last_hour')).toBe(2);
  }, 60_000);

  it('reports a run late and failed when its source is due again first, keeps the last values, and runs on time after', async () => {
    const { clock, sim, logger, config } = await setup({ alerts: 100, moving: false }, { POSTURE_ALERTS_INTERVAL_SECONDS: '30', POSTURE_VITALS_INTERVAL_SECONDS: '300', POSTURE_DEVICES_INTERVAL_SECONDS: '300' });
    const serving = stopping(await startServe(config, { clock, logger }));
    while (!serving.exporter.ready) await serving.nextCycle();
    const open = value(serving.exporter.samples(), 'posture_alerts_open', { severity: 'red' });
    expect(open).toBeTypeOf('number');
    // The next /alerts answer asks for 45 s: the run due at 30 s cannot finish before the one due at 60 s.
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'status', status: 429, retryAfter: '45' } });
    const failedAt = async () => {
      for (;;) {
        await serving.nextCycle();
        if (value(serving.exporter.samples(), 'posture_collection_success', { source: 'alerts' }) === 0) return clock.now();
      }
    };
    const at = await failedAt();
    expect(at).toBeLessThanOrEqual(T0 + 60_000);
    expect(value(serving.exporter.samples(), 'posture_alerts_open', { severity: 'red' })).toBe(open);
    // Late is the budget's doing, not the portal's: one warn line, not an error.
    expect(logger.records().filter((l) => l.source === 'alerts' && typeof l.msg === 'string' && l.msg.startsWith('collecting alerts failed'))).toEqual([
      expect.objectContaining({ level: 'warn', reason: 'late', msg: expect.stringMatching(/^collecting alerts failed: \/alerts is late: /) }),
    ]);
    while (value(serving.exporter.samples(), 'posture_collection_success', { source: 'alerts' }) === 0) await serving.nextCycle();
    expect(clock.now()).toBeLessThan(T0 + 130_000);
    expect(maxInAnyWindow(sim.requests.map((q) => q.time))).toBeLessThanOrEqual(5);
  }, 60_000);

  it('defers a request whose Retry-After is past POSTURE_MAX_RETRY_AFTER_SECONDS to the next run, with no tight loop', async () => {
    const { sim, logger, config, clock } = await setup({ alerts: 50, moving: false }, { POSTURE_MAX_RETRY_AFTER_SECONDS: '30' });
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'status', status: 429, retryAfter: '600' } });
    const exporter = new Exporter(config, { clock, logger, runtime: 'once', random: () => 0.5 });
    const [r] = await exporter.collect();
    expect(r!.alerts.ok).toBe(false);
    expect(r!.vitals.ok && r!.devices.ok).toBe(true);
    expect(sim.requests.filter((q) => q.path === '/alerts')).toHaveLength(1);
    expect(logger.records().some((l) => String(l.msg).includes('deferred to its next run'))).toBe(true);
    // The portal was paused for the cap only.
    expect(exporter.portals[0]!.scheduler.pausedUntilMs - sim.requests.find((q) => q.status === 429)!.time).toBe(30_000);
  });

  it('never lets a 60 s window hold more than the share, and sends nothing during a Retry-After, for random mixes of tags, alert counts, page sizes and 429s', async () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1664525 + 1013904223) >>> 0), seed / 2 ** 32);
    for (let round = 0; round < 8; round++) {
      const tags = Array.from({ length: Math.floor(random() * 4) }, (_, i) => `t${i}`);
      const share = 2 + Math.floor(random() * 8);
      const alerts = Math.floor(random() * 3000);
      const pageSize = 100 + Math.floor(random() * 900);
      const { clock, sim: s, logger, config } = await setup(
        { alerts, moving: false },
        { POSTURE_VITALS_TAGS: tags.join(','), POSTURE_REQUESTS_PER_MINUTE: String(share), POSTURE_PAGE_SIZE: String(pageSize) },
      );
      const throttled = Math.floor(random() * 3);
      // Some rounds' 429s carry one known Retry-After; the others fall back to the backoff.
      const retryAfterS = random() < 0.6 ? 1 + Math.floor(random() * 20) : undefined;
      for (let i = 0; i < throttled; i++) s.addFault({ path: random() < 0.5 ? '/alerts' : '/vitals', times: 1, fault: { kind: 'status', status: 429, ...(retryAfterS === undefined ? {} : { retryAfter: String(retryAfterS) }) } });
      const exporter = new Exporter(config, { clock, logger, runtime: 'once', random });
      const [r] = await exporter.collect();
      const what = `round ${round}: tags ${tags.length} share ${share} alerts ${alerts} page ${pageSize} 429s ${throttled} Retry-After ${String(retryAfterS)}`;
      expect([r!.vitals.ok, r!.alerts.ok, r!.devices.ok], what).toEqual([true, true, true]);
      expect(maxInAnyWindow(s.requests.map((q) => q.time)), what).toBeLessThanOrEqual(share);
      expect(s.requests.filter((q) => q.status === 429), what).toHaveLength(throttled);
      // Every request that reached the portal after a 429 (the retry too) waited out its
      // Retry-After (at most 20 s here, within POSTURE_MAX_RETRY_AFTER_SECONDS).
      s.requests.forEach((q, i) => {
        if (q.status !== 429 || retryAfterS === undefined) return;
        const early = s.requests.slice(i + 1).filter((o) => o.time < q.time + retryAfterS * 1000);
        expect(early.map((o) => `${o.path} ${(o.time - q.time) / 1000} s after`), `${what}: requests within the Retry-After of the 429 at +${(q.time - T0) / 1000} s`).toEqual([]);
      });
      expectExact(exporter.samplesOf([r!], facts), s, T0, tags);
      await s.close();
    }
  }, 120_000);
});
