import { InvalidResponseError } from '../errors.js';

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
/** Where one record ends and the next begins, as compact JSON writes it. */
const SEPARATOR = Buffer.from('},{');
/** Chunks without a parseable cut after which a parser stops trying the fast path (nested or pretty-printed lists). */
const FAST_FAILURES = 3;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** How many complete records one JSON.parse call takes at most, in bytes (a caller may write huge chunks). */
const BATCH_BYTES = 256 * 1024;
/** The key of the stand-in object put into a record's text where an oversized string was. */
const OVERSIZED_KEY = '\u0000oversized';
const revive = (_key: string, value: unknown): unknown =>
  value !== null && typeof value === 'object' && OVERSIZED_KEY in value ? new OversizedValue((value as Record<string, number>)[OVERSIZED_KEY]!, 'string') : value;

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
 * How (measured against a field-extracting scanner in docs/performance.md): at a record start, the
 * records up to the chunk's last `},{` go to one native `JSON.parse`, which also validates them (a
 * cut inside a string cannot parse, and an earlier one is tried); a byte-level splitter (nesting
 * depth and string state only, no value building) takes the rest and carries a record the chunk
 * edge cuts. A string longer than {@link MAX_STRING_BYTES} that spans chunks is dropped while it
 * streams past and replaced by an {@link OversizedValue}.
 */
export class EnvelopeParser {
  private readonly endpoint: string;
  private readonly onRecord: (value: unknown) => void;
  private state: Top = Top.BeforeRoot;
  /** Bytes consumed before the current chunk (for error positions and string lengths). */
  private position = 0;
  private readonly envelope: RawEnvelope = { dataCount: 0 };
  private failed: InvalidResponseError | undefined;
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

  /** Absolute offset before which the fast path has already been tried. */
  private fastFrom = 0;
  /** Chunks where no cut parsed: after a few, the fast path is not tried again. */
  private fastFailures = 0;

  // Complete records of the current chunk not yet parsed: one contiguous slice [batchStart, batchEnd).
  private batchStart = -1;
  private batchEnd = 0;
  private batchCount = 0;

  constructor(endpoint: string, onRecord: (value: unknown) => void) {
    this.endpoint = endpoint;
    this.onRecord = onRecord;
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
      end = literalEnd(buf, i);
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
      end = literalEnd(buf, i);
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
    else if (this.dropping) turnOverYoungGeneration(n);
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
    const record = this.tooBig ? new OversizedValue(this.position + end - this.recordAt, 'record') : this.parseRecord(decodePieces(this.pieces), this.hadOversized);
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

  // ------------------------------------------------------------- the fast path

  /**
   * At a record start `i`: parses every record of the chunk up to the last `},{` in one JSON.parse
   * call, without splitting them first, and returns the index after that comma (the splitter takes
   * the rest). A `},{` inside a string or a nested array cannot end a valid prefix: JSON.parse
   * rejects such a cut and an earlier one is tried. Returns -1 when it did nothing; then the
   * splitter reads this chunk.
   */
  private fastPath(buf: Buffer, i: number): number {
    const n = buf.length;
    // One attempt per chunk, at its first record start.
    this.fastFrom = this.position + n;
    if (this.fastFailures >= FAST_FAILURES) return -1;
    let cut = buf.lastIndexOf(SEPARATOR, n - SEPARATOR.length);
    for (let tries = 0; tries < 3 && cut > i; tries++) {
      const records = this.parseRange(buf, i, cut + 1);
      if (records !== undefined) {
        this.flushBatch(buf);
        for (let k = 0; k < records.length; k++) this.deliver(records[k]);
        return cut + 2;
      }
      cut = buf.lastIndexOf(SEPARATOR, cut - 1);
    }
    if (cut > i) this.fastFailures++;
    return -1;
  }

  /** JSON.parse of the records `buf[start, end)` as an array, or undefined if that is not valid JSON. */
  private parseRange(buf: Buffer, start: number, end: number): unknown[] | undefined {
    let text: string;
    if (start > 0 && end < buf.length) {
      // The bytes on either side are a ',' or whitespace (or the data array's '['): the array's
      // brackets are written there just for the decode, and put back at once, so JSON.parse gets
      // one flat string instead of '[' + text + ']' (which it would copy again): 3 % of `once`.
      const before = buf[start - 1]!;
      const after = buf[end]!;
      buf[start - 1] = LBRACKET;
      buf[end] = RBRACKET;
      try {
        text = decode(buf, start - 1, end + 1);
      } finally {
        buf[start - 1] = before;
        buf[end] = after;
      }
    } else {
      text = '[' + decode(buf, start, end) + ']';
    }
    try {
      return JSON.parse(text) as unknown[];
    } catch {
      return undefined;
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
            if (c === LBRACE && this.position + i >= this.fastFrom) {
              const resume = this.fastPath(buf, i);
              if (resume > i) {
                this.state = Top.AfterElementComma;
                i = resume;
                continue;
              }
            }
            if (c === COMMA || c === COLON || c === RBRACE || c === RBRACKET) throw this.unexpected(c, i, 'a record');
            this.startRecord(c, i);
            this.state = Top.Element;
            continue;
          case Top.Element: {
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

/**
 * Skipping an oversized string allocates nothing on the heap, so no minor GC runs, and the chunks
 * already read stay unreclaimed until V8 collects for external memory (after 64 MB of them): the
 * 64 MB string case measured 128 to 140 MB peak RSS. Allocating short-lived garbage about the size
 * of each skipped chunk keeps minor GCs coming, which free those chunks: 111 to 118 MB. CPU cost
 * is not measurable. Only oversized strings take this path.
 */
/** Where a bare literal (number, true, false, null) ends: the index of the delimiter after it, or -1 if the chunk ran out first. */
function literalEnd(buf: Buffer, i: number): number {
  for (const n = buf.length; i < n; i++) {
    const c = buf[i]!;
    if (isSpace(c) || c === COMMA || c === RBRACE || c === RBRACKET) return i;
  }
  return -1;
}

let _youngGarbage: unknown;
function turnOverYoungGeneration(bytes: number): void {
  _youngGarbage = new Array<number>(bytes >> 3).fill(0);
  _youngGarbage = undefined;
}

function decode(buf: Buffer, start: number, end: number): string {
  return buf.toString('utf8', start, end);
}

function decodePieces(pieces: Buffer[]): string {
  if (pieces.length === 1) return decode(pieces[0]!, 0, pieces[0]!.length);
  return Buffer.concat(pieces).toString('utf8');
}
