import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { Exporter } from '../../src/exporter/exporter.js';
import type { Sample } from '../../src/metrics/sample.js';
import { startSimulator } from '../../src/simulator/index.js';
import { closeAfterEach } from '../support/closing.js';
import { maxInAnyWindow } from '../support/window.js';
import { T0 } from './support.js';
import { seenBy } from '../support/seen-by.js';

const FULL = 'sim-full-key-0123456789abcdef';
const FINANCE = 'sim-finance-key-0123456789ab';
const OTHER = 'sim-other-portal-key-01234567';
const closing = closeAfterEach();

const value = (samples: Sample[], portal: string, name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && s.labels.portal === portal && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

describe('two entries (two keys) of one portal beside another portal', () => {
  it('share one scheduler and one share: each entry exact with its own series, never over 5 in any 60 s at the portal', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = closing(await startSimulator({ clock, moving: false, seed: 11, devices: 300, alerts: 150, keys: [{ key: FULL }, { key: FINANCE, team: { name: 'Finance IT', tags: ['finance'] } }] }));
    const other = closing(await startSimulator({ clock, moving: false, seed: 12, keys: [{ key: OTHER }] }));
    const logger = memoryLogger({ secrets: [FULL, FINANCE, OTHER] });
    const config = loadConfig({
      env: {
        POSTURE_REQUESTS_PER_MINUTE: '5',
        POSTURE_CONFIG: JSON.stringify({
          portals: [
            { portal: 'acme-all', base_url: sim.baseUrl, api_key: FULL },
            { portal: 'globex', base_url: other.baseUrl, api_key: OTHER },
            // The same portal, its URL written with a trailing slash.
            { portal: 'acme-finance', base_url: `${sim.baseUrl}/`, api_key: FINANCE },
          ],
        }),
      },
    });
    const exporter = new Exporter(config, { clock, logger, runtime: 'once' });
    const [all, globex, finance] = exporter.portals;
    expect(all!.scheduler).toBe(finance!.scheduler);
    expect(globex!.scheduler).not.toBe(all!.scheduler);

    const results = await exporter.collect();
    for (const r of results) expect([r.portal, r.vitals.ok, r.devices.ok, r.alerts.ok]).toEqual([r.portal, true, true, true]);
    const samples = exporter.samplesOf(results, { version: 'test', runtime: 'once' });

    // Each entry's own values, through its own key.
    const everything = seenBy(sim, T0);
    const team = seenBy(sim, T0, ['finance']);
    expect(team.active + team.inactive).toBeGreaterThan(0);
    expect(team.active + team.inactive).toBeLessThan(everything.active + everything.inactive);
    for (const [portal, want] of [['acme-all', everything], ['acme-finance', team]] as const) {
      expect(value(samples, portal, 'posture_devices', { activity: 'active' }), portal).toBe(want.active);
      expect(value(samples, portal, 'posture_devices', { activity: 'inactive' }), portal).toBe(want.inactive);
      for (const sev of ['red', 'amber', 'green']) expect(value(samples, portal, 'posture_alerts_open', { severity: sev }), `${portal} ${sev}`).toBe(want.open[sev]);
    }

    // 4 requests per entry (vitals 1, devices 2, alerts 1) on one share of 5: 8 over two windows.
    const times = sim.requests.map((q) => q.time);
    expect(sim.requests.map((q) => q.keyIndex).sort()).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    expect(maxInAnyWindow(times)).toBe(5);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
    // The other portal has its own share.
    expect(other.requests.map((q) => q.time)).toEqual([T0, T0, T0, T0]);
    expect(logger.lines.join('\n')).not.toMatch(/other clients/);
  });
});
