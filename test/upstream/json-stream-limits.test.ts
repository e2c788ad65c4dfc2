// The reader's fast path (one JSON.parse per chunk up to its last '},{') and its memory limits
// (issue 10 point 4): strings over MAX_STRING_BYTES are dropped as they stream, records over
// MAX_RECORD_BYTES are not kept, a used field that long makes the record invalid.
import { describe, expect, it } from 'vitest';
import { AlertsSink } from '../../src/sources/alerts/fold.js';
import { memoryLogger } from '../../src/core/log.js';
import { InvalidResponseError } from '../../src/errors.js';
import { EnvelopeParser } from '../../src/upstream/json-stream.js';
import { MAX_RECORD_BYTES, MAX_STRING_BYTES, OversizedValue } from '../../src/upstream/limits.js';
import { encoder, parse, pieces } from '../support/json-stream.js';
import { exposedGc } from '../support/gc.js';
import { casesOr } from '../support/mutation.js';

const alert = (i: number, extra: Record<string, unknown> = {}) => ({
  state: ['Red', 'Amber', 'Green'][i % 3],
  product: `Integration ${i % 7}, Category`,
  status: 'Incident',
  item: `host-${i}`,
  issue: `Issue ${i}`,
  details: `Details of ${i}`,
  ownerName: i % 2 ? '' : 'Owner',
  timestamp: '2026-11-20T10:00:00.1234567',
  resolved: false,
  acknowledged: i % 4 === 0,
  inactiveUntil: '0001-01-01T00:00:00.0000000',
  ...extra,
});

const envelope = (data: unknown[]) => JSON.stringify({ offset: 0, limit: 0, total: data.length, data, success: true, statusCode: 200, message: 'ok' });

describe('EnvelopeParser fast path', () => {
  // Records that put '},{' where a cut must not be made: inside strings, escaped quotes before it, nested arrays of objects.
  const hostile = [
    ...Array.from({ length: 300 }, (_, i) => alert(i)),
    alert(300, { details: 'a "},{" inside a string', issue: '\\"},{\\"' }),
    alert(301, { nested: [{ a: 1 }, { b: [{ c: '},{' }, { d: 2 }] }], details: 'x\\' }),
    alert(302, { details: '}'.repeat(50) + '},{'.repeat(50) }),
    1,
    'a string record},{',
    [{ a: 1 }, { b: 2 }],
    null,
    ...Array.from({ length: 300 }, (_, i) => alert(400 + i, { nested: [{ k: i }, { k: -i }] })),
  ];
  const body = envelope(hostile);
  const expected = JSON.parse(body) as { data: unknown[] };

  it.each([1, 7, 61, 1000, 4096, 65536, 1 << 20])('gives the records JSON.parse gives, in chunks of %i bytes', (size) => {
    const { records, envelope: env } = parse(pieces(encoder.encode(body), size));
    expect(records).toHaveLength(hostile.length);
    expect(records).toEqual(expected.data);
    expect(env).toEqual({ offset: 0, limit: 0, total: hostile.length, success: true, statusCode: 200, message: 'ok', dataCount: hostile.length });
  });

  it("leaves the caller's chunks as they were", () => {
    const bytes = encoder.encode(body);
    const copy = Uint8Array.from(bytes);
    const chunks = pieces(bytes, 4096);
    expect(parse(chunks).records).toHaveLength(hostile.length);
    expect(Buffer.compare(bytes, copy)).toBe(0);
  });

  it('keeps giving records in order when the list is pretty-printed (no fast path)', () => {
    const pretty = JSON.stringify(JSON.parse(body), null, 2);
    expect(parse(pieces(encoder.encode(pretty), 4096)).records).toEqual(expected.data);
  });

  it('throws for a malformed record among valid ones, in any chunking', () => {
    const good = Array.from({ length: 200 }, (_, i) => JSON.stringify(alert(i)));
    const bad = `{"data":[${good.slice(0, 100).join(',')},{"state":tru},${good.slice(100).join(',')}],"total":201}`;
    for (const size of [17, 4096, 1 << 20]) {
      expect(() => parse(pieces(encoder.encode(bad), size))).toThrow(InvalidResponseError);
    }
  });

  it('throws for a body cut inside a record that the fast path would have parsed', () => {
    const good = Array.from({ length: 50 }, (_, i) => JSON.stringify(alert(i))).join(',');
    expect(() => parse([`{"total":51,"data":[${good},{"state":"Re`])).toThrow(InvalidResponseError);
  });
});

describe('EnvelopeParser memory limits', () => {
  const hugeText = (bytes: number) => 'The quick "brown" fox \\ jumps. '.repeat(Math.ceil(bytes / 30)).slice(0, bytes);

  it('drops a 2 MB unused string as it streams and keeps the rest of the record', () => {
    const text = hugeText(2 * 1024 * 1024);
    const data = [alert(0), alert(1, { issue: text }), alert(2)];
    const { records } = parse(pieces(encoder.encode(envelope(data)), 64 * 1024));
    expect(records).toHaveLength(3);
    expect(records[0]).toEqual(data[0]);
    expect(records[2]).toEqual(data[2]);
    const second = records[1] as Record<string, unknown>;
    expect(second.issue).toBeInstanceOf(OversizedValue);
    expect((second.issue as OversizedValue).bytes).toBe(encoder.encode(JSON.stringify(text)).length - 2);
    expect({ ...second, issue: undefined }).toEqual({ ...data[1], issue: undefined });
  });

  it('keeps a string of exactly MAX_STRING_BYTES and drops one byte more', () => {
    const detailsOf = (len: number) => (parse(pieces(encoder.encode(envelope([alert(0, { details: 'y'.repeat(len) })])), 1000)).records[0] as Record<string, unknown>).details;
    expect(detailsOf(MAX_STRING_BYTES)).toBe('y'.repeat(MAX_STRING_BYTES));
    expect(detailsOf(MAX_STRING_BYTES + 1)).toBeInstanceOf(OversizedValue);
  });

  it('keeps a string of exactly MAX_STRING_BYTES and drops one byte more when a chunk ends just before or after its closing quote', () => {
    for (const length of [MAX_STRING_BYTES, MAX_STRING_BYTES + 1]) {
      const data = [{ a: 1, details: 'y'.repeat(length), after: 'kept' }, { b: 2 }];
      const text = JSON.stringify({ total: 2, data });
      const bytes = encoder.encode(text);
      const close = text.indexOf('","after"');
      const expected = [{ ...data[0], details: length > MAX_STRING_BYTES ? new OversizedValue(length, 'string') : data[0]!.details }, { b: 2 }];
      for (const cut of [close - 2, close - 1, close, close + 1, close + 2]) {
        expect(parse([bytes.subarray(0, cut), bytes.subarray(cut)]).records, `${length} bytes, cut at ${cut - close} from the closing quote`).toEqual(expected);
      }
    }
  });

  it('ends an oversized string at the right quote when escapes straddle chunk edges', () => {
    const s = 'ab\\"cd\\\\'.repeat(20_000); // escaped quotes and backslashes, about 180 KB
    const data = [alert(0, { details: s, after: 'kept' }), alert(1)];
    for (const size of [3, 4095, 65536]) {
      const { records } = parse(pieces(encoder.encode(envelope(data)), size));
      expect(records).toHaveLength(2);
      expect((records[0] as Record<string, unknown>).details).toBeInstanceOf(OversizedValue);
      expect((records[0] as Record<string, unknown>).after).toBe('kept');
      expect(records[1]).toEqual(data[1]);
    }
  });

  it('delivers a record larger than MAX_RECORD_BYTES (in strings each under the limit) as an OversizedValue', () => {
    const many: Record<string, string> = {};
    const piece = 'z'.repeat(60_000);
    for (let k = 0; k * 60_000 <= MAX_RECORD_BYTES; k++) many[`f${k}`] = piece;
    const data = [alert(0), { ...alert(1), ...many }, alert(2)];
    const { records } = parse(pieces(encoder.encode(envelope(data)), 64 * 1024));
    expect(records).toHaveLength(3);
    expect(records[1]).toBeInstanceOf(OversizedValue);
    expect((records[1] as OversizedValue).what).toBe('record');
    expect(records[2]).toEqual(data[2]);
  });

  // The parser may keep views of the caller's chunks: which of them it still holds shows what it keeps.
  /** Writes `count` fresh chunks of `bytes` bytes of `fill`; returns weak references to their memory. */
  const writeChunks = (parser: EnvelopeParser, count: number, bytes: number, fill: (k: number) => string) =>
    Array.from({ length: count }, (_, k) => {
      const chunk = encoder.encode(fill(k).repeat(bytes / fill(k).length));
      parser.write(chunk);
      return new WeakRef(chunk.buffer);
    });
  const held = async (refs: Array<WeakRef<ArrayBufferLike>>, gc: () => void) => {
    // (A weak reference made in this job stays set until the job ends.)
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    return refs.flatMap((ref, k) => (ref.deref() === undefined ? [] : [k]));
  };

  it('holds no chunk of a string once it is over the limit, while it streams', async () => {
    const gc = exposedGc();
    const parser = new EnvelopeParser('/alerts', () => undefined);
    parser.write('{"total":1,"data":[{"a":1,"s":"');
    // 16 KiB chunks: the string is over MAX_STRING_BYTES in the fifth, the sixth is dropped as it comes.
    const refs = writeChunks(parser, 6, 16 * 1024, () => 'x');
    expect(await held(refs, gc)).toEqual([]);
    parser.write('","b":2}]}');
    expect(parser.end().dataCount).toBe(1);
  });

  it('holds no chunk of a record once it is over MAX_RECORD_BYTES, while it streams', async () => {
    const gc = exposedGc();
    const parser = new EnvelopeParser('/alerts', () => undefined);
    parser.write('{"total":1,"data":[{"a":1');
    // Members of 64 KiB (strings under the limit) in 64 KiB chunks: the record is over the limit in the seventeenth.
    const member = (k: number) => `,"f${String(k).padStart(4, '0')}":"${'z'.repeat(64 * 1024 - 11 - 3)}"`;
    expect(Buffer.byteLength(member(0))).toBe(64 * 1024 - 3);
    const refs = writeChunks(parser, 20, 64 * 1024 - 3, member);
    expect(await held(refs, gc)).toEqual([]);
    parser.write('}]}');
    expect(parser.end().dataCount).toBe(1);
  });

  it('does not keep an oversized envelope message', () => {
    const body = JSON.stringify({ total: 1, data: [alert(0)], message: hugeText(300_000) });
    const { envelope: env } = parse(pieces(encoder.encode(body), 64 * 1024));
    expect(env.message).toBeInstanceOf(OversizedValue);
    expect(env.total).toBe(1);
  });

  it('streams a 64 MB string past with the heap near the chunk size', () => {
    const gc = exposedGc();
    let count = 0;
    const parser = new EnvelopeParser('/alerts', () => count++);
    gc();
    const baseline = process.memoryUsage().heapUsed;
    const head = JSON.stringify(alert(0)).slice(0, -1) + ',"issue2":"';
    parser.write(`{"total":2,"data":[${JSON.stringify(alert(1))},${head}`);
    const piece = encoder.encode('x'.repeat(64 * 1024));
    let peak = 0;
    for (let i = 0; i < 1024; i++) {
      parser.write(piece);
      // What the parser holds, not garbage the collector has yet to reach (it lags on a busy machine).
      if (i % 64 === 0) {
        gc();
        peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
      }
    }
    parser.write('"}],"success":true}');
    expect(parser.end().dataCount).toBe(2);
    expect(count).toBe(2);
    expect(peak).toBeLessThan(16 * 1024 * 1024);
  });

  it('makes an alert invalid (counted, logged) when a used field is over the limit, whatever the chunking', () => {
    for (const size of [64 * 1024, 4 * 1024 * 1024]) {
      const logger = memoryLogger();
      const sink = new AlertsSink(Date.UTC(2026, 10, 22) / 1000, logger);
      const data = [alert(0), alert(1, { state: 'R'.repeat(2 * 1024 * 1024) }), alert(2, { issue: hugeText(2 * 1024 * 1024) })];
      const parser = new EnvelopeParser('/alerts', (r) => sink.record(r));
      for (const c of pieces(encoder.encode(envelope(data)), size)) parser.write(c);
      parser.end();
      const agg = sink.finish();
      expect(agg.invalid).toBe(1);
      expect(agg.open.red! + agg.open.amber! + agg.open.green!).toBe(2);
      const warnings = logger.records().filter((l) => l.msg === 'skipped a malformed record');
      expect(warnings).toHaveLength(1);
      expect(JSON.stringify(warnings[0])).toMatch(/"reason":"state: expected string, received a string of more than 65536 bytes \(2097152 bytes or more\), not kept/);
    }
  });
});

describe('EnvelopeParser limits are the same whatever the chunking', () => {
  // Every chunking: one byte at a time, odd sizes, network sizes, and the whole body in one chunk.
  // (One byte at a time is a million writes for the largest bodies here: left out under mutation testing.)
  const sizes = [1, 7, 4095, 16 * 1024, 64 * 1024, 1 << 20, Infinity].slice(casesOr(0, 1));
  const each = (body: string, check: (records: unknown[]) => void) => {
    const bytes = encoder.encode(body);
    for (const size of sizes) check(parse(size === Infinity ? [bytes] : pieces(bytes, size)).records);
  };
  const field = (r: unknown, k: string) => (r as Record<string, unknown>)[k];

  it('counts a string in UTF-8 bytes as received: 30,000 × "数" (90,000 bytes) is dropped, 21,845 (65,535 bytes) kept', () => {
    each(envelope([alert(0, { product: '数'.repeat(30_000) }), alert(1, { product: '数'.repeat(21_845) })]), (records) => {
      expect(field(records[0], 'product')).toEqual(new OversizedValue(90_000, 'string'));
      expect(field(records[1], 'product')).toBe('数'.repeat(21_845));
    });
  });

  it('makes an alert with 30,000 × "数" in product invalid with 1 MiB chunks as with 16 KiB chunks', () => {
    const body = encoder.encode(envelope([alert(0, { product: '数'.repeat(30_000) }), alert(1)]));
    for (const size of [1 << 20, 16 * 1024]) {
      const sink = new AlertsSink(Date.UTC(2026, 10, 22) / 1000);
      const parser = new EnvelopeParser('/alerts', (r) => sink.record(r));
      for (const c of pieces(body, size)) parser.write(c);
      parser.end();
      expect(sink.finish().invalid).toBe(1);
    }
  });

  it('counts escapes as sent: 10,923 × "\\u0000" (65,538 bytes, 10,923 characters) is dropped, 10,922 kept', () => {
    const raw = (n: number) => `{"details":"${'\\u0000'.repeat(n)}","k":1}`;
    each(`{"total":2,"data":[${raw(10_923)},${raw(10_922)}]}`, (records) => {
      expect(field(records[0], 'details')).toEqual(new OversizedValue(65_538, 'string'));
      expect(field(records[1], 'details')).toBe('\u0000'.repeat(10_922));
      expect(field(records[0], 'k')).toBe(1);
    });
  });

  it('keeps a string of exactly MAX_STRING_BYTES multi-byte bytes and drops one byte more', () => {
    const s = '€'.repeat((MAX_STRING_BYTES - 1) / 3) + 'a'; // 65,536 bytes
    each(envelope([alert(0, { details: s }), alert(1, { details: s + 'c' })]), (records) => {
      expect(field(records[0], 'details')).toBe(s);
      expect(field(records[1], 'details')).toBeInstanceOf(OversizedValue);
    });
  });

  it('delivers a record over MAX_RECORD_BYTES as an OversizedValue even when one chunk holds it whole', () => {
    const many: Record<string, string> = {};
    for (let k = 0; k < 20; k++) many[`f${k}`] = 'z'.repeat(60_000);
    each(envelope([alert(0), { ...alert(1), ...many }, alert(2)]), (records) => {
      expect(records).toHaveLength(3);
      expect(records[1]).toBeInstanceOf(OversizedValue);
      expect((records[1] as OversizedValue).what).toBe('record');
      expect(records[2]).toEqual(alert(2));
    });
  });

  it('does not count a dropped string toward the record limit, whatever the chunking', () => {
    // 1,000,000 bytes of kept fields, then a 200,000-byte string: kept with a stand-in, never a whole-record drop.
    const many: Record<string, string> = {};
    for (let k = 0; k < 20; k++) many[`f${k}`] = 'z'.repeat(50_000);
    each(envelope([{ ...alert(0), ...many, huge: 'q'.repeat(200_000), after: 'kept' }]), (records) => {
      expect(records[0]).not.toBeInstanceOf(OversizedValue);
      expect(field(records[0], 'huge')).toEqual(new OversizedValue(200_000, 'string'));
      expect(field(records[0], 'after')).toBe('kept');
      expect(field(records[0], 'f19')).toBe('z'.repeat(50_000));
    });
  });

  it('keeps portal text shaped like the stand-in of an oversized string as it is', () => {
    each(envelope([alert(0, { details: 'd'.repeat(MAX_STRING_BYTES + 1), spoof: { '\u0000oversized': 7 }, blank: { '': 3 } })]), (records) => {
      expect(field(records[0], 'details')).toBeInstanceOf(OversizedValue);
      expect(field(records[0], 'spoof')).toEqual({ '\u0000oversized': 7 });
      expect(field(records[0], 'blank')).toEqual({ '': 3 });
    });
  });

  it('keeps an envelope message of exactly MAX_STRING_BYTES bytes and drops one byte more', () => {
    const messageOf = (len: number, size: number) => parse(pieces(encoder.encode(JSON.stringify({ total: 0, data: [], message: 'm'.repeat(len) })), size)).envelope.message;
    for (const size of [1000, 1 << 20]) {
      expect(messageOf(MAX_STRING_BYTES, size)).toBe('m'.repeat(MAX_STRING_BYTES));
      expect(messageOf(MAX_STRING_BYTES + 1, size)).toBeInstanceOf(OversizedValue);
    }
  });
});
