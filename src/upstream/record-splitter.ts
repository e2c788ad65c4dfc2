import { BACKSLASH, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET, decodePieces, literalEnd, turnOverYoungGeneration } from './json-bytes.js';
import { MAX_RECORD_BYTES, MAX_STRING_BYTES, OversizedValue, oversizedStandIn } from './limits.js';

/** A record's text to parse, assembled from several chunks or with stand-ins for oversized strings. */
export interface RecordText {
  readonly text: string;
  /** Whether it holds stand-ins (parse it with reviveOversized). */
  readonly standIns: boolean;
}

/**
 * Splits one element of the `data` array out of the body, byte by byte (nesting depth and string
 * state only, no value building), carrying a record the chunk edge cuts and applying the limits of
 * src/upstream/limits.ts as it goes: a string over MAX_STRING_BYTES is dropped while it streams
 * past, a record over MAX_RECORD_BYTES stops being kept. `position` is always the body offset of
 * the current chunk's first byte.
 */
export class RecordSplitter {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private literal = false;
  /** Index in the current chunk where the record's next kept bytes start. */
  private recStart = 0;
  /** The record's kept bytes from earlier chunks (only when a record spans chunks or held an oversized string). */
  private pieces: Buffer[] = [];
  private keptBytes = 0;
  /** Of keptBytes, those of stand-ins (which do not count toward MAX_RECORD_BYTES). */
  private standInBytes = 0;
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

  /** Where the record starts in the current chunk (valid for a record that lies whole in it). */
  get start(): number {
    return this.recStart;
  }

  /** Begins a record whose first byte `c` is at index `i`. */
  begin(c: number, i: number, position: number): void {
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.literal = c !== LBRACE && c !== LBRACKET && c !== QUOTE;
    this.recStart = i;
    this.spans = false;
    // Stryker disable next-line BooleanLiteral: equivalent, reviveOversized gives back a text without stand-ins unchanged
    this.hadOversized = false;
    this.tooBig = false;
    this.dropping = false;
    this.recordAt = position + i;
    this.pieces = [];
    this.keptBytes = 0;
    this.standInBytes = 0;
    this.keptAtStrOpen = 0;
  }

  /**
   * The bytes of the record so far when it began in the chunk before and is plain: one piece, no
   * string dropped or stood in, not over the limit, not a bare literal; else undefined. Another
   * reader may then take the record whole (drop() forgets it here).
   */
  carried(): Buffer | undefined {
    return !this.literal && !this.dropping && !this.hadOversized && !this.tooBig && this.pieces.length === 1 ? this.pieces[0] : undefined;
  }

  /** Forgets the record carried: another reader took it (carried()). */
  drop(): void {
    this.pieces = [];
    this.keptBytes = 0;
  }

  /**
   * Scans the record from `i`: returns the index after its last byte, or -1 if the chunk ran out
   * (its bytes are then carried). The hot loop: depth and string state only.
   */
  scan(buf: Buffer, i: number, position: number): number {
    const n = buf.length;
    let end = -1;
    if (this.literal) {
      end = literalEnd(buf, i);
    } else {
      let depth = this.depth;
      let inString = this.inString;
      let escaped = this.escaped;
      while (i < n) {
        if (inString) {
          // A chunk that starts escaped (after an odd run of backslashes) skips its first byte. Added
          // as 0 or 1, not stepped under a condition (see lastNotBackslash): at the chunk's end the
          // quote search below finds nothing and leaves the loop, as a step to the end would.
          i += escaped ? 1 : 0;
          escaped = false;
          // Jump to the closing quote natively: a quote after an even run of backslashes.
          const from = i;
          let q = buf.indexOf(QUOTE, i);
          while (q >= 0) {
            const b = lastNotBackslash(buf, q, from);
            // Stryker disable next-line ArithmeticOperator: equivalent, q - 1 + b and q + 1 - b have the parity of q - 1 - b
            if (((q - 1 - b) & 1) === 0) break;
            q = buf.indexOf(QUOTE, q + 1);
          }
          if (q < 0) {
            // The string goes on in the next chunk, which starts escaped after an odd run of backslashes.
            const b = lastNotBackslash(buf, n, from);
            // Stryker disable next-line ArithmeticOperator: equivalent, n - 1 + b and n + 1 - b have the parity of n - 1 - b
            escaped = ((n - 1 - b) & 1) === 1;
            i = n;
            break;
          }
          i = q + 1;
          inString = false;
          // Quote to quote: the string's bytes plus 2 (a string being dropped is always over).
          if (position + i - this.strOpen > MAX_STRING_BYTES + 2) this.closeOversized(buf, i, position);
          if (depth === 0) {
            end = i;
            break;
          }
          continue;
        }
        const c = buf[i++]!;
        if (c === QUOTE) {
          inString = true;
          this.strOpen = position + i - 1;
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
    if (end < 0) this.carry(buf, position);
    return end;
  }

  /**
   * The record ended at `end` (exclusive) in this chunk. Undefined when it lies whole in the chunk
   * within the limits (the caller parses `buf[start, end)`, batched with its neighbours); else an
   * OversizedValue or the text to parse.
   */
  complete(buf: Buffer, end: number, position: number): OversizedValue | RecordText | undefined {
    if (!this.spans) {
      if (end - this.recStart <= MAX_RECORD_BYTES) return undefined;
      this.tooBig = true;
    }
    // (An empty rest, after an oversized string that ends the record, is kept as nothing.)
    this.keep(buf.subarray(this.recStart, end), this.counted(end - this.recStart));
    const out = this.tooBig ? new OversizedValue(position + end - this.recordAt, 'record') : { text: decodePieces(this.pieces), standIns: this.hadOversized };
    // Stryker disable next-line ArrayDeclaration: equivalent, the pieces are released either way and begin() resets them
    this.pieces = [];
    return out;
  }

  /** Keeps the rest of the chunk for the record that continues in the next one; drops an oversized string as it streams. */
  private carry(buf: Buffer, position: number): void {
    const n = buf.length;
    if (this.inString && !this.dropping) {
      const open = this.strOpen - position;
      if (open >= this.recStart) this.keptAtStrOpen = this.keptBytes + (open - this.recStart);
      // Opening quote to the chunk's end: the string's bytes so far plus 1.
      if (position + n - this.strOpen > MAX_STRING_BYTES + 1) {
        // The string is already too long: cut the kept bytes back to its opening quote and stop keeping.
        this.cutAtStringOpen(buf, position);
        this.dropping = true;
      }
    }
    // The bytes of a string still open count once it closes (and only if it is kept).
    if (!this.dropping) this.keep(buf.subarray(this.recStart, n), this.inString ? this.keptAtStrOpen - this.standInBytes : this.counted(n - this.recStart));
    else turnOverYoungGeneration(n);
    this.spans = true;
    this.recStart = 0;
  }

  /** The record's size under the rule after keeping `more` bytes that count. */
  private counted(more: number): number {
    return this.keptBytes - this.standInBytes + more;
  }

  /** Keeps bytes of the record, or stops keeping it once `counted` (its size so far under the rule) is over MAX_RECORD_BYTES. */
  private keep(bytes: Buffer, counted: number): void {
    // What a record too big keeps is never read (complete() gives an OversizedValue): no need to keep it.
    if (this.tooBig) return;
    if (counted > MAX_RECORD_BYTES) {
      this.tooBig = true;
      // Stryker disable next-line ArrayDeclaration: equivalent, a record too big is never read from its pieces (memory only)
      this.pieces = [];
      this.keptBytes = 0;
      return;
    }
    this.pieces.push(bytes);
    this.keptBytes += bytes.length;
  }

  /** Truncates the kept bytes to just before the current string's opening quote. */
  private cutAtStringOpen(buf: Buffer, position: number): void {
    const open = this.strOpen - position;
    if (open >= this.recStart) {
      // The string opened in this chunk: keep the record's bytes before it.
      this.keep(buf.subarray(this.recStart, open), this.counted(open - this.recStart));
    } else if (!this.tooBig) {
      // It opened earlier: trim the carried pieces back to its opening quote.
      let excess = this.keptBytes - this.keptAtStrOpen;
      // (keptBytes is the pieces' total here, so they cover the excess.)
      while (excess > 0) {
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
    // The callers move recStart past the string themselves.
  }

  /** At the closing quote (index `i` is after it) of a string over the limit: puts a stand-in where it was. */
  private closeOversized(buf: Buffer, i: number, position: number): void {
    const length = position + i - this.strOpen - 2;
    if (!this.dropping) this.cutAtStringOpen(buf, position);
    this.dropping = false;
    this.hadOversized = true;
    this.spans = true;
    const standIn = Buffer.from(oversizedStandIn(length));
    const counted = this.counted(0);
    this.standInBytes += standIn.length;
    this.keep(standIn, counted);
    this.recStart = i;
  }
}

/**
 * The index of the last byte before `end` that is not a backslash, or `from - 1` when every byte
 * of `[from, end)` is one. The decrement runs at least once whatever the bytes, so TurboFan never
 * compiles the scan before it has seen it: a run of backslashes first met thousands of records in
 * no longer throws the compiled scan away (docs/performance.md, "Deoptimizations").
 */
function lastNotBackslash(buf: Buffer, end: number, from: number): number {
  let b = end;
  do b -= 1;
  while (b >= from && buf[b] === BACKSLASH);
  return b;
}
