// Seeded generators of valid JSON text in every form the grammar allows (RFC 8259): every string
// escape (short ones, \uXXXX for any character, surrogate pairs, lone surrogates), raw non-ASCII,
// numbers in every notation, whitespace between any two tokens, members in any order, unknown
// members with nested values. Used by the differential fuzz and the splitter's property tests.

import { mulberry32 } from '../support/prng.js';

/** mulberry32 (test/support/prng.ts), with the draws the generators need. */
export class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
  shuffle<T>(xs: T[]): T[] {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    return xs;
  }
  /** A size from 1 to `max`, log-uniform (as many tiny as large). */
  size(max: number): number {
    return Math.max(1, Math.min(max, Math.floor(2 ** (this.next() * Math.log2(max + 1)))));
  }
}

/** JSON whitespace, often none. */
export function ws(rng: Rng): string {
  if (rng.chance(0.6)) return '';
  let out = '';
  for (let n = rng.int(1, 3); n > 0; n--) out += rng.pick([' ', '\t', '\n', '\r', '  ', '\r\n']);
  return out;
}

const hex4 = (rng: Rng, cu: number) => {
  const h = cu.toString(16).padStart(4, '0');
  return '\\u' + (rng.chance(0.5) ? h : h.toUpperCase());
};
const SHORT: Record<number, string> = { 0x08: '\\b', 0x0c: '\\f', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x22: '\\"', 0x5c: '\\\\', 0x2f: '\\/' };

/** `s` as a JSON string literal, each character raw or escaped at random (as the grammar allows). */
export function str(rng: Rng, s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const cu = s.charCodeAt(i);
    const next = s.charCodeAt(i + 1);
    if (cu >= 0xd800 && cu <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      // A surrogate pair: raw (4 UTF-8 bytes) or as two escapes.
      out += rng.chance(0.5) ? s[i]! + s[i + 1]! : hex4(rng, cu) + hex4(rng, next);
      i++;
    } else if (cu >= 0xd800 && cu <= 0xdfff) out += hex4(rng, cu); // lone: only an escape carries it
    else if (cu < 0x20 || cu === 0x22 || cu === 0x5c) out += SHORT[cu] !== undefined && rng.chance(0.6) ? SHORT[cu] : hex4(rng, cu);
    else if (cu === 0x2f) out += rng.chance(0.5) ? '\\/' : '/';
    else out += rng.chance(0.08) ? hex4(rng, cu) : s[i]!;
  }
  return out + '"';
}

/** A non-negative integer in one of the notations JSON allows, all parsing to exactly `n`. */
export function int(rng: Rng, n: number): string {
  const d = String(n);
  const e = () => rng.pick(['e', 'E']) + rng.pick(['', '+']);
  if (n === 0) return rng.pick(['0', '-0', '0.0', '-0.0', '0e7', '0E-3', '-0e+2', '0.000E+00']);
  switch (rng.int(0, 6)) {
    case 0:
      return d;
    case 1:
      return `${d}.${'0'.repeat(rng.int(1, 3))}`;
    case 2:
      return `${d}${e()}0`;
    case 3: {
      // d.ddd × 10^k
      const k = rng.int(0, d.length - 1);
      const mant = k === 0 ? d : `${d.slice(0, d.length - k)}.${d.slice(d.length - k)}`;
      return `${mant}${e()}${k}`;
    }
    case 4: {
      // d000 × 10^-3
      const z = rng.int(1, 3);
      return `${d}${'0'.repeat(z)}${rng.pick(['e', 'E'])}-${z}`;
    }
    case 5:
      return `0.${d}${e()}${d.length}`;
    default:
      return `${d}.0${e()}00`;
  }
}

/** A random number of any kind (negative, fractional, exponent) for unknown fields. */
function anyNumber(rng: Rng): string {
  const sign = rng.chance(0.3) ? '-' : '';
  const intPart = rng.chance(0.3) ? '0' : String(rng.int(1, 999_999));
  const frac = rng.chance(0.5) ? '.' + String(rng.int(0, 99_999)).padStart(rng.int(1, 5), '0') : '';
  const exp = rng.chance(0.4) ? rng.pick(['e', 'E']) + rng.pick(['', '+', '-']) + String(rng.int(0, 30)) : '';
  return sign + intPart + frac + exp;
}

const ALPHABET = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ',
  ',', ', ', ':', '"', '\\', '/', '{', '}', '[', ']', '},{', '\\"', '\u0000', '\u0001', '\u0008', '\u0009', '\u000a', '\u000c', '\u000d', '\u001f', '\u007f',
  'é', 'ß', 'Ω', '数', '€', '\u00a0', '\u2028', '\u2029', '\ufeff', '😀', '\ud83d\ude00', '\ud800', '\udfff', '\udbff', '\u0000oversized',
];

/** Random text of up to `max` characters drawn from the hostile alphabet above. */
export function text(rng: Rng, max = 24): string {
  let out = '';
  for (let n = rng.int(0, max); n > 0; n--) out += rng.pick(ALPHABET);
  return out;
}

/** A random JSON value (as text) for an unknown member: any type, nested to `depth`. */
export function anyValue(rng: Rng, depth = 3): string {
  const k = rng.int(0, depth > 0 ? 6 : 4);
  switch (k) {
    case 0:
      return str(rng, text(rng));
    case 1:
      return anyNumber(rng);
    case 2:
      return rng.pick(['true', 'false']);
    case 3:
      return 'null';
    case 4:
      return str(rng, text(rng, 4));
    case 5: {
      const items = Array.from({ length: rng.int(0, 4) }, () => anyValue(rng, depth - 1));
      return `[${ws(rng)}${items.join(`${ws(rng)},${ws(rng)}`)}${ws(rng)}]`;
    }
    default:
      return object(rng, Array.from({ length: rng.int(0, 4) }, () => [text(rng, 6), anyValue(rng, depth - 1)] as const));
  }
}

/** An object from `[key, value text]` members, with whitespace anywhere (member order as given). */
export function object(rng: Rng, members: ReadonlyArray<readonly [string, string]>): string {
  const parts = members.map(([k, v]) => `${ws(rng)}${str(rng, k)}${ws(rng)}:${ws(rng)}${v}${ws(rng)}`);
  return parts.length === 0 ? `{${ws(rng)}}` : `{${parts.join(',')}}`;
}

/** Adds 0 to 3 unknown members (keys never one of `known`) at random places, then shuffles. */
export function withUnknown(rng: Rng, members: Array<readonly [string, string]>, known: readonly string[]): Array<readonly [string, string]> {
  for (let n = rng.int(0, 3); n > 0; n--) {
    let key = text(rng, 8);
    if (known.includes(key)) key += '_x';
    members.push([key, anyValue(rng)]);
  }
  return rng.shuffle(members);
}

/** A list body: envelope members in random order (data among them), unknown members, any whitespace. */
export function envelope(rng: Rng, records: readonly string[], fields: { offset: number; limit: number; total: number }): string {
  const data = records.length === 0 ? `[${ws(rng)}]` : `[${records.map((r) => `${ws(rng)}${r}${ws(rng)}`).join(',')}]`;
  const members = withUnknown(
    rng,
    [
      ['offset', int(rng, fields.offset)],
      ['limit', int(rng, fields.limit)],
      ['total', int(rng, fields.total)],
      ['success', 'true'],
      ['statusCode', int(rng, 200)],
      ['message', str(rng, rng.pick(['', 'OK', text(rng, 12)]))],
      ['data', data],
    ],
    ['offset', 'limit', 'total', 'success', 'statusCode', 'message', 'data'],
  );
  return `${ws(rng)}${object(rng, members)}${ws(rng)}`;
}

/** Cuts `bytes` into chunks of 1 byte to `max` bytes (log-uniform). */
export function chunks(rng: Rng, bytes: Uint8Array, max = 64 * 1024): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; ) {
    const n = rng.size(max);
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
}
