// Byte-level helpers shared by the body scanners (src/upstream/json-stream.ts and its parts).

// Byte values the scanners branch on (all ASCII: a UTF-8 multi-byte sequence never contains them).
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const LBRACE = 0x7b;
export const RBRACE = 0x7d;
export const LBRACKET = 0x5b;
export const RBRACKET = 0x5d;

/** JSON whitespace. */
export function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Where a bare literal (number, true, false, null) ends: the index of the delimiter after it, or -1 if the chunk ran out first. */
export function literalEnd(buf: Buffer, i: number): number {
  for (const n = buf.length; i < n; i++) {
    const c = buf[i]!;
    if (isSpace(c) || c === COMMA || c === RBRACE || c === RBRACKET) return i;
  }
  return -1;
}

/** The UTF-8 text of `buf[start, end)`. */
export function decode(buf: Buffer, start: number, end: number): string {
  return buf.toString('utf8', start, end);
}

/** The UTF-8 text of pieces kept across chunks (a character may be split between two). */
export function decodePieces(pieces: readonly Buffer[]): string {
  if (pieces.length === 1) return decode(pieces[0]!, 0, pieces[0]!.length);
  return Buffer.concat(pieces).toString('utf8');
}

let _youngGarbage: unknown;

/**
 * Skipping an oversized string allocates nothing on the heap, so no minor GC runs, and the chunks
 * already read stay unreclaimed until V8 collects for external memory (after 64 MB of them): the
 * 64 MB string case measured 128 to 140 MB peak RSS. Allocating short-lived garbage about the size
 * of each skipped chunk keeps minor GCs coming, which free those chunks: 111 to 118 MB. CPU cost
 * is not measurable. Oversized strings take this path, and the alert scanner, which allocates nothing
 * either (src/upstream/json-stream.ts).
 */
// Stryker disable next-line BlockStatement: equivalent, memory only (when the collector runs)
export function turnOverYoungGeneration(bytes: number): void {
  // (V8 fills a new array's slots itself: `bytes` of garbage without a fill of our own.)
  // Stryker disable next-line ArrayDeclaration: equivalent, memory only (garbage for the collector)
  _youngGarbage = new Array<number>(bytes >> 3);
  _youngGarbage = undefined;
}
