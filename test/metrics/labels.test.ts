/**
 * Every series `serve` exposes carries exactly the labels the catalogue gives its family, which the
 * README's metrics table is generated from: `portal` on every family but the shard's own two
 * (`noPortal`), then the family's labels, and its optional ones only where they apply.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { METRICS } from '../../src/collect/catalogue.js';
import { memoryLogger } from '../../src/core/log.js';
import { PORTAL_LABEL } from '../../src/metrics/definition.js';
import { startServe } from '../../src/runtime/serve.js';
import { startSimulator } from '../../src/simulator/index.js';
import { metricsTable } from '../../scripts/readme.js';
import { serveAfterEach, T0 } from '../integration/support.js';
import { FakeClock } from '../../src/core/clock.js';

const KEY = 'sim-labels-key-0123456789abcdef';
const { closing, stopping } = serveAfterEach();

describe('the labels of each family', () => {
  it('are those of the catalogue and of the README table, portal on all but the shard gauges', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = closing(await startSimulator({ clock, keys: [{ key: KEY }], moving: false }));
    const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'acme', POSTURE_LISTEN: '127.0.0.1:0', POSTURE_VITALS_TAGS: 'laptops', POSTURE_SHARD: '0', POSTURE_TOTAL_SHARDS: '1' } });
    const serving = stopping(await startServe(config, { clock, logger: memoryLogger({ secrets: [KEY] }) }));
    const state = serving.exporter.portals[0]!.state;
    while (['vitals', 'alerts', 'devices'].some((s) => state.view(clock.now(), 0)[s as 'vitals'].success === undefined)) await serving.nextCycle();
    const samples = serving.exporter.samples();
    const seen = new Set<string>();
    for (const s of samples) {
      const def = METRICS[s.name];
      expect(def, s.name).toBeDefined();
      seen.add(s.name);
      const names = Object.keys(s.labels);
      const required = [...(def!.noPortal ? [] : [PORTAL_LABEL]), ...def!.labels];
      expect(names.filter((l) => !(def!.optionalLabels ?? []).includes(l)).sort(), s.name).toEqual([...required].sort());
    }
    expect(seen).toContain('posture_exporter_shard_ordinal');
    expect(seen).toContain('posture_exporter_total_shards');
    // The README table says the same: no portal label on the shard gauges, portal on the rest.
    const table = metricsTable();
    for (const name of seen) {
      const row = table.split('\n').find((r) => r.startsWith(`| \`${name}\` |`))!;
      const labels = row.split('|')[3]!.trim().split(', ').filter(Boolean);
      expect(labels.includes(PORTAL_LABEL), name).toBe(!METRICS[name]!.noPortal);
    }
  });
});
