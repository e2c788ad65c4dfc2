import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import { PORTAL_LABEL } from '../../src/metrics/definition.js';
import { renderText } from '../../src/metrics/render.js';
import type { Sample } from '../../src/metrics/sample.js';
import { foldAlerts } from '../../src/sources/alerts/fold.js';
import { foldResolved, withOpenAlerts } from '../../src/sources/resolved/fold.js';
import { resolvedSamples } from '../../src/sources/resolved/samples.js';

const run = promisify(execFile);

describe('the metric catalogue', () => {
  it.each(CATALOGUE.map((m) => [m.name, m] as const))('%s follows Prometheus naming conventions', (name, m) => {
    expect(name).toMatch(/^posture_[a-z][a-z0-9_]*[a-z0-9]$/);
    // A gauge must not look like a counter; a counter, and only it, is a `_total`.
    expect(/[a-z0-9]_total$/.test(name), 'a counter, and only it, ends in _total').toBe(m.type === 'counter');
    expect(name).not.toMatch(/_(count|sum|bucket|created)$/);
    // A `_seconds` name and the unit `s` go together; a `_ratio` is unitless.
    expect(name.endsWith('_seconds'), 'a _seconds name, and only it, has the unit s').toBe(m.unit === 's');
    expect(m.unit).toBe(name.endsWith('_ratio') ? '1' : m.unit);
    for (const l of [...m.labels, ...('optionalLabels' in m ? m.optionalLabels : [])]) {
      expect(l).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(l).not.toBe(PORTAL_LABEL);
      expect(l.startsWith('__')).toBe(false);
    }
    expect(m.help.length).toBeGreaterThan(20);
    expect(m.help).not.toMatch(/[\n"]/);
  });

  it('has unique names', () => {
    expect(new Set(CATALOGUE.map((m) => m.name)).size).toBe(CATALOGUE.length);
  });

  it('says in the HELP of every portal-data family that values are cached', () => {
    const portalFamilies = CATALOGUE.filter((x) => x.origin !== 'exporter');
    expect(portalFamilies.length).toBeGreaterThan(0);
    expect(portalFamilies.filter((m) => !/Cached/.test(m.help)).map((m) => m.name)).toEqual([]);
  });

  /** What promtool check metrics says of `text` (lint problems, on either stream; nothing when clean). */
  async function promtoolSays(text: string): Promise<string> {
    const child = run('promtool', ['check', 'metrics']);
    child.child.stdin!.end(text);
    const { stdout, stderr } = await child;
    return stdout + stderr;
  }

  it.each(['basic', 'tricky'])('golden output of %s passes promtool check metrics', async (scenario) => {
    const text = readFileSync(new URL(`../fixtures/${scenario}/expected.prom`, import.meta.url), 'utf8');
    // promtool prints lint problems and exits non-zero on any; both streams must be empty.
    expect(await promtoolSays(text)).toBe('');
  });

  it('writes the response-time families in both formats as promtool check metrics wants them', async () => {
    const now = Date.UTC(2026, 10, 22, 12) / 1000;
    const at = (s: number) => `${new Date((now - s) * 1000).toISOString().slice(0, 19)}.0000000`;
    const alert = (state: string, created: number, resolved: number | undefined, acknowledged: number) => ({
      state, timestamp: at(created), resolved: resolved !== undefined, resolvedTime: resolved === undefined ? '0001-01-01T00:00:00.0000000' : at(resolved), acknowledged: true, acknowledgedTime: at(acknowledged),
      product: 'Okta, Identity', status: 'Incident', ownerName: '', inactiveUntil: '0001-01-01T00:00:00.0000000',
    });
    const pass = withOpenAlerts(foldResolved([alert('Red', 7200, 3600, 5400), alert('Purple', 90_000, 86_000, 88_000)], now), foldAlerts([alert('Amber', 7200, undefined, 3600)], now));
    const samples: Sample[] = [];
    resolvedSamples(pass, (name, labels, value) => samples.push({ name, labels: { portal: 'acme', ...labels }, value }));
    expect(new Set(samples.map((s) => s.name))).toEqual(new Set(CATALOGUE.filter((m) => m.origin === 'resolved').map((m) => m.name)));
    expect(await promtoolSays(await renderText(samples, 'prometheus', CATALOGUE))).toBe('');
    expect(await promtoolSays(await renderText(samples, 'openmetrics', CATALOGUE))).toBe('');
  });
});

describe('what each family\'s type promises', () => {
  it('types every family a gauge or a counter: a windowed figure is a gauge, and only a count since start a counter', () => {
    expect(CATALOGUE.filter((m) => m.type !== 'gauge' && m.type !== 'counter')).toEqual([]);
  });

  it.each(CATALOGUE.filter((m) => m.type === 'gauge').map((m) => [m.name, m] as const))('%s is named and labelled as no counter, summary or histogram', (name, m) => {
    expect(name).not.toMatch(/_(sum|count|bucket|total|created)$/);
    const labels: readonly string[] = [...m.labels, ...('optionalLabels' in m ? m.optionalLabels : [])];
    expect(labels).not.toContain('quantile');
    expect(labels).not.toContain('le');
  });

  it('gives every family a name of its own in OpenMetrics, where a counter\'s family drops its _total', () => {
    // OpenMetrics names a counter's family without `_total`, and a family's samples may add a suffix.
    const familyName = (m: (typeof CATALOGUE)[number]) => (m.type === 'counter' ? m.name.replace(/_total$/, '') : m.name);
    const families = CATALOGUE.map(familyName);
    expect(new Set(families).size).toBe(families.length);
    const suffixes = ['_total', '_created', '_sum', '_count', '_bucket', '_info', '_gcount', '_gsum'];
    for (const m of CATALOGUE) for (const other of families) for (const suffix of suffixes) expect(other + suffix === m.name && familyName(m) !== other, `${m.name} reads as ${other}${suffix}`).toBe(false);
  });

  it('writes a gauge and a counter of the same thing under names OpenMetrics tells apart (no second HELP line)', async () => {
    const counters = CATALOGUE.filter((m) => m.type === 'counter');
    expect(counters.length).toBeGreaterThan(0);
    const samples: Sample[] = CATALOGUE.map((m) => ({ name: m.name, labels: { portal: 'acme', ...Object.fromEntries(m.labels.map((l) => [l, 'x'])) }, value: 1 }));
    const om = await renderText(samples, 'openmetrics', CATALOGUE);
    const helps = [...om.matchAll(/^# HELP (\S+) /gm)].map((m) => m[1]);
    expect(helps).toHaveLength(CATALOGUE.length);
    expect(new Set(helps).size).toBe(helps.length);
  });
});
