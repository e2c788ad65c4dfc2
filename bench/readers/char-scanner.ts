// The character-level scanner the exporter used before (decode to text, scan every character,
// JSON.parse each record): the baseline of bench/readers.ts (see docs/performance.md).
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

const ENVELOPE_KEYS = new Set(['offset', 'limit', 'total', 'success', 'statusCode', 'message']);

// Character codes the scanner branches on.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

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

/** Streaming parser for `{ ..., "data": [ {...}, {...} ], ... }`: calls onRecord with each element of the top-level `data` array as soon as it is complete (each element JSON.parse'd on its own), keeps only one element's text in memory, accepts the envelope fields before or after `data`, any key order, whitespace, escapes, and UTF-8 split across chunks. Throws InvalidResponseError (needs an endpoint string) on malformed JSON, a top-level value that is not an object, `data` that is not an array, or a body that ends early. */
export class EnvelopeParser {
  private readonly endpoint: string;
  private readonly onRecord: (value: unknown) => void;
  private readonly decoder = new TextDecoder('utf-8');
  private state: Top = Top.BeforeRoot;
  /** Characters consumed so far (for error positions). */
  private position = 0;
  private readonly envelope: RawEnvelope = { dataCount: 0 };

  // The value being scanned: its text (only kept when it will be parsed), nesting and string state.
  private text = '';
  private keep = false;
  private stack: number[] = [];
  private inString = false;
  private escaped = false;
  /** A bare literal (number, true, false, null) ends at the first delimiter rather than a closing char. */
  private literal = false;
  private segStart = 0;
  private key = '';
  private failed: InvalidResponseError | undefined;

  constructor(endpoint: string, onRecord: (value: unknown) => void) {
    this.endpoint = endpoint;
    this.onRecord = onRecord;
  }

  /** Feeds the next chunk of the body. */
  write(chunk: Uint8Array | string): void {
    if (this.failed) throw this.failed;
    const s = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (s.length > 0) this.scan(s);
  }

  /** Ends the body; returns the envelope fields, or throws if the JSON is incomplete. */
  end(): RawEnvelope {
    if (this.failed) throw this.failed;
    const rest = this.decoder.decode();
    if (rest.length > 0) this.scan(rest);
    if (this.state !== Top.Done) {
      throw this.fail(`the response body ended early, before the JSON was complete (after ${this.position} characters)`);
    }
    return { ...this.envelope };
  }

  private fail(reason: string, cause?: unknown): InvalidResponseError {
    this.failed = new InvalidResponseError(this.endpoint, `Invalid response from ${this.endpoint}: ${reason}`, { cause });
    return this.failed;
  }

  private unexpected(c: number, at: number, what: string): InvalidResponseError {
    const ch = JSON.stringify(String.fromCharCode(c));
    return this.fail(`malformed JSON at character ${this.position + at}: expected ${what}, found ${ch}`);
  }

  /** Begins a value whose first character `c` is at `s[i]`; bare literals are always kept so they can be validated. */
  private startValue(c: number, keep: boolean, i: number): void {
    this.text = '';
    this.segStart = i;
    this.stack.length = 0;
    this.inString = false;
    this.escaped = false;
    this.literal = false;
    // Containers and strings open on their first character, which scanValue reads like any other.
    this.literal = c !== LBRACE && c !== LBRACKET && c !== QUOTE;
    this.keep = keep || this.literal;
  }

  /** Scans value characters from `i`; returns the index after the value's last character, or -1 if the chunk ran out. */
  private scanValue(s: string, i: number): number {
    const n = s.length;
    const stack = this.stack;
    let end = -1;
    if (this.literal) {
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (isSpace(c) || c === COMMA || c === RBRACE || c === RBRACKET) {
          end = i;
          break;
        }
      }
    } else {
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
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
    if (this.keep) this.text += s.slice(this.segStart, end < 0 ? n : end);
    // A value that continues in the next chunk resumes at that chunk's start.
    this.segStart = 0;
    return end;
  }

  private parseText(what: string): unknown {
    const text = this.text;
    this.text = '';
    try {
      return JSON.parse(text);
    } catch (err) {
      throw this.fail(`malformed JSON in ${what} (before character ${this.position}): ${(err as Error).message}`, err);
    }
  }

  private scan(s: string): void {
    const n = s.length;
    let i = 0;
    while (i < n) {
      const c = s.charCodeAt(i);
      switch (this.state) {
        case Top.BeforeRoot:
          if (isSpace(c) || (c === 0xfeff && this.position + i === 0)) break;
          if (c !== LBRACE) throw this.fail(`the body is not a JSON object (it starts with ${JSON.stringify(s.slice(i, i + 16))})`);
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
          this.startValue(c, true, i);
          this.state = Top.Key;
          continue;
        case Top.Key: {
          const end = this.scanValue(s, i);
          if (end < 0) {
            i = n;
            continue;
          }
          this.key = this.parseText('a key') as string;
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
          this.startValue(c, ENVELOPE_KEYS.has(this.key), i);
          this.state = Top.Value;
          continue;
        case Top.Value: {
          const end = this.scanValue(s, i);
          if (end < 0) {
            i = n;
            continue;
          }
          const value = this.keep ? this.parseText(`the "${this.key}" field`) : undefined;
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
          if (c !== LBRACKET) throw this.fail(`"data" is not an array (it starts with ${JSON.stringify(s.slice(i, i + 16))})`);
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
          this.startValue(c, true, i);
          this.state = Top.Element;
          continue;
        case Top.Element: {
          const end = this.scanValue(s, i);
          if (end < 0) {
            i = n;
            continue;
          }
          const record = this.parseText(`record ${this.envelope.dataCount} of "data"`);
          this.envelope.dataCount++;
          this.state = Top.AfterElement;
          i = end;
          // The caller's errors (e.g. a sink rejecting a record) pass through unchanged.
          this.onRecord(record);
          continue;
        }
        case Top.AfterElement:
          if (isSpace(c)) break;
          if (c === COMMA) this.state = Top.AfterElementComma;
          else if (c === RBRACKET) this.state = Top.AfterValue;
          else throw this.unexpected(c, i, "',' or ']'");
          break;
        case Top.Done:
          if (isSpace(c)) break;
          throw this.fail(`unexpected data after the end of the JSON object at character ${this.position + i}`);
      }
      i++;
    }
    this.position += n;
  }
}
