// How much of a response body the reader keeps. The rule, the same whatever the chunking and on
// every path (the fast path, the splitter, envelope values), in bytes of UTF-8 as received:
//  - a string (a record's value at any depth, or a whole record that is a string) whose bytes
//    between its quotes, escapes not decoded, are more than MAX_STRING_BYTES is not kept: an
//    OversizedValue stands in its place (an oversized key makes the record malformed);
//  - a record whose bytes, from its first byte to its last and not counting the strings dropped
//    above, are more than MAX_RECORD_BYTES is not kept: it is delivered as an OversizedValue;
//  - an envelope field (message, total, …) of more than MAX_STRING_BYTES bytes between its quotes
//    (or in all, when it is not a string) is kept as an OversizedValue.
// A kept string therefore has at most MAX_STRING_BYTES UTF-16 units once decoded, so the record
// schemas need no length check of their own: rejecting an OversizedValue is the whole rule.

/** The longest string (in UTF-8 bytes between its quotes, as sent) a record may carry and still have it kept. */
export const MAX_STRING_BYTES = 64 * 1024;

/** The most bytes of one record kept for parsing (not counting oversized strings); a larger record is delivered as an {@link OversizedValue}. */
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

/** The key of the stand-in object put into a record's text where an oversized string was: random, so no portal text can pass for one. */
// (Math.random, not node:crypto: nothing to keep secret, only unguessable from outside, and it loads nothing.)
// Stryker disable next-line MethodExpression: equivalent, slice(2) only drops the '0.' in front of each random part
const OVERSIZED_KEY = `\u0000oversized-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;

/** The JSON text put in a record where an oversized string of `bytes` bytes was; {@link reviveOversized} turns it into an OversizedValue. */
export function oversizedStandIn(bytes: number): string {
  return `{${JSON.stringify(OVERSIZED_KEY)}:${bytes}}`;
}

/** A JSON.parse reviver that turns the stand-ins of {@link oversizedStandIn} into OversizedValues. */
export function reviveOversized(_key: string, value: unknown): unknown {
  return value !== null && typeof value === 'object' && OVERSIZED_KEY in value ? new OversizedValue((value as Record<string, number>)[OVERSIZED_KEY]!, 'string') : value;
}
