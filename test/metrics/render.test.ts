import { describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import { renderText } from '../../src/metrics/render.js';
import type { Sample } from '../../src/metrics/sample.js';

const info = (integration: string, name: string): Sample => ({ name: 'posture_vitals_integration_info', labels: { portal: 'p', integration, name, vitals_enabled: 'true' }, value: 1 });

describe('renderText', () => {
  it.each(['prometheus', 'openmetrics'] as const)('keeps two series whose label values would join to the same key (%s)', async (format) => {
    // A registry that keys series by `label:value,` joined strings sees these two as one.
    const text = await renderText([info('a,name:b', 'c'), info('a', 'b,name:c')], format, CATALOGUE);
    const lines = text.split('\n').filter((l) => l.startsWith('posture_vitals_integration_info{'));
    expect(lines).toEqual([
      'posture_vitals_integration_info{portal="p",integration="a,name:b",name="c",vitals_enabled="true"} 1',
      'posture_vitals_integration_info{portal="p",integration="a",name="b,name:c",vitals_enabled="true"} 1',
    ]);
  });

  it('escapes backslash, double quote and line feed in label values, keeps NUL and other text as is, and one label never reaches another', async () => {
    const text = await renderText([info('x\\"y\nz', 'n\u0000m="o"'), info('é 数 😀', '')], 'prometheus', CATALOGUE);
    expect(text.split('\n').filter((l) => l.startsWith('posture_vitals_integration_info{'))).toEqual([
      'posture_vitals_integration_info{portal="p",integration="x\\\\\\"y\\nz",name="n\u0000m=\\"o\\"",vitals_enabled="true"} 1',
      'posture_vitals_integration_info{portal="p",integration="é 数 😀",name="",vitals_enabled="true"} 1',
    ]);
  });

  it('writes one line for a label set given twice, at its first place: counts added up, an info series kept at 1', async () => {
    const open = (integration: string, value: number): Sample => ({ name: 'posture_alerts_open_by_integration', labels: { portal: 'p', integration, severity: 'red', type: 'incident' }, value });
    const text = await renderText([info('a', 'A'), info('b', 'B'), info('a', 'A'), open('x', 2), open('y', 1), open('x', 3)], 'prometheus', CATALOGUE);
    expect(text.split('\n').filter((l) => l.startsWith('posture_vitals_integration_info{')).map((l) => l.split('integration=')[1])).toEqual(['"a",name="A",vitals_enabled="true"} 1', '"b",name="B",vitals_enabled="true"} 1']);
    expect(text.split('\n').filter((l) => l.startsWith('posture_alerts_open_by_integration{')).map((l) => l.split('integration=')[1])).toEqual(['"x",severity="red",type="incident"} 5', '"y",severity="red",type="incident"} 1']);
  });

  it('names a counter family without _total in OpenMetrics and with it in the Prometheus text format', async () => {
    const counter: Sample = { name: 'posture_budget_rate_limited_responses_total', labels: { portal: 'p' }, value: 3 };
    expect(await renderText([counter], 'openmetrics', CATALOGUE)).toMatch(/^# TYPE posture_budget_rate_limited_responses counter\nposture_budget_rate_limited_responses_total\{portal="p"\} 3\n# EOF\n$/m);
    expect(await renderText([counter], 'prometheus', CATALOGUE)).toMatch(/^# TYPE posture_budget_rate_limited_responses_total counter\nposture_budget_rate_limited_responses_total\{portal="p"\} 3\n$/m);
  });
});
