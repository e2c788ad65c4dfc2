/**
 * Independent decoders for what the sinks send: a generic protobuf wire-format reader, then the
 * remote-write WriteRequest and the OTLP ExportMetricsServiceRequest (protobuf and JSON) on top.
 * Written from the .proto definitions, not from the code under test.
 */

export interface WireField {
  field: number;
  wire: number;
  /** Varint value (wire 0). */
  varint?: bigint;
  /** Raw bytes of wire 1 (8 bytes), wire 5 (4 bytes) or wire 2 (length-delimited). */
  bytes?: Uint8Array;
}

function readVarint(buf: Uint8Array, pos: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++]!;
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7n;
    if (shift > 63n) throw new Error('varint too long');
  }
}

/** Every field of one message, in order. */
function decodeFields(buf: Uint8Array): WireField[] {
  const out: WireField[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [key, afterKey] = readVarint(buf, pos);
    pos = afterKey;
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      const [v, next] = readVarint(buf, pos);
      out.push({ field, wire, varint: v });
      pos = next;
    } else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4;
      if (pos + n > buf.length) throw new Error('truncated fixed field');
      out.push({ field, wire, bytes: buf.subarray(pos, pos + n) });
      pos += n;
    } else if (wire === 2) {
      const [len, next] = readVarint(buf, pos);
      const end = next + Number(len);
      if (end > buf.length) throw new Error('truncated length-delimited field');
      out.push({ field, wire, bytes: buf.subarray(next, end) });
      pos = end;
    } else {
      throw new Error(`unsupported wire type ${wire} for field ${field}`);
    }
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const str = (f: WireField) => utf8.decode(f.bytes!);
const dbl = (f: WireField) => new DataView(f.bytes!.buffer, f.bytes!.byteOffset, 8).getFloat64(0, true);
const u64 = (f: WireField) => new DataView(f.bytes!.buffer, f.bytes!.byteOffset, 8).getBigUint64(0, true);
const i64 = (f: WireField) => new DataView(f.bytes!.buffer, f.bytes!.byteOffset, 8).getBigInt64(0, true);

export interface DecodedWriteRequest {
  timeseries: Array<{ labels: Array<[string, string]>; samples: Array<{ value: number; timestamp: number }> }>;
  metadata: Array<{ type: number; name: string; help: string }>;
}

/** prometheus.WriteRequest: 1 TimeSeries {1 Label {1 name, 2 value}, 2 Sample {1 double, 2 int64}}, 3 MetricMetadata {1 type, 2 name, 4 help}. */
export function decodeWriteRequest(buf: Uint8Array): DecodedWriteRequest {
  const out: DecodedWriteRequest = { timeseries: [], metadata: [] };
  for (const f of decodeFields(buf)) {
    if (f.field === 1) {
      const ts: DecodedWriteRequest['timeseries'][number] = { labels: [], samples: [] };
      for (const g of decodeFields(f.bytes!)) {
        if (g.field === 1) {
          let name = '';
          let value = '';
          for (const h of decodeFields(g.bytes!)) {
            if (h.field === 1) name = str(h);
            if (h.field === 2) value = str(h);
          }
          ts.labels.push([name, value]);
        } else if (g.field === 2) {
          let value = 0;
          let timestamp = 0;
          for (const h of decodeFields(g.bytes!)) {
            if (h.field === 1) value = dbl(h);
            if (h.field === 2) timestamp = Number(BigInt.asIntN(64, h.varint!));
          }
          ts.samples.push({ value, timestamp });
        }
      }
      out.timeseries.push(ts);
    } else if (f.field === 3) {
      const md = { type: 0, name: '', help: '' };
      for (const g of decodeFields(f.bytes!)) {
        if (g.field === 1) md.type = Number(g.varint!);
        if (g.field === 2) md.name = str(g);
        if (g.field === 4) md.help = str(g);
      }
      out.metadata.push(md);
    }
  }
  return out;
}

export type AttrValue = string | number | boolean;

export interface DecodedPoint {
  attributes: Record<string, AttrValue>;
  value: number;
  timeUnixNano: bigint;
}

export interface DecodedMetric {
  name: string;
  description: string;
  unit: string;
  kind: 'gauge' | 'sum' | 'histogram' | 'other';
  points: DecodedPoint[];
  /** A Sum's aggregation temporality (1 delta, 2 cumulative) and whether it is monotonic. */
  temporality?: number;
  monotonic?: boolean;
}

export interface DecodedMetricsRequest {
  resourceAttributes: Record<string, AttrValue>;
  scopes: Array<{ name: string; metrics: DecodedMetric[] }>;
}

function decodeAnyValue(buf: Uint8Array): AttrValue {
  for (const f of decodeFields(buf)) {
    if (f.field === 1) return str(f);
    if (f.field === 2) return f.varint! !== 0n;
    if (f.field === 3) return Number(BigInt.asIntN(64, f.varint!));
    if (f.field === 4) return dbl(f);
  }
  return '';
}

function decodeKeyValue(buf: Uint8Array): [string, AttrValue] {
  let key = '';
  let value: AttrValue = '';
  for (const f of decodeFields(buf)) {
    if (f.field === 1) key = str(f);
    if (f.field === 2) value = decodeAnyValue(f.bytes!);
  }
  return [key, value];
}

function decodeNumberDataPoint(buf: Uint8Array): DecodedPoint {
  const p: DecodedPoint = { attributes: {}, value: NaN, timeUnixNano: 0n };
  for (const f of decodeFields(buf)) {
    if (f.field === 7) {
      const [k, v] = decodeKeyValue(f.bytes!);
      p.attributes[k] = v;
    } else if (f.field === 3) p.timeUnixNano = u64(f);
    else if (f.field === 4) p.value = dbl(f);
    else if (f.field === 6) p.value = Number(i64(f));
  }
  return p;
}

/**
 * opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest: 1 ResourceMetrics
 * {1 Resource {1 KeyValue}, 2 ScopeMetrics {1 scope {1 name}, 2 Metric {1 name, 2 description,
 * 3 unit, 5 Gauge {1 NumberDataPoint {7 attributes, 3 time, 4 as_double, 6 as_int}}, 7 Sum {1 NumberDataPoint,
 * 2 aggregation_temporality, 3 is_monotonic}, 9 Histogram}}}.
 */
export function decodeMetricsRequest(buf: Uint8Array): DecodedMetricsRequest[] {
  const out: DecodedMetricsRequest[] = [];
  for (const rm of decodeFields(buf)) {
    if (rm.field !== 1) continue;
    const req: DecodedMetricsRequest = { resourceAttributes: {}, scopes: [] };
    for (const f of decodeFields(rm.bytes!)) {
      if (f.field === 1) {
        for (const a of decodeFields(f.bytes!)) {
          if (a.field === 1) {
            const [k, v] = decodeKeyValue(a.bytes!);
            req.resourceAttributes[k] = v;
          }
        }
      } else if (f.field === 2) {
        const scope = { name: '', metrics: [] as DecodedMetric[] };
        for (const g of decodeFields(f.bytes!)) {
          if (g.field === 1) {
            for (const h of decodeFields(g.bytes!)) if (h.field === 1) scope.name = str(h);
          } else if (g.field === 2) {
            const m: DecodedMetric = { name: '', description: '', unit: '', kind: 'other', points: [] };
            for (const h of decodeFields(g.bytes!)) {
              if (h.field === 1) m.name = str(h);
              else if (h.field === 2) m.description = str(h);
              else if (h.field === 3) m.unit = str(h);
              else if (h.field === 5) {
                m.kind = 'gauge';
                for (const dp of decodeFields(h.bytes!)) if (dp.field === 1) m.points.push(decodeNumberDataPoint(dp.bytes!));
              } else if (h.field === 7) {
                // Sum {1 NumberDataPoint, 2 aggregation_temporality, 3 is_monotonic}.
                m.kind = 'sum';
                m.temporality = 0;
                m.monotonic = false;
                for (const dp of decodeFields(h.bytes!)) {
                  if (dp.field === 1) m.points.push(decodeNumberDataPoint(dp.bytes!));
                  else if (dp.field === 2) m.temporality = Number(dp.varint!);
                  else if (dp.field === 3) m.monotonic = dp.varint! !== 0n;
                }
              } else if (h.field === 9) m.kind = 'histogram';
            }
            scope.metrics.push(m);
          }
        }
        req.scopes.push(scope);
      }
    }
    out.push(req);
  }
  return out;
}

interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}

function jsonAttr(v: JsonAnyValue): AttrValue {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return '';
}

interface JsonDataPoint {
  attributes?: JsonKeyValue[];
  timeUnixNano?: string | number;
  asDouble?: number;
  asInt?: string | number;
}

/** The same request in OTLP/JSON (camelCase field names, int64 as strings). */
export function decodeMetricsRequestJson(text: string): DecodedMetricsRequest[] {
  const body = JSON.parse(text) as {
    resourceMetrics?: Array<{
      resource?: { attributes?: JsonKeyValue[] };
      scopeMetrics?: Array<{
        scope?: { name?: string };
        metrics?: Array<{
          name: string;
          description?: string;
          unit?: string;
          gauge?: { dataPoints?: JsonDataPoint[] };
          sum?: { dataPoints?: JsonDataPoint[]; aggregationTemporality?: number; isMonotonic?: boolean };
          histogram?: unknown;
        }>;
      }>;
    }>;
  };
  return (body.resourceMetrics ?? []).map((rm) => ({
    resourceAttributes: Object.fromEntries((rm.resource?.attributes ?? []).map((a) => [a.key, jsonAttr(a.value)])),
    scopes: (rm.scopeMetrics ?? []).map((sm) => ({
      name: sm.scope?.name ?? '',
      metrics: (sm.metrics ?? []).map((m) => ({
        name: m.name,
        description: m.description ?? '',
        unit: m.unit ?? '',
        kind: m.gauge ? ('gauge' as const) : m.sum ? ('sum' as const) : m.histogram ? ('histogram' as const) : ('other' as const),
        points: (m.gauge?.dataPoints ?? m.sum?.dataPoints ?? []).map((p) => ({
          attributes: Object.fromEntries((p.attributes ?? []).map((a) => [a.key, jsonAttr(a.value)])),
          value: p.asDouble ?? Number(p.asInt),
          timeUnixNano: BigInt(p.timeUnixNano ?? 0),
        })),
        ...(m.sum ? { temporality: m.sum.aggregationTemporality ?? 0, monotonic: m.sum.isMonotonic ?? false } : {}),
      })),
    })),
  }));
}
