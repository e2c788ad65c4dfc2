/**
 * The fast path on its own (the stream parser falls back to the splitter whenever it declines, so
 * its output alone cannot show that the fast path did its part): at a record start, the records up
 * to the last `},{` within 64 KiB, in one parse, or a refusal the splitter can recover from.
 */
import { describe, expect, it } from 'vitest';
import { parseWhole } from '../../src/upstream/fast-path.js';
import { MAX_STRING_BYTES } from '../../src/upstream/limits.js';

/** The array body `text` as bytes, and the index of its first record (after the `[`). */
const body = (text: string) => ({ buf: Buffer.from(text, 'utf8'), i: 1 });

describe('parseWhole', () => {
  it('parses every record before the last `},{` and resumes at the record after it', () => {
    const text = '[{"a":1},{"b":[2,3]},{"c":"x"},{"d":4}]';
    const { buf, i } = body(text);
    expect(parseWhole(buf, i)).toEqual({ records: [{ a: 1 }, { b: [2, 3] }, { c: 'x' }], resume: text.indexOf('{"d"') });
  });

  it('starts at the record start it is given, past records already read', () => {
    const text = '[{"a":1},{"b":2},{"c":3},{"d":4}]';
    const buf = Buffer.from(text);
    expect(parseWhole(buf, text.indexOf('{"b"'))).toEqual({ records: [{ b: 2 }, { c: 3 }], resume: text.indexOf('{"d"') });
  });

  it('reads UTF-8 text in the records whole', () => {
    const text = '[{"p":"数据 😀"},{"p":"é"},{"p":"z"}]';
    const { buf, i } = body(text);
    expect(parseWhole(buf, i)).toEqual({ records: [{ p: '数据 😀' }, { p: 'é' }], resume: Buffer.byteLength(text.slice(0, text.indexOf('{"p":"z"'))) });
  });

  it('declines (undefined) when there is no `},{` after the record start: one record, or the last', () => {
    expect(parseWhole(Buffer.from('[{"a":1}]'), 1)).toBeUndefined();
    expect(parseWhole(Buffer.from('[{"a":1},{"b":2}'), 1 + '{"a":1},'.length)).toBeUndefined();
    expect(parseWhole(Buffer.from('[{"a":1'), 1)).toBeUndefined();
  });

  it('passes over a `},{` inside a string to the one before it', () => {
    const text = '[{"a":1},{"s":"},{"},{"b":2}';
    // Cuts: after {"a":1} (real), inside the string (not), after the string's record (real, the last).
    const { buf, i } = body(text);
    expect(parseWhole(buf, i)).toEqual({ records: [{ a: 1 }, { s: '},{' }], resume: text.indexOf('{"b"') });
    const inside = '[{"a":1},{"s":"},{"}';
    expect(parseWhole(Buffer.from(inside), 1)).toEqual({ records: [{ a: 1 }], resume: inside.indexOf('{"s"') });
  });

  it('tries three cuts at most, the last three: a fourth is left to the splitter (failed)', () => {
    // Two cuts inside the string, then the real one: the third try parses.
    const two = '[{"a":1},{"s":"},{},{"}';
    expect(parseWhole(Buffer.from(two), 1)).toEqual({ records: [{ a: 1 }], resume: two.indexOf('{"s"') });
    // Three inside the string: the real cut would be the fourth try.
    const three = '[{"a":1},{"s":"},{},{},{"}';
    expect(parseWhole(Buffer.from(three), 1)).toBe('failed');
  });

  it('fails when no cut gives valid JSON, as inside a string that never ends', () => {
    expect(parseWhole(Buffer.from('[{"s":"},{"}'), 1)).toBe('failed');
  });

  it('parses at most 64 KiB: a cut whose `}` is the window\'s last byte is taken, one byte later is not', () => {
    const record = (bytes: number) => `{"s":"${'x'.repeat(bytes - 8)}"}`;
    // The first record's `}` is at i + length - 1: the window holds i .. i + MAX_STRING_BYTES - 1.
    const fits = `[${record(MAX_STRING_BYTES)},{"b":2},`;
    const result = parseWhole(Buffer.from(fits), 1);
    expect(result).toEqual({ records: [{ s: 'x'.repeat(MAX_STRING_BYTES - 8) }], resume: 1 + MAX_STRING_BYTES + 1 });
    const over = `[${record(MAX_STRING_BYTES + 1)},{"b":2},`;
    expect(parseWhole(Buffer.from(over), 1)).toBeUndefined();
  });

  it('never parses past the window even when later records would fit the buffer', () => {
    const small = '{"a":1}';
    const big = `{"s":"${'y'.repeat(MAX_STRING_BYTES)}"}`;
    const text = `[${small},${big},{"c":3}]`;
    expect(parseWhole(Buffer.from(text), 1)).toEqual({ records: [{ a: 1 }], resume: 1 + small.length + 1 });
  });

  it('takes a `},{` that ends the buffer, as a chunk may end there, and one whose `}` is the window\'s last byte after an earlier one', () => {
    const text = '[{"a":1},{"b":2},{';
    expect(parseWhole(Buffer.from(text), 1)).toEqual({ records: [{ a: 1 }, { b: 2 }], resume: text.lastIndexOf('{') });
    const small = '{"a":1}';
    // The second record's `}` is byte i + MAX_STRING_BYTES - 1, the window's last.
    const edge = `{"s":"${'x'.repeat(MAX_STRING_BYTES - small.length - 1 - 8)}"}`;
    const long = `[${small},${edge},{"c":3},{"d":4}]`;
    expect(long.indexOf('},{"c"')).toBe(1 + MAX_STRING_BYTES - 1);
    expect(parseWhole(Buffer.from(long), 1)).toEqual({ records: [{ a: 1 }, JSON.parse(edge)], resume: 1 + MAX_STRING_BYTES + 1 });
  });

  it('fails rather than try a cut past the window when the one within it is inside a string', () => {
    // The only `},{` in the window is inside the first record's string, which ends past the window; valid cuts come after.
    const text = `[{"s":"},{${'x'.repeat(MAX_STRING_BYTES)}"},{"b":2},{"c":3}]`;
    expect(parseWhole(Buffer.from(text), 1)).toBe('failed');
  });
});
