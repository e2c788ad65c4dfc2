import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import type { CycleResult } from '../../src/collect/cycle.js';
import { OTHER } from '../../src/sources/cap.js';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { renderText } from '../../src/metrics/render.js';
import type { Sample } from '../../src/metrics/sample.js';
import { Exporter } from '../../src/exporter/exporter.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';

const run = promisify(execFile);
const KEY = 'sim-bounded-key-0123456789';
const OBI = 'posture_alerts_open_by_integration';
const facts = { version: 'test', runtime: 'once' as const };

/** The label rules of docs/metrics.md, read again here rather than taken from the fold. */
const vocabulary = (words: readonly string[]) => (text: string) => (words.includes(text.trim().toLowerCase()) ? text.trim().toLowerCase() : 'unknown');
const severityOf = vocabulary(['red', 'amber', 'green']);
const typeOf = vocabulary(['incident', 'warning', 'info']);
const integrationOf = (product: string) => Buffer.from(product.split(',')[0]!.trim(), 'utf8').toString('utf8') || 'unknown';

/**
 * The samples come out of `Exporter.samplesOf`, the path `once` and the Lambda render: the cap is
 * the portal's POSTURE_MAX_SERIES_PER_FAMILY, or its default when unset.
 */
describe('a portal whose alerts come from 20,000 integrations', () => {
  let sim: Simulator;
  let result: CycleResult;
  /** The exporter that collected, its portal capped at 2,000 series per family. */
  let capped: { exporter: Exporter; logger: ReturnType<typeof memoryLogger> };
  /** An exporter of the same portal without the setting (default cap), rendering the same run. */
  let byDefault: { exporter: Exporter; logger: ReturnType<typeof memoryLogger> };
  /** Open alerts by integration, and by integration x severity x type, from the simulator's own data. */
  const expected = { byIntegration: new Map<string, number>(), bySeries: new Map<string, number>(), open: 0 };

  beforeAll(async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0), { autoAdvance: true });
    sim = await startSimulator({ clock, keys: [{ key: KEY }], moving: false, alerts: 100_000, alertIntegrations: 20_000, devices: 500 });
    for (const a of sim.data().alerts()) {
      if (a.resolved) continue;
      expected.open++;
      const integration = integrationOf(a.product);
      expected.byIntegration.set(integration, (expected.byIntegration.get(integration) ?? 0) + 1);
      const key = `${integration}\u0000${severityOf(a.state)}\u0000${typeOf(a.status)}`;
      expected.bySeries.set(key, (expected.bySeries.get(key) ?? 0) + 1);
    }
    const env = { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'big' };
    const exporterOf = (extra: Record<string, string>) => {
      const logger = memoryLogger({ secrets: [KEY] });
      return { exporter: new Exporter(loadConfig({ env: { ...env, ...extra } }), { clock, logger, runtime: 'once', random: () => 0.5 }), logger };
    };
    capped = exporterOf({ POSTURE_MAX_SERIES_PER_FAMILY: '2000' });
    byDefault = exporterOf({});
    [result] = (await capped.exporter.collect()) as [CycleResult];
  }, 120_000);
  afterAll(() => sim.close());

  const obi = (samples: readonly Sample[]) => samples.filter((s) => s.name === OBI);
  const folded = (samples: readonly Sample[]) => samples.find((s) => s.name === 'posture_series_folded' && s.labels.family === OBI)?.value;

  it('collects every open alert of 20,000 distinct integrations', () => {
    expect(result.alerts.ok).toBe(true);
    expect(expected.byIntegration.size).toBe(20_000);
    expect(expected.bySeries.size).toBeGreaterThan(50_000);
  });

  it.each([
    ['the configured cap (2,000)', () => capped, 2000],
    ['the default cap of a portal configured without one (1,000)', () => byDefault, 1000],
  ])('bounds the family to %s, still adding up to every open alert, with the fold visible and logged', (_name, which, cap) => {
    const { exporter, logger } = which();
    const samples = exporter.samplesOf([result], facts);
    const family = obi(samples);
    expect(family.length).toBeLessThanOrEqual(cap);
    expect(family.length).toBeGreaterThan(cap - 20);
    expect(family.reduce((n, s) => n + s.value, 0)).toBe(expected.open);
    const open = samples.filter((s) => s.name === 'posture_alerts_open').reduce((n, s) => n + s.value, 0);
    expect(open).toBe(expected.open);
    // Kept series are exact; the fold series hold the rest, per severity and type.
    const kept = family.filter((s) => s.labels.integration !== OTHER);
    const others = family.filter((s) => s.labels.integration === OTHER);
    expect(kept.length).toBeGreaterThan(0);
    expect(others.length).toBeGreaterThan(0);
    for (const s of kept) expect(s.value).toBe(expected.bySeries.get(`${s.labels.integration}\u0000${s.labels.severity}\u0000${s.labels.type}`));
    // The kept integrations are the largest ones.
    const keptNames = new Set(kept.map((s) => s.labels.integration!));
    const smallestKept = Math.min(...[...keptNames].map((n) => expected.byIntegration.get(n)!));
    const largestFolded = Math.max(...[...expected.byIntegration].filter(([n]) => !keptNames.has(n)).map(([, c]) => c));
    expect(smallestKept).toBeGreaterThanOrEqual(largestFolded);
    expect(folded(samples)).toBe(expected.bySeries.size - kept.length);
    // The operator is told once which family was capped and which setting keeps more.
    const warnings = logger.records().filter((r) => r.family === OBI && String(r.msg).includes('POSTURE_MAX_SERIES_PER_FAMILY'));
    expect(warnings.map((r) => [r.level, r.folded])).toEqual([['warn', folded(samples)]]);
  });

  it('renders output that promtool accepts, with the fold series and the folded count', async () => {
    const samples = capped.exporter.samplesOf([result], facts);
    const text = await renderText(samples, 'prometheus', CATALOGUE);
    expect(text).toContain(`posture_alerts_open_by_integration{portal="big",integration="${OTHER}",severity="red",type="incident"}`);
    expect(text).toMatch(/^posture_series_folded\{portal="big",family="posture_alerts_open_by_integration"\} [1-9]\d*$/m);
    const child = run('promtool', ['check', 'metrics']);
    child.child.stdin!.end(text);
    const { stdout, stderr } = await child;
    expect(stdout + stderr).toBe('');
  });
});
