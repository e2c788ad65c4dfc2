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
const FAST_WINDOW = MAX_STRING_BYTES;

/** Records the fast path parsed, and the index after the comma it cut at. */
export interface FastRecords {
  readonly records: unknown[];
  readonly resume: number;
}

/** '[' + the records + ']' are copied here for one decode: the caller's chunk is never written. */
let scratch = Buffer.allocUnsafe(FAST_WINDOW + 2);

/**
 * At a record start `i`: parses the records up to the last `},{` within FAST_WINDOW bytes in one
 * JSON.parse call, without splitting them first. A `},{` inside a string or a nested array cannot
 * end a valid prefix: JSON.parse rejects such a cut and an earlier one is tried (three at most).
 * Returns the records, `failed` when there were cuts but none parsed, or undefined when there was
 * no cut; then the splitter reads on from `i`.
 */
export function parseWhole(buf: Buffer, i: number): FastRecords | 'failed' | undefined {
  let cut = buf.lastIndexOf(SEPARATOR, Math.min(buf.length - SEPARATOR.length, i + FAST_WINDOW - 1));
  if (cut <= i) return undefined;
  for (let tries = 0; tries < 3 && cut > i; tries++) {
    const records = parseRange(buf, i, cut + 1);
    if (records !== undefined) return { records, resume: cut + 2 };
    cut = buf.lastIndexOf(SEPARATOR, cut - 1);
  }
  return 'failed';
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
    // Stryker disable next-line BlockStatement: equivalent, an empty catch returns undefined too
  } catch {
    return undefined;
  }
}
