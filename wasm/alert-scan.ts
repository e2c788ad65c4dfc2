// AssemblyScript: compiled to WebAssembly by scripts/wasm.mjs into src/upstream/alert-scan-wasm.ts.
//
// Reads compact alert records, `{...},{...},`, straight from the received bytes: validates them as
// JSON (every byte, the same grammar JSON.parse accepts) and keeps, per record, only what the open
// alerts' fold reads (src/sources/alerts/fold.ts): the severity, product and status as ids of their
// bytes, whether the owner is empty, the two flags and the three timestamps in seconds. No string is
// made for the other fields. Strings are skipped 16 bytes at a time (SIMD), stopping at a quote, a
// backslash or a control byte.
//
// Anything this does not read the plain way (a record missing a field or holding it with another
// type, an escaped key, an escape in a timestamp, a timestamp not in the portal's own form, ids run
// out) is
// flagged SLOW, and the caller parses that record with JSON.parse: the fold then sees exactly what it
// would have. Bytes that are not JSON stop the scan with no records, and the caller's JSON.parse
// path reports them as before.

import { ARENA, ENDS, ENTRIES, get, INPUT, INPUT_CAPACITY, INVALID, KINDS, MAX_IDS, MAX_RECORDS, MORE, put, R_ACK_SET, R_ACK_TIME, R_ACKNOWLEDGED, R_CREATED, R_END, R_FLAGS, R_OWNER_EMPTY, R_PRODUCT, R_RESOLVED, R_START, R_STATE, R_STATUS, R_UNTIL, SLOW, STARTS, STRIDE, TABLE, TOO_DEEP } from './alert-scan/layout';
import { at, escaped, key, keyEnd, keyStart, scalar, str, value, ws } from './alert-scan/json';
import { OTHER_FORM, UNSET, generationCount, intern, maybeStartOver, timestamp } from './alert-scan/strings';

let resumeAt: i32 = 0;

export function input(): usize {
  return INPUT;
}

export function table(): usize {
  return TABLE;
}

export function capacity(): i32 {
  return INPUT_CAPACITY;
}

export function stride(): i32 {
  return STRIDE;
}

/** Bumped each time the ids start over: the caller's ids from before mean nothing after. */
export function generation(): i32 {
  return generationCount;
}

/** After scan(): the input offset after the comma that follows the last record returned. */
export function resume(): i32 {
  return resumeAt;
}

export function internStart(field: i32, id: i32): usize {
  return ARENA + <usize>load<i32>(ENTRIES + <usize>((field * MAX_IDS + id) * 16));
}

export function internLength(field: i32, id: i32): i32 {
  return load<i32>(ENTRIES + <usize>((field * MAX_IDS + id) * 16), 4);
}

/** 1 when the interned bytes hold an escape (they are a JSON string's body, to be unescaped). */
export function internEscaped(field: i32, id: i32): i32 {
  return load<i32>(ENTRIES + <usize>((field * MAX_IDS + id) * 16), 12);
}

// ---------------------------------------------------------------- the fields the fold reads

const F_STATE = 0;
const F_PRODUCT = 1;
const F_STATUS = 2;
const F_OWNER = 3;
const F_TIMESTAMP = 4;
const F_RESOLVED = 5;
const F_ACKNOWLEDGED = 6;
const F_UNTIL = 7;
const F_ACK_TIME = 8;
const F_COUNT = 9;
const F_OTHER = -1;
/** A key with an escape: it may spell one of the fields, so the record is read by JSON.parse. */
const F_ESCAPED = -2;

// Per field while reading a record: its kind, and the bounds of a string's body.
const K_ABSENT: i32 = 0;
const K_STRING: i32 = 1;
const K_ESCAPED_STRING: i32 = 2;
const K_TRUE: i32 = 3;
const K_FALSE: i32 = 4;
const K_OTHER: i32 = 5;
@inline function isString(kind: i32): bool {
  return kind == K_STRING || kind == K_ESCAPED_STRING;
}

function same(p: i32, text: string): bool {
  for (let k = 0; k < text.length; k++) if (at(p + k) != <i32>text.charCodeAt(k)) return false;
  return true;
}

/** Which field the key `[p, p + n)` names. */
function fieldOf(p: i32, n: i32): i32 {
  switch (n) {
    case 5:
      return same(p, 'state') ? F_STATE : F_OTHER;
    case 6:
      return same(p, 'status') ? F_STATUS : F_OTHER;
    case 7:
      return same(p, 'product') ? F_PRODUCT : F_OTHER;
    case 8:
      return same(p, 'resolved') ? F_RESOLVED : F_OTHER;
    case 9:
      if (same(p, 'ownerName')) return F_OWNER;
      return same(p, 'timestamp') ? F_TIMESTAMP : F_OTHER;
    case 12:
      return same(p, 'acknowledged') ? F_ACKNOWLEDGED : F_OTHER;
    case 13:
      return same(p, 'inactiveUntil') ? F_UNTIL : F_OTHER;
    case 16:
      return same(p, 'acknowledgedTime') ? F_ACK_TIME : F_OTHER;
  }
  return F_OTHER;
}

// ---------------------------------------------------------------- the shape of the records

// A portal writes every record with the same keys in the same order. The keys of a record read
// the general way become the shape: each member's `"key":` as a pattern. The next records are read
// against it, one 16-byte compare per key instead of a scan of the key, a lookup of its field and
// the colon; any member that does not match is read the general way from there. After a few records
// in a row that the shape did not fit, it is dropped and the next record read is learned.

const MAX_MEMBERS: i32 = 64;
/** The longest key a pattern holds: `"` + key + `":` in 32 bytes. */
const MAX_PATTERN_KEY: i32 = 29;
const SHAPE: usize = memory.data(MAX_MEMBERS * 32, 16);
const SHAPE_LENGTH: usize = memory.data(MAX_MEMBERS * 4, 16);
const SHAPE_FIELD: usize = memory.data(MAX_MEMBERS * 4, 16);
let shapeMembers: i32 = 0;
let misses: i32 = 0;
const MAX_MISSES: i32 = 4;
// The keys of a record read the general way from its start, to learn its shape from.
const SEEN_START: usize = memory.data(MAX_MEMBERS * 4, 16);
const SEEN_LENGTH: usize = memory.data(MAX_MEMBERS * 4, 16);
const SEEN_FIELD: usize = memory.data(MAX_MEMBERS * 4, 16);

/** Whether the pattern of shape member `m` (n bytes, p + n < len) is at `p`. */
@inline function matches(m: i32, p: i32, n: i32): bool {
  const pattern = SHAPE + <usize>(m << 5);
  const first = i8x16.bitmask(i8x16.eq(v128.load(INPUT + <usize>p), v128.load(pattern)));
  if (n <= 16) {
    const want = (1 << n) - 1;
    return (first & want) == want;
  }
  if (first != 0xffff) return false;
  const want = (1 << (n - 16)) - 1;
  return (i8x16.bitmask(i8x16.eq(v128.load(INPUT + <usize>p, 16), v128.load(pattern, 16))) & want) == want;
}

/** Makes the `count` keys seen the shape. */
function learn(count: i32): void {
  for (let m = 0; m < count; m++) {
    const start = load<i32>(SEEN_START + <usize>(m << 2));
    const length = load<i32>(SEEN_LENGTH + <usize>(m << 2));
    const pattern = SHAPE + <usize>(m << 5);
    store<u8>(pattern, 0x22);
    memory.copy(pattern + 1, INPUT + <usize>start, <usize>length);
    store<u8>(pattern + 1 + <usize>length, 0x22);
    store<u8>(pattern + 2 + <usize>length, 0x3a);
    store<i32>(SHAPE_LENGTH + <usize>(m << 2), length + 3);
    store<i32>(SHAPE_FIELD + <usize>(m << 2), load<i32>(SEEN_FIELD + <usize>(m << 2)));
  }
  shapeMembers = count;
  misses = 0;
}

// ---------------------------------------------------------------- records

/** A member's value at `p` (not a space) for `field` (or none, < 0): the position after it. */
@inline function memberValue(p: i32, len: i32, field: i32): i32 {
  const c = at(p);
  let kind = K_OTHER;
  let q: i32;
  if (c == 0x22) {
    q = str(p + 1, len);
    if (q < 0) return q;
    kind = escaped ? K_ESCAPED_STRING : K_STRING;
  } else if (c == 0x74 || c == 0x66) {
    q = scalar(p, len, c);
    if (q < 0) return q;
    kind = c == 0x74 ? K_TRUE : K_FALSE;
  } else {
    q = value(p, len);
    if (q < 0) return q;
  }
  if (field >= 0) {
    put(KINDS, field, kind);
    // A string's body: inside its quotes.
    put(STARTS, field, p + 1);
    put(ENDS, field, q - 1);
  }
  return q;
}

// Where record() hands a record over to general().
const AFTER_OPEN = 0;
const AFTER_COMMA = 1;
const AFTER_VALUE = 2;

/** Set when a key of the record has an escape: it may spell one of the fields. */
let slowKey: bool = false;

/**
 * One record, an object, at `p` (its `{`): the position after its `}`, or INVALID, MORE, TOO_DEEP.
 * Leaves each field's kind and bounds in KINDS, STARTS and ENDS, and sets slowKey.
 */
function record(p: i32, len: i32): i32 {
  for (let f = 0; f < F_COUNT; f++) put(KINDS, f, K_ABSENT);
  slowKey = false;
  p++;
  const members = shapeMembers;
  let m = 0;
  while (m < members) {
    const n = load<i32>(SHAPE_LENGTH + <usize>(m << 2));
    if (p + n >= len || !matches(m, p, n)) break;
    p = memberValue(p + n, len, load<i32>(SHAPE_FIELD + <usize>(m << 2)));
    if (p < 0) return p;
    if (p >= len) return MORE;
    const c = at(p);
    m++;
    if (c == 0x2c) {
      p++;
      continue;
    }
    if (c == 0x7d && m == members) {
      misses = 0;
      return p + 1;
    }
    // Fewer members, or a space: the general way reads on after this value.
    return general(p, len, AFTER_VALUE);
  }
  if (members > 0 && ++misses >= MAX_MISSES) shapeMembers = 0;
  return general(p, len, m == 0 ? AFTER_OPEN : AFTER_COMMA);
}

/** The rest of a record the general way, from `p` after its `{`, a `,` or a member's value. */
function general(p: i32, len: i32, from: i32): i32 {
  // Only a record read whole this way is learned from.
  let learnable = from == AFTER_OPEN;
  let seen = 0;
  p = ws(p, len);
  if (p >= len) return MORE;
  if (from == AFTER_VALUE) {
    const c = at(p);
    if (c == 0x7d) return p + 1;
    if (c != 0x2c) return INVALID;
    p++;
  } else if (from == AFTER_OPEN && at(p) == 0x7d) {
    return p + 1;
  }
  while (true) {
    p = key(p, len);
    if (p < 0) return p;
    const keyLength = keyEnd - keyStart;
    const field = escaped ? F_ESCAPED : fieldOf(keyStart, keyLength);
    if (field == F_ESCAPED) {
      slowKey = true;
      learnable = false;
    }
    if (learnable) {
      if (seen == MAX_MEMBERS || keyLength > MAX_PATTERN_KEY) {
        learnable = false;
      } else {
        store<i32>(SEEN_START + <usize>(seen << 2), keyStart);
        store<i32>(SEEN_LENGTH + <usize>(seen << 2), keyLength);
        store<i32>(SEEN_FIELD + <usize>(seen << 2), field);
        seen++;
      }
    }
    p = ws(p, len);
    if (p >= len) return MORE;
    p = memberValue(p, len, field);
    if (p < 0) return p;
    p = ws(p, len);
    if (p >= len) return MORE;
    const next = at(p);
    if (next == 0x7d) {
      if (learnable) learn(seen);
      return p + 1;
    }
    if (next != 0x2c) return INVALID;
    p++;
  }
  return INVALID; // (never: the loop returns)
}

// ---------------------------------------------------------------- the scan

/** What record() read, into the table row at `row`. */
function project(row: usize): void {
  let slow = slowKey;
  // The fold's types: six strings, two booleans.
  const state = get(KINDS, F_STATE);
  const product = get(KINDS, F_PRODUCT);
  const status = get(KINDS, F_STATUS);
  const owner = get(KINDS, F_OWNER);
  const created = get(KINDS, F_TIMESTAMP);
  const until = get(KINDS, F_UNTIL);
  const resolved = get(KINDS, F_RESOLVED);
  const acknowledged = get(KINDS, F_ACKNOWLEDGED);
  const ack = get(KINDS, F_ACK_TIME);
  // The three strings kept as ids may hold escapes (their ids remember it); the timestamps may not.
  if (!isString(state) || !isString(product) || !isString(status) || created != K_STRING || until != K_STRING) slow = true;
  if (!isString(owner)) slow = true;
  if ((resolved != K_TRUE && resolved != K_FALSE) || (acknowledged != K_TRUE && acknowledged != K_FALSE)) slow = true;
  if (ack == K_ESCAPED_STRING) slow = true;
  if (!slow) {
    const stateId = intern(0, get(STARTS, F_STATE), get(ENDS, F_STATE) - get(STARTS, F_STATE), state == K_ESCAPED_STRING);
    const productId = intern(1, get(STARTS, F_PRODUCT), get(ENDS, F_PRODUCT) - get(STARTS, F_PRODUCT), product == K_ESCAPED_STRING);
    const statusId = intern(2, get(STARTS, F_STATUS), get(ENDS, F_STATUS) - get(STARTS, F_STATUS), status == K_ESCAPED_STRING);
    if (stateId < 0 || productId < 0 || statusId < 0) slow = true;
    const createdAt = timestamp(get(STARTS, F_TIMESTAMP), get(ENDS, F_TIMESTAMP) - get(STARTS, F_TIMESTAMP));
    const untilAt = timestamp(get(STARTS, F_UNTIL), get(ENDS, F_UNTIL) - get(STARTS, F_UNTIL));
    if (createdAt == OTHER_FORM || untilAt == OTHER_FORM) slow = true;
    let ackAt: f64 = UNSET;
    if (ack == K_STRING) {
      ackAt = timestamp(get(STARTS, F_ACK_TIME), get(ENDS, F_ACK_TIME) - get(STARTS, F_ACK_TIME));
      if (ackAt == OTHER_FORM) slow = true;
    }
    store<i32>(row, stateId, R_STATE);
    store<i32>(row, productId, R_PRODUCT);
    store<i32>(row, statusId, R_STATUS);
    store<i32>(row, get(ENDS, F_OWNER) == get(STARTS, F_OWNER) ? 1 : 0, R_OWNER_EMPTY);
    store<i32>(row, resolved == K_TRUE ? 1 : 0, R_RESOLVED);
    store<i32>(row, acknowledged == K_TRUE ? 1 : 0, R_ACKNOWLEDGED);
    store<i32>(row, ack == K_STRING ? 1 : 0, R_ACK_SET);
    store<f64>(row, createdAt, R_CREATED);
    store<f64>(row, untilAt, R_UNTIL);
    store<f64>(row, ackAt, R_ACK_TIME);
  }
  store<i32>(row, slow ? SLOW : 0, R_FLAGS);
}

/**
 * Reads the records in the first `len` bytes of the input (the first byte a record's `{`): the
 * number of complete records each followed by a comma, all valid JSON up to where the scan stopped
 * (the input's end, or MAX_RECORDS), with resume() after the last one's comma; 0 when there is none
 * or the bytes are not plain JSON records (not JSON, a record that is not an object, nesting past
 * MAX_DEPTH): the caller then reads them its own way.
 */
export function scan(len: i32): i32 {
  if (len > INPUT_CAPACITY) return 0;
  maybeStartOver();
  resumeAt = 0;
  let p = 0;
  let n = 0;
  while (n < MAX_RECORDS) {
    if (p >= len) break;
    if (at(p) != 0x7b) return n > 0 ? n : 0;
    const end = record(p, len);
    if (end == INVALID || end == TOO_DEEP) return 0;
    if (end == MORE) break;
    let q = ws(end, len);
    if (q >= len) break;
    const c = at(q);
    if (c != 0x2c) {
      if (c == 0x5d) break;
      return 0;
    }
    q = ws(q + 1, len);
    const row = TABLE + <usize>(n * STRIDE);
    store<i32>(row, p, R_START);
    store<i32>(row, end, R_END);
    project(row);
    n++;
    resumeAt = q;
    p = q;
  }
  return n;
}
