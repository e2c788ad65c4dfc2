// Issue 10 point 4 against the simulated portal's `huge-string` fault: an unused field that is
// megabytes long costs no memory and no record; a used one makes its record invalid (counted,
// logged, skipped), never a crash.
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { Exporter } from '../../src/exporter/exporter.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import type { Sample } from '../../src/metrics/sample.js';

const KEY = 'sim-huge-string-key-0123456789';
let sim: Simulator | undefined;

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function setup() {
  const clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0), { autoAdvance: true });
  sim = await startSimulator({ clock, keys: [{ key: KEY }], alerts: 300, moving: false });
  const logger = memoryLogger({ secrets: [KEY] });
  const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'test' } });
  const exporter = new Exporter(config, { clock, logger, runtime: 'once', random: () => 0.5 });
  return { clock, sim, logger, exporter };
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
const facts = { version: 'test', runtime: 'once' as const };

function openAlerts(s: Simulator, at: number): number {
  let n = 0;
  for (const a of s.data(at).alerts()) if (!a.resolved) n++;
  return n;
}

describe('huge strings in /alerts records', () => {
  it('serves the first record with the field replaced by exactly `bytes` characters', async () => {
    const { sim } = await setup();
    sim.addFault({ path: '/alerts', fault: { kind: 'huge-string', field: 'issue', bytes: 200_003 } });
    const res = await request(`${sim.baseUrl}/alerts?filter=allunresolved&limit=3`, { headers: { 'X-Service-ApiKey': KEY } });
    const body = JSON.parse(await res.body.text()) as { data: Array<Record<string, unknown>> };
    expect(body.data).toHaveLength(3);
    expect(body.data[0]!.issue).toHaveLength(200_003);
    expect(typeof body.data[0]!.state).toBe('string');
    expect(typeof body.data[1]!.issue).toBe('string');
    expect((body.data[1]!.issue as string).length).toBeLessThan(1000);
  });

  /** One collection where the first record of every /alerts page has `field` set to a string of `bytes`. */
  async function collectWithHugeString(field: string, bytes: number) {
    const { clock, sim, exporter, logger } = await setup();
    const at = clock.now();
    sim.addFault({ path: '/alerts', times: Infinity, fault: { kind: 'huge-string', field, bytes } });
    const [r] = await exporter.collect();
    expect(r!.alerts.ok).toBe(true);
    return { sim, at, logger, samples: exporter.samplesOf([r!], facts) };
  }

  it('counts an alert whose unused `issue` is 8 MB like any other', async () => {
    const { sim, at, logger, samples } = await collectWithHugeString('issue', 8 * 1024 * 1024);
    const open = ['red', 'amber', 'green'].reduce((n, s) => n + (value(samples, 'posture_alerts_open', { severity: s }) ?? 0), 0);
    expect(open).toBe(openAlerts(sim, at));
    expect(value(samples, 'posture_collection_invalid_records', { source: 'alerts' })).toBe(0);
    expect(logger.records().filter((l) => l.msg === 'skipped a malformed record')).toHaveLength(0);
  });

  it('skips and counts an alert whose used `state` is 2 MB, and logs which field', async () => {
    const { sim, at, logger, samples } = await collectWithHugeString('state', 2 * 1024 * 1024);
    const requests = sim.requests.filter((q) => q.path === '/alerts').length;
    expect(requests).toBeGreaterThan(0);
    // The first record of each /alerts page carries the huge string.
    expect(value(samples, 'posture_collection_invalid_records', { source: 'alerts' })).toBe(requests);
    const open = ['red', 'amber', 'green'].reduce((n, s) => n + (value(samples, 'posture_alerts_open', { severity: s }) ?? 0), 0);
    expect(open).toBe(openAlerts(sim, at) - requests);
    const warnings = logger.records().filter((l) => l.msg === 'skipped a malformed record');
    expect(warnings).toHaveLength(requests);
    expect(String(warnings[0]!.reason)).toMatch(/^state: .*(more than 65536 bytes|longer than 65536 characters)/);
  });
});
