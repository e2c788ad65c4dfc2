/**
 * What the text formats say about values, names and media types, checked against the formats'
 * own documents: Prometheus' "Exposition formats" (text format 0.0.4) and the OpenMetrics 1.0
 * specification. Hand-made catalogues stand in where the real one has no such family.
 */
import { describe, expect, it } from 'vitest';
import type { MetricDef } from '../../src/metrics/definition.js';
import { renderTimestampedOpenMetrics, type TimestampedSample } from '../../src/metrics/openmetrics-timestamped.js';
import { contentType, renderText } from '../../src/metrics/render.js';
import type { Sample } from '../../src/metrics/sample.js';

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

  // Prometheus: "NaN, +Inf, and -Inf are valid values"; OpenMetrics spells them the same way.
  it.each(['prometheus', 'openmetrics'] as const)('writes NaN, +Inf and -Inf as the %s format names them', async (format) => {
    const text = await renderText(samples, format, catalogue);
    expect(valueToken(text, 'x_ratio')).toBe('NaN');
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

describe('whole outputs', () => {
  // Written out by hand from the formats' documents: Prometheus text (HELP and TYPE before a
  // family's samples, empty lines ignored), OpenMetrics (a counter family named without its
  // `_total`, which its samples carry; no empty lines; `# EOF` last) and timestamped OpenMetrics
  // (seconds after the value). HELP text escapes backslash and line feed; a series with no labels
  // has no braces; a family without samples is left out; labels follow the family's definition.
  const catalogue: MetricDef[] = [
    { ...gauge('a_ratio'), help: 'A ratio: one\nline, back\\slash.', labels: ['kind'] },
    { ...counter('jobs_total'), help: 'Jobs done.' },
    { ...gauge('idle_ratio'), help: 'Never written.' },
    { ...gauge('up'), help: 'Whether it is up.', noPortal: true },
  ];
  const samples: Sample[] = [
    { name: 'up', labels: {}, value: 1 },
    { name: 'jobs_total', labels: { portal: 'p' }, value: 7 },
    { name: 'a_ratio', labels: { kind: 'x', portal: 'p' }, value: 0.5 },
    { name: 'a_ratio', labels: { kind: 'y', portal: 'p' }, value: 1e-7 },
  ];

  // The gauge families are written the same in both formats. This one: escaped help, the portal label first.
  const ratioFamily = [
    '# HELP a_ratio A ratio: one\\nline, back\\\\slash.',
    '# TYPE a_ratio gauge',
    'a_ratio{portal="p",kind="x"} 0.5',
    'a_ratio{portal="p",kind="y"} 1e-7',
  ];
  // So is the family with no portal label: no braces at all.
  const upFamily = ['# HELP up Whether it is up.', '# TYPE up gauge', 'up 1'];
  // The counter family: its name in HELP and TYPE is what the format calls it; its sample keeps `_total`.
  const jobsFamily = (name: string) => [`# HELP ${name} Jobs done.`, `# TYPE ${name} counter`, 'jobs_total{portal="p"} 7'];

  it('writes the Prometheus text format: families in catalogue order, an empty line between them', async () => {
    const lines = [...ratioFamily, '', ...jobsFamily('jobs_total'), '', ...upFamily, ''];
    expect(await renderText(samples, 'prometheus', catalogue)).toBe(lines.join('\n'));
  });

  it('writes OpenMetrics: the counter family without _total, no empty lines, # EOF last', async () => {
    const lines = [...ratioFamily, ...jobsFamily('jobs'), ...upFamily, '# EOF', ''];
    expect(await renderText(samples, 'openmetrics', catalogue)).toBe(lines.join('\n'));
  });

  it('writes timestamped OpenMetrics: each series contiguous, its points in ascending time whatever order they came in', () => {
    const gauges = catalogue.filter((def) => def.type === 'gauge');
    const at = (s: Sample, seconds: number, value = s.value): TimestampedSample => ({ ...s, value, timestampMs: seconds * 1000 });
    const [up, , x, y] = samples;
    const text = renderTimestampedOpenMetrics([at(x!, 300, 0.25), at(up!, 20), at(y!, 200), at(x!, 100), at(x!, 200, 0.75), at(up!, 3)], gauges);
    expect(text).toBe(
      [
        '# HELP a_ratio A ratio: one\\nline, back\\\\slash.',
        '# TYPE a_ratio gauge',
        'a_ratio{portal="p",kind="x"} 0.5 100',
        'a_ratio{portal="p",kind="x"} 0.75 200',
        'a_ratio{portal="p",kind="x"} 0.25 300',
        'a_ratio{portal="p",kind="y"} 1e-7 200',
        '# HELP up Whether it is up.',
        '# TYPE up gauge',
        'up 1 3',
        'up 1 20',
        '# EOF',
        '',
      ].join('\n'),
    );
  });
});
