// The field-extracting scanner measured against the splitter in src/upstream/json-stream.ts (see
// docs/performance.md): builds only the declared fields of each record from the bytes and skips the
// others without decoding them. Kept for bench/readers.ts; not used by the exporter.
import { InvalidResponseError } from '../../src/errors.js';

/** The envelope fields of a list response (spec 2.1), as found in the body, unvalidated. */
export interface RawEnvelope {
  offset?: unknown;
  limit?: unknown;
  total?: unknown;
  success?: unknown;
  statusCode?: unknown;
  message?: unknown;
  dataCount: number;
}

/**
 * The longest string (in UTF-8 bytes, as sent) a record may carry and still have it kept. A longer
 * one is skipped without being held in memory and the record gets an {@link OversizedValue} in its
 * place: harmless in a field nobody reads, and a record the sinks count invalid when the field is used.
 */
export const MAX_STRING_BYTES = 64 * 1024;

/** The most bytes of one record kept for parsing (after oversized strings are dropped); a larger record is delivered as an {@link OversizedValue}. */
export const MAX_RECORD_BYTES = 1024 * 1024;

/** Stands in for a string (or a whole record) too large to keep: only its size is known. */
export class OversizedValue {
  constructor(
    /** At least this many bytes were skipped. */
    readonly bytes: number,
    readonly what: 'string' | 'record',
  ) {}

  /** Why a record holding it in a used field is invalid, for the log. */
  describe(): string {
    const limit = this.what === 'string' ? MAX_STRING_BYTES : MAX_RECORD_BYTES;
    return `a ${this.what} of more than ${limit} bytes (${this.bytes} bytes or more), not kept`;
  }
}

const ENVELOPE_KEYS = new Set(['offset', 'limit', 'total', 'success', 'statusCode', 'message']);

// Byte values the scanner branches on (all ASCII: a UTF-8 multi-byte sequence never contains them).
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

const BOM = [0xef, 0xbb, 0xbf];

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** How many complete records one JSON.parse call takes at most, in bytes (a caller may write huge chunks). */
const BATCH_BYTES = 256 * 1024;
/** The key of the stand-in object put into a record's text where an oversized string was. */
const OVERSIZED_KEY = '\u0000oversized';
const revive = (_key: string, value: unknown): unknown =>
  value !== null && typeof value === 'object' && OVERSIZED_KEY in value ? new OversizedValue((value as Record<string, number>)[OVERSIZED_KEY]!, 'string') : value;

/** The fields of a record to build, looked up by their bytes (length first). */
interface Projection {
  readonly byLength: ReadonlyArray<ReadonlyArray<{ readonly name: string; readonly bytes: Buffer; readonly first: number; readonly last: number }> | undefined>;
  readonly names: ReadonlySet<string>;
}

function projection(fields: readonly string[]): Projection {
  const byLength: Array<Array<{ name: string; bytes: Buffer; first: number; last: number }>> = [];
  for (const name of new Set(fields)) {
    const bytes = Buffer.from(name, 'utf8');
    if (bytes.length > 0) (byLength[bytes.length] ??= []).push({ name, bytes, first: bytes[0]!, last: bytes[bytes.length - 1]! });
  }
  return { byLength, names: new Set(fields) };
}

const declared = new Map<string, Projection>();

/**
 * Declares the only fields the exporter reads from the records of `endpoint` (a collector calls it
 * once, at load): every EnvelopeParser for that endpoint then builds records with just those
 * fields, skipping the others (`details`, `issue`...) without decoding them. The options of the
 * constructor override it.
 */
export function declareRecordFields(endpoint: string, fields: readonly string[]): void {
  declared.set(endpoint, projection(fields));
}

/** Marks an invalid literal in `literalValue`. */
const INVALID = Symbol('invalid literal');
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Where the top-level scanner is. */
const enum Top {
  BeforeRoot,
  BeforeKey, // after '{': a key or '}'
  Key, // inside a key string
  AfterKey, // expecting ':'
  BeforeValue, // expecting a member value
  Value, // inside a member value (not `data`)
  AfterValue, // expecting ',' or '}'
  AfterComma, // expecting a key
  DataStart, // expecting the '[' of `data`
  BeforeElement, // after '[': an element or ']'
  Element, // inside an element
  AfterElement, // expecting ',' or ']'
  AfterElementComma, // expecting an element
  Done, // after the root '}'
}

/**
 * Streaming parser for `{ ..., "data": [ {...}, {...} ], ... }`: calls onRecord with each element
 * of the top-level `data` array as soon as it is complete, keeps at most one record's bytes (and one
 * chunk) in memory, accepts the envelope fields before or after `data`, any key order, whitespace,
 * escapes, and UTF-8 split across chunks. Throws InvalidResponseError (needs an endpoint string) on
 * malformed JSON, a top-level value that is not an object, `data` that is not an array, or a body
 * that ends early.
 *
 * How: a byte-level splitter finds record boundaries (nesting depth and string state only, no value
 * building) and hands the complete records of each chunk, as one slice of the body, to the native
 * `JSON.parse`, which also validates them. A string longer than {@link MAX_STRING_BYTES} is dropped
 * while it streams past and replaced by an {@link OversizedValue}.
 */
export class EnvelopeParser {
  private readonly endpoint: string;
  private readonly onRecord: (value: unknown) => void;
  private state: Top = Top.BeforeRoot;
  /** Bytes consumed before the current chunk (for error positions and string lengths). */
  private position = 0;
  private readonly envelope: RawEnvelope = { dataCount: 0 };
  private failed: InvalidResponseError | undefined;
  private readonly fields: Projection | undefined;
  private readonly interner = new Interner();
  /** The record the projector just built. */
  private projected: unknown;
  /** The first byte of the current record. */
  private recFirst = 0;
  /** Bytes of a leading byte order mark seen so far. */
  private bom = 0;

  // An envelope-level value (a key, an envelope field, a skipped member): its kept bytes and structure.
  private vPieces: Buffer[] = [];
  private vBytes = 0;
  private vKeep = false;
  private vOversized = false;
  private vStack: number[] = [];
  private vLiteral = false;
  private key = '';

  // The record being split: nesting depth and string state carried across chunks.
  private depth = 0;
  private inString = false;
  private escaped = false;
  private literal = false;
  /** Index in the current chunk where the record's next kept bytes start. */
  private recStart = 0;
  /** The record's kept bytes from earlier chunks (only when a record spans chunks or held an oversized string). */
  private pieces: Buffer[] = [];
  private keptBytes = 0;
  private spans = false;
  private hadOversized = false;
  /** The record grew past MAX_RECORD_BYTES: nothing more is kept, it is delivered as an OversizedValue. */
  private tooBig = false;
  /** Absolute body offset where the record starts. */
  private recordAt = 0;
  /** Absolute body offset of the current string's opening quote. */
  private strOpen = 0;
  /** Kept bytes of the record up to the current string's opening quote (where an oversized string is cut). */
  private keptAtStrOpen = 0;
  /** Inside an oversized string: its bytes are not kept. */
  private dropping = false;

  // Complete records of the current chunk not yet parsed: one contiguous slice [batchStart, batchEnd).
  private batchStart = -1;
  private batchEnd = 0;
  private batchCount = 0;

  /**
   * `options.fields`: build each record with only these fields (the others are skipped, not
   * decoded); null builds whole records; by default, what {@link declareRecordFields} said for
   * the endpoint, else whole records.
   */
  constructor(endpoint: string, onRecord: (value: unknown) => void, options: { fields?: readonly string[] | null } = {}) {
    this.endpoint = endpoint;
    this.onRecord = onRecord;
    this.fields = options.fields === null ? undefined : options.fields ? projection(options.fields) : declared.get(endpoint);
  }

  /** Feeds the next chunk of the body. */
  write(chunk: Uint8Array | string): void {
    if (this.failed) throw this.failed;
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (buf.length > 0) this.scan(buf);
  }

  /** Ends the body; returns the envelope fields, or throws if the JSON is incomplete. */
  end(): RawEnvelope {
    if (this.failed) throw this.failed;
    if (this.state !== Top.Done) {
      throw this.fail(`the response body ended early, before the JSON was complete (after ${this.position} bytes)`);
    }
    return { ...this.envelope };
  }

  private fail(reason: string, cause?: unknown): InvalidResponseError {
    this.failed = new InvalidResponseError(this.endpoint, `Invalid response from ${this.endpoint}: ${reason}`, { cause });
    return this.failed;
  }

  private unexpected(c: number, at: number, what: string): InvalidResponseError {
    const ch = c < 0x80 ? JSON.stringify(String.fromCharCode(c)) : `byte 0x${c.toString(16)}`;
    return this.fail(`malformed JSON at byte ${this.position + at}: expected ${what}, found ${ch}`);
  }

  private snippet(buf: Buffer, i: number): string {
    return JSON.stringify(decode(buf, i, Math.min(buf.length, i + 16)));
  }

  // ------------------------------------------------------------- envelope-level values

  /** Begins an envelope-level value whose first byte `c` is at `i`; bare literals are always kept so they can be validated. */
  private startValue(c: number, keep: boolean): void {
    this.vPieces = [];
    this.vBytes = 0;
    this.vOversized = false;
    this.vStack.length = 0;
    this.inString = false;
    this.escaped = false;
    this.vLiteral = c !== LBRACE && c !== LBRACKET && c !== QUOTE;
    this.vKeep = keep || this.vLiteral;
  }

  /** Scans value bytes from `i`; returns the index after the value's last byte, or -1 if the chunk ran out. Checks bracket matching of skipped values. */
  private scanValue(buf: Buffer, i: number): number {
    const n = buf.length;
    const start = i;
    const stack = this.vStack;
    let end = -1;
    if (this.vLiteral) {
      for (; i < n; i++) {
        const c = buf[i]!;
        if (isSpace(c) || c === COMMA || c === RBRACE || c === RBRACKET) {
          end = i;
          break;
        }
      }
    } else {
      for (; i < n; i++) {
        const c = buf[i]!;
        if (this.inString) {
          if (this.escaped) this.escaped = false;
          else if (c === BACKSLASH) this.escaped = true;
          else if (c === QUOTE) {
            this.inString = false;
            if (stack.length === 0) {
              end = i + 1;
              break;
            }
          }
        } else if (c === QUOTE) this.inString = true;
        else if (c === LBRACE) stack.push(RBRACE);
        else if (c === LBRACKET) stack.push(RBRACKET);
        else if (c === RBRACE || c === RBRACKET) {
          if (stack.pop() !== c) throw this.unexpected(c, i, 'a matching bracket');
          if (stack.length === 0) {
            end = i + 1;
            break;
          }
        }
      }
    }
    if (this.vKeep && !this.vOversized) {
      const upTo = end < 0 ? n : end;
      if (this.vBytes + upTo - start > MAX_STRING_BYTES) {
        // An envelope value this large is nothing the exporter can use: keep only its size.
        this.vOversized = true;
        this.vPieces = [];
      } else {
        this.vPieces.push(end < 0 ? buf.slice(start, upTo) : buf.subarray(start, upTo));
      }
    }
    this.vBytes += (end < 0 ? n : end) - start;
    return end;
  }

  private parseValue(what: string): unknown {
    if (this.vOversized) return new OversizedValue(this.vBytes, 'string');
    const text = decodePieces(this.vPieces);
    this.vPieces = [];
    try {
      return JSON.parse(text);
    } catch (err) {
      throw this.fail(`malformed JSON in ${what} (before byte ${this.position}): ${(err as Error).message}`, err);
    }
  }

  // ------------------------------------------------------------- records

  private startRecord(c: number, i: number): void {
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.literal = c !== LBRACE && c !== LBRACKET && c !== QUOTE;
    this.recStart = i;
    this.recFirst = c;
    this.spans = false;
    this.hadOversized = false;
    this.tooBig = false;
    this.dropping = false;
    this.recordAt = this.position + i;
    this.keptBytes = 0;
    this.keptAtStrOpen = 0;
  }

  /**
   * Splits the current record from `i`: returns the index after its last byte, or -1 if the chunk
   * ran out (its bytes are then carried). The hot loop: depth and string state only.
   */
  private scanRecord(buf: Buffer, i: number): number {
    const n = buf.length;
    let end = -1;
    if (this.literal) {
      for (; i < n; i++) {
        const c = buf[i]!;
        if (isSpace(c) || c === COMMA || c === RBRACE || c === RBRACKET) {
          end = i;
          break;
        }
      }
    } else {
      let depth = this.depth;
      let inString = this.inString;
      let escaped = this.escaped;
      const base = this.position;
      while (i < n) {
        if (inString) {
          if (escaped) {
            escaped = false;
            i++;
            continue;
          }
          // Jump to the closing quote natively: a quote after an even run of backslashes.
          const from = i;
          let q = buf.indexOf(QUOTE, i);
          while (q >= 0) {
            let b = q - 1;
            while (b >= from && buf[b] === BACKSLASH) b--;
            if (((q - 1 - b) & 1) === 0) break;
            q = buf.indexOf(QUOTE, q + 1);
          }
          if (q < 0) {
            // The string goes on in the next chunk, which starts escaped after an odd run of backslashes.
            let b = n - 1;
            while (b >= from && buf[b] === BACKSLASH) b--;
            escaped = ((n - 1 - b) & 1) === 1;
            i = n;
            break;
          }
          i = q + 1;
          inString = false;
          if (this.dropping || base + i - this.strOpen > MAX_STRING_BYTES + 2) this.closeOversized(buf, i);
          if (depth === 0) {
            end = i;
            break;
          }
          continue;
        }
        const c = buf[i++]!;
        if (c === QUOTE) {
          inString = true;
          this.strOpen = base + i - 1;
        } else if (c === LBRACE || c === LBRACKET) depth++;
        else if (c === RBRACE || c === RBRACKET) {
          if (--depth === 0) {
            end = i;
            break;
          }
        }
      }
      this.depth = depth;
      this.inString = inString;
      this.escaped = escaped;
    }
    if (end < 0) this.carry(buf);
    return end;
  }

  /** Keeps the rest of the chunk for the record that continues in the next one; drops an oversized string as it streams. */
  private carry(buf: Buffer): void {
    const n = buf.length;
    if (this.inString && !this.dropping) {
      const open = this.strOpenIn();
      if (open >= this.recStart) this.keptAtStrOpen = this.keptBytes + (open - this.recStart);
      if (this.position + n - this.strOpen > MAX_STRING_BYTES + 1) {
        // The string is already too long: cut the kept bytes back to its opening quote and stop keeping.
        this.cutAtStringOpen(buf);
        this.dropping = true;
      }
    }
    if (!this.dropping && n > this.recStart) this.keep(buf.slice(this.recStart, n));
    this.spans = true;
    this.recStart = 0;
  }

  private keep(bytes: Buffer): void {
    if (this.tooBig) return;
    if (this.keptBytes + bytes.length > MAX_RECORD_BYTES) {
      this.tooBig = true;
      this.pieces = [];
      this.keptBytes = 0;
      return;
    }
    this.pieces.push(bytes);
    this.keptBytes += bytes.length;
  }

  /** Where the current string opened, relative to the chunk (negative when in an earlier chunk). */
  private strOpenIn(): number {
    return this.strOpen - this.position;
  }

  /** Truncates the kept bytes to just before the current string's opening quote. */
  private cutAtStringOpen(buf: Buffer): void {
    const open = this.strOpenIn();
    if (open >= this.recStart) {
      // The string opened in this chunk: keep the record's bytes before it.
      if (open > this.recStart) this.keep(buf.slice(this.recStart, open));
    } else {
      // It opened earlier: trim the carried pieces back to its opening quote.
      let excess = this.keptBytes - this.keptAtStrOpen;
      while (excess > 0 && this.pieces.length > 0) {
        const last = this.pieces[this.pieces.length - 1]!;
        if (last.length <= excess) {
          this.pieces.pop();
          excess -= last.length;
        } else {
          this.pieces[this.pieces.length - 1] = last.subarray(0, last.length - excess);
          excess = 0;
        }
      }
      this.keptBytes = Math.min(this.keptBytes, this.keptAtStrOpen);
    }
    this.recStart = Math.max(this.recStart, open);
  }

  /** At the closing quote (index `i` is after it) of a string over the limit: puts a stand-in where it was. */
  private closeOversized(buf: Buffer, i: number): void {
    const length = this.position + i - this.strOpen - 2;
    if (!this.dropping) this.cutAtStringOpen(buf);
    this.dropping = false;
    this.hadOversized = true;
    this.spans = true;
    this.keep(Buffer.from(`{${JSON.stringify(OVERSIZED_KEY)}:${length}}`));
    this.recStart = i;
  }

  /** A record ended at `end` (exclusive) in this chunk: batch it, or parse it alone if it spans chunks or held an oversized string. */
  private recordDone(buf: Buffer, end: number): void {
    if (!this.spans) {
      if (this.batchStart < 0) this.batchStart = this.recStart;
      else if (end - this.batchStart > BATCH_BYTES) {
        this.flushBatch(buf);
        this.batchStart = this.recStart;
      }
      this.batchEnd = end;
      this.batchCount++;
      return;
    }
    this.flushBatch(buf);
    if (end > this.recStart) this.keep(buf.subarray(this.recStart, end));
    const record = this.tooBig
      ? new OversizedValue(this.position + end - this.recordAt, 'record')
      : this.fields !== undefined && this.recFirst === LBRACE
        ? this.projectWhole(this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces))
        : this.parseRecord(decodePieces(this.pieces), this.hadOversized);
    this.pieces = [];
    this.keptBytes = 0;
    this.deliver(record);
  }

  private parseRecord(text: string, withStandIns: boolean): unknown {
    try {
      return withStandIns ? JSON.parse(text, revive) : JSON.parse(text);
    } catch (err) {
      throw this.fail(`malformed JSON in record ${this.envelope.dataCount} of "data" (before byte ${this.position}): ${(err as Error).message}`, err);
    }
  }

  private deliver(record: unknown): void {
    this.envelope.dataCount++;
    // The caller's errors (e.g. a sink rejecting a record) pass through unchanged.
    this.onRecord(record);
  }

  /** Parses the batched records of this chunk in one JSON.parse call and delivers them in order. */
  private flushBatch(buf: Buffer): void {
    if (this.batchStart < 0) return;
    const text = decode(buf, this.batchStart, this.batchEnd);
    const count = this.batchCount;
    this.batchStart = -1;
    this.batchCount = 0;
    let records: unknown[];
    if (count === 1) {
      records = [this.parseRecord(text, false)];
    } else {
      const first = this.envelope.dataCount;
      try {
        records = JSON.parse('[' + text + ']') as unknown[];
      } catch (err) {
        throw this.fail(`malformed JSON in records ${first} to ${first + count - 1} of "data" (before byte ${this.position + this.batchEnd}): ${(err as Error).message}`, err);
      }
    }
    for (let k = 0; k < records.length; k++) this.deliver(records[k]);
  }

  // ------------------------------------------------------------- the projector

  /** Projects a record whose bytes are all in `bytes`. */
  private projectWhole(bytes: Buffer): unknown {
    const end = this.project(bytes, 0, bytes.length);
    if (end !== bytes.length) throw this.recordFail('the record ended early');
    const record = this.projected;
    this.projected = undefined;
    return record;
  }

  private recordFail(reason: string): InvalidResponseError {
    return this.fail(`malformed JSON in record ${this.envelope.dataCount} of "data" (before byte ${this.position}): ${reason}`);
  }

  private recordUnexpected(buf: Buffer, i: number, what: string): InvalidResponseError {
    const c = buf[i]!;
    return this.recordFail(`expected ${what}, found ${c < 0x80 ? JSON.stringify(String.fromCharCode(c)) : `byte 0x${c.toString(16)}`}`);
  }

  /**
   * Builds the declared fields of the object record starting at `buf[i]` (a '{') into
   * `this.projected`; returns the index after its '}', or -1 if `n` came first. Used values are
   * decoded (strings natively, with escapes by JSON.parse); skipped ones are only delimited:
   * strings by a native search for their closing quote, containers by matching brackets,
   * literals checked against the JSON grammar.
   */
  private project(buf: Buffer, i: number, n: number): number {
    const out: Record<string, unknown> = {};
    i = skipSpace(buf, i + 1, n);
    if (i >= n) return -1;
    if (buf[i] === RBRACE) {
      this.projected = out;
      return i + 1;
    }
    for (;;) {
      if (buf[i] !== QUOTE) throw this.recordUnexpected(buf, i, 'a key string');
      const keyEnd = closingQuote(buf, i + 1, n);
      if (keyEnd < 0) return -1;
      const name = this.fieldName(buf, i + 1, keyEnd);
      i = skipSpace(buf, keyEnd + 1, n);
      if (i >= n) return -1;
      if (buf[i] !== COLON) throw this.recordUnexpected(buf, i, "':'");
      i = skipSpace(buf, i + 1, n);
      if (i >= n) return -1;
      const c = buf[i]!;
      let end: number;
      if (c === QUOTE) {
        const q = closingQuote(buf, i + 1, n);
        if (q < 0) return -1;
        end = q + 1;
        if (name !== undefined) out[name] = this.stringValue(buf, i, end);
      } else if (c === LBRACE || c === LBRACKET) {
        end = containerEnd(buf, i, n);
        if (end === -1) return -1;
        if (end === -2) throw this.recordFail('mismatched brackets');
        if (name !== undefined) out[name] = this.sliceValue(buf, i, end);
      } else {
        end = i;
        while (end < n && !isDelimiter(buf[end]!)) end++;
        if (end >= n) return -1;
        const v = literalValue(buf, i, end);
        if (v === INVALID) throw this.recordFail(`not a JSON value: ${JSON.stringify(buf.toString('utf8', i, Math.min(end, i + 24)))}`);
        if (name !== undefined) out[name] = v;
      }
      i = skipSpace(buf, end, n);
      if (i >= n) return -1;
      const d = buf[i];
      if (d === RBRACE) {
        this.projected = out;
        return i + 1;
      }
      if (d !== COMMA) throw this.recordUnexpected(buf, i, "',' or '}'");
      i = skipSpace(buf, i + 1, n);
      if (i >= n) return -1;
    }
  }

  /** The declared field whose name is the key `buf[start, end)` (quotes excluded), if any. */
  private fieldName(buf: Buffer, start: number, end: number): string | undefined {
    const candidates = this.fields!.byLength[end - start];
    if (candidates !== undefined) {
      const first = buf[start];
      const last = buf[end - 1];
      next: for (let j = 0; j < candidates.length; j++) {
        const f = candidates[j]!;
        if (f.first !== first || f.last !== last) continue;
        const b = f.bytes;
        for (let k = 1; k < b.length - 1; k++) if (buf[start + k] !== b[k]) continue next;
        return f.name;
      }
    }
    // A key written with escapes has other bytes than its name: decode it (rare).
    for (let k = start; k < end; k++) {
      if (buf[k] === BACKSLASH) {
        const key = this.sliceValue(buf, start - 1, end + 1) as string;
        return this.fields!.names.has(key) ? key : undefined;
      }
    }
    return undefined;
  }

  /** A used string value `buf[start, end)` (quotes included). */
  private stringValue(buf: Buffer, start: number, end: number): unknown {
    if (end - start - 2 > MAX_STRING_BYTES) return new OversizedValue(end - start - 2, 'string');
    let ascii = true;
    let hash = 0x811c9dc5;
    for (let k = start + 1; k < end - 1; k++) {
      const c = buf[k]!;
      if (c === BACKSLASH || c < 0x20) return this.sliceValue(buf, start, end);
      if (c >= 0x80) ascii = false;
      hash = Math.imul(hash ^ c, 0x01000193);
    }
    if (!ascii) return utf8(buf, start + 1, end - 1);
    if (end - start - 2 <= INTERN_MAX_BYTES) return this.interner.get(buf, start + 1, end - 1, hash >>> 0);
    return latin1(buf, start + 1, end - 1);
  }

  /** JSON.parse of `buf[start, end)`, reviving stand-ins of oversized strings. */
  private sliceValue(buf: Buffer, start: number, end: number): unknown {
    try {
      return JSON.parse(buf.toString('utf8', start, end), this.hadOversized ? revive : undefined);
    } catch (err) {
      throw this.recordFail((err as Error).message);
    }
  }

  // ------------------------------------------------------------- the top level

  private scan(buf: Buffer): void {
    const n = buf.length;
    let i = 0;
    try {
      while (i < n) {
        const c = buf[i]!;
        switch (this.state) {
          case Top.BeforeRoot:
            if (isSpace(c)) break;
            // A UTF-8 byte order mark (EF BB BF), possibly split across chunks.
            if (this.position + i === this.bom && c === BOM[this.bom]) {
              this.bom++;
              break;
            }
            if (c !== LBRACE) throw this.fail(`the body is not a JSON object (it starts with ${this.snippet(buf, i)})`);
            this.state = Top.BeforeKey;
            break;
          case Top.BeforeKey:
          case Top.AfterComma:
            if (isSpace(c)) break;
            if (c === RBRACE && this.state === Top.BeforeKey) {
              this.state = Top.Done;
              break;
            }
            if (c !== QUOTE) throw this.unexpected(c, i, 'a key string');
            this.startValue(c, true);
            this.state = Top.Key;
            continue;
          case Top.Key: {
            const end = this.scanValue(buf, i);
            if (end < 0) {
              i = n;
              continue;
            }
            const key = this.parseValue('a key');
            this.key = typeof key === 'string' ? key : '';
            this.state = Top.AfterKey;
            i = end;
            continue;
          }
          case Top.AfterKey:
            if (isSpace(c)) break;
            if (c !== COLON) throw this.unexpected(c, i, "':'");
            this.state = this.key === 'data' ? Top.DataStart : Top.BeforeValue;
            break;
          case Top.BeforeValue:
            if (isSpace(c)) break;
            if (c === COMMA || c === COLON || c === RBRACE || c === RBRACKET) throw this.unexpected(c, i, 'a value');
            // Unknown members are checked for structure but not kept, so a large one costs no memory.
            this.startValue(c, ENVELOPE_KEYS.has(this.key));
            this.state = Top.Value;
            continue;
          case Top.Value: {
            const end = this.scanValue(buf, i);
            if (end < 0) {
              i = n;
              continue;
            }
            const value = this.vKeep ? this.parseValue(`the "${this.key}" field`) : undefined;
            if (ENVELOPE_KEYS.has(this.key)) (this.envelope as unknown as Record<string, unknown>)[this.key] = value;
            this.state = Top.AfterValue;
            i = end;
            continue;
          }
          case Top.AfterValue:
            if (isSpace(c)) break;
            if (c === COMMA) this.state = Top.AfterComma;
            else if (c === RBRACE) this.state = Top.Done;
            else throw this.unexpected(c, i, "',' or '}'");
            break;
          case Top.DataStart:
            if (isSpace(c)) break;
            if (c !== LBRACKET) throw this.fail(`"data" is not an array (it starts with ${this.snippet(buf, i)})`);
            this.state = Top.BeforeElement;
            break;
          case Top.BeforeElement:
          case Top.AfterElementComma:
            if (isSpace(c)) break;
            if (c === RBRACKET && this.state === Top.BeforeElement) {
              this.state = Top.AfterValue;
              break;
            }
            if (c === COMMA || c === COLON || c === RBRACE || c === RBRACKET) throw this.unexpected(c, i, 'a record');
            this.startRecord(c, i);
            this.state = Top.Element;
            continue;
          case Top.Element: {
            if (this.fields !== undefined && !this.spans && this.recFirst === LBRACE && i === this.recStart) {
              // The fast path: build the declared fields straight from the bytes; a record the chunk cuts falls back to the splitter.
              const end = this.project(buf, i, buf.length);
              if (end >= 0) {
                this.flushBatch(buf);
                this.state = Top.AfterElement;
                this.deliver(this.projected);
                this.projected = undefined;
                i = end;
                continue;
              }
            }
            const end = this.scanRecord(buf, i);
            if (end < 0) {
              i = n;
              continue;
            }
            this.state = Top.AfterElement;
            this.recordDone(buf, end);
            i = end;
            continue;
          }
          case Top.AfterElement:
            if (isSpace(c)) break;
            if (c === COMMA) this.state = Top.AfterElementComma;
            else if (c === RBRACKET) {
              this.flushBatch(buf);
              this.state = Top.AfterValue;
            } else throw this.unexpected(c, i, "',' or ']'");
            break;
          case Top.Done:
            if (isSpace(c)) break;
            throw this.fail(`unexpected data after the end of the JSON object at byte ${this.position + i}`);
        }
        i++;
      }
      this.flushBatch(buf);
    } catch (err) {
      // Records complete before the error are not delivered: the body is invalid as a whole.
      this.batchStart = -1;
      this.batchCount = 0;
      throw err;
    }
    this.position += n;
  }
}

/** How far closingQuote looks byte by byte before it asks the native search. */
const SHORT_STRING = 48;

/** Interner slots (a power of two); at most half are filled. */
const INTERN_SLOTS = 4096;
/** Longer strings are not interned. */
const INTERN_MAX_BYTES = 64;

/**
 * The short strings a parser has decoded, by their bytes: `state`, `product`, `status` and
 * `ownerName` take a few dozen values in a list of 100,000 alerts, and decoding each anew costs a
 * native call (it showed in the profile). Open addressing on an FNV-1a hash; bounded.
 */
class Interner {
  private readonly keys: Array<Buffer | undefined> = new Array<Buffer | undefined>(INTERN_SLOTS).fill(undefined);
  private readonly texts: string[] = new Array<string>(INTERN_SLOTS).fill('');
  private used = 0;

  /** The ASCII string of `buf[start, end)` whose FNV-1a hash is `hash`. */
  get(buf: Buffer, start: number, end: number, hash: number): string {
    const len = end - start;
    let slot = hash & (INTERN_SLOTS - 1);
    for (let probe = 0; probe < 8; probe++, slot = (slot + 1) & (INTERN_SLOTS - 1)) {
      const key = this.keys[slot];
      if (key === undefined) {
        const text = latin1(buf, start, end);
        if (this.used < INTERN_SLOTS / 2) {
          this.keys[slot] = Buffer.from(buf.subarray(start, end));
          this.texts[slot] = text;
          this.used++;
        }
        return text;
      }
      if (key.length === len) {
        let k = 0;
        while (k < len && key[k] === buf[start + k]) k++;
        if (k === len) return this.texts[slot]!;
      }
    }
    return latin1(buf, start, end);
  }
}

function isDelimiter(c: number): boolean {
  return c === COMMA || c === RBRACE || c === RBRACKET || isSpace(c);
}

function skipSpace(buf: Buffer, i: number, n: number): number {
  while (i < n && isSpace(buf[i]!)) i++;
  return i;
}

/** The index of the quote closing a string whose content starts at `from`, or -1 if not before `n`. */
function closingQuote(buf: Buffer, from: number, n: number): number {
  // Most strings are short: look byte by byte first, a native search costs a call.
  const stop = Math.min(n, from + SHORT_STRING);
  let k = from;
  while (k < stop) {
    const c = buf[k]!;
    if (c === QUOTE) return k;
    k += c === BACKSLASH ? 2 : 1;
  }
  if (k >= n) return -1;
  let q = buf.indexOf(QUOTE, k);
  while (q >= 0 && q < n) {
    let b = q - 1;
    while (b >= from && buf[b] === BACKSLASH) b--;
    if (((q - 1 - b) & 1) === 0) return q;
    q = buf.indexOf(QUOTE, q + 1);
  }
  return -1;
}

/** The index after the container opening at `buf[i]`, -1 if it does not close before `n`, -2 if its brackets do not match. */
function containerEnd(buf: Buffer, i: number, n: number): number {
  const stack: number[] = [];
  while (i < n) {
    const c = buf[i++]!;
    if (c === QUOTE) {
      const q = closingQuote(buf, i, n);
      if (q < 0) return -1;
      i = q + 1;
    } else if (c === LBRACE) stack.push(RBRACE);
    else if (c === LBRACKET) stack.push(RBRACKET);
    else if (c === RBRACE || c === RBRACKET) {
      if (stack.pop() !== c) return -2;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

/** The value of a bare literal `buf[start, end)` (true, false, null or a number), or INVALID. */
function literalValue(buf: Buffer, start: number, end: number): unknown {
  const len = end - start;
  const c = buf[start];
  if (len === 4 && c === 0x74 && buf[start + 1] === 0x72 && buf[start + 2] === 0x75 && buf[start + 3] === 0x65) return true;
  if (len === 5 && c === 0x66 && buf[start + 1] === 0x61 && buf[start + 2] === 0x6c && buf[start + 3] === 0x73 && buf[start + 4] === 0x65) return false;
  if (len === 4 && c === 0x6e && buf[start + 1] === 0x75 && buf[start + 2] === 0x6c && buf[start + 3] === 0x6c) return null;
  const text = latin1(buf, start, end);
  return NUMBER.test(text) ? Number(text) : INVALID;
}

/** Buffer's own decoders, without toString's argument checks (they show in a profile at a million calls). */
interface Slices {
  utf8Slice(start: number, end: number): string;
  latin1Slice(start: number, end: number): string;
}
const direct = typeof (Buffer.prototype as unknown as Partial<Slices>).utf8Slice === 'function' && typeof (Buffer.prototype as unknown as Partial<Slices>).latin1Slice === 'function';
const utf8 = direct ? (b: Buffer, s: number, e: number) => (b as unknown as Slices).utf8Slice(s, e) : (b: Buffer, s: number, e: number) => b.toString('utf8', s, e);
const latin1 = direct ? (b: Buffer, s: number, e: number) => (b as unknown as Slices).latin1Slice(s, e) : (b: Buffer, s: number, e: number) => b.toString('latin1', s, e);

function decode(buf: Buffer, start: number, end: number): string {
  return utf8(buf, start, end);
}

function decodePieces(pieces: Buffer[]): string {
  if (pieces.length === 1) return decode(pieces[0]!, 0, pieces[0]!.length);
  return Buffer.concat(pieces).toString('utf8');
}
