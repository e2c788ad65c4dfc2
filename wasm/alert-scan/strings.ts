// Ids of the strings the fold reads (state, product, status), interned in static memory, and the
// portal's timestamps read to seconds (see wasm/alert-scan.ts).

import { ARENA, ARENA_BYTES, ENTRIES, FIELDS, get, HASH_SLOTS, IDS, INPUT, MAX_IDS, put, SLOTS } from './layout';
import { at } from './json';

export let arenaUsed: i32 = 0;
export let generationCount: i32 = 0;

// ---------------------------------------------------------------- ids of strings

/** A hash of the bytes `[p, p + n)`, eight at a time (the last word masked to the string's own bytes). */
export function hashOf(p: i32, n: i32): u32 {
  let h: u64 = 0xcbf29ce484222325 ^ <u64>n;
  let k = 0;
  for (; k + 8 <= n; k += 8) h = (h ^ load<u64>(INPUT + <usize>(p + k))) * 0x100000001b3;
  if (k < n) h = (h ^ (load<u64>(INPUT + <usize>(p + k)) & ((<u64>1 << <u64>((n - k) << 3)) - 1))) * 0x100000001b3;
  return <u32>(h ^ (h >> 32));
}

export function sameBytes(a: usize, b: usize, n: i32): bool {
  let k = 0;
  for (; k + 8 <= n; k += 8) if (load<u64>(a + <usize>k) != load<u64>(b + <usize>k)) return false;
  for (; k < n; k++) if (load<u8>(a + <usize>k) != load<u8>(b + <usize>k)) return false;
  return true;
}

/**
 * The id of the bytes `[p, p + n)` among field's strings (a new one if unseen, remembering whether
 * they hold an escape), or -1 when ids or bytes ran out.
 */
export function intern(field: i32, p: i32, n: i32, escapes: bool): i32 {
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
export function maybeStartOver(): void {
  let full = arenaUsed > (ARENA_BYTES >> 2) * 3;
  for (let f = 0; f < FIELDS; f++) if (get(IDS, f) > (MAX_IDS >> 2) * 3) full = true;
  if (!full) return;
  memory.fill(HASH_SLOTS, 0, <usize>(FIELDS * SLOTS * 4));
  for (let f = 0; f < FIELDS; f++) put(IDS, f, 0);
  arenaUsed = 0;
  generationCount++;
}

// ---------------------------------------------------------------- timestamps

export const UNSET: f64 = NaN;
/** Not the portal's own form: the record is read by JSON.parse. */
export const OTHER_FORM: f64 = -Infinity;

@inline export function digit(p: i32): i32 {
  return at(p) - 0x30;
}

export function daysInMonth(month: i32): i32 {
  if (month == 2) return 28;
  if (month == 4 || month == 6 || month == 9 || month == 11) return 30;
  return 31;
}

// The 27 bytes as two overlapping 16-byte loads, at 0 and at 11: which hold digits, which a
// separator, and the unset value's bytes.
export const DIGITS_LOW: i32 = 0b1101101101101111; // 0-3, 5-6, 8-9, 11-12, 14-15
export const DIGITS_HIGH: i32 = 0b1111111011011011; // 11-12, 14-15, 17-18, 20-26 (from 11)
export const SEPARATORS_LOW: v128 = i8x16(-1, -1, -1, -1, 0x2d, -1, -1, 0x2d, -1, -1, 0x54, -1, -1, 0x3a, -1, -1);
export const SEPARATORS_HIGH: v128 = i8x16(-1, -1, 0x3a, -1, -1, 0x3a, -1, -1, 0x2e, -1, -1, -1, -1, -1, -1, -1);
export const SEPARATOR_LOW_BITS: i32 = 0b0010010010010000; // 4, 7, 10, 13
export const SEPARATOR_HIGH_BITS: i32 = 0b0000000100100100; // 13, 16, 19 (from 11)
// '0001-01-01T00:00:00.0000000'
export const UNSET_LOW: v128 = i8x16(0x30, 0x30, 0x30, 0x31, 0x2d, 0x30, 0x31, 0x2d, 0x30, 0x31, 0x54, 0x30, 0x30, 0x3a, 0x30, 0x30);
export const UNSET_HIGH: v128 = i8x16(0x30, 0x30, 0x3a, 0x30, 0x30, 0x3a, 0x30, 0x30, 0x2e, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30);

/**
 * `yyyy-MM-ddTHH:mm:ss.fffffff` (27 bytes, UTC) at `p` in Unix seconds, as
 * src/upstream/timestamps.ts's canonical() reads it (the same arithmetic, so the same number);
 * UNSET for the unset value as the portal writes it; OTHER_FORM for anything else (which that
 * module's general path reads or refuses).
 */
export function timestamp(p: i32, n: i32): f64 {
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
