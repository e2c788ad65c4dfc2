// One series per label set as written, in every format and sink, over every catalogue family.
// Label values are drawn from text that is hard to write: lone surrogates (UTF-8 has no form for
// them, so "X\ud800" and "X\ud801" are both written "X\ufffd"), U+FFFD itself, NUL, line feeds,
// quotes, backslashes, the empty string (which Prometheus reads as no label). The oracle is a naive
// reading of the output: bytes decoded by Node's UTF-8 decoder, series keyed by their labels, the
// same samples combined by the rule this file states per family.
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { CATALOGUE, METRICS, type MetricName } from '../../src/collect/catalogue.js';
import { renderTimestampedOpenMetrics, type TimestampedSample } from '../../src/metrics/openmetrics-timestamped.js';
import { renderJson, renderText } from '../../src/metrics/render.js';
import type { Sample } from '../../src/metrics/sample.js';
import { OtlpSink } from '../../src/sinks/otlp.js';
import { PushgatewaySink } from '../../src/sinks/pushgateway.js';
import { encodeWriteRequest, toTimeSeries } from '../../src/sinks/remote-write.js';
import type { PushBatch } from '../../src/sinks/types.js';
import { closeAfterEach } from '../support/closing.js';
import { decodeMetricsRequest, decodeMetricsRequestJson, decodeWriteRequest } from '../sinks/decode.js';
import { startReceiver } from '../sinks/receiver.js';
import { mulberry32 } from '../support/prng.js';

/**
 * Families whose samples are not added up when two are written as one series, and why: a
 * success or a consistency flag holds only when it holds for each (min); the oldest creation time
 * and the staler last success are the earlier (min); a health ratio cannot be recomputed from two
 * ratios, and the lower one keeps a health alert firing (min; the Vitals source itself adds up
 * the counts of integrations written alike and recomputes theirs); the effective share is the
 * smaller; an info series stays 1, durations, intervals and page sizes are the longer, and of two
 * response-time percentiles or means the longer (max: a sum of two means is no time). Everything
 * else is a count (sum).
 */
const NOT_SUMMED: Partial<Record<MetricName, 'min' | 'max'>> = {
  posture_vitals_integration_info: 'max',
  posture_portal_role_info: 'max',
  posture_portal_role_permission: 'max',
  posture_vitals_health_ratio: 'min',
  posture_vitals_funnel_consistent: 'min',
  posture_alerts_oldest_open_timestamp_seconds: 'min',
  posture_alerts_oldest_unacknowledged_timestamp_seconds: 'min',
  posture_collection_success: 'min',
  posture_collection_last_success_timestamp_seconds: 'min',
  posture_collection_duration_seconds: 'max',
  posture_collection_interval_seconds: 'max',
  posture_collection_alerts_page_size: 'max',
  posture_alerts_time_to_resolve_seconds: 'max',
  posture_alerts_time_to_resolve_mean_seconds: 'max',
  posture_alerts_time_to_acknowledge_seconds: 'max',
  posture_alerts_time_to_acknowledge_mean_seconds: 'max',
  posture_budget_share: 'min',
  posture_push_success: 'min',
  posture_push_duration_seconds: 'max',
  posture_exporter_build_info: 'max',
  posture_exporter_shard_ordinal: 'max',
  posture_exporter_total_shards: 'max',
};

/** Text that is hard to write; some pairs are written alike. */
const TEXT = ['X\ud800', 'X\ud801', 'X\ufffd', 'X', '', '\udc00', '\ufffd', '\ud83d', '\ud83d\ude00', 'a\u0000b', 'a\nb', 'a\\nb', 'a"b', 'a\\b', 'a=b,c', ' ', 'é数'];
const PORTALS = ['acme', 'beta'];

/** Samples of every family: several per family, label values from TEXT, small whole values (sums stay exact). */
function samplesOf(seed: number): Sample[] {
  const rand = mulberry32(seed);
  const pick = <T,>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const out: Sample[] = [];
  for (const def of CATALOGUE) {
    const n = 2 + Math.floor(rand() * 8);
    for (let i = 0; i < n; i++) {
      const name = def.name;
      const labels: Record<string, string> = { portal: pick(PORTALS) };
      for (const label of def.labels) labels[label] = pick(TEXT.slice(0, 4 + Math.floor(rand() * (TEXT.length - 3))));
      for (const label of 'optionalLabels' in def ? def.optionalLabels : []) if (rand() < 0.5) labels[label] = pick(TEXT);
      out.push({ name, labels, value: Math.floor(rand() * 100) });
    }
  }
  return out;
}

/** A string as it arrives: encoded and decoded by Node's UTF-8 codec. */
const written = (s: string) => Buffer.from(s, 'utf8').toString('utf8');

/** `name{sorted non-empty labels}` of labels as received. */
function keyOf(name: string, labels: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(labels)
    .map(([k, v]) => [k, written(v)] as const)
    .filter(([, v]) => v !== '')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${name}${JSON.stringify(pairs)}`;
}

/** The series every format must hold: samples keyed as received, combined by NOT_SUMMED or added up. */
function expected(samples: readonly Sample[], only: (s: Sample) => boolean = () => true): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples.filter(only)) {
    const key = keyOf(s.name, s.labels);
    const had = out.get(key);
    const rule = NOT_SUMMED[s.name as MetricName];
    out.set(key, had === undefined ? s.value : rule === 'min' ? Math.min(had, s.value) : rule === 'max' ? Math.max(had, s.value) : had + s.value);
  }
  return out;
}

/** Adds a series to `got`, failing on a second sample of it. */
function put(got: Map<string, number>, name: string, labels: Record<string, string>, value: number): void {
  const key = keyOf(name, labels);
  expect(got.has(key), `a second sample of ${key}`).toBe(false);
  got.set(key, value);
}

/** Parses a Prometheus text or OpenMetrics exposition as received (bytes decoded as UTF-8). */
function parseText(text: string, extra: Record<string, string> = {}): Map<string, number> {
  const got = new Map<string, number>();
  for (const line of written(text).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{)?/.exec(line)!;
    const name = m[1]!;
    let i = m[0].length;
    const labels: Record<string, string> = { ...extra };
    if (m[2]) {
      while (line[i] !== '}') {
        const eq = line.indexOf('="', i);
        const label = line.slice(i, eq);
        let value = '';
        for (i = eq + 2; line[i] !== '"'; i++) {
          if (line[i] === '\\') {
            const c = line[++i];
            value += c === 'n' ? '\n' : c;
          } else value += line[i];
        }
        labels[label] = value;
        i++;
        if (line[i] === ',') i++;
      }
      i++;
    }
    const [value] = line.slice(i + 1).split(' ');
    put(got, name, labels, Number(value));
  }
  return got;
}

/** The sources every batch says succeeded. */
const SUCCEEDED = ['vitals', 'alerts', 'devices'] as const;

/** One batch per portal, as the push path builds them. */
function batchesOf(samples: readonly Sample[], at: number): PushBatch[] {
  return PORTALS.map((portal) => ({ portal, snapshot: { collectedAt: at, samples: samples.filter((s) => s.labels.portal === portal) }, succeeded: [...SUCCEEDED] }));
}

const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

describe('one series per label set as written, in every format', () => {
  const closing = closeAfterEach();

  it('states a combining rule for every family that is not a count', () => {
    for (const def of CATALOGUE) expect(METRICS[def.name]?.combine, def.name).toBe(NOT_SUMMED[def.name]);
  });

  it('has collisions to resolve in the generated samples', () => {
    const samples = SEEDS.flatMap(samplesOf);
    expect(new Set(samples.map((s) => keyOf(s.name, s.labels))).size).toBeLessThan(samples.length);
    expect(expected(samples).size).toBeGreaterThan(CATALOGUE.length);
  });

  it.each(SEEDS)('Prometheus text and OpenMetrics (seed %i)', async (seed) => {
    const samples = samplesOf(seed);
    expect(parseText(await renderText(samples, 'prometheus', CATALOGUE))).toEqual(expected(samples));
    const om = await renderText(samples, 'openmetrics', CATALOGUE);
    expect(om.endsWith('# EOF\n')).toBe(true);
    expect(parseText(om)).toEqual(expected(samples));
  });

  it.each(SEEDS)('JSON (seed %i)', (seed) => {
    const samples = samplesOf(seed);
    const body = JSON.parse(written(renderJson(samples, Date.UTC(2026, 10, 22), CATALOGUE))) as { samples: Sample[] };
    const got = new Map<string, number>();
    for (const s of body.samples) {
      // The JSON a reader gets holds the label values as written, not escapes of lone surrogates.
      for (const v of Object.values(s.labels)) expect(written(v)).toBe(v);
      put(got, s.name, { ...s.labels }, s.value);
    }
    expect(got).toEqual(expected(samples));
  });

  it.each(SEEDS)('timestamped OpenMetrics for backfill (seed %i)', (seed) => {
    const days = [Date.UTC(2026, 10, 20, 23, 59, 59), Date.UTC(2026, 10, 21, 23, 59, 59)];
    const samples: TimestampedSample[] = samplesOf(seed).map((s, i) => ({ ...s, timestampMs: days[i % 2]! }));
    const got = new Map<string, number>();
    for (const line of written(renderTimestampedOpenMetrics(samples, CATALOGUE)).split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const at = line.lastIndexOf(' ');
      for (const [key, value] of parseText(line.slice(0, at))) {
        const k = `${key}@${line.slice(at + 1)}`;
        expect(got.has(k), `a second sample of ${k}`).toBe(false);
        got.set(k, value);
      }
    }
    const want = new Map<string, number>();
    for (const t of days) for (const [key, value] of expected(samples.filter((s) => s.timestampMs === t))) want.set(`${key}@${t / 1000}`, value);
    expect(got).toEqual(want);
  });

  it.each(SEEDS)('remote write (seed %i)', (seed) => {
    const samples = samplesOf(seed);
    const decoded = decodeWriteRequest(encodeWriteRequest(toTimeSeries(batchesOf(samples, 1_795_000_000_000))));
    const got = new Map<string, number>();
    for (const ts of decoded.timeseries) {
      const labels = Object.fromEntries(ts.labels);
      const name = labels.__name__!;
      delete labels.__name__;
      expect(ts.samples).toHaveLength(1);
      put(got, name, labels, ts.samples[0]!.value);
    }
    expect(got).toEqual(expected(samples));
  });

  it.each(['http/protobuf', 'http/json'] as const)('OTLP over %s', async (protocol) => {
    const receiver = closing(await startReceiver(() => ({ status: 200 })));
    const ctx = { clock: systemClock, logger: memoryLogger(), deadline: Date.now() + 20_000, env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol } };
    for (const seed of SEEDS.slice(0, 3)) {
      receiver.requests.length = 0;
      const samples = samplesOf(seed);
      await new OtlpSink().push(batchesOf(samples, Date.now()), ctx);
      const body = receiver.requests[0]!.body;
      const requests = protocol === 'http/json' ? decodeMetricsRequestJson(written(body.toString('utf8'))) : decodeMetricsRequest(body);
      const got = new Map<string, number>();
      for (const m of requests.flatMap((r) => r.scopes).flatMap((s) => s.metrics)) {
        for (const p of m.points) put(got, m.name, p.attributes as Record<string, string>, p.value);
      }
      // Every family, the counters too (as monotonic sums).
      expect(got).toEqual(expected(samples));
    }
  });

  it('Pushgateway bodies, with their grouping labels', async () => {
    const receiver = closing(await startReceiver(() => ({ status: 200 })));
    const ctx = { clock: systemClock, logger: memoryLogger(), deadline: Date.now() + 20_000 };
    for (const seed of SEEDS.slice(0, 3)) {
      receiver.requests.length = 0;
      const samples = samplesOf(seed);
      await new PushgatewaySink({ url: receiver.url }).push(batchesOf(samples, Date.now()), ctx);
      const got = new Map<string, number>();
      for (const req of receiver.requests) {
        // /metrics/job/<job>/portal/<p>[/source/<s>]: the Pushgateway adds these labels to every sample.
        const parts = req.url.split('/').slice(4).map(decodeURIComponent);
        const grouping: Record<string, string> = {};
        for (let i = 0; i < parts.length; i += 2) grouping[parts[i]!] = parts[i + 1]!;
        delete grouping.source;
        for (const [key, value] of parseText(req.body.toString('utf8'), grouping)) {
          expect(got.has(key), `a second sample of ${key}`).toBe(false);
          got.set(key, value);
        }
      }
      // A group per source that succeeded (the resolved-alerts pass is none of a batch's sources), and the exporter's own.
      const origin = (x: Sample) => METRICS[x.name]?.origin;
      expect(got).toEqual(expected(samples, (x) => origin(x) === 'exporter' || (SUCCEEDED as readonly (string | undefined)[]).includes(origin(x))));
    }
  });
});
