/**
 * The envelope's own values (spec 2.1: offset, limit, total, success, statusCode, message) and the
 * members the exporter does not read, as EnvelopeParser keeps or skips them: nested values whose
 * strings hold brackets and escaped quotes, the 64 KiB limit of src/upstream/limits.ts counted in
 * bytes between the quotes wherever a chunk ends, and values too large to keep.
 */
import { describe, expect, it } from 'vitest';
import { MAX_RECORD_BYTES, MAX_STRING_BYTES, OversizedValue } from '../../src/upstream/limits.js';
import { encoder, parse, pieces } from '../support/json-stream.js';

/** The body cut into two pieces before byte `at`. */
const cutAt = (body: string, at: number) => [body.slice(0, at), body.slice(at)];

describe('envelope values', () => {
  it('keeps nested envelope values whole, with brackets and escaped quotes inside their strings, at every cut', () => {
    const body = JSON.stringify({
      offset: { a: ['}', ']', '{', '['], b: { c: '"}]' } },
      limit: ['x\\"]', { y: '\\' }, [[], {}], 'end'],
      message: 'said "}" \\ and ]',
      skipped: { d: ['"]', '\\"}'] },
      total: 1,
      data: [{ k: 1 }],
    });
    const whole = JSON.parse(body) as Record<string, unknown>;
    const expected = { offset: whole.offset, limit: whole.limit, message: whole.message, total: 1, dataCount: 1 };
    for (let at = 0; at <= body.length; at++) {
      expect(parse(cutAt(body, at)).envelope, `cut at ${at}`).toEqual(expected);
    }
  });

  it('checks an unread member for its brackets only, so text JSON.parse would refuse in it is let through', () => {
    const body = '{"extra":"a raw\nline break and \\x","total":1,"data":[]}';
    expect(parse([body]).envelope).toEqual({ total: 1, dataCount: 0 });
    expect(() => JSON.parse(body)).toThrow(SyntaxError);
  });

  it('takes a key too long to keep for no envelope member', () => {
    const body = `{"${'k'.repeat(MAX_STRING_BYTES + 1)}":5,"total":2,"data":[]}`;
    expect(parse([body]).envelope).toEqual({ total: 2, dataCount: 0 });
  });

  it('reads the last of a repeated envelope member', () => {
    expect(parse(['{"total":1,"data":[],"total":2,"message":"a","message":"b"}']).envelope).toEqual({ total: 2, message: 'b', dataCount: 0 });
  });

  it('leaves out members it does not read, however large, and reads the ones after them', () => {
    const big = { list: Array.from({ length: 4_000 }, (_, i) => ({ i, s: `v${i}` })) };
    const body = JSON.stringify({ meta: big, note: 'x'.repeat(70_000), n: 1e300, total: 3, data: [], success: true });
    expect(JSON.stringify(big).length).toBeGreaterThan(MAX_STRING_BYTES);
    for (const size of [4096, 1 << 20]) {
      expect(parse(pieces(encoder.encode(body), size)).envelope).toEqual({ total: 3, success: true, dataCount: 0 });
    }
  });
});

describe('the size limit of envelope values', () => {
  const withMessage = (len: number) => JSON.stringify({ total: 0, data: [], message: 'm'.repeat(len) });
  /** Where the message's opening quote is. */
  const opening = (body: string) => body.indexOf(':"m') + 1;

  it('keeps a message of exactly MAX_STRING_BYTES bytes wherever a chunk ends inside or around it', () => {
    const body = withMessage(MAX_STRING_BYTES);
    const open = opening(body);
    const close = open + 1 + MAX_STRING_BYTES;
    expect(body[close]).toBe('"');
    for (const at of [open, open + 1, open + 2, close - 1, close, close + 1]) {
      expect(parse(cutAt(body, at)).envelope.message, `cut at ${at - open} from the opening quote`).toBe('m'.repeat(MAX_STRING_BYTES));
    }
  });

  it('drops a message one byte longer, wherever a chunk ends, and says how many bytes it held', () => {
    const body = withMessage(MAX_STRING_BYTES + 1);
    const open = opening(body);
    const close = open + 2 + MAX_STRING_BYTES;
    expect(body[close]).toBe('"');
    for (const chunks of [[body], cutAt(body, open + 1), cutAt(body, close - 1), cutAt(body, close), cutAt(body, close + 1)]) {
      const message = parse(chunks).envelope.message;
      expect(message).toBeInstanceOf(OversizedValue);
      expect(message).toMatchObject({ what: 'string', bytes: MAX_STRING_BYTES + 1 });
    }
  });

  it('drops an envelope value that is not a string past the limit, and a bare number past it', () => {
    const array = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => i));
    const digits = '9'.repeat(MAX_STRING_BYTES + 1);
    const body = `{"offset":${array},"total":${digits},"limit":7,"data":[]}`;
    expect(array.length).toBeGreaterThan(MAX_STRING_BYTES);
    for (const chunks of [[body], pieces(encoder.encode(body), 4096)]) {
      const env = parse(chunks).envelope;
      expect(env.offset).toEqual(new OversizedValue(array.length, 'string'));
      expect(env.total).toEqual(new OversizedValue(digits.length, 'string'));
      expect(env.limit).toBe(7);
    }
  });

  it('keeps a bare number of exactly MAX_STRING_BYTES digits', () => {
    const digits = '1' + '0'.repeat(MAX_STRING_BYTES - 1);
    expect(parse([`{"total":${digits},"data":[]}`]).envelope.total).toBe(Number(digits));
  });
});

describe('OversizedValue', () => {
  it('says what was too large and the limit it passed', () => {
    expect(new OversizedValue(70_000, 'string').describe()).toBe(`a string of more than ${MAX_STRING_BYTES} bytes (70000 bytes or more), not kept`);
    expect(new OversizedValue(2_000_000, 'record').describe()).toBe(`a record of more than ${MAX_RECORD_BYTES} bytes (2000000 bytes or more), not kept`);
    expect([MAX_STRING_BYTES, MAX_RECORD_BYTES]).toEqual([65_536, 1_048_576]);
  });

  it('stands in for an oversized string in a record whose other values, null among them, stay as sent', () => {
    const rest = { n: null, z: 0, f: false, e: '', a: [null, { b: null }], o: { deep: [1, 'two'] } };
    const body = JSON.stringify({ total: 1, data: [{ ...rest, big: 'q'.repeat(MAX_STRING_BYTES + 10), after: null }] });
    for (const chunks of [[body], pieces(encoder.encode(body), 4096)]) {
      const [record] = parse(chunks).records as Array<Record<string, unknown>>;
      expect(record).toEqual({ ...rest, big: new OversizedValue(MAX_STRING_BYTES + 10, 'string'), after: null });
    }
  });
});
