import { BACKSLASH, LBRACE, LBRACKET, QUOTE, RBRACE, RBRACKET, decodePieces, literalEnd } from './json-bytes.js';
import { MAX_STRING_BYTES, OversizedValue } from './limits.js';

/** Reports a byte that breaks the JSON structure: `c` at index `i` of the chunk, where `what` was expected. */
export type Unexpected = (c: number, i: number, what: string) => Error;

/**
 * Scans one envelope-level value (a key, an envelope field, an unknown member) across chunks:
 * checks its brackets match, keeps its bytes only when asked (unknown members cost no memory) and
 * within MAX_STRING_BYTES (src/upstream/limits.ts), and parses what it kept.
 */
export class ValueScanner {
  private pieces: Buffer[] = [];
  private bytes = 0;
  private keep = false;
  private readonly stack: number[] = [];
  private literal = false;
  private isString = false;
  private inString = false;
  private escaped = false;

  constructor(private readonly unexpected: Unexpected) {}

  /** Whether the current value's text is kept (bare literals always are, so they can be validated). */
  get kept(): boolean {
    return this.keep;
  }

  /**
   * Begins a value whose first byte is `c` (scan it from that byte). The bracket stack and string
   * state need no reset: a value ends with its brackets closed, outside any string, and a value
   * that does not end fails the whole body.
   */
  start(c: number, keep: boolean): void {
    this.pieces = [];
    this.bytes = 0;
    this.isString = c === QUOTE;
    this.literal = c !== LBRACE && c !== LBRACKET && c !== QUOTE;
    this.keep = keep || this.literal;
  }

  /** Scans value bytes from `i`; returns the index after the value's last byte, or -1 if the chunk ran out. */
  scan(buf: Buffer, i: number): number {
    const n = buf.length;
    const start = i;
    const stack = this.stack;
    let end = -1;
    if (this.literal) {
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
    const upTo = end < 0 ? n : end;
    this.bytes += upTo - start;
    // Past the limit only the size is kept: an envelope value that large is nothing the exporter can use.
    // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent, memory only: take() reads the pieces only of a kept value within the limit
    if (this.keep && this.size() <= MAX_STRING_BYTES) this.pieces.push(buf.subarray(start, upTo));
    return end;
  }

  /** The value's bytes so far; a string's two quotes do not count, as for a string in a record. */
  private size(): number {
    return this.isString ? this.bytes - 2 : this.bytes;
  }

  /** The value scanned (an OversizedValue when too large); throws JSON.parse's error when malformed. */
  take(): unknown {
    const size = this.size();
    if (size > MAX_STRING_BYTES) return new OversizedValue(size, 'string');
    return JSON.parse(decodePieces(this.pieces));
  }
}
