import { InvalidResponseError } from '../errors.js';
import { scanAlerts, Slot, ROW_INTS, type AlertScan } from './alert-scan.js';
import { FAST_WINDOW, parseWhole } from './fast-path.js';
import { COLON, COMMA, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET, decode, isSpace, turnOverYoungGeneration } from './json-bytes.js';
import { reviveOversized } from './limits.js';
import { RecordSplitter } from './record-splitter.js';
import { ValueScanner } from './value-scanner.js';

/** The most bytes of a cut record that the alert scanner takes from the chunk before (scannedCarried): half its window. */
const MAX_CARRIED = FAST_WINDOW / 2;

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

const ENVELOPE_KEYS = new Set(['offset', 'limit', 'total', 'success', 'statusCode', 'message']);

const BOM = [0xef, 0xbb, 0xbf];
/** Chunks without a parseable cut after which a parser stops trying the fast path (nested or pretty-printed lists). */
const FAST_FAILURES = 3;
/** How many complete records one JSON.parse call takes at most, in bytes (a caller may write huge chunks). */
const BATCH_BYTES = 256 * 1024;

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
 * that ends early. After an error, its own or the record callback's, every later call throws it
 * again. The size limits of src/upstream/limits.ts hold whatever the chunking.
 *
 * How (measured against a field-extracting scanner in docs/performance.md): at a record start, the
 * records up to the last `},{` within FAST_WINDOW bytes go to one native `JSON.parse`, which also
 * validates them (src/upstream/fast-path.ts); a byte-level splitter (src/upstream/record-splitter.ts)
 * takes the rest, carries a record the chunk edge cuts and applies the limits. Envelope values go
 * through src/upstream/value-scanner.ts. The caller's chunks are read, never written.
 */
export class EnvelopeParser {
  private readonly endpoint: string;
  private readonly onRecord: (value: unknown) => void;
  private readonly onScanned: ((scan: AlertScan, from: number, to: number) => void) | undefined;
  private state: Top = Top.BeforeRoot;
  /** Bytes consumed before the current chunk (for error positions and string lengths). */
  private position = 0;
  private readonly envelope: RawEnvelope = { dataCount: 0 };
  /** The error that ended the parse, the body's or the record callback's: every later call throws it again. */
  private failed: { error: unknown } | undefined;
  /** Bytes of a leading byte order mark seen so far. */
  private bom = 0;
  private key = '';
  private readonly value = new ValueScanner((c, i, what) => this.unexpected(c, i, what));
  private readonly splitter = new RecordSplitter();

  /** Absolute offset before which the fast path has already been tried. */
  private fastFrom = 0;
  /** Chunks where no cut parsed: after a few, the fast path is not tried again. */
  private fastFailures = 0;

  // Complete records of the current chunk not yet parsed: one contiguous slice [batchStart, batchEnd).
  private batchStart = -1;
  private batchEnd = 0;
  private batchCount = 0;

  /**
   * `onScanned`, when given, takes alert records as rows `[from, to)` of a scan
   * (src/upstream/alert-scan.ts) where the scanner reads them; onRecord takes the others, parsed.
   */
  constructor(endpoint: string, onRecord: (value: unknown) => void, onScanned?: (scan: AlertScan, from: number, to: number) => void) {
    this.endpoint = endpoint;
    this.onRecord = onRecord;
    this.onScanned = onScanned;
  }

  /** Feeds the next chunk of the body. */
  write(chunk: Uint8Array | string): void {
    if (this.failed) throw this.failed.error;
    // A view of the caller's bytes (a Buffer's too), never a copy.
    // Stryker disable next-line StringLiteral: equivalent, Buffer.from reads a string as UTF-8 when the encoding is empty
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.scan(buf);
  }

  /** Ends the body; returns the envelope fields, or throws if the JSON is incomplete. */
  end(): RawEnvelope {
    if (this.failed) throw this.failed.error;
    if (this.state !== Top.Done) {
      throw this.fail(`the response body ended early, before the JSON was complete (after ${this.position} bytes)`);
    }
    return { ...this.envelope };
  }

  private fail(reason: string, cause?: unknown): InvalidResponseError {
    const error = new InvalidResponseError(this.endpoint, `Invalid response from ${this.endpoint}: ${reason}`, { cause });
    this.failed = { error };
    return error;
  }

  private unexpected(c: number, at: number, what: string): InvalidResponseError {
    const ch = c < 0x80 ? JSON.stringify(String.fromCharCode(c)) : `byte 0x${c.toString(16)}`;
    return this.fail(`malformed JSON at byte ${this.position + at}: expected ${what}, found ${ch}`);
  }

  private snippet(buf: Buffer, i: number): string {
    return JSON.stringify(decode(buf, i, Math.min(buf.length, i + 16)));
  }

  /** Parses the envelope value that ended at `end` (exclusive) in this chunk. */
  private parseValue(what: string, end: number): unknown {
    try {
      return this.value.take();
    } catch (err) {
      throw this.fail(`malformed JSON in ${what} (before byte ${this.position + end}): ${(err as Error).message}`, err);
    }
  }

  // ------------------------------------------------------------- records

  /** A record ended at `end` (exclusive) in this chunk: batch it, or parse it alone if it spans chunks, is too large or held an oversized string. */
  private recordDone(buf: Buffer, end: number): void {
    const start = this.splitter.start;
    const whole = this.splitter.complete(buf, end, this.position);
    if (whole === undefined) {
      if (this.batchStart < 0) this.batchStart = start;
      else if (end - this.batchStart > BATCH_BYTES) {
        this.flushBatch(buf);
        this.batchStart = start;
      }
      this.batchEnd = end;
      this.batchCount++;
      return;
    }
    this.flushBatch(buf);
    this.deliver('text' in whole ? this.parseRecord(whole.text, whole.standIns, this.position + end) : whole);
  }

  /** Parses one record that ended before body byte `end`. */
  private parseRecord(text: string, withStandIns: boolean, end: number): unknown {
    try {
      return withStandIns ? JSON.parse(text, reviveOversized) : JSON.parse(text);
    } catch (err) {
      throw this.fail(`malformed JSON in record ${this.envelope.dataCount} of "data" (before byte ${end}): ${(err as Error).message}`, err);
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
      // Stryker disable next-line BooleanLiteral: equivalent, reviveOversized gives back a text without stand-ins (a batch has none) unchanged
      records = [this.parseRecord(text, false, this.position + this.batchEnd)];
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

  /** At a record start `i`: the fast path; returns the index to go on from, or -1 when the splitter reads this record. */
  private fastPath(buf: Buffer, i: number): number {
    // Tried again after a success (the chunk may hold more than a window); once per chunk otherwise.
    // When the fast path is tried changes only the speed: it gives the records the splitter gives, within
    // the limits (src/upstream/fast-path.ts), so the mutants of these choices are equivalent.
    // Stryker disable next-line ArithmeticOperator: equivalent, see above
    this.fastFrom = this.position + buf.length;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, see above
    if (this.fastFailures >= FAST_FAILURES) return -1;
    if (this.onScanned) {
      const resume = this.scanned(buf, i, this.onScanned);
      if (resume > 0) return resume;
    }
    const fast = parseWhole(buf, i);
    if (fast === undefined) return -1;
    if (fast === 'failed') {
      // Stryker disable next-line UpdateOperator: equivalent, see above
      this.fastFailures++;
      return -1;
    }
    this.flushBatch(buf);
    for (let k = 0; k < fast.records.length; k++) this.deliver(fast.records[k]);
    // Stryker disable next-line ArithmeticOperator: equivalent, see above
    this.fastFrom = this.position + fast.resume;
    return fast.resume;
  }

  /**
   * At a record start `i`: the records the alert scanner reads within the fast path's window, each
   * delivered as its row (or parsed, where the scanner flags it); the index to go on from, or -1
   * when the scanner read none (then the fast path parses them).
   */
  // Whether the scanner or the fast path reads a record changes only the speed (both give JSON.parse's
  // values, tested against it in test/sources/alerts-scanned.test.ts), so the mutants marked below,
  // which move records from one to the other or parse a row the scanner read, are equivalent, as in fastPath.
  // Stryker disable next-line BlockStatement: equivalent, see above (no rows: the fast path reads them)
  private scanned(buf: Buffer, i: number, onScanned: (scan: AlertScan, from: number, to: number) => void, prefix?: Buffer): number {
    const scan = scanAlerts(buf, i, FAST_WINDOW, prefix);
    // Stryker disable next-line ConditionalExpression,UnaryOperator: equivalent, see above
    if (scan === undefined) return -1;
    this.flushBatch(buf);
    const ints = scan.ints;
    // Runs of rows the scanner read go to onScanned together; each row it flagged, parsed, in between.
    let from = 0;
    for (let k = 0; k <= scan.count; k++) {
      const at = k * ROW_INTS;
      // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, see above (a row the scanner read, parsed instead)
      if (k < scan.count && ints[at + Slot.Slow] === 0) continue;
      // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, an empty run adds nothing
      if (k > from) {
        this.envelope.dataCount += k - from;
        onScanned(scan, from, k);
      }
      from = k + 1;
      // A flagged row is valid JSON (the scanner validated it) without stand-ins, so parseRecord's position and stand-in flag are never read.
      // Stryker disable next-line ArithmeticOperator,BooleanLiteral,LogicalOperator: equivalent, see the line above (Slot.Start is 0, so at - Slot.Start is at)
      if (k < scan.count) this.deliver(this.parseRecord(decode(scan.input, ints[at + Slot.Start]!, ints[at + Slot.End]!), false, this.position + i - (prefix?.length ?? 0) + ints[at + Slot.End]!));
    }
    // The scanner allocates nothing, so minor GCs, which free the chunks already read, come seldom:
    // half of what it read in garbage keeps them coming (a million alerts: 73 MB peak RSS with a
    // quarter, 82 without; 100,000 read through Node's http: 65 MB with half, 68 with a quarter).
    // Stryker disable next-line ArithmeticOperator: equivalent, memory only (how much garbage)
    turnOverYoungGeneration((scan.resume - i) >> 1);
    // Stryker disable next-line ArithmeticOperator: equivalent, see fastPath
    this.fastFrom = this.position + scan.resume;
    return scan.resume;
  }

  /**
   * At the start of a chunk, inside a record the splitter carried from the chunk before: the records
   * the alert scanner reads from that record's carried bytes on (see scanned()); the index in this
   * chunk to go on from, or -1 when the splitter goes on with the record. A record cut by every
   * chunk edge was otherwise split byte by byte and parsed alone: one record in a hundred of the
   * open alerts, and most of the splitter's and JSON.parse's work (docs/performance.md).
   */
  private scannedCarried(buf: Buffer, onScanned: (scan: AlertScan, from: number, to: number) => void): number {
    const carried = this.splitter.carried();
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, a longer prefix only leaves less room (scanAlerts)
    if (carried === undefined || carried.length > MAX_CARRIED) return -1;
    const resume = this.scanned(buf, 0, onScanned, carried);
    if (resume > 0) this.splitter.drop();
    return resume;
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
            // A mark cut short is no mark: its bytes are not UTF-8 text.
            if (c !== LBRACE || (this.bom > 0 && this.bom < BOM.length)) throw this.fail(`the body is not a JSON object (it starts with ${this.snippet(buf, i)})`);
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
            this.value.start(c, true);
            this.state = Top.Key;
            continue;
          case Top.Key: {
            const end = this.value.scan(buf, i);
            if (end < 0) {
              i = n;
              continue;
            }
            const key = this.parseValue('a key', end);
            // (A key too long to keep is no envelope key: String gives it a name none has.)
            this.key = String(key);
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
            this.value.start(c, ENVELOPE_KEYS.has(this.key));
            this.state = Top.Value;
            continue;
          case Top.Value: {
            const end = this.value.scan(buf, i);
            if (end < 0) {
              i = n;
              continue;
            }
            const value = this.value.kept ? this.parseValue(`the "${this.key}" field`, end) : undefined;
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
            // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: equivalent, as in fastPath: when it is tried changes only the speed
            if (c === LBRACE && this.position + i >= this.fastFrom) {
              const resume = this.fastPath(buf, i);
              // Stryker disable next-line EqualityOperator: equivalent, a resume is never the record start itself
              if (resume > i) {
                this.state = Top.AfterElementComma;
                i = resume;
                continue;
              }
            }
            if (c === COMMA || c === COLON || c === RBRACE || c === RBRACKET) throw this.unexpected(c, i, 'a record');
            this.splitter.begin(c, i, this.position);
            this.state = Top.Element;
            continue;
          case Top.Element: {
            // A record the chunk edge cut: the alert scanner reads it whole, its carried bytes then this chunk's.
            if (i === 0 && this.onScanned) {
              const resume = this.scannedCarried(buf, this.onScanned);
              if (resume > 0) {
                this.state = Top.AfterElementComma;
                i = resume;
                continue;
              }
            }
            const end = this.splitter.scan(buf, i, this.position);
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
      // Records batched before the error are not delivered: the body is invalid as a whole, and so is
      // what follows a record the callback refused.
      this.failed = { error: err };
      throw err;
    }
    this.position += n;
  }
}
