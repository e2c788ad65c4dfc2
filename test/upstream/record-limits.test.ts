/**
 * The record limit of src/upstream/limits.ts at its edge: a record of exactly MAX_RECORD_BYTES
 * bytes is kept and one byte more is not, counting neither a dropped string nor its quotes, in one
 * chunk or in many; and records that the byte splitter reads (no `},{` for the fast path) with
 * escapes and backslashes wherever a chunk starts. Sizes are counted on the text sent.
 */
import { describe, expect, it } from 'vitest';
import { MAX_RECORD_BYTES, MAX_STRING_BYTES, OversizedValue } from '../../src/upstream/limits.js';
import { encoder, parse, pieces } from '../support/json-stream.js';

const FIELD = 60_000;

/** A record of string fields each under the string limit, whose JSON text is exactly `bytes` bytes long. */
function recordOf(bytes: number): Record<string, string> {
  const record: Record<string, string> = {};
  // `{}`, then per field `"fN":"…"` and a comma before every field but the first.
  let length = 2;
  const size = (k: number, value: number) => (k > 0 ? 1 : 0) + Buffer.byteLength(`"f${k}":""`) + value;
  let k = 0;
  while (length + size(k, FIELD) + size(k + 1, 0) < bytes) {
    record[`f${k}`] = 'z'.repeat(FIELD);
    length += size(k++, FIELD);
  }
  record[`f${k}`] = 'z'.repeat(bytes - length - size(k, 0));
  expect(Buffer.byteLength(JSON.stringify(record))).toBe(bytes);
  return record;
}

const body = (data: unknown[]) => JSON.stringify({ total: data.length, data });
const chunkings = (text: string) => {
  const bytes = encoder.encode(text);
  return [[bytes], pieces(bytes, 16 * 1024)];
};

describe('the record limit at its edge', () => {
  it('keeps a record of exactly MAX_RECORD_BYTES bytes and refuses one byte more, saying its size', () => {
    const exact = recordOf(MAX_RECORD_BYTES);
    const over = recordOf(MAX_RECORD_BYTES + 1);
    for (const chunks of chunkings(body([exact, over, { after: 1 }]))) {
      const { records } = parse(chunks);
      expect(records[0]).toEqual(exact);
      expect(records[1]).toEqual(new OversizedValue(MAX_RECORD_BYTES + 1, 'record'));
      expect(records[2]).toEqual({ after: 1 });
    }
  });

  it('does not count a dropped string or its quotes toward the record limit', () => {
    const dropped = 'q'.repeat(MAX_STRING_BYTES + 5);
    // The rest of the record (the dropped string's member name and colon included, its quotes not) is the limit exactly, then one byte more.
    const withDropped = (rest: number) => ({ ...recordOf(rest - Buffer.byteLength(',"big":')), big: dropped });
    const exact = withDropped(MAX_RECORD_BYTES);
    const over = withDropped(MAX_RECORD_BYTES + 1);
    expect(Buffer.byteLength(JSON.stringify(exact)) - Buffer.byteLength(`"${dropped}"`)).toBe(MAX_RECORD_BYTES);
    for (const chunks of chunkings(body([exact, over]))) {
      const { records } = parse(chunks);
      expect(records[0]).toEqual({ ...exact, big: new OversizedValue(MAX_STRING_BYTES + 5, 'string') });
      expect(records[1]).toBeInstanceOf(OversizedValue);
      expect((records[1] as OversizedValue).what).toBe('record');
    }
  });

  it('keeps a record of exactly MAX_RECORD_BYTES that starts after another and is carried across a chunk edge outside a string', () => {
    const exact = recordOf(MAX_RECORD_BYTES);
    const text = body([{ first: 1 }, exact]);
    const bytes = encoder.encode(text);
    // The chunk ends just before the record's closing brace (outside any string), then just before the comma of its last member.
    const end = text.lastIndexOf('}]');
    const lastMember = text.lastIndexOf(',"f');
    for (const cut of [end, lastMember]) {
      expect(parse([bytes.subarray(0, cut), bytes.subarray(cut)]).records, `cut at ${cut}`).toEqual([{ first: 1 }, exact]);
    }
  });

  it('keeps a record of exactly MAX_RECORD_BYTES after a dropped string when a chunk ends inside its last string', () => {
    const dropped = 'q'.repeat(MAX_STRING_BYTES + 5);
    // {"big":"…", <fields>, "t":"ab"}: counted without the dropped string's bytes and quotes.
    const fields = recordOf(MAX_RECORD_BYTES - Buffer.byteLength('{"big":,,"t":"ab"}') + 2);
    const record = { big: dropped, ...fields, t: 'ab' };
    expect(Buffer.byteLength(JSON.stringify(record)) - Buffer.byteLength(`"${dropped}"`)).toBe(MAX_RECORD_BYTES);
    const text = body([record]);
    const bytes = encoder.encode(text);
    const inside = text.lastIndexOf('b"}');
    for (const cut of [inside - 1, inside]) {
      expect(parse([bytes.subarray(0, cut), bytes.subarray(cut)]).records, `cut at ${cut}`).toEqual([{ ...record, big: new OversizedValue(MAX_STRING_BYTES + 5, 'string') }]);
    }
  });

  it('counts a dropped string that opens in one chunk and closes in a later one', () => {
    const data = [{ a: 'x'.repeat(100), big: 'q'.repeat(3 * MAX_STRING_BYTES), b: 'y'.repeat(100) }, { c: 1 }];
    const text = body(data);
    const open = text.indexOf('"qq');
    const bytes = encoder.encode(text);
    const expected = [{ ...data[0], big: new OversizedValue(3 * MAX_STRING_BYTES, 'string') }, { c: 1 }];
    for (const cut of [open - 1, open, open + 1, open + 2]) {
      expect(parse([bytes.subarray(0, cut), ...pieces(bytes.subarray(cut), MAX_STRING_BYTES / 2)]).records, `cut at ${cut - open} from the opening quote`).toEqual(expected);
      // The next chunk holds the whole string.
      expect(parse([bytes.subarray(0, cut), bytes.subarray(cut)]).records, `one cut at ${cut - open} from the opening quote`).toEqual(expected);
    }
  });
});

describe('records the byte splitter reads', () => {
  // `}, {` between records: no `},{` for the fast path, so every record goes through the splitter.
  const data = [
    { s: 'a\\"b', t: '\\\\', u: '"}]' },
    { s: '\\\\\\"', n: [1, { m: '\\"' }], e: '' },
    { s: 'end\\', k: '\\\\"\\\\' },
    'a string record with \\" and }',
    42,
    [{ x: '\\' }, '"'],
    { last: true },
  ];
  const text = `{"total":${data.length},"data":[${data.map((r) => JSON.stringify(r)).join(', ')}]}`;

  it('gives the records JSON.parse gives wherever a cut falls, and whatever two bytes a chunk starts with', () => {
    const expected = JSON.stringify((JSON.parse(text) as { data: unknown[] }).data);
    const bytes = encoder.encode(text);
    const chunkings: Uint8Array[][] = [];
    for (let at = 0; at <= bytes.length; at++) chunkings.push([bytes.subarray(0, at), bytes.subarray(at)]);
    for (const size of [1, 2, 3]) {
      for (let first = 1; first <= size; first++) chunkings.push([bytes.subarray(0, first), ...pieces(bytes.subarray(first), size)]);
    }
    // Compared as JSON text, the wrong ones named: one deep comparison per chunking would be most of the time.
    const wrong = chunkings.filter((chunks) => JSON.stringify(parse(chunks).records) !== expected).map((chunks) => chunks.map((c) => c.length).join('+'));
    expect(wrong).toEqual([]);
  });
});
