// The JSON grammar over the input bytes, as JSON.parse accepts it: whitespace, strings (16 bytes at a
// time), numbers, literals, values and keys (see wasm/alert-scan.ts).

import { INPUT, INVALID, MAX_DEPTH, MORE, STACK, TOO_DEEP } from './layout';

/** Set by str(): the string just read held a backslash. */
export let escaped: bool = false;

@inline export function at(p: i32): i32 {
  return <i32>load<u8>(INPUT + <usize>p);
}

@inline export function isWs(c: i32): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
}

export function ws(p: i32, len: i32): i32 {
  while (p < len && isWs(at(p))) p++;
  return p;
}

export function isHex(c: i32): bool {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/**
 * A string's body from `p` (after its opening quote): the position after its closing quote, INVALID
 * (a control byte, a bad escape) or MORE (the input ends first). Sets `escaped`.
 */
export function str(p: i32, len: i32): i32 {
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

export function digitsFrom(p: i32, len: i32): i32 {
  while (p < len) {
    const c = at(p);
    if (c < 0x30 || c > 0x39) break;
    p++;
  }
  return p;
}

/** A number from `p`: the position after it, INVALID, or MORE (it may go on past the input). */
export function number(p: i32, len: i32): i32 {
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
export function literal(p: i32, len: i32, bytes: u64, n: i32): i32 {
  if (p + n > len) {
    // What there is must still match, else it is not JSON.
    for (let k = 0; p + k < len; k++) if (at(p + k) != <i32>((bytes >> (<u64>(8 * k))) & 0xff)) return INVALID;
    return MORE;
  }
  for (let k = 0; k < n; k++) if (at(p + k) != <i32>((bytes >> (<u64>(8 * k))) & 0xff)) return INVALID;
  return p + n;
}

export const TRUE: u64 = 0x65757274; // "true"
export const FALSE: u64 = 0x65736c6166; // "false"
export const NULL: u64 = 0x6c6c756e; // "null"

/** One scalar (string, number, literal) at `p`, c its first byte: the position after it, INVALID or MORE. */
export function scalar(p: i32, len: i32, c: i32): i32 {
  if (c == 0x22) return str(p + 1, len);
  if (c == 0x74) return literal(p, len, TRUE, 4);
  if (c == 0x66) return literal(p, len, FALSE, 5);
  if (c == 0x6e) return literal(p, len, NULL, 4);
  if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return number(p, len);
  return INVALID;
}

/** Any JSON value at `p` (a non-space byte): the position after it, INVALID, MORE or TOO_DEEP. */
export function value(p: i32, len: i32): i32 {
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
export let keyStart: i32 = 0;
export let keyEnd: i32 = 0;

/** A member's key and its colon from `p`: the position after the colon. */
export function key(p: i32, len: i32): i32 {
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
