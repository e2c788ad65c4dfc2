/**
 * The open alerts' fold fed by the alert scanner (AlertsSink.scanned, the rows it reads the plain
 * way; the others parsed) against the same fold fed by JSON.parse of every record: the same
 * aggregate, to every count, time and acknowledgement, through the stream parser as a response
 * body arrives in random chunks.
 */
import { describe, expect, it } from 'vitest';
import { AlertsSink, foldAlerts } from '../../src/sources/alerts/fold.js';
import { EnvelopeParser } from '../../src/upstream/json-stream.js';
import { ROW_INTS, Slot, scanAlerts } from '../../src/upstream/alert-scan.js';
import { mulberry32 as prng } from '../support/prng.js';
import { alertRecordText } from '../upstream/alert-records.js';

/** The collection time the fixtures are judged at: inside the generator's years. */
const NOW = Date.UTC(2026, 5, 1) / 1000;
const SLAS = { red: 3600, amber: 86_400, green: 7 * 86_400 };

/**
 * Feeds `body` to the stream parser in chunks of `nextSize()` bytes, the rows the scanner reads to
 * `sink.scanned` and the records parsed to `sink.record`: how many of each, and the data count.
 */
function streamInto(sink: AlertsSink, body: Buffer, nextSize: () => number): { parsed: number; scanned: number; dataCount: number } {
  let parsed = 0;
  let scanned = 0;
  const parser = new EnvelopeParser(
    '/alerts',
    (raw) => {
      sink.record(raw);
      parsed++;
    },
    (scan, from, to) => {
      sink.scanned(scan, from, to);
      scanned += to - from;
    },
  );
  for (let at = 0; at < body.length; ) {
    const size = nextSize();
    parser.write(body.subarray(at, at + size));
    at += size;
  }
  return { parsed, scanned, dataCount: parser.end().dataCount };
}

describe('AlertsSink.scanned', () => {
  it('gives the aggregate the parsed records give, row by row', () => {
    const r = prng(11);
    for (let round = 0; round < 20; round++) {
      const records = Array.from({ length: 25 }, () => alertRecordText(r));
      const buf = Buffer.from(records.map((t) => `${t},`).join(''));
      const scan = scanAlerts(buf, 0, 65536)!;
      expect(scan.count).toBe(records.length);
      const sink = new AlertsSink(NOW, undefined, 0, SLAS);
      for (let k = 0; k < scan.count; k++) {
        const at = k * ROW_INTS;
        if (scan.ints[at + Slot.Slow] === 0) sink.scanned(scan, k, k + 1);
        else sink.record(JSON.parse(buf.toString('utf8', scan.ints[at + Slot.Start]!, scan.ints[at + Slot.End]!)));
      }
      expect(sink.finish()).toEqual(foldAlerts(records.map((t) => JSON.parse(t) as unknown), NOW, undefined, SLAS));
    }
  });

  it('gives the same aggregate through the stream parser, the body in random chunks, as JSON.parse of the whole body', () => {
    const r = prng(5);
    for (let round = 0; round < 8; round++) {
      const records = Array.from({ length: 400 + Math.floor(r() * 400) }, () => alertRecordText(r));
      const body = Buffer.from(`{"offset":0,"limit":0,"total":${records.length},"data":[${records.join(',')}],"success":true}`);
      const sink = new AlertsSink(NOW, undefined, 0, SLAS);
      const { parsed, scanned, dataCount } = streamInto(sink, body, () => (r() < 0.5 ? 65536 : 1 + Math.floor(r() * 100_000)));
      expect(dataCount).toBe(records.length);
      expect(parsed + scanned).toBe(records.length);
      const whole = JSON.parse(body.toString('utf8')) as { data: unknown[] };
      expect(sink.finish()).toEqual(foldAlerts(whole.data, NOW, undefined, SLAS));
    }
  });

  it('reads a record the chunk edge cuts through the scanner too, its carried bytes then the next chunk\'s, wherever the cut', () => {
    // Plain records (every field of its type, in the portal's forms): each cut one goes to the scanner with
    // the rest of the next chunk. Parsed are only the last, closed by `]`, and those that a chunk ends
    // right after (the scanner takes a record once it sees the comma after it).
    const rec = (i: number) => `{"state":"${['Red', 'Amber', 'Green'][i % 3]}","product":"Vendor ${i % 7}, x","status":"${['Info', 'Warning'][i % 2]}","ownerName":"${i % 5 ? '' : 'Kim'}","timestamp":"2026-0${1 + (i % 5)}-02T03:04:05.${String(i).padStart(7, '0')}","resolved":false,"acknowledged":${i % 4 === 0},"acknowledgedTime":"2026-05-3${i % 2}T00:00:00.0000000","inactiveUntil":"0001-01-01T00:00:00.0000000","issue":"${'x'.repeat(i % 300)}"}`;
    const records = Array.from({ length: 3000 }, (_, i) => rec(i));
    const body = Buffer.from(`{"offset":0,"limit":0,"total":${records.length},"data":[${records.join(',')}],"success":true}`);
    const want = foldAlerts(records.map((t) => JSON.parse(t) as unknown), NOW, undefined, SLAS);
    for (const size of [65536, 50_000, 16_384, 9_999]) {
      const sink = new AlertsSink(NOW, undefined, 0, SLAS);
      const { parsed, dataCount } = streamInto(sink, body, () => size);
      expect(dataCount).toBe(records.length);
      let endsAtEdge = 0;
      for (let at = size; at < body.length; at += size) if (body[at - 1] === 0x7d && body[at] === 0x2c) endsAtEdge++;
      expect(parsed).toBe(1 + endsAtEdge);
      expect(sink.finish()).toEqual(want);
    }
  });

  it('parses the records the scanner leaves to JSON.parse from the bytes it read, carried ones too', () => {
    // Every 37th record has an escaped key (\u0073 is "s"): the scanner validates it and flags it for JSON.parse,
    // which reads it from the scan's own input (the carried bytes and the chunk, when a chunk edge cut it).
    const rec = (i: number) => `{"${i % 37 === 0 ? '\\u0073' : 's'}tate":"${['Red', 'Amber', 'Green'][i % 3]}","product":"Vendor ${i % 7}","status":"Info","ownerName":"","timestamp":"2026-0${1 + (i % 5)}-02T03:04:05.0000000","resolved":false,"acknowledged":${i % 4 === 0},"acknowledgedTime":"2026-05-31T00:00:00.0000000","inactiveUntil":"0001-01-01T00:00:00.0000000","issue":"${'x'.repeat(i % 300)}"}`;
    const records = Array.from({ length: 3000 }, (_, i) => rec(i));
    const escaped = records.filter((t) => t.startsWith('{"\\u0073')).length;
    expect(escaped).toBe(Math.ceil(3000 / 37));
    const body = Buffer.from(`{"offset":0,"limit":0,"total":${records.length},"data":[${records.join(',')}],"success":true}`);
    const want = foldAlerts(records.map((t) => JSON.parse(t) as unknown), NOW, undefined, SLAS);
    expect(want.open.red).toBe(1000);
    for (const size of [65536, 9_999]) {
      const sink = new AlertsSink(NOW, undefined, 0, SLAS);
      const { parsed, dataCount } = streamInto(sink, body, () => size);
      expect(dataCount).toBe(records.length);
      expect(parsed).toBeGreaterThanOrEqual(escaped);
      expect(sink.finish()).toEqual(want);
    }
  });

  it('keeps its labels by id apart across generations of the scanner\'s ids', () => {
    // 5,000 products, 250 to a window: the scanner's ids start over, the sink's labels by id with them.
    const rec = (i: number) => `{"state":"${['Red', 'Amber', 'Green'][i % 3]}","product":"Vendor ${i % 4999}, x","status":"${['Info', 'Warning'][i % 2]}","ownerName":"","timestamp":"2026-01-02T03:04:05.0000000","resolved":false,"acknowledged":false,"inactiveUntil":"0001-01-01T00:00:00.0000000"}`;
    const all = Array.from({ length: 10_000 }, (_, i) => rec(i));
    const sink = new AlertsSink(NOW, undefined, 0, SLAS);
    for (let from = 0; from < all.length; from += 250) {
      const buf = Buffer.from(all.slice(from, from + 250).map((t) => `${t},`).join(''));
      const scan = scanAlerts(buf, 0, 65536)!;
      sink.scanned(scan, 0, scan.count);
    }
    expect(sink.finish()).toEqual(foldAlerts(all.map((t) => JSON.parse(t) as unknown), NOW, undefined, SLAS));
  });
});
