import { describe, expect, it } from 'vitest';
import { FoldWarnings, toSamples, type ExporterFacts, type PortalView } from '../../src/collect/samples.js';
import { memoryLogger } from '../../src/core/log.js';
import type { Sample } from '../../src/metrics/sample.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const BUDGET = { configuredShare: 6, effectiveShare: 3, rateLimitedLastHour: 2, rateLimitedTotal: 7 };

/** A portal whose sources ran without data to render (devices succeeded at T0 with no value; the others failed, alerts never having succeeded). */
function view(cycle?: PortalView['cycle']): PortalView {
  return {
    portal: 'acme',
    vitals: { success: false, lastSuccessAt: T0 - 60_000 },
    alerts: { success: false },
    devices: { success: true, lastSuccessAt: T0 },
    ...(cycle ? { cycle } : {}),
  };
}

const render = (v: PortalView, exporter: Partial<ExporterFacts> = {}) => toSamples([v], { version: 't', runtime: 'serve', ...exporter });
const seriesOf = (samples: readonly Sample[], name: string): Array<Record<string, string | number>> => samples.filter((s) => s.name === name).map((s) => ({ ...s.labels, value: s.value }));

describe('toSamples: the collection series', () => {
  it('has a last-success timestamp, in seconds, only for the sources that have succeeded', () => {
    expect(seriesOf(render(view()), 'posture_collection_last_success_timestamp_seconds')).toEqual([
      { portal: 'acme', source: 'vitals', value: (T0 - 60_000) / 1000 },
      { portal: 'acme', source: 'devices', value: T0 / 1000 },
    ]);
  });

  it('gives the configured interval of every source and of the resolved-alerts pass, whether it has run or not', () => {
    const intervals = { vitals: 300, alerts: 120, devices: 900, resolved: 3600 };
    expect(seriesOf(render({ ...view(), intervals }), 'posture_collection_interval_seconds')).toEqual([
      { portal: 'acme', source: 'vitals', value: 300 },
      { portal: 'acme', source: 'alerts', value: 120 },
      { portal: 'acme', source: 'devices', value: 900 },
      { portal: 'acme', source: 'resolved', value: 3600 },
    ]);
    expect(seriesOf(render(view()), 'posture_collection_interval_seconds')).toEqual([]);
  });

  it('gives each source\'s last run duration in seconds', () => {
    const s = render(view({ durations: { vitals: 250, alerts: 61_500, devices: 4 }, requests: new Map() }));
    expect(seriesOf(s, 'posture_collection_duration_seconds')).toEqual([
      { portal: 'acme', source: 'vitals', value: 0.25 },
      { portal: 'acme', source: 'alerts', value: 61.5 },
      { portal: 'acme', source: 'devices', value: 0.004 },
    ]);
  });

  it('lists the requests by endpoint and code in one order whatever order the runs reported them in', () => {
    // Inserted newest-first and interleaved, as runs of different sources end; the output is sorted by endpoint, then code.
    const keys = ['/vitals\u0000429', '/devices\u0000200', '/alerts\u0000error', '/vitals\u0000200', '/alerts\u0000200', '/devices\u0000503', '/alerts\u0000429'];
    const expected = ['/alerts 200', '/alerts 429', '/alerts error', '/devices 200', '/devices 503', '/vitals 200', '/vitals 429'];
    for (const order of [keys, [...keys].reverse(), [...keys].sort(), [...keys].sort().reverse()]) {
      const requests = new Map(order.map((k, i) => [k, i + 1]));
      const cycle = { durations: {}, requests, requestTotals: requests };
      for (const name of ['posture_collection_api_requests', 'posture_api_requests_total']) {
        const got = seriesOf(render(view(cycle)), name);
        expect(got.map((x) => `${x.endpoint} ${x.code}`), `${name} from ${order.join(',')}`).toEqual(expected);
        // Each count stays with its own endpoint and code.
        for (const x of got) expect(x.value).toBe(requests.get(`${x.endpoint}\u0000${x.code}`));
      }
    }
  });

  it('has no budget series when the budget is not known, and all of them when it is', () => {
    const budgetNames = ['posture_budget_share', 'posture_budget_rate_limited_responses_last_hour', 'posture_budget_rate_limited_responses_total'];
    const without = render(view({ durations: {}, requests: new Map() }));
    expect(without.filter((s) => budgetNames.includes(s.name))).toEqual([]);
    const withBudget = render(view({ durations: {}, requests: new Map(), budget: BUDGET }));
    expect(withBudget.filter((s) => budgetNames.includes(s.name)).map((s) => `${s.name}${s.labels.kind ? `/${s.labels.kind}` : ''}=${s.value}`)).toEqual([
      'posture_budget_share/configured=6',
      'posture_budget_share/effective=3',
      'posture_budget_rate_limited_responses_last_hour=2',
      'posture_budget_rate_limited_responses_total=7',
    ]);
  });
});

describe('toSamples: the push series', () => {
  it('says, per portal and sink, whether the previous push succeeded and how long it took in seconds', () => {
    const push = [
      { sink: 'otlp', ok: true, durationMs: 120 },
      { sink: 'pushgateway', ok: false, durationMs: 30_000 },
    ];
    const s = toSamples([view(), { ...view(), portal: 'beta' }], { version: 't', runtime: 'lambda', push });
    expect(seriesOf(s, 'posture_push_success')).toEqual([
      { portal: 'acme', sink: 'otlp', value: 1 },
      { portal: 'acme', sink: 'pushgateway', value: 0 },
      { portal: 'beta', sink: 'otlp', value: 1 },
      { portal: 'beta', sink: 'pushgateway', value: 0 },
    ]);
    expect(seriesOf(s, 'posture_push_duration_seconds')).toEqual([
      { portal: 'acme', sink: 'otlp', value: 0.12 },
      { portal: 'acme', sink: 'pushgateway', value: 30 },
      { portal: 'beta', sink: 'otlp', value: 0.12 },
      { portal: 'beta', sink: 'pushgateway', value: 30 },
    ]);
  });

  it('has no push series before the first push', () => {
    const s = render(view(), { runtime: 'lambda' });
    expect(s.filter((x) => x.name.startsWith('posture_push_'))).toEqual([]);
  });
});

describe('FoldWarnings with a sample that lacks the portal or family label', () => {
  it('still warns once, naming the missing labels as empty', () => {
    const logger = memoryLogger();
    const warnings = new FoldWarnings(logger);
    const bare: Sample = { name: 'posture_series_folded', labels: {}, value: 4 };
    warnings.check([bare]);
    warnings.check([bare]);
    expect(logger.records()).toMatchObject([{ level: 'warn', portal: '', family: '', folded: 4 }]);
    expect(logger.records()[0]!.msg).toMatch(/^capped : folded/);
  });
});
