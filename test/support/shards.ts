/**
 * Shard ownership computed as docs/sharding.md ("How portals are assigned") documents it, written
 * apart from the exporter's code so that tests compare with an independent reading: the portal's
 * identity is its normalised base URL; the key is the first 8 bytes (big-endian) of SHA-256 of the
 * identity's UTF-8; the shard is Lamping & Veach's jump consistent hash of that key ("A Fast,
 * Minimal Memory, Consistent Hash Algorithm", 2014, figure 1).
 */
import { createHash } from 'node:crypto';

/** The paper's JumpConsistentHash, line by line: 64-bit unsigned key arithmetic, the step in doubles. */
export function referenceJumpHash(key: bigint, numBuckets: number): number {
  // int64_t b = -1, j = 0;
  let b = -1;
  let j = 0;
  while (j < numBuckets) {
    b = j;
    // key = key * 2862933555777941757ULL + 1;  (uint64_t wraps around)
    key = (key * 2862933555777941757n + 1n) % 2n ** 64n;
    // j = (b + 1) * (double(1LL << 31) / double((key >> 33) + 1));  (the double is truncated into int64_t)
    j = Math.trunc((b + 1) * (2 ** 31 / (Number(key / 2n ** 33n) + 1)));
  }
  return b;
}

/** The documented key of a portal identity: SHA-256 of its UTF-8, first 8 bytes read big-endian. */
export function referencePortalKey(identity: string): bigint {
  const digest = createHash('sha256').update(Buffer.from(identity, 'utf8')).digest();
  let key = 0n;
  for (let i = 0; i < 8; i++) key = key * 256n + BigInt(digest[i]!);
  return key;
}

/**
 * The documented identity of the portal at `baseUrl` (scheme://host[:port]/path): scheme and host
 * in lower case, the scheme's default port and trailing slashes dropped.
 */
export function referenceIdentity(baseUrl: string): string {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/:]+)(?::(\d+))?(\/.*)?$/.exec(baseUrl);
  if (!m) throw new Error(`referenceIdentity: not a URL the tests use: ${baseUrl}`);
  const scheme = m[1]!.toLowerCase();
  const defaultPort = { http: '80', https: '443' }[scheme];
  const port = m[3] === undefined || m[3] === defaultPort ? '' : `:${m[3]}`;
  return `${scheme}://${m[2]!.toLowerCase()}${port}${(m[4] ?? '').replace(/\/+$/, '')}`;
}

/** The shard (0-based) of `totalShards` that collects the portal of identity `identity`, by the documented rule. */
export function referenceShard(identity: string, totalShards: number): number {
  return referenceJumpHash(referencePortalKey(identity), totalShards);
}
