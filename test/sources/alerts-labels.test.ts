// Portal text in alert labels (product → integration, state → severity, status → type): whatever
// characters it holds (NUL, other control characters, separators), a label value is exactly the
// string JSON.parse gives as UTF-8 writes it (a lone surrogate has no UTF-8 form: U+FFFD), and
// one alert never reaches another alert's series.
import { describe, expect, it } from 'vitest';
import { AlertsSink, foldAlerts, integrationOf, mergeAlerts, severityOf, typeOf } from '../../src/sources/alerts/fold.js';
import { toSamples, type PortalView } from '../../src/collect/samples.js';
import type { Sample } from '../../src/metrics/sample.js';

const NOW = Date.UTC(2026, 10, 22) / 1000;
const OBI = 'posture_alerts_open_by_integration';

const alert = (state: string, product: string, status: string) => ({
  state,
  product,
  status,
  ownerName: '',
  timestamp: '2026-11-20T10:00:00.1234567',
  resolved: false,
  acknowledged: false,
  inactiveUntil: '0001-01-01T00:00:00.0000000',
});

/** The records of a body written with JSON escapes, as JSON.parse gives them. */
const body = `[
  {"state":"Red","product":"Okta","status":"Incident"},
  {"state":"Red","product":"Okta\\u0000evil","status":"Incident"},
  {"state":"Red","product":"Okta\\u0000red\\u0000incident","status":"Incident"},
  {"state":"Amber","product":"Okta\\u0000amber","status":"Warning\\u0000info"},
  {"state":"Red\\u0000","product":"\\u0001\\u001f\\u007f,x","status":"\\u0000"},
  {"state":"\\tgreen\\n","product":"Tab\\there\\r\\nnew","status":"Info"},
  {"state":"Green","product":"a\\"quote\\\\back=\\"{}","status":"info"},
  {"state":"Green","product":"\\ud83d\\ude00 \\ud800 lone","status":"Info"}
]`;
const parsed = (JSON.parse(body) as Array<{ state: string; product: string; status: string }>).map((r) => alert(r.state, r.product, r.status));

function render(records: readonly unknown[]): Sample[] {
  const agg = foldAlerts(records, NOW);
  const view: PortalView = { portal: 'acme', vitals: { success: false }, alerts: { value: agg, success: true }, devices: { success: false } };
  return toSamples([view], { version: '0.0.0-test', runtime: 'once' });
}

/** integration/severity/type → count, computed from the records with the documented mapping, without the sink. */
function expected(records: ReadonlyArray<ReturnType<typeof alert>>): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of records) {
    const key = JSON.stringify([integrationOf(r.product), severityOf(r.state), typeOf(r.status)]);
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

const seriesOf = (samples: readonly Sample[]) =>
  new Map(samples.filter((s) => s.name === OBI).map((s) => [JSON.stringify([s.labels.integration, s.labels.severity, s.labels.type]), s.value]));

describe('alert labels hold portal text as it is', () => {
  it('gives the label values JSON.parse gives, NUL and control characters included, as UTF-8 writes them', () => {
    const s = render(parsed);
    expect(seriesOf(s)).toEqual(expected(parsed));
    const integrations = s.filter((x) => x.name === OBI).map((x) => x.labels.integration);
    expect(integrations).toContain('Okta\u0000evil');
    expect(integrations).toContain('Okta\u0000red\u0000incident');
    expect(integrations).toContain('\u0001\u001f\u007f');
    expect(integrations).toContain('Tab\there\r\nnew');
    // What Node's own UTF-8 encoder writes for the JSON.parse string.
    expect(integrations).toContain(Buffer.from('\ud83d\ude00 \ud800 lone', 'utf8').toString('utf8'));
    expect(integrations).toContain('\ud83d\ude00 \ufffd lone');
    // Every series has exactly the three labels (and portal), nothing split off.
    for (const x of s.filter((y) => y.name === OBI)) expect(Object.keys(x.labels).sort()).toEqual(['integration', 'portal', 'severity', 'type']);
  });

  it('never changes another series: Okta/red/incident counts only the alert whose product is Okta', () => {
    const s = render(parsed);
    expect(s.find((x) => x.name === OBI && x.labels.integration === 'Okta' && x.labels.severity === 'red' && x.labels.type === 'incident')?.value).toBe(1);
    expect(s.filter((x) => x.name === OBI && x.labels.integration === 'Okta')).toHaveLength(1);
    // No severity or type outside the fixed vocabularies ever appears.
    for (const x of s.filter((y) => y.name === OBI)) {
      expect(['red', 'amber', 'green', 'unknown']).toContain(x.labels.severity);
      expect(['incident', 'warning', 'info', 'unknown']).toContain(x.labels.type);
    }
  });

  it('keeps them apart across pages and past the label cache', () => {
    const a = new AlertsSink(NOW);
    const b = new AlertsSink(NOW);
    // Enough distinct products to pass the sink's label cache, each colliding with "X" if split at NUL.
    const many = Array.from({ length: 12_000 }, (_, i) => alert('Red', `X\u0000${i}`, 'Incident'));
    for (const r of [...parsed, ...many]) a.record(r);
    for (const r of [alert('Red', 'X', 'Incident'), ...parsed]) b.record(r);
    const merged = mergeAlerts(a.finish(), b.finish());
    const view: PortalView = { portal: 'acme', vitals: { success: false }, alerts: { value: merged, success: true }, devices: { success: false }, maxSeriesPerFamily: 1_000_000 };
    const s = toSamples([view], { version: '0.0.0-test', runtime: 'once' });
    const want = expected([...parsed, ...many, alert('Red', 'X', 'Incident'), ...parsed]);
    expect(seriesOf(s)).toEqual(want);
    expect(seriesOf(s).get(JSON.stringify(['X', 'red', 'incident']))).toBe(1);
  });
});
