/**
 * Shard ownership: which of `totalShards` processes collects a portal. Pure: no I/O, no config
 * loading (the CLI and the config loader call these).
 *
 * Assignment is Lamping & Veach's jump consistent hash ("A Fast, Minimal Memory, Consistent Hash
 * Algorithm", 2014) over a 64-bit key: the first 8 bytes (big-endian) of SHA-256 of the portal's
 * identity (its normalised base URL, see identity.ts) in UTF-8, so every entry of one portal, which
 * share its budget, lands on one shard. Going from n to n + 1 shards moves about 1/(n + 1) of the
 * portals, all of them to the new shard; nothing else moves. There is no coordination between
 * shards: each one computes the same answer from the identity alone.
 */
import { createHash } from 'node:crypto';
import { ConfigError } from '../errors.js';
import { SETTING_BY_KEY } from './settings.js';

/** Most shards accepted by `--total-shards` (the settings table's bound, also for the Lambda's event). */
export const MAX_TOTAL_SHARDS = SETTING_BY_KEY.total_shards.max!;

const MASK64 = (1n << 64n) - 1n;
const LCG = 2862933555777941757n;
const TWO31 = 2147483648; // 2^31

/** Lamping & Veach's jump consistent hash: the bucket in [0, buckets) of a 64-bit `key`. */
export function jumpHash(key: bigint, buckets: number): number {
  if (!Number.isInteger(buckets) || buckets < 1) throw new RangeError('jumpHash: buckets must be a positive integer');
  let k = BigInt.asUintN(64, key);
  // Stryker disable next-line UnaryOperator: equivalent, the first pass always runs (buckets >= 1) and sets b to 0
  let b = -1;
  let j = 0;
  while (j < buckets) {
    b = j;
    k = (k * LCG + 1n) & MASK64;
    // The paper's (b + 1) * (2^31 / ((key >> 33) + 1)), in doubles as in the reference C++.
    j = Math.floor((b + 1) * (TWO31 / (Number(k >> 33n) + 1)));
  }
  return b;
}

/** The 64-bit hash key of a portal identity: the first 8 bytes of SHA-256 of its UTF-8, big-endian. */
export function portalKey(portal: string): bigint {
  return createHash('sha256').update(portal, 'utf8').digest().readBigUInt64BE(0);
}

/** The shard (0-based) that collects the portal of identity `portal` when there are `totalShards` shards. */
export function shardOf(portal: string, totalShards: number): number {
  return jumpHash(portalKey(portal), totalShards);
}

/** Whether the shard `shard` of `totalShards` collects the portal of identity `portal`. */
export function ownsPortal(portal: string, shard: number, totalShards: number): boolean {
  return shardOf(portal, totalShards) === shard;
}

/**
 * Parses a shard ordinal: a whole number (`2`) or a StatefulSet pod name whose trailing `-N` is
 * the ordinal (`posture-exporter-2`), so the downward API's `metadata.name` can be passed as is.
 * With `total` known, a refusal says which numbers are shards.
 */
export function parseShard(value: string, setting: string, total?: number): number {
  const text = value.trim();
  // A bare number, or a DNS-label-like name ending in -N (a StatefulSet pod: <set name>-<ordinal>).
  const m = /^(\d+)$/.exec(text) ?? /^[A-Za-z0-9](?:[-A-Za-z0-9.]*[A-Za-z0-9])?-(\d+)$/.exec(text);
  if (!m) {
    const numbers = total !== undefined && total > 1 ? `a whole number from 0 to ${total - 1} (below the total of ${total} shards)` : 'a whole number from 0 (e.g. 2)';
    throw new ConfigError(setting, `${setting}: '${value}' is not a shard number: a shard is ${numbers} or a StatefulSet pod name ending in -N (e.g. posture-exporter-2)`);
  }
  const n = Number(m[1]);
  if (!Number.isSafeInteger(n)) throw new ConfigError(setting, `${setting}: '${value}' is too large: give a shard number below the total shards (at most ${MAX_TOTAL_SHARDS})`);
  return n;
}

/** Parses `--total-shards`: a whole number from 1 to MAX_TOTAL_SHARDS. */
export function parseTotalShards(value: string, setting: string): number {
  const text = value.trim();
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(Number.isInteger(n) && n >= 1 && n <= MAX_TOTAL_SHARDS)) {
    throw new ConfigError(setting, `${setting}: '${value}' is not a shard count: give a whole number from 1 to ${MAX_TOTAL_SHARDS} (1 = no sharding)`);
  }
  return n;
}

/** How the settings are named in messages. */
export const SHARD_SETTING = 'POSTURE_SHARD (--shard)';
export const TOTAL_SHARDS_SETTING = 'POSTURE_TOTAL_SHARDS (--total-shards)';

/** Checks a shard pair; throws a ConfigError naming the setting and the fix. */
export function validateShards(shard: number, totalShards: number): void {
  if (!(Number.isInteger(totalShards) && totalShards >= 1 && totalShards <= MAX_TOTAL_SHARDS)) {
    throw new ConfigError(TOTAL_SHARDS_SETTING, `${TOTAL_SHARDS_SETTING}: ${totalShards} is out of range: give a whole number from 1 to ${MAX_TOTAL_SHARDS}`);
  }
  if (!(Number.isInteger(shard) && shard >= 0)) {
    throw new ConfigError(SHARD_SETTING, `${SHARD_SETTING}: ${shard} is not a shard number: give a whole number from 0 to ${totalShards - 1}`);
  }
  if (shard >= totalShards) {
    throw new ConfigError(SHARD_SETTING, `${SHARD_SETTING}: shard ${shard} is not below ${TOTAL_SHARDS_SETTING} ${totalShards}: give 0 to ${totalShards - 1}, or raise the total (StatefulSet replicas and --total-shards must be equal)`);
  }
}
