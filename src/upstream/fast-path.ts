import { isAscii } from 'node:buffer';
import { LBRACKET, RBRACKET } from './json-bytes.js';
import { MAX_STRING_BYTES } from './limits.js';

/** Where one record ends and the next begins, as compact JSON writes it. */
const SEPARATOR = Buffer.from('},{');

/**
 * The most bytes one fast-path JSON.parse takes. No string in so few bytes can be over
 * MAX_STRING_BYTES, nor a record over MAX_RECORD_BYTES, so the records it parses are within the
 * limits (src/upstream/limits.ts) by construction; larger ones are left to the splitter, which
 * applies them. A network chunk is at most this large anyway.
 */
export const FAST_WINDOW = MAX_STRING_BYTES;

/** Records the fast path parsed, and the index after the comma it cut at. */
export interface FastRecords {
  readonly records: unknown[];
  readonly resume: number;
}

/** '[' + the records + ']' are copied here for one decode: the caller's chunk is never written. */
// Stryker disable next-line ArithmeticOperator: equivalent, parseRange allocates a larger one when this one is too small
let scratch = Buffer.allocUnsafe(FAST_WINDOW + 2);

/**
 * At a record start `i`: parses the records up to the last `},{` within FAST_WINDOW bytes in one
 * JSON.parse call, without splitting them first. A `},{` inside a string or a nested array cannot
 * end a valid prefix: JSON.parse rejects such a cut and an earlier one is tried (three at most).
 * Returns the records, `failed` when there were cuts but none parsed, or undefined when there was
 * no cut; then the splitter reads on from `i`.
 */
export function parseWhole(buf: Buffer, i: number): FastRecords | 'failed' | undefined {
  const last = Math.min(buf.length - SEPARATOR.length, i + FAST_WINDOW - 1);
  let cut = buf.lastIndexOf(SEPARATOR, Math.min(last, asciiPiecesEnd(buf, i, last + 1) - 1));
  // A record longer than a piece with other bytes in the piece it starts: the whole window.
  if (cut <= i) cut = buf.lastIndexOf(SEPARATOR, last);
  if (cut <= i) return undefined;
  for (let tries = 0; tries < 3 && cut > i; tries++) {
    const records = parseRange(buf, i, cut + 1);
    if (records !== undefined) return { records, resume: cut + 2 };
    cut = buf.lastIndexOf(SEPARATOR, cut - 1);
  }
  return 'failed';
}

/** Bytes of the pieces asciiPiecesEnd checks one by one. */
const PIECE_BYTES = 4096;

/**
 * The end of the first piece of PIECE_BYTES from `start` that holds a byte outside ASCII, or `end`
 * when there is none (Node's isAscii, a vector scan). V8 decodes UTF-8 a word at a time up to the
 * first byte outside ASCII and one byte at a time, twice, from there to the end: a window of 64 KiB
 * with an accented name early in it went almost wholly the slow way. Cut after such a piece, a
 * window ends at most a piece after its first byte outside ASCII, and the next one starts there.
 */
function asciiPiecesEnd(buf: Buffer, start: number, end: number): number {
  for (let from = start; from < end; from += PIECE_BYTES) {
    const to = Math.min(end, from + PIECE_BYTES);
    if (!isAscii(buf.subarray(from, to))) return to;
  }
  return end;
}

/** JSON.parse of the records `buf[start, end)` as an array, or undefined if that is not valid JSON. */
function parseRange(buf: Buffer, start: number, end: number): unknown[] | undefined {
  const length = end - start;
  // One flat string for JSON.parse: '[' + text + ']' would be a rope it copies again (3 % of `once`).
  // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: equivalent, parseWhole passes at most FAST_WINDOW bytes, which the first scratch holds
  if (scratch.length < length + 2) scratch = Buffer.allocUnsafe(length + 2);
  scratch[0] = LBRACKET;
  buf.copy(scratch, 1, start, end);
  scratch[length + 1] = RBRACKET;
  try {
    return JSON.parse(scratch.toString('utf8', 0, length + 2)) as unknown[];
  } catch {
    // Not valid JSON: undefined below.
  }
  return undefined;
}
