// The scanner's memory: its static regions, the record table's layout and the readers' results (see wasm/alert-scan.ts).

/** The most bytes one scan reads (the caller's fast-path window). */
export const INPUT_CAPACITY: i32 = 65536;
/** The most records one scan returns. */
export const MAX_RECORDS: i32 = 2048;
/** Bytes per record in the table. */
export const STRIDE: i32 = 64;
/** Nesting deeper than this inside a record: not read here (the caller's JSON.parse reads it). */
export const MAX_DEPTH: i32 = 64;

// Interned strings: three tables (state, product, status), each with its hash slots and entries.
export const FIELDS: i32 = 3;
export const SLOTS: i32 = 8192; // a power of two, twice the ids
export const MAX_IDS: i32 = 4096;
export const ARENA_BYTES: i32 = 262144;

// Every region is static memory (no allocator runs).
// (Past the input, room for a pattern compare's loads: compared bytes are always within it.)
export const INPUT: usize = memory.data(INPUT_CAPACITY + 48, 16);
export const TABLE: usize = memory.data(MAX_RECORDS * STRIDE, 16);
export const STACK: usize = memory.data(MAX_DEPTH, 16);
export const HASH_SLOTS: usize = memory.data(FIELDS * SLOTS * 4, 16);
/** Per field and id: the arena offset (i32), the length (i32), the hash (i32), 1 if the bytes hold an escape (i32). */
export const ENTRIES: usize = memory.data(FIELDS * MAX_IDS * 16, 16);
export const ARENA: usize = memory.data(ARENA_BYTES, 16);
/** Per field: ids given so far (i32). */
export const IDS: usize = memory.data(FIELDS * 4, 16);
/** Per field while reading a record: its kind, and the bounds of a string's body (i32 each). */
export const KINDS: usize = memory.data(16 * 4, 16);
export const STARTS: usize = memory.data(16 * 4, 16);
export const ENDS: usize = memory.data(16 * 4, 16);

// The record table: i32 slots, then f64 from byte 40.
export const R_START: i32 = 0;
export const R_END: i32 = 4;
export const R_FLAGS: i32 = 8;
export const R_STATE: i32 = 12;
export const R_PRODUCT: i32 = 16;
export const R_STATUS: i32 = 20;
export const R_OWNER_EMPTY: i32 = 24;
export const R_RESOLVED: i32 = 28;
export const R_ACKNOWLEDGED: i32 = 32;
export const R_ACK_SET: i32 = 36;
export const R_CREATED: i32 = 40;
export const R_UNTIL: i32 = 48;
export const R_ACK_TIME: i32 = 56;

export const SLOW: i32 = 1;

// Results of the inner readers: a position, or one of these.
export const INVALID: i32 = -1;
export const MORE: i32 = -2;
export const TOO_DEEP: i32 = -3;

// An i32 of a per-field region.
@inline export function get(region: usize, f: i32): i32 {
  return load<i32>(region + <usize>(f << 2));
}

@inline export function put(region: usize, f: i32, v: i32): void {
  store<i32>(region + <usize>(f << 2), v);
}
