/**
 * What EnvelopeParser says about a body it refuses: the message names the endpoint, what was
 * expected and found, and the byte offset in the body (counted by hand below), the same whether
 * the body comes whole or in pieces.
 */
import { describe, expect, it } from 'vitest';
import { InvalidResponseError } from '../../src/errors.js';
import { EnvelopeParser } from '../../src/upstream/json-stream.js';
import { encoder, parse, pieces } from '../support/json-stream.js';

/** The error `chunks` make the parser throw, by write or end. */
function refusal(chunks: Array<string | Uint8Array>): InvalidResponseError {
  try {
    parse(chunks);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidResponseError);
    return err as InvalidResponseError;
  }
  throw new Error('expected the body to be refused');
}

const PREFIX = 'Invalid response from /alerts: ';

describe('EnvelopeParser error messages', () => {
  it.each([
    ['{total:1}', 'malformed JSON at byte 1: expected a key string, found "t"'],
    ['{"total" 1}', `malformed JSON at byte 9: expected ':', found "1"`],
    ['{"total":1,,"data":[]}', 'malformed JSON at byte 11: expected a key string, found ","'],
    ['{"total":1,}', 'malformed JSON at byte 11: expected a key string, found "}"'],
    ['{"total":}', 'malformed JSON at byte 9: expected a value, found "}"'],
    ['{"total":,}', 'malformed JSON at byte 9: expected a value, found ","'],
    ['{"total"::1}', 'malformed JSON at byte 9: expected a value, found ":"'],
    ['{"total":]}', 'malformed JSON at byte 9: expected a value, found "]"'],
    ['{"total":1 "x"}', `malformed JSON at byte 11: expected ',' or '}', found "\\""`],
    ['{"data":[,{"a":1}]}', 'malformed JSON at byte 9: expected a record, found ","'],
    ['{"data":[{"a":1},]}', 'malformed JSON at byte 17: expected a record, found "]"'],
    ['{"data":[}]}', 'malformed JSON at byte 9: expected a record, found "}"'],
    ['{"data":[:]}', 'malformed JSON at byte 9: expected a record, found ":"'],
    ['{"data":[{"a":1} {"a":2}]}', `malformed JSON at byte 17: expected ',' or ']', found "{"`],
    ['{"extra":[1,2},"data":[]}', 'malformed JSON at byte 13: expected a matching bracket, found "}"'],
    ['{"extra":{"a":[1]]},"data":[]}', 'malformed JSON at byte 17: expected a matching bracket, found "]"'],
    ['{\u00e9:1}', 'malformed JSON at byte 1: expected a key string, found byte 0xc3'],
    ['{"data":[]} {}', 'unexpected data after the end of the JSON object at byte 12'],
    ['{"total":12', 'the response body ended early, before the JSON was complete (after 11 bytes)'],
    ['', 'the response body ended early, before the JSON was complete (after 0 bytes)'],
  ])('refuses %j saying %j', (body, said) => {
    const whole = refusal([body]);
    expect(whole.message).toBe(PREFIX + said);
    expect(whole.endpoint).toBe('/alerts');
    // The same offsets when the body comes a byte, or five bytes, at a time.
    expect(refusal(pieces(encoder.encode(body), 1)).message).toBe(PREFIX + said);
    expect(refusal(pieces(encoder.encode(body), 5)).message).toBe(PREFIX + said);
  });

  it.each([
    ['[{"a":1}]', 'the body is not a JSON object (it starts with %s)', '[{"a":1}]', '['],
    ['<html><body>Bad gateway</body></html>', 'the body is not a JSON object (it starts with %s)', '<html><body>Bad ', '<'],
    ['{"data":{"a":1}}', '"data" is not an array (it starts with %s)', '{"a":1}}', '{'],
    ['{"data":"0123456789abcdefghij"}', '"data" is not an array (it starts with %s)', '"0123456789abcde', '"'],
  ])('refuses %j quoting its first 16 bytes, of those the chunk holds', (body, said, whole, byByte) => {
    expect(refusal([body]).message).toBe(PREFIX + said.replace('%s', JSON.stringify(whole)));
    expect(refusal(pieces(encoder.encode(body), 1)).message).toBe(PREFIX + said.replace('%s', JSON.stringify(byByte)));
  });

  it.each([
    ['a key', '{"a\\x":1}', 'malformed JSON in a key (before byte 6): '],
    ['an envelope field', '{"total":01,"data":[]}', 'malformed JSON in the "total" field (before byte 11): '],
    ['a lone record', '{"data":[{"a":tru}]}', 'malformed JSON in record 0 of "data" (before byte 18): '],
    ['the record after one the fast path read', '{"data":[{"a":1},{"b":tru}]}', 'malformed JSON in record 1 of "data" (before byte 26): '],
    ['one of several records read together', '{"data":[{"a":1} ,{"b":tru} ,{"c":2}]}', 'malformed JSON in records 0 to 2 of "data" (before byte 36): '],
  ])('says where %s that JSON.parse refuses ends, and keeps its error as the cause', (_name, body, said) => {
    for (const chunks of [[body], pieces(encoder.encode(body), 1000)]) {
      const err = refusal(chunks);
      expect(err.message.startsWith(PREFIX + said), err.message).toBe(true);
      expect(err.cause).toBeInstanceOf(SyntaxError);
      expect(err.message).toContain((err.cause as SyntaxError).message);
    }
  });

  it('says where a record that spans chunks ends', () => {
    const err = refusal(['{"data":[{"a":t', 'ru}]}']);
    expect(err.message.startsWith(PREFIX + 'malformed JSON in record 0 of "data" (before byte 18): ')).toBe(true);
  });

  it('shows a byte that is not ASCII by its value, and an ASCII one as a character', () => {
    expect(refusal([Uint8Array.of(0x7b, 0x80, 0x7d)]).message).toBe(PREFIX + 'malformed JSON at byte 1: expected a key string, found byte 0x80');
    expect(refusal([Uint8Array.of(0x7b, 0x7f, 0x7d)]).message).toBe(PREFIX + 'malformed JSON at byte 1: expected a key string, found "\x7f"');
  });

  it('counts the bytes of earlier chunks in the offset of an error', () => {
    expect(refusal(['{"total":1', ' "x"}']).message).toBe(PREFIX + `malformed JSON at byte 11: expected ',' or '}', found "\\""`);
    expect(refusal(['{"tot', 'al":12']).message).toBe(PREFIX + 'the response body ended early, before the JSON was complete (after 11 bytes)');
  });

  it('throws the first error again on every later write and at the end', () => {
    const parser = new EnvelopeParser('/vitals', () => {});
    let first: unknown;
    try {
      parser.write('{"total" 1');
    } catch (err) {
      first = err;
    }
    expect(first).toBeInstanceOf(InvalidResponseError);
    const again = (f: () => unknown): unknown => {
      try {
        f();
      } catch (err) {
        return err;
      }
      return undefined;
    };
    expect(again(() => parser.write('}'))).toBe(first);
    expect(again(() => parser.end())).toBe(first);
  });
});

describe('EnvelopeParser after an error', () => {
  const thrownBy = (f: () => unknown): unknown => {
    try {
      f();
    } catch (err) {
      return err;
    }
    return 'nothing thrown';
  };

  it("stays failed after the record callback's error, delivering nothing more", () => {
    const refused = new Error('no room');
    const seen: unknown[] = [];
    const parser = new EnvelopeParser('/alerts', (r) => {
      seen.push(r);
      if (seen.length === 2) throw refused;
    });
    // Two records the fast path reads and one the splitter batches, then the rest of the body.
    expect(thrownBy(() => parser.write('{"total":5,"data":[{"a":1},{"a":2},{"a":3} ,{"a":4}'))).toBe(refused);
    expect(thrownBy(() => parser.write(',{"a":5}]}'))).toBe(refused);
    expect(thrownBy(() => parser.end())).toBe(refused);
    expect(seen).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('throws the same error at every end of a body cut short', () => {
    const parser = new EnvelopeParser('/alerts', () => {});
    parser.write('{"total":1,"data":[');
    const first = thrownBy(() => parser.end());
    expect(first).toBeInstanceOf(InvalidResponseError);
    expect(thrownBy(() => parser.end())).toBe(first);
    expect(thrownBy(() => parser.write(']}'))).toBe(first);
  });
});

describe('EnvelopeParser and a byte order mark', () => {
  const BOM = [0xef, 0xbb, 0xbf];
  const body = encoder.encode('{"total":1,"data":[{"a":1}]}');
  const bytes = (...parts: Array<number[] | Uint8Array>) => Uint8Array.from(parts.flatMap((p) => [...p]));

  it('skips one UTF-8 byte order mark at the very start, in one piece or split', () => {
    const withBom = bytes(BOM, body);
    for (const chunks of [[withBom], pieces(withBom, 1), pieces(withBom, 2)]) {
      expect(parse(chunks).records).toEqual([{ a: 1 }]);
    }
  });

  it.each([
    ['after whitespace', bytes([0x20], BOM, body), 1],
    ['twice', bytes(BOM, BOM, body), 3],
    ['cut short', bytes(BOM.slice(0, 2), body), 2],
    ['cut short before whitespace', bytes(BOM.slice(0, 1), [0x20], body), 2],
    ['its bytes out of order', bytes([0xbb, 0xef, 0xbf], body), 0],
  ])('refuses a byte order mark %s', (_name, withBom, at) => {
    for (const chunks of [[withBom], pieces(withBom, 1)]) {
      expect(refusal(chunks).message).toMatch(new RegExp(`^${PREFIX}the body is not a JSON object \\(it starts with "`));
    }
    expect(withBom.indexOf(0x7b)).toBeGreaterThanOrEqual(at);
  });

  it('reads whitespace after a whole byte order mark', () => {
    expect(parse([bytes(BOM, [0x20, 0x0a], body)]).records).toEqual([{ a: 1 }]);
  });
});

describe('EnvelopeParser batches', () => {
  it('parses the records of a chunk 256 KiB at most at a time, as the range of a malformed one shows', () => {
    // Arrays, which the fast path leaves to the splitter: the first 1,024 bytes, the others 1,023,
    // one comma between them. Records 0 to 255 span exactly 256 KiB (1,024 + 255 × 1,024 bytes):
    // one batch; record 256 starts the next, which runs to the end (144 records). Record 300 is
    // malformed (its closing bracket a brace), so that batch fails as a whole.
    const record = (bytes: number, n: number) => `["${String(n).padStart(bytes - 4, 'x')}"]`;
    const records = [record(1_024, 0), ...Array.from({ length: 399 }, (_, n) => record(1_023, n + 1))];
    // Whole, every record arrives, in order.
    expect(parse([`{"total":400,"data":[${records.join(',')}]}`]).records).toEqual(records.map((r) => JSON.parse(r) as unknown));
    records[300] = records[300]!.slice(0, -1) + '}';
    const span = (from: number, to: number) => records.slice(from, to + 1).join(',').length;
    expect(span(0, 255)).toBe(256 * 1024);
    const head = '{"total":400,"data":[';
    const err = refusal([`${head}${records.join(',')}]}`]);
    expect(err.message.startsWith(PREFIX + `malformed JSON in records 256 to 399 of "data" (before byte ${head.length + span(0, 399)}): `), err.message).toBe(true);
  });
});
