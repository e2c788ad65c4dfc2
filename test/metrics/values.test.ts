/**
 * What the text formats say about values, names and media types, checked against the formats'
 * own documents: Prometheus' "Exposition formats" (text format 0.0.4) and the OpenMetrics 1.0
 * specification. Hand-made catalogues stand in where the real one has no such family.
 */
import { describe, expect, it } from 'vitest';
import type { MetricDef } from '../../src/metrics/definition.js';
import { renderTimestampedOpenMetrics } from '../../src/metrics/openmetrics-timestamped.js';
import { contentType, renderText } from '../../src/metrics/render.js';

const gauge = (name: string): MetricDef => ({ name, help: `${name} help`, type: 'gauge', unit: '1', labels: [], origin: 'exporter', doc: '' });
const counter = (name: string): MetricDef => ({ ...gauge(name), type: 'counter' });

/** The value of the one sample line of `name` (the text after the series, before any timestamp). */
function valueToken(text: string, name: string): string {
  const lines = text.split('\n').filter((l) => l.startsWith(`${name}{`));
  expect(lines, text).toHaveLength(1);
  return lines[0]!.slice(lines[0]!.indexOf('} ') + 2).split(' ')[0]!;
}

describe('media types', () => {
  it('serves the Prometheus text format as text/plain version 0.0.4 and OpenMetrics as application/openmetrics-text version 1.0.0, both UTF-8', () => {
    expect(contentType('prometheus')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(contentType('openmetrics')).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
  });
});

describe('special values', () => {
  const catalogue = [gauge('x_ratio'), gauge('y_ratio'), gauge('z_ratio'), gauge('w_ratio')];
  const samples = [
    { name: 'x_ratio', labels: { portal: 'p' }, value: NaN },
    { name: 'y_ratio', labels: { portal: 'p' }, value: Infinity },
    { name: 'z_ratio', labels: { portal: 'p' }, value: -Infinity },
    { name: 'w_ratio', labels: { portal: 'p' }, value: -0.25 },
  ];

  // Prometheus: "NaN, +Inf, and -Inf are valid values"; the value is read with Go's ParseFloat,
  // which takes NaN in any case. OpenMetrics' ABNF strings are case-insensitive as well.
  it.each(['prometheus', 'openmetrics'] as const)('writes NaN, +Inf and -Inf as the %s format names them', async (format) => {
    const text = await renderText(samples, format, catalogue);
    expect(valueToken(text, 'x_ratio')).toMatch(/^nan$/i);
    expect(valueToken(text, 'y_ratio')).toBe('+Inf');
    expect(valueToken(text, 'z_ratio')).toBe('-Inf');
    expect(valueToken(text, 'w_ratio')).toBe('-0.25');
  });

  it('writes NaN, +Inf and -Inf in timestamped OpenMetrics as the specification spells them, the timestamp in seconds', () => {
    const text = renderTimestampedOpenMetrics(samples.map((s) => ({ ...s, timestampMs: 1_700_000_000_500 })), catalogue);
    expect(valueToken(text, 'x_ratio')).toBe('NaN');
    expect(valueToken(text, 'y_ratio')).toBe('+Inf');
    expect(valueToken(text, 'z_ratio')).toBe('-Inf');
    expect(valueToken(text, 'w_ratio')).toBe('-0.25');
    expect(text.split('\n').find((l) => l.startsWith('z_ratio{'))).toBe('z_ratio{portal="p"} -Inf 1700000000.5');
  });
});

describe('counter names in OpenMetrics', () => {
  it('drops only the trailing _total of a counter family, and leaves a gauge\'s name whole', async () => {
    const catalogue = [counter('jobs_total_seen_total'), gauge('budget_total')];
    const text = await renderText(
      [
        { name: 'jobs_total_seen_total', labels: { portal: 'p' }, value: 2 },
        { name: 'budget_total', labels: { portal: 'p' }, value: 5 },
      ],
      'openmetrics',
      catalogue,
    );
    expect(text).toBe(
      [
        '# HELP jobs_total_seen jobs_total_seen_total help',
        '# TYPE jobs_total_seen counter',
        'jobs_total_seen_total{portal="p"} 2',
        '# HELP budget_total budget_total help',
        '# TYPE budget_total gauge',
        'budget_total{portal="p"} 5',
        '# EOF',
        '',
      ].join('\n'),
    );
  });
});
