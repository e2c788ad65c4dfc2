import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { BUILT_CLI, withOwnState } from '../support/cli.js';
import { freePort } from '../support/peers.js';

const KEY = 'sim-e2e-staleness-key-0123456789';
let sim: Simulator | undefined;
let child: ChildProcess | undefined;
let stderr = '';

afterEach(async () => {
  child?.kill('SIGTERM');
  child = undefined;
  await sim?.close();
  sim = undefined;
  stderr = '';
});

/** The built CLI's `serve` against `sim` on a free loopback port, with `args`; its /metrics and /healthz addresses. */
async function serve(s: Simulator, args: string[]) {
  const port = await freePort();
  child = spawn(process.execPath, [BUILT_CLI, 'serve', '--listen', `127.0.0.1:${port}`, ...args], {
    env: withOwnState({ PATH: process.env.PATH, POSTURE_BASE_URL: s.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'e2e' }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (d) => (stderr += String(d)));
  return { metrics: `http://127.0.0.1:${port}/metrics`, healthz: `http://127.0.0.1:${port}/healthz` };
}

async function waitForText(url: string, ok: (text: string) => boolean, ms = 15_000): Promise<string> {
  const start = Date.now();
  for (;;) {
    const text = await fetch(url)
      .then((r) => r.text())
      .catch(() => '');
    if (ok(text)) return text;
    if (Date.now() - start > ms) throw new Error(`timed out waiting on ${url}\n${stderr.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits (polling, up to `ms`) until `done()` holds. */
async function waitUntil(done: () => boolean, what: string, ms = 15_000): Promise<void> {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}\n${stderr.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const portalData = ['posture_vitals_eligible_devices{', 'posture_devices{', 'posture_alerts_open{'];
const hasAll = (text: string, families: readonly string[]) => families.every((f) => text.includes(f));
const lastSuccess = (text: string, source: string) => Number(new RegExp(`^posture_collection_last_success_timestamp_seconds\\{portal="e2e",source="${source}"\\} (\\S+)$`, 'm').exec(text)?.[1]);

describe('serve on real time through the built CLI', () => {
  it('still serves every source 9 s after a good run with --max-staleness-seconds 5 --interval-seconds 60', async () => {
    sim = await startSimulator({ keys: [{ key: KEY }], alerts: 100, devices: 500, moving: false });
    const { metrics } = await serve(sim, ['--max-staleness-seconds', '5', '--interval-seconds', '60']);
    const first = await waitForText(metrics, (t) => hasAll(t, portalData));
    const ranAt = Math.max(...['vitals', 'alerts', 'devices'].map((s) => lastSuccess(first, s)));
    expect(ranAt).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, Math.max(0, ranAt * 1000 + 9_000 - Date.now())));
    const later = await (await fetch(metrics)).text();
    expect(Date.now() / 1000 - ranAt).toBeGreaterThanOrEqual(9);
    for (const family of portalData) expect(later, family).toContain(family);
    // The same run, not a new one: the values served are over 9 s old.
    for (const s of ['vitals', 'alerts', 'devices']) expect(lastSuccess(later, s)).toBe(lastSuccess(first, s));
    // Four source requests and serve's first resolved-alerts pass (its loop starts with the others).
    expect(sim.requests).toHaveLength(5);
    expect(sim.requests.filter((q) => q.query.filter === 'resolved')).toHaveLength(1);
  }, 30_000);

  it('serves Vitals and device totals while /alerts waits out a long Retry-After at start', async () => {
    sim = await startSimulator({ keys: [{ key: KEY }], alerts: 100, devices: 500, moving: false });
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'status', status: 429, retryAfter: '60' } });
    const { metrics, healthz } = await serve(sim, ['--interval-seconds', '300']);
    // Requests go one at a time, /alerts after the last page of /devices: the device series can be
    // served a moment before /alerts reaches the portal. Read the page once the 429 was answered.
    await waitUntil(() => sim!.requests.some((q) => q.path === '/alerts' && q.status === 429), 'the 429 of /alerts');
    const text = await waitForText(metrics, (t) => hasAll(t, ['posture_vitals_eligible_devices{', 'posture_devices{']));
    expect(text).toMatch(/^posture_exporter_build_info\{[^}]*runtime="serve"[^}]*\} 1$/m);
    expect(text).toMatch(/^posture_collection_success\{portal="e2e",source="vitals"\} 1$/m);
    expect(text).toMatch(/^posture_collection_success\{portal="e2e",source="devices"\} 1$/m);
    expect(text).not.toContain('posture_alerts_open{');
    // Only the configured interval is served for /alerts before its first answer: no success, no
    // age, no figure.
    const alertsLines = text.split('\n').filter((l) => l.includes('source="alerts"'));
    expect(alertsLines).toEqual(['posture_collection_interval_seconds{portal="e2e",source="alerts"} 300']);
    expect(sim.requests.filter((q) => q.path === '/alerts').map((q) => q.status)).toEqual([429]);
    expect(await (await fetch(healthz)).text()).toBe('ok (first collection pending)\n');
  }, 30_000);
});
