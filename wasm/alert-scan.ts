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

// ---------------------------------------------------------------- layout

/** The most bytes one scan reads (the caller's fast-path window). */
const INPUT_CAPACITY: i32 = 65536;
/** The most records one scan returns. */
const MAX_RECORDS: i32 = 2048;
/** Bytes per record in the table. */
const STRIDE: i32 = 64;
/** Nesting deeper than this inside a record: not read here (the caller's JSON.parse reads it). */
const MAX_DEPTH: i32 = 64;

// Interned strings: three tables (state, product, status), each with its hash slots and entries.
const FIELDS: i32 = 3;
const SLOTS: i32 = 8192; // a power of two, twice the ids
const MAX_IDS: i32 = 4096;
const ARENA_BYTES: i32 = 262144;

// Every region is static memory (no allocator runs).
// (Past the input, room for a pattern compare's loads: compared bytes are always within it.)
const INPUT: usize = memory.data(INPUT_CAPACITY + 48, 16);
const TABLE: usize = memory.data(MAX_RECORDS * STRIDE, 16);
const STACK: usize = memory.data(MAX_DEPTH, 16);
const HASH_SLOTS: usize = memory.data(FIELDS * SLOTS * 4, 16);
/** Per field and id: the arena offset (i32), the length (i32), the hash (i32), 1 if the bytes hold an escape (i32). */
const ENTRIES: usize = memory.data(FIELDS * MAX_IDS * 16, 16);
const ARENA: usize = memory.data(ARENA_BYTES, 16);
/** Per field: ids given so far (i32). */
const IDS: usize = memory.data(FIELDS * 4, 16);
/** Per field while reading a record: its kind, and the bounds of a string's body (i32 each). */
const KINDS: usize = memory.data(16 * 4, 16);
const STARTS: usize = memory.data(16 * 4, 16);
const ENDS: usize = memory.data(16 * 4, 16);

// The record table: i32 slots, then f64 from byte 40.
const R_START: i32 = 0;
const R_END: i32 = 4;
const R_FLAGS: i32 = 8;
const R_STATE: i32 = 12;
const R_PRODUCT: i32 = 16;
const R_STATUS: i32 = 20;
const R_OWNER_EMPTY: i32 = 24;
const R_RESOLVED: i32 = 28;
const R_ACKNOWLEDGED: i32 = 32;
const R_ACK_SET: i32 = 36;
const R_CREATED: i32 = 40;
const R_UNTIL: i32 = 48;
const R_ACK_TIME: i32 = 56;

const SLOW: i32 = 1;

// Results of the inner readers: a position, or one of these.
const INVALID: i32 = -1;
const MORE: i32 = -2;
const TOO_DEEP: i32 = -3;

let arenaUsed: i32 = 0;
let generationCount: i32 = 0;
let resumeAt: i32 = 0;
/** Set by str(): the string just read held a backslash. */
let escaped: bool = false;

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

// ---------------------------------------------------------------- bytes

@inline function at(p: i32): i32 {
  return <i32>load<u8>(INPUT + <usize>p);
}

@inline function isWs(c: i32): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
}

function ws(p: i32, len: i32): i32 {
  while (p < len && isWs(at(p))) p++;
  return p;
}

function isHex(c: i32): bool {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/**
 * A string's body from `p` (after its opening quote): the position after its closing quote, INVALID
 * (a control byte, a bad escape) or MORE (the input ends first). Sets `escaped`.
 */
function str(p: i32, len: i32): i32 {
  escaped = false;
  const quote = i8x16.splat(0x22);
  const backslash = i8x16.splat(0x5c);
  const space = i8x16.splat(0x20);
  while (true) {
    while (p + 16 <= len) {
      const v = v128.load(INPUT + <usize>p);
      const hits = i8x16.bitmask(v128.or(v128.or(i8x16.eq(v, quote), i8x16.eq(v, backslash)), i8x16.lt_u(v, space)));
      if (hits != 0) {
        p += ctz(hits);
        break;
      }
      p += 16;
    }
    // At a special byte, or fewer than 16 bytes left: byte by byte until the next special one.
    while (p < len) {
      const c = at(p);
      if (c == 0x22 || c == 0x5c || c < 0x20) break;
      p++;
    }
    if (p >= len) return MORE;
    const c = at(p);
    if (c == 0x22) return p + 1;
    if (c < 0x20) return INVALID;
    // A backslash.
    escaped = true;
    if (p + 1 >= len) return MORE;
    const e = at(p + 1);
    if (e == 0x75) {
      if (p + 6 > len) return MORE;
      if (!isHex(at(p + 2)) || !isHex(at(p + 3)) || !isHex(at(p + 4)) || !isHex(at(p + 5))) return INVALID;
      p += 6;
    } else if (e == 0x22 || e == 0x5c || e == 0x2f || e == 0x62 || e == 0x66 || e == 0x6e || e == 0x72 || e == 0x74) {
      p += 2;
    } else {
      return INVALID;
    }
  }
  return INVALID; // (never: the loop returns)
}

function digitsFrom(p: i32, len: i32): i32 {
  while (p < len) {
    const c = at(p);
    if (c < 0x30 || c > 0x39) break;
    p++;
  }
  return p;
}

/** A number from `p`: the position after it, INVALID, or MORE (it may go on past the input). */
function number(p: i32, len: i32): i32 {
  if (at(p) == 0x2d) {
    p++;
    if (p >= len) return MORE;
  }
  let c = at(p);
  if (c == 0x30) {
    p++;
  } else if (c >= 0x31 && c <= 0x39) {
    p = digitsFrom(p + 1, len);
  } else {
    return INVALID;
  }
  if (p >= len) return MORE;
  if (at(p) == 0x2e) {
    p++;
    if (p >= len) return MORE;
    c = at(p);
    if (c < 0x30 || c > 0x39) return INVALID;
    p = digitsFrom(p + 1, len);
    if (p >= len) return MORE;
  }
  c = at(p);
  if (c == 0x65 || c == 0x45) {
    p++;
    if (p >= len) return MORE;
    c = at(p);
    if (c == 0x2b || c == 0x2d) {
      p++;
      if (p >= len) return MORE;
      c = at(p);
    }
    if (c < 0x30 || c > 0x39) return INVALID;
    p = digitsFrom(p + 1, len);
    if (p >= len) return MORE;
  }
  return p;
}

/** `word` (true, false, null: 4 or 5 bytes, little-endian in `bytes`) at `p`. */
function literal(p: i32, len: i32, bytes: u64, n: i32): i32 {
  if (p + n > len) {
    // What there is must still match, else it is not JSON.
    for (let k = 0; p + k < len; k++) if (at(p + k) != <i32>((bytes >> (<u64>(8 * k))) & 0xff)) return INVALID;
    return MORE;
  }
  for (let k = 0; k < n; k++) if (at(p + k) != <i32>((bytes >> (<u64>(8 * k))) & 0xff)) return INVALID;
  return p + n;
}

const TRUE: u64 = 0x65757274; // "true"
const FALSE: u64 = 0x65736c6166; // "false"
const NULL: u64 = 0x6c6c756e; // "null"

/** One scalar (string, number, literal) at `p`, c its first byte: the position after it, INVALID or MORE. */
function scalar(p: i32, len: i32, c: i32): i32 {
  if (c == 0x22) return str(p + 1, len);
  if (c == 0x74) return literal(p, len, TRUE, 4);
  if (c == 0x66) return literal(p, len, FALSE, 5);
  if (c == 0x6e) return literal(p, len, NULL, 4);
  if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return number(p, len);
  return INVALID;
}

/** Any JSON value at `p` (a non-space byte): the position after it, INVALID, MORE or TOO_DEEP. */
function value(p: i32, len: i32): i32 {
  let depth = 0;
  while (true) {
    // A value is expected at p.
    p = ws(p, len);
    if (p >= len) return MORE;
    let c = at(p);
    if (c == 0x7b || c == 0x5b) {
      p = ws(p + 1, len);
      if (p >= len) return MORE;
      const close = c == 0x7b ? 0x7d : 0x5d;
      if (at(p) == close) {
        p++;
      } else {
        if (depth == MAX_DEPTH) return TOO_DEEP;
        store<u8>(STACK + <usize>depth, <u8>close);
        depth++;
        if (c == 0x7b) {
          p = key(p, len);
          if (p < 0) return p;
        }
        continue;
      }
    } else {
      p = scalar(p, len, c);
      if (p < 0) return p;
    }
    // After a value: close what ends here, or go on after a comma.
    while (true) {
      if (depth == 0) return p;
      p = ws(p, len);
      if (p >= len) return MORE;
      c = at(p);
      const close = <i32>load<u8>(STACK + <usize>(depth - 1));
      if (c == close) {
        depth--;
        p++;
        continue;
      }
      if (c != 0x2c) return INVALID;
      p++;
      if (close == 0x7d) {
        p = key(p, len);
        if (p < 0) return p;
      }
      break;
    }
  }
}

/** Set by key(): the bounds of the key's body (inside its quotes); `escaped` says whether it held an escape. */
let keyStart: i32 = 0;
let keyEnd: i32 = 0;

/** A member's key and its colon from `p`: the position after the colon. */
function key(p: i32, len: i32): i32 {
  p = ws(p, len);
  if (p >= len) return MORE;
  if (at(p) != 0x22) return INVALID;
  keyStart = p + 1;
  p = str(keyStart, len);
  if (p < 0) return p;
  keyEnd = p - 1;
  p = ws(p, len);
  if (p >= len) return MORE;
  if (at(p) != 0x3a) return INVALID;
  return p + 1;
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
@inline function get(region: usize, f: i32): i32 {
  return load<i32>(region + <usize>(f << 2));
}

@inline function put(region: usize, f: i32, v: i32): void {
  store<i32>(region + <usize>(f << 2), v);
}

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

// ---------------------------------------------------------------- ids of strings

/** A hash of the bytes `[p, p + n)`, eight at a time (the last word masked to the string's own bytes). */
function hashOf(p: i32, n: i32): u32 {
  let h: u64 = 0xcbf29ce484222325 ^ <u64>n;
  let k = 0;
  for (; k + 8 <= n; k += 8) h = (h ^ load<u64>(INPUT + <usize>(p + k))) * 0x100000001b3;
  if (k < n) h = (h ^ (load<u64>(INPUT + <usize>(p + k)) & ((<u64>1 << <u64>((n - k) << 3)) - 1))) * 0x100000001b3;
  return <u32>(h ^ (h >> 32));
}

function sameBytes(a: usize, b: usize, n: i32): bool {
  let k = 0;
  for (; k + 8 <= n; k += 8) if (load<u64>(a + <usize>k) != load<u64>(b + <usize>k)) return false;
  for (; k < n; k++) if (load<u8>(a + <usize>k) != load<u8>(b + <usize>k)) return false;
  return true;
}

/**
 * The id of the bytes `[p, p + n)` among field's strings (a new one if unseen, remembering whether
 * they hold an escape), or -1 when ids or bytes ran out.
 */
function intern(field: i32, p: i32, n: i32, escapes: bool): i32 {
  const h = hashOf(p, n);
  const slots = HASH_SLOTS + <usize>(field * SLOTS * 4);
  const entries = ENTRIES + <usize>(field * MAX_IDS * 16);
  let slot = <i32>(h & <u32>(SLOTS - 1));
  while (true) {
    const taken = load<i32>(slots + <usize>(slot * 4));
    if (taken == 0) break;
    const id = taken - 1;
    const entry = entries + <usize>(id * 16);
    if (load<u32>(entry, 8) == h && load<i32>(entry, 4) == n && sameBytes(ARENA + <usize>load<i32>(entry), INPUT + <usize>p, n)) return id;
    slot = (slot + 1) & (SLOTS - 1);
  }
  const id = get(IDS, field);
  if (id == MAX_IDS || arenaUsed + n > ARENA_BYTES) return -1;
  memory.copy(ARENA + <usize>arenaUsed, INPUT + <usize>p, <usize>n);
  const entry = entries + <usize>(id * 16);
  store<i32>(entry, arenaUsed);
  store<i32>(entry, n, 4);
  store<u32>(entry, h, 8);
  store<i32>(entry, escapes ? 1 : 0, 12);
  store<i32>(slots + <usize>(slot * 4), id + 1);
  arenaUsed += n;
  put(IDS, field, id + 1);
  return id;
}

/** Starts the ids over when a table is three quarters full (at a scan's start, never within one). */
function maybeStartOver(): void {
  let full = arenaUsed > (ARENA_BYTES >> 2) * 3;
  for (let f = 0; f < FIELDS; f++) if (get(IDS, f) > (MAX_IDS >> 2) * 3) full = true;
  if (!full) return;
  memory.fill(HASH_SLOTS, 0, <usize>(FIELDS * SLOTS * 4));
  for (let f = 0; f < FIELDS; f++) put(IDS, f, 0);
  arenaUsed = 0;
  generationCount++;
}

// ---------------------------------------------------------------- timestamps

const UNSET: f64 = NaN;
/** Not the portal's own form: the record is read by JSON.parse. */
const OTHER_FORM: f64 = -Infinity;

@inline function digit(p: i32): i32 {
  return at(p) - 0x30;
}

function daysInMonth(month: i32): i32 {
  if (month == 2) return 28;
  if (month == 4 || month == 6 || month == 9 || month == 11) return 30;
  return 31;
}

// The 27 bytes as two overlapping 16-byte loads, at 0 and at 11: which hold digits, which a
// separator, and the unset value's bytes.
const DIGITS_LOW: i32 = 0b1101101101101111; // 0-3, 5-6, 8-9, 11-12, 14-15
const DIGITS_HIGH: i32 = 0b1111111011011011; // 11-12, 14-15, 17-18, 20-26 (from 11)
const SEPARATORS_LOW: v128 = i8x16(-1, -1, -1, -1, 0x2d, -1, -1, 0x2d, -1, -1, 0x54, -1, -1, 0x3a, -1, -1);
const SEPARATORS_HIGH: v128 = i8x16(-1, -1, 0x3a, -1, -1, 0x3a, -1, -1, 0x2e, -1, -1, -1, -1, -1, -1, -1);
const SEPARATOR_LOW_BITS: i32 = 0b0010010010010000; // 4, 7, 10, 13
const SEPARATOR_HIGH_BITS: i32 = 0b0000000100100100; // 13, 16, 19 (from 11)
// '0001-01-01T00:00:00.0000000'
const UNSET_LOW: v128 = i8x16(0x30, 0x30, 0x30, 0x31, 0x2d, 0x30, 0x31, 0x2d, 0x30, 0x31, 0x54, 0x30, 0x30, 0x3a, 0x30, 0x30);
const UNSET_HIGH: v128 = i8x16(0x30, 0x30, 0x3a, 0x30, 0x30, 0x3a, 0x30, 0x30, 0x2e, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30);

/**
 * `yyyy-MM-ddTHH:mm:ss.fffffff` (27 bytes, UTC) at `p` in Unix seconds, as
 * src/upstream/timestamps.ts's canonical() reads it (the same arithmetic, so the same number);
 * UNSET for the unset value as the portal writes it; OTHER_FORM for anything else (which that
 * module's general path reads or refuses).
 */
function timestamp(p: i32, n: i32): f64 {
  if (n != 27) return OTHER_FORM;
  const low = v128.load(INPUT + <usize>p);
  const high = v128.load(INPUT + <usize>p, 11);
  if (i8x16.all_true(i8x16.eq(low, UNSET_LOW)) && i8x16.all_true(i8x16.eq(high, UNSET_HIGH))) return UNSET;
  const ten = i8x16.splat(10);
  const zero = i8x16.splat(0x30);
  const digitsLow = i8x16.bitmask(i8x16.lt_u(i8x16.sub(low, zero), ten));
  const digitsHigh = i8x16.bitmask(i8x16.lt_u(i8x16.sub(high, zero), ten));
  const separatorsLow = i8x16.bitmask(i8x16.eq(low, SEPARATORS_LOW));
  const separatorsHigh = i8x16.bitmask(i8x16.eq(high, SEPARATORS_HIGH));
  if ((digitsLow & DIGITS_LOW) != DIGITS_LOW || (digitsHigh & DIGITS_HIGH) != DIGITS_HIGH) return OTHER_FORM;
  if ((separatorsLow & SEPARATOR_LOW_BITS) != SEPARATOR_LOW_BITS || (separatorsHigh & SEPARATOR_HIGH_BITS) != SEPARATOR_HIGH_BITS) return OTHER_FORM;
  const year = digit(p) * 1000 + digit(p + 1) * 100 + digit(p + 2) * 10 + digit(p + 3);
  const month = digit(p + 5) * 10 + digit(p + 6);
  const day = digit(p + 8) * 10 + digit(p + 9);
  const hour = digit(p + 11) * 10 + digit(p + 12);
  const minute = digit(p + 14) * 10 + digit(p + 15);
  const second = digit(p + 17) * 10 + digit(p + 18);
  if (year < 2 || month < 1 || month > 12 || day < 1 || day > daysInMonth(month) || hour > 23 || minute > 59 || second > 59) return OTHER_FORM;
  let frac = 0;
  for (let k = 20; k < 27; k++) frac = frac * 10 + digit(p + k);
  // Days from 1970-01-01 (H. Hinnant's days_from_civil; every operand here is positive).
  const y = month <= 2 ? year - 1 : year;
  const era = y / 400;
  const yoe = y - era * 400;
  const doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
  // As the module adds them: days * 86400 + hour * 3600 + minute * 60 + second, then the fraction.
  const whole = <f64>days * 86400 + <f64>(hour * 3600) + <f64>(minute * 60) + <f64>second;
  return whole + <f64>frac / 10000000;
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
