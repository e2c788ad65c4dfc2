/**
 * What is one series and what is two, at the edges the catalogue does not cover: labels a family
 * does not declare, samples of a family outside the catalogue, and label values or names that
 * would run into their neighbours if a series were known by its text joined together. Expected
 * lines are written out by hand; two samples of one series add up (the default rule).
 */
import { describe, expect, it } from 'vitest';
import type { MetricDef } from '../../src/metrics/definition.js';
import { renderTimestampedOpenMetrics } from '../../src/metrics/openmetrics-timestamped.js';
import { renderText } from '../../src/metrics/render.js';
import type { Sample } from '../../src/metrics/sample.js';
import { renderedSeries } from '../../src/metrics/series.js';

const gauge = (name: string, labels: readonly string[] = [], noPortal?: true): MetricDef => ({ name, help: 'h', type: 'gauge', unit: '1', labels, origin: 'exporter', doc: '', ...(noPortal ? { noPortal } : {}) });

/** The sample lines of a Prometheus text page (no comments, no empty lines). */
const sampleLines = (text: string): string[] => text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));

describe('labels a family does not declare', () => {
  const catalogue = [gauge('jobs', ['kind'])];

  it('writes them after the family\'s own, by name, and counts an empty one as no label', async () => {
    const samples: Sample[] = [
      { name: 'jobs', labels: { zone: 'z', kind: 'k', portal: 'p', app: 'a' }, value: 1 },
      { name: 'jobs', labels: { app: 'a', portal: 'p', zone: 'z', kind: 'k' }, value: 2 },
      { name: 'jobs', labels: { portal: 'p', kind: 'k' }, value: 4 },
      { name: 'jobs', labels: { portal: 'p', kind: 'k', extra: '' }, value: 8 },
    ];
    expect(sampleLines(await renderText(samples, 'prometheus', catalogue))).toEqual(['jobs{portal="p",kind="k",app="a",zone="z"} 3', 'jobs{portal="p",kind="k"} 12']);
  });
});

describe('a family outside the catalogue', () => {
  it('is left out of every text format, even written twice', async () => {
    const samples: Sample[] = [
      { name: 'jobs', labels: { portal: 'p' }, value: 1 },
      { name: 'stray', labels: { portal: 'p' }, value: 2 },
      { name: 'stray', labels: { portal: 'p' }, value: 3 },
    ];
    const catalogue = [gauge('jobs')];
    expect(sampleLines(await renderText(samples, 'prometheus', catalogue))).toEqual(['jobs{portal="p"} 1']);
    expect(sampleLines(await renderText(samples, 'openmetrics', catalogue))).toEqual(['jobs{portal="p"} 1']);
    expect(sampleLines(renderTimestampedOpenMetrics(samples.map((s) => ({ ...s, timestampMs: 5000 })), catalogue))).toEqual(['jobs{portal="p"} 1 5']);
  });

  it('keeps its samples for the sinks, labels by name, two of one series added up', () => {
    const samples: Sample[] = [
      { name: 'stray', labels: { zone: 'z', app: 'a' }, value: 2 },
      { name: 'stray', labels: { app: 'a', zone: 'z' }, value: 3 },
    ];
    const out = renderedSeries(samples, [gauge('jobs')]);
    expect(out).toEqual([{ name: 'stray', labels: { app: 'a', zone: 'z' }, value: 5 }]);
    expect(Object.keys(out[0]!.labels)).toEqual(['app', 'zone']);
  });
});

describe('series that joined text would run together', () => {
  it('keeps a family apart from one whose name and first label read alike joined (a + bc, ab + c)', async () => {
    const catalogue = [gauge('a', ['bc'], true), gauge('ab', ['c'], true)];
    const samples: Sample[] = [
      { name: 'a', labels: { bc: '1' }, value: 1 },
      { name: 'ab', labels: { c: '1' }, value: 2 },
    ];
    expect(sampleLines(await renderText(samples, 'prometheus', catalogue))).toEqual(['a{bc="1"} 1', 'ab{c="1"} 2']);
  });

  it('keeps a value holding NUL and digits from reaching the next label, whichever side the length is on', async () => {
    // A value's length written before it, without a separator, would let "2" after length 1 read
    // as a length 12; a label name with the length after it, "a1" and 2, as "a" and 12.
    const catalogue = [gauge('x', ['a', 'b'], true), gauge('y', ['a', 'a1', 'c'], true)];
    const samples: Sample[] = [
      { name: 'x', labels: { a: '2', b: 'bbbbbbbb' }, value: 1 },
      { name: 'x', labels: { a: '\u0000b\u00008bbbbbbbb' }, value: 2 },
      { name: 'y', labels: { a: 'xx\u0000c6\u0000yyyyyy' }, value: 4 },
      { name: 'y', labels: { a1: 'xx', c: 'yyyyyy' }, value: 8 },
    ];
    expect(sampleLines(await renderText(samples, 'prometheus', catalogue))).toEqual([
      'x{a="2",b="bbbbbbbb"} 1',
      'x{a="\u0000b\u00008bbbbbbbb"} 2',
      'y{a="xx\u0000c6\u0000yyyyyy"} 4',
      'y{a1="xx",c="yyyyyy"} 8',
    ]);
  });

  it('keeps points of two families apart where a name and a time read alike joined (up at 12 s, up1 at 2 s)', () => {
    const catalogue = [gauge('up', [], true), gauge('up1', [], true)];
    const text = renderTimestampedOpenMetrics(
      [
        { name: 'up', labels: {}, value: 1, timestampMs: 12_000 },
        { name: 'up1', labels: {}, value: 2, timestampMs: 2_000 },
      ],
      catalogue,
    );
    expect(sampleLines(text)).toEqual(['up 1 12', 'up1 2 2']);
  });
});
