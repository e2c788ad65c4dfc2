/**
 * The alert scanner (src/upstream/alert-scan.ts, WebAssembly built from wasm/alert-scan.ts) against
 * JSON.parse: on random alert records, every row it reads the plain way holds what JSON.parse and
 * the timestamp parser give for that record; on random corruptions, it never takes bytes JSON.parse
 * refuses. The module committed is the one the source compiles to.
 */
import { describe, expect, it } from 'vitest';
import { ALERT_SCAN_WASM } from '../../src/upstream/alert-scan-wasm.js';
import { Interned, ROW_FLOATS, ROW_INTS, Slot, Time, scanAlerts, type AlertScan } from '../../src/upstream/alert-scan.js';
import { parseApiTimestamp } from '../../src/upstream/timestamps.js';
import { mulberry32 as prng } from '../support/prng.js';
import { alertRecordText } from './alert-records.js';

const WINDOW = 65536;

/** `records` joined as the portal writes them, each followed by a comma. */
const windowOf = (records: readonly string[]) => Buffer.from(records.map((t) => `${t},`).join(''), 'utf8');

/** The timestamp a row should hold for `value`: its seconds, NaN for the unset one, or undefined when the row must be slow. */
function expectedTime(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const t = parseApiTimestamp(value);
  return t === null ? NaN : t;
}

/** Checks row k of `scan` against JSON.parse of its bytes; returns whether the row was read the plain way. */
function checkRow(buf: Buffer, from: number, scan: AlertScan, k: number): boolean {
  const ints = scan.ints;
  const at = k * ROW_INTS;
  const o = JSON.parse(buf.toString('utf8', from + ints[at + Slot.Start]!, from + ints[at + Slot.End]!)) as Record<string, unknown>;
  if (ints[at + Slot.Slow] === 1) return false;
  // Read the plain way: every field the fold reads has its type.
  for (const f of ['state', 'product', 'status', 'ownerName', 'timestamp', 'inactiveUntil']) expect(typeof o[f], f).toBe('string');
  for (const f of ['resolved', 'acknowledged']) expect(typeof o[f], f).toBe('boolean');
  expect(scan.text(Interned.State, ints[at + Slot.State]!)).toBe(o.state);
  expect(scan.text(Interned.Product, ints[at + Slot.Product]!)).toBe(o.product);
  expect(scan.text(Interned.Status, ints[at + Slot.Status]!)).toBe(o.status);
  expect(ints[at + Slot.OwnerEmpty] === 1).toBe(o.ownerName === '');
  expect(ints[at + Slot.Resolved] === 1).toBe(o.resolved);
  expect(ints[at + Slot.Acknowledged] === 1).toBe(o.acknowledged);
  const t = k * ROW_FLOATS;
  expect(scan.floats[t + Time.Created]).toBe(expectedTime(o.timestamp));
  expect(scan.floats[t + Time.Until]).toBe(expectedTime(o.inactiveUntil));
  expect(ints[at + Slot.AcknowledgedSet] === 1).toBe(typeof o.acknowledgedTime === 'string');
  if (typeof o.acknowledgedTime === 'string') expect(scan.floats[t + Time.Acknowledged]).toBe(expectedTime(o.acknowledgedTime));
  return true;
}

describe('scanAlerts', () => {
  it('reads the portal\'s records: every row as JSON.parse reads it, all up to the last comma', () => {
    const r = prng(1);
    let plain = 0;
    let rows = 0;
    for (let round = 0; round < 60; round++) {
      const records: string[] = [];
      while (records.join(',').length < WINDOW - 4000) records.push(alertRecordText(r));
      const buf = windowOf(records);
      const scan = scanAlerts(buf, 0, WINDOW);
      // No record nests deeper than the scanner reads: it takes them all.
      expect(scan?.count).toBe(records.length);
      expect(scan!.resume).toBe(buf.length);
      for (let k = 0; k < scan!.count; k++) if (checkRow(buf, 0, scan!, k)) plain++;
      rows += scan!.count;
    }
    // A good part of the rows are the plain case the scanner is for (the others, JSON.parse reads).
    expect(plain / rows).toBeGreaterThan(0.3);
  });

  it('starts at the offset it is given and stops at the last record followed by a comma within the window', () => {
    const text = '[{"a":1},{"b":2},{"c":3}]';
    const buf = Buffer.from(text);
    const from = text.indexOf('{"b"');
    const scan = scanAlerts(buf, from, WINDOW)!;
    expect(scan.count).toBe(1);
    expect(buf.toString('utf8', from + scan.ints[Slot.Start]!, from + scan.ints[Slot.End]!)).toBe('{"b":2}');
    expect(scan.resume).toBe(text.indexOf('{"c"'));
    // A window that ends inside the second record: the first only.
    const two = Buffer.from('{"a":1},{"b":22},');
    expect(scanAlerts(two, 0, '{"a":1},{"b":2'.length)?.count).toBe(1);
    expect(scanAlerts(two, 0, '{"a":1'.length)).toBeUndefined();
  });

  it('flags a record missing a field, holding one with another type, an escaped key or timestamp, for JSON.parse', () => {
    const plain = '{"state":"Red","product":"P","status":"Info","ownerName":"","timestamp":"2026-01-02T03:04:05.0000000","resolved":false,"acknowledged":false,"inactiveUntil":"0001-01-01T00:00:00.0000000"}';
    const variants = [plain.replace('"state":"Red",', ''), plain.replace('"resolved":false', '"resolved":0'), plain.replace('"product":"P"', '"product":null'), plain.replace('"status":"Info"', '"st\\u0061tus":"Info"'), plain.replace('2026-01-02T03:04:05.0000000', '2026-01-02T03:04:05Z'), plain.replace('"state":"Red"', '"state":"R\\u0065d"')];
    const buf = windowOf([plain, ...variants]);
    const scan = scanAlerts(buf, 0, WINDOW)!;
    expect(scan.count).toBe(1 + variants.length);
    // An escape in a string kept as an id is read (its id remembers it); in a key or a timestamp it is not.
    expect(Array.from({ length: scan.count }, (_, k) => scan.ints[k * ROW_INTS + Slot.Slow])).toEqual([0, 1, 1, 1, 1, 1, 0]);
    expect(checkRow(buf, 0, scan, 0)).toBe(true);
    expect(checkRow(buf, 0, scan, 6)).toBe(true);
  });

  it('refuses what JSON refuses inside a record, and reads what it allows', () => {
    const before = '{"a":1},';
    const invalid = ['{"a":01}', '{"a":1.}', '{"a":.5}', '{"a":-}', '{"a":1e}', '{"a":1e+}', '{"a":+1}', '{"a":tru}', '{"a":nul}', '{"a":"\u0001"}', '{"a":"\\q"}', '{"a":"\\u12g4"}', '{"a":[1,]}', '{"a":{,}}', '{"a" 1}', '{a:1}', '{"a":1,}', '{"a":[}', '{"a":]}', '{"a":1]', '{"a":1}}', '{"a":[1}', '{"a":{"b":1]}', '{"a":1 2}', '{"a":"x"y"}', '{"a":\\u0041}', '{"a":NaN}', '{"a":\u000b1}'];
    for (const text of invalid) {
      expect(() => JSON.parse(text), text).toThrow();
      expect(scanAlerts(Buffer.from(`${before}${text},{"b":2},`), 0, WINDOW), text).toBeUndefined();
    }
    const valid = ['{"a":-0.5e+10}', '{"a":0}', '{"a":-0}', '{"a":1E5}', '{"a":[]}', '{"a":{}}', '{"a":[[],{}]}', '{"a":"\\u00e9\\/\\b\\f\\n\\r\\t\\"\\\\"}', '{ "a" : [ 1 , { "b" : null } ] , "c" : true }', '{"a":"\u007f é 数据 😀"}', '{}'];
    for (const text of valid) {
      const scan = scanAlerts(Buffer.from(`${before}${text},`), 0, WINDOW);
      expect(scan?.count, text).toBe(2);
    }
  });

  it('takes the last of duplicate keys, as JSON.parse does', () => {
    const rec = '{"state":"Red","product":"P","status":"Info","ownerName":"x","timestamp":"2026-01-02T03:04:05.0000000","resolved":true,"acknowledged":false,"inactiveUntil":"0001-01-01T00:00:00.0000000","resolved":false,"state":"Green","ownerName":""}';
    const buf = windowOf([rec, rec]);
    const scan = scanAlerts(buf, 0, WINDOW)!;
    expect(checkRow(buf, 0, scan, 0)).toBe(true);
    expect(checkRow(buf, 0, scan, 1)).toBe(true);
  });

  it('never takes bytes JSON.parse refuses: random corruptions of valid records', () => {
    const r = prng(7);
    const noise = [...'{}[]:,"\\ \t\n0123456789.-+eEtrufalsn'].map((c) => c.charCodeAt(0)).concat([0x00, 0x1f, 0x7f, 0x80, 0xc3, 0xe2, 0xff]);
    let taken = 0;
    for (let round = 0; round < 400; round++) {
      const records = Array.from({ length: 1 + Math.floor(r() * 12) }, () => alertRecordText(r));
      const buf = windowOf(records);
      for (let m = 1 + Math.floor(r() * 3); m > 0; m--) buf[Math.floor(r() * buf.length)] = noise[Math.floor(r() * noise.length)]!;
      const scan = scanAlerts(buf, 0, WINDOW);
      if (scan === undefined) continue;
      taken++;
      // What it took, up to its last comma, is an array of exactly its rows to JSON.parse...
      const prefix = buf.toString('utf8', 0, scan.resume).replace(/,\s*$/, '');
      const elements = JSON.parse(`[${prefix}]`) as unknown[];
      expect(elements.length).toBe(scan.count);
      for (let k = 0; k < scan.count; k++) {
        // ...each row's bytes are its element...
        const at = k * ROW_INTS;
        expect(JSON.parse(buf.toString('utf8', scan.ints[at + Slot.Start]!, scan.ints[at + Slot.End]!))).toEqual(elements[k]);
        // ...and its fields are JSON.parse's.
        checkRow(buf, 0, scan, k);
      }
    }
    // Most corruptions leave some records before them whole.
    expect(taken).toBeGreaterThan(100);
  });

  it('reads past 4,096 distinct products: its ids start over between scans, and the generation says so', () => {
    const rec = (i: number) => `{"state":"Red","product":"Product ${i}, x","status":"Info","ownerName":"","timestamp":"2026-01-02T03:04:05.0000000","resolved":false,"acknowledged":false,"inactiveUntil":"0001-01-01T00:00:00.0000000"}`;
    const generations = new Set<number>();
    for (let base = 0; base < 10_000; base += 250) {
      const buf = windowOf(Array.from({ length: 250 }, (_, i) => rec(base + i)));
      const scan = scanAlerts(buf, 0, WINDOW)!;
      expect(scan.count).toBe(250);
      generations.add(scan.generation);
      // Ids start over only between scans (at three quarters full), so no row runs out of them.
      const products = Array.from({ length: scan.count }, (_, k) => (scan.ints[k * ROW_INTS + Slot.Slow] === 0 ? scan.text(Interned.Product, scan.ints[k * ROW_INTS + Slot.Product]!) : 'slow'));
      expect(products).toEqual(Array.from({ length: 250 }, (_, k) => `Product ${base + k}, x`));
    }
    expect(generations.size).toBeGreaterThan(1);
  });

  it('is the module wasm/alert-scan.ts compiles to', async () => {
    // The module's bytes, not the file's text: mutation testing's copy of src/ starts each file with a line of its own.
    // @ts-expect-error: a plain JavaScript script without declarations
    const { compile } = (await import('../../scripts/wasm.mjs')) as { compile(): Promise<Buffer> };
    expect(ALERT_SCAN_WASM).toBe((await compile()).toString('base64'));
  }, 60_000);
});
