/**
 * Stateless deterministic randomness: every value is a hash of (seed, stream, index, ...), so any
 * record can be generated on its own, in any order, and twice with the same result.
 */

/** murmur3's 32-bit finaliser. */
export function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

const GOLD = 0x9e3779b9;

/** A 32-bit hash of up to four numbers (integers below 2^53; they wrap modulo 2^32). */
export function hash(a: number, b: number, c = 0, d = 0): number {
  let h = mix32((a + GOLD) >>> 0);
  h = mix32((h ^ (b >>> 0)) + Math.imul(h, 31));
  h = mix32((h ^ (c >>> 0)) + GOLD);
  h = mix32((h ^ (d >>> 0)) + Math.imul(h, 17));
  return h;
}

/** A number in [0, 1) from a hash. */
export function unit(a: number, b: number, c = 0, d = 0): number {
  return hash(a, b, c, d) / 4294967296;
}

/** An integer in [lo, hi] from a hash. */
export function intIn(lo: number, hi: number, a: number, b: number, c = 0, d = 0): number {
  return lo + Math.floor(unit(a, b, c, d) * (hi - lo + 1));
}

/** One element of `list`, chosen by a hash. */
export function pick<T>(list: readonly T[], a: number, b: number, c = 0, d = 0): T {
  return list[hash(a, b, c, d) % list.length]!;
}

/** Picks by weight: `weights` pairs each option with a relative weight. */
export function weighted<T>(options: readonly (readonly [T, number])[], u: number): T {
  let total = 0;
  for (const [, w] of options) total += w;
  let x = u * total;
  for (const [v, w] of options) {
    if (x < w) return v;
    x -= w;
  }
  return options[options.length - 1]![0];
}

const HEX_BYTES = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function hex8(n: number): string {
  return HEX_BYTES[(n >>> 24) & 0xff]! + HEX_BYTES[(n >>> 16) & 0xff]! + HEX_BYTES[(n >>> 8) & 0xff]! + HEX_BYTES[n & 0xff]!;
}

/** A version-4-looking GUID derived from the inputs. */
export function guid(a: number, b: number, c: number): string {
  const p = hex8(hash(a, b, c, 1));
  const q = hex8(hash(a, b, c, 2));
  const r = hex8(hash(a, b, c, 3));
  const s = hex8(hash(a, b, c, 4));
  const variant = '89ab'[(hash(a, b, c, 3) >>> 28) & 3];
  return `${p}-${q.slice(0, 4)}-4${q.slice(5, 8)}-${variant}${r.slice(1, 4)}-${r.slice(4, 8)}${s}`;
}

/** Lowercase hex of `n` hashed bytes. */
export function hexString(length: number, a: number, b: number, c = 0): string {
  let out = '';
  for (let i = 0; out.length < length; i++) out += hex8(hash(a, b, c, i + 100));
  return out.slice(0, length);
}

/** A bijection on 32-bit integers (so tokens derived from distinct indices never collide). */
export function scramble32(x: number, key: number): number {
  x = (x ^ key) >>> 0;
  x = Math.imul(x, 0x2c1b3c6d) >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x297a2d39) >>> 0;
  x ^= x >>> 16;
  return x >>> 0;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Multiplies modulo m without losing precision for m below 2^31. */
function mulMod(a: number, b: number, m: number): number {
  const p = a * b;
  if (p <= Number.MAX_SAFE_INTEGER) return p % m;
  return Number((BigInt(a) * BigInt(b)) % BigInt(m));
}

/** An affine permutation of [0, n): `forward` and its `inverse`. */
export class Permutation {
  private readonly a: number;
  private readonly aInv: number;
  private readonly b: number;
  constructor(readonly n: number, seed: number) {
    if (n <= 1) {
      this.a = 1;
      this.aInv = 1;
      this.b = 0;
      return;
    }
    let a = (hash(seed, 0x5eed, n) % n) | 1;
    while (gcd(a, n) !== 1) a = (a + 1) % n || 1;
    this.a = a;
    this.b = hash(seed, 0xb0b, n) % n;
    this.aInv = modInverse(a, n);
  }
  forward(i: number): number {
    if (this.n <= 1) return i;
    return (mulMod(this.a, i, this.n) + this.b) % this.n;
  }
  inverse(p: number): number {
    if (this.n <= 1) return p;
    return mulMod(this.aInv, (p - this.b + this.n) % this.n, this.n);
  }
}

function modInverse(a: number, m: number): number {
  let [oldR, r] = [a, m];
  let [oldS, s] = [1, 0];
  while (r !== 0) {
    const q = Math.floor(oldR / r);
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return ((oldS % m) + m) % m;
}
