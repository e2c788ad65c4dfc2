/**
 * Where the fast path cuts its window when bytes outside ASCII come early: after the piece of 4 KiB
 * that holds the first of them, so that the UTF-8 decoding of the window (byte by byte from its
 * first such byte on) covers at most that piece. The records are the same, in order, either way.
 */
import { describe, expect, it } from 'vitest';
import { parseWhole } from '../../src/upstream/fast-path.js';

/** `n` compact records `{"i":k,"p":"<pad>"}` from `from`, each `padding` ASCII characters long in `p`. */
const records = (from: number, n: number, padding: number, p = (k: number) => 'x'.repeat(padding) + String(k % 10)) =>
  Array.from({ length: n }, (_, k) => ({ i: from + k, p: p(from + k) }));

/** Reads a whole array body through parseWhole alone, window by window; returns the records and each window's byte length. */
function readAll(text: string): { records: unknown[]; windows: number[] } {
  const buf = Buffer.from(text, 'utf8');
  const out: unknown[] = [];
  const windows: number[] = [];
  let i = 1;
  for (;;) {
    const fast = parseWhole(buf, i);
    if (fast === undefined || fast === 'failed') break;
    out.push(...fast.records);
    windows.push(fast.resume - i);
    i = fast.resume;
  }
  // The last record (after the last `},{`) is the splitter's: parse it here.
  out.push(JSON.parse(buf.toString('utf8', i, buf.length - 1)));
  return { records: out, windows };
}

describe('parseWhole, bytes outside ASCII', () => {
  it('reads a window of 64 KiB at once when it is all ASCII', () => {
    const all = records(0, 400, 200);
    const { records: got, windows } = readAll(JSON.stringify(all));
    expect(got).toEqual(all);
    expect(windows[0]).toBeGreaterThan(60_000);
  });

  it('ends the window within the first 4 KiB piece after an early accented character, and reads the rest in later windows', () => {
    const all = records(0, 400, 200, (k) => (k === 3 ? 'é' : 'x').repeat(200));
    const { records: got, windows } = readAll(JSON.stringify(all));
    expect(got).toEqual(all);
    // The é records start at about 650 bytes: the first window ends before the end of the first 4 KiB piece.
    expect(windows[0]).toBeLessThanOrEqual(4096);
    expect(windows[1]).toBeGreaterThan(60_000);
  });

  it('takes the whole window when the record at the start is longer than a piece and holds such a byte', () => {
    const all = [{ i: 0, p: 'ü'.repeat(3000) }, ...records(1, 100, 100)];
    const { records: got, windows } = readAll(JSON.stringify(all));
    expect(got).toEqual(all);
    expect(windows[0]).toBeGreaterThan(6000);
  });

  it.each([
    ['fills the 4 KiB piece exactly: the window ends after it', 4096, (w: number) => w === 4097],
    ['is a byte longer than the piece: the whole window', 4097, (w: number) => w > 60_000],
  ])('cuts after a first record with a byte outside ASCII that %s', (_name, bytes, fits) => {
    // {"i":0,"p":"é…x…"}: 2 bytes for é, so the record's length in bytes is set by the x's.
    const first = { i: 0, p: 'é' + 'x'.repeat(bytes - Buffer.byteLength('{"i":0,"p":"é"}')) };
    const all = [first, ...records(1, 400, 200)];
    expect(Buffer.byteLength(JSON.stringify(first))).toBe(bytes);
    const { records: got, windows } = readAll(JSON.stringify(all));
    expect(got).toEqual(all);
    expect(fits(windows[0]!), `first window ${windows[0]} bytes`).toBe(true);
  });
});
