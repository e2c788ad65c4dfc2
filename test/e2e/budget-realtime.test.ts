import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runBuiltCli } from '../support/cli.js';

// The one real-time test of the scheduler: the built CLI's `once` must wait out a real 60 s window.
const KEY = 'sim-realtime-key-abcdef0123456789';
const TAGS = ['laptops', 'servers', 'cloud'];

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ keys: [{ key: KEY }], alerts: 400, devices: 1500, moving: false });
});
afterAll(async () => {
  await sim?.close();
});

describe('once on real time with three tags and two 429s at a share of 5', () => {
  it('completes every source across two windows: exit 0, exact values, never more than 5 requests in 60 s', async () => {
    sim.addFault({ path: '/vitals', times: 1, fault: { kind: 'status', status: 429, retryAfter: '2' } });
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'status', status: 429, retryAfter: '2' } });
    const started = Date.now();
    const r = await runBuiltCli(['once', '--format', 'json'], { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_VITALS_TAGS: TAGS.join(','), POSTURE_REQUESTS_PER_MINUTE: '5', POSTURE_LOG_LEVEL: 'warn' });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const seconds = (Date.now() - started) / 1000;
    // 4 Vitals + 2 device totals + 1 /alerts + 2 retries = 9 requests: a second window is needed.
    const log = sim.requests;
    expect(log).toHaveLength(9);
    expect(seconds).toBeGreaterThan(59);
    expect(seconds).toBeLessThan(300);
    for (let i = 5; i < log.length; i++) expect(log[i]!.time - log[i - 5]!.time).toBeGreaterThanOrEqual(60_000);
    for (const limited of log.filter((q) => q.status === 429)) {
      const retry = log.find((q) => q.path === limited.path && q.time > limited.time);
      expect(retry!.time - limited.time).toBeGreaterThanOrEqual(2_000);
    }
    const samples = JSON.parse(r.stdout).samples as Array<{ name: string; labels: Record<string, string>; value: number }>;
    const get = (name: string, labels: Record<string, string>) =>
      samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && (labels.tag !== undefined || s.labels.tag === undefined))?.value;
    const open: Record<string, number> = { red: 0, amber: 0, green: 0 };
    for (const a of sim.data().alerts()) if (!a.resolved) open[a.state.toLowerCase()] = (open[a.state.toLowerCase()] ?? 0) + 1;
    for (const sev of ['red', 'amber', 'green']) expect(get('posture_alerts_open', { severity: sev })).toBe(open[sev]);
    let checked = 0;
    for (const tag of [undefined, ...TAGS]) {
      for (const v of sim.data().vitals(tag)) {
        if (!v.vitalsEnabled) continue;
        expect(get('posture_vitals_compliant_devices', { integration: v.key, stage: 'configuration', ...(tag ? { tag } : {}) })).toBe(v.configurationCompliant);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(TAGS.length);
    expect(r.stderr).not.toContain(KEY);
  }, 200_000);
});
