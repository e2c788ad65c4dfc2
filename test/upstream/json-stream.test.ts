import { describe, expect, it } from 'vitest';
import { InvalidResponseError } from '../../src/errors.js';
import { EnvelopeParser, type RawEnvelope } from '../../src/upstream/json-stream.js';
import { encoder, parse, pieces } from '../support/json-stream.js';
import { exposedGc } from '../support/gc.js';

/** What JSON.parse of the whole body says: the reference result. */
function reference(body: string): { records: unknown[]; envelope: RawEnvelope } {
  const whole = JSON.parse(body) as Record<string, unknown> & { data?: unknown[] };
  const envelope: RawEnvelope = { dataCount: whole.data?.length ?? 0 };
  for (const k of ['offset', 'limit', 'total', 'success', 'statusCode', 'message'] as const) if (k in whole) envelope[k] = whole[k];
  return { records: whole.data ?? [], envelope };
}

const tricky = {
  item: 'laptop-"42" {x} [y]',
  details: 'path C:\\temp\\ and \\"quoted\\" and a } and a ]',
  nested: { a: [1, [2, [3, { b: '}]' }]], {}], e: [], f: {} },
  unicode: 'Zürich – 東京 😀 \u0000\u001f\u2028',
  // The last one is past 2^53 on purpose: the stream must parse it as JSON.parse does.
  // eslint-disable-next-line no-loss-of-precision
  numbers: [0, -1.5e-3, 1e21, 12345678901234567890],
  flags: [true, false, null],
};

const bodies: Array<[string, string]> = [
  ['envelope before data', JSON.stringify({ offset: 0, limit: 0, total: 2, success: true, statusCode: 200, message: 'Successfully retrieved alerts.', data: [{ a: 1 }, { a: 2 }] })],
  ['total and success after data', JSON.stringify({ data: [{ a: 1 }, { a: 2 }, { a: 3 }], total: 3, success: true, offset: 0, limit: 0 })],
  ['data between envelope fields', JSON.stringify({ success: true, data: [{ a: 1 }], message: 'ok', total: 1 })],
  ['pretty printed with CRLF and tabs', JSON.stringify({ total: 2, data: [{ a: [1, 2] }, { b: { c: 'd' } }], success: true }, null, '\t').replace(/\n/g, '\r\n')],
  ['brackets, braces and escaped quotes inside strings', JSON.stringify({ total: 2, data: [tricky, { ...tricky, item: '\\' }] })],
  ['escapes written as \\u sequences', '{"total":1,"data":[{"s":"\\u0041\\ud83d\\ude00\\\\\\"\\/\\b\\f\\n\\r\\t"}],"message":"caf\\u00e9"}'],
  ['empty data', JSON.stringify({ offset: 0, limit: 0, total: 0, data: [], success: true })],
  ['empty data with spaces', '{ "total" : 0 , "data" : [ ] }'],
  ['records that are not objects', JSON.stringify({ total: 5, data: [1, 'two', null, [3], false] })],
  ['unknown members, including large nested ones, are skipped', JSON.stringify({ meta: { x: ['}', ']', { y: '"' }], n: 5 }, extra: 'a"b', total: 1, data: [{ ok: true }], tail: [1, 2, 3], last: -4.5e10 })],
  ['no data member at all', JSON.stringify({ success: false, statusCode: 500, message: 'Internal error' })],
  ['a byte order mark', '\ufeff' + JSON.stringify({ total: 1, data: [{ a: 1 }] })],
  ['trailing whitespace', JSON.stringify({ total: 1, data: [{ a: 1 }] }) + '\n \r\n'],
  ['envelope fields of unexpected types are passed through', JSON.stringify({ total: '5', success: 'yes', offset: null, limit: [1], data: [] })],
  ['a "data" key that appears inside a record', JSON.stringify({ total: 1, data: [{ data: [{ not: 'a record' }] }] })],
  ['an empty object', '{}'],
  ['an empty object with spaces', '{ \r\n\t }'],
  ['an empty key first', '{"":"","total":1,"data":[{"":1}]}'],
];

describe('EnvelopeParser', () => {
  it.each(bodies)('parses %s', (_name, body) => {
    const expected = reference(body.replace(/^\ufeff/, ''));
    expect(parse([body])).toEqual(expected);
    // The same body fed a byte at a time (as bytes) gives the same result.
    expect(parse(pieces(encoder.encode(body), 1))).toEqual(expected);
    expect(parse(pieces(encoder.encode(body), 7))).toEqual(expected);
  });

  it('delivers each record as soon as it is complete', () => {
    const seen: unknown[] = [];
    const parser = new EnvelopeParser('/alerts', (r) => seen.push(r));
    parser.write('{"data":[{"a":1},{"a"');
    expect(seen).toEqual([{ a: 1 }]);
    parser.write(':2}');
    expect(seen).toEqual([{ a: 1 }, { a: 2 }]);
    parser.write('],"total":2}');
    expect(parser.end()).toEqual({ total: 2, dataCount: 2 });
  });

  it('handles multi-byte UTF-8 split at every byte offset', () => {
    const body = JSON.stringify({ total: 2, message: 'é 中 😀', data: [{ name: 'Zürich 東京 😀🏳️‍🌈', s: '"\\"' }, { x: 'ÿ€𝄞' }] });
    const bytes = encoder.encode(body);
    const expected = reference(body);
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(parse([bytes.subarray(0, cut), bytes.subarray(cut)]), `cut at byte ${cut}`).toEqual(expected);
    }
    for (let a = 1; a < 40; a += 3) {
      for (let b = a + 1; b < bytes.length; b += 11) {
        expect(parse([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)])).toEqual(expected);
      }
    }
  });

  it.each([
    ['an empty body', ''],
    ['only whitespace', '  \n'],
    ['a top-level array', '[{"a":1}]'],
    ['a top-level string', '"hello"'],
    ['an HTML error page', '<html><body>Bad gateway</body></html>'],
    ['data that is an object', '{"data":{"a":1}}'],
    ['data that is a string', '{"data":"[]"}'],
    ['data that is null', '{"data":null}'],
    ['a trailing comma in data', '{"data":[{"a":1},]}'],
    ['a leading comma in data', '{"data":[,{"a":1}]}'],
    ['mismatched brackets in a record', '{"data":[{"a":[1}]}'],
    ['a bad literal in a record', '{"data":[{"a":tru}]}'],
    ['a bare word as a record', '{"data":[hello]}'],
    ['a missing colon', '{"total" 1,"data":[]}'],
    ['a double comma between members', '{"total":1,,"data":[]}'],
    ['an unquoted key', '{total:1,"data":[]}'],
    ['a bad number in the envelope', '{"total":01,"data":[]}'],
    ['a bad literal in a skipped member', '{"extra":nul,"data":[]}'],
    ['mismatched brackets in a skipped member', '{"extra":[1,2},"data":[]}'],
    ['a control character in a record string', '{"data":[{"a":"x\ny"}]}'],
    ['text after the object', '{"data":[]} {}'],
    ['two objects', '{}{}'],
    ['a body cut inside a record', '{"total":2,"data":[{"a":1},{"a":'],
    ['a body cut inside a string', '{"data":[{"a":"abc'],
    ['a body cut after the data array', '{"data":[{"a":1}]'],
    ['a body cut after a number', '{"total":12'],
    ['a body cut inside a key', '{"tot'],
  ])('throws InvalidResponseError for %s', (_name, body) => {
    const err = (() => {
      try {
        parse([body]);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as InvalidResponseError).endpoint).toBe('/alerts');
    expect((err as Error).message).toContain('/alerts');
  });

  it('reads a record that starts a chunk and holds a `},{` in a string, whether a chunk starts at it or a byte into it', () => {
    const body = '{"total":1,"data":[{"s":"},{"}]}';
    const expected = reference(body);
    const at = body.indexOf('{"s"');
    expect(parse([body.slice(0, at), body.slice(at)])).toEqual(expected);
    expect(parse([body.slice(0, at + 1), body.slice(at + 1)])).toEqual(expected);
  });

  it('keeps failing after an error', () => {
    const parser = new EnvelopeParser('/vitals', () => {});
    expect(() => parser.write('{"data":[}')).toThrow(InvalidResponseError);
    expect(() => parser.write(']}')).toThrow(InvalidResponseError);
    expect(() => parser.end()).toThrow(InvalidResponseError);
  });

  it("passes the record callback's own errors through unchanged", () => {
    class SinkFull extends Error {}
    const parser = new EnvelopeParser('/alerts', () => {
      throw new SinkFull('too many');
    });
    expect(() => parser.write('{"data":[{"a":1}]}')).toThrow(SinkFull);
  });

  it('streams 100,000 records of ~700 bytes in chunks with flat memory', () => {
    const gc = exposedGc();
    const filler = 'x'.repeat(590);
    const record = (i: number) =>
      JSON.stringify({ itemId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, state: 'Red', issue: `Issue ${i} {"]`, details: filler, resolved: i % 2 === 0 });
    const COUNT = 100_000;
    let count = 0;
    let resolved = 0;
    const parser = new EnvelopeParser('/alerts', (r) => {
      count++;
      if ((r as { resolved: boolean }).resolved) resolved++;
    });
    gc();
    const baseline = process.memoryUsage().heapUsed;
    let peak = 0;
    let nextSample = 10_000;
    let bodyBytes = 0;
    let pending = '{"offset":0,"limit":0,"data":[';
    for (let i = 0; i < COUNT; i++) {
      pending += (i ? ',' : '') + record(i);
      if (pending.length >= 64 * 1024) {
        const bytes = encoder.encode(pending);
        bodyBytes += bytes.length;
        parser.write(bytes);
        pending = '';
        // What the parser still holds, every 10,000 records, garbage collected first (without the
        // collect the figure is mostly chunks already parsed, as much as V8 lets pile up).
        if (i >= nextSample) {
          gc();
          peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
          nextSample += 10_000;
        }
      }
    }
    pending += `],"total":${COUNT},"success":true}`;
    bodyBytes += pending.length;
    parser.write(encoder.encode(pending));
    const envelope = parser.end();
    expect(count).toBe(COUNT);
    expect(resolved).toBe(COUNT / 2);
    expect(envelope).toEqual({ offset: 0, limit: 0, total: COUNT, success: true, dataCount: COUNT });
    expect(bodyBytes).toBeGreaterThan(70_000_000);
    // Holding the body (or the records) would cost well over 70 MB; streaming holds about a chunk and
    // a batch (about 0.2 MB here).
    expect(peak).toBeLessThan(4 * 1024 * 1024);
  });
});
