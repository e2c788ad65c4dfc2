import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import {
  jumpHash, MAX_TOTAL_SHARDS, ownsPortal, parseShard, parseTotalShards, portalKey, shardOf, SHARD_SETTING, TOTAL_SHARDS_SETTING, validateShards,
} from '../../src/config/shard.js';
import { configErrorOf } from '../support/errors.js';
import { portalIdentity } from '../../src/config/identity.js';
import { referenceIdentity, referenceJumpHash, referencePortalKey, referenceShard } from '../support/shards.js';

const names = (n: number, prefix = 'customer-') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('jumpHash (Lamping & Veach)', () => {
  // Expected values from the paper's reference C++ (JumpConsistentHash) compiled with gcc and run on
  // these keys for 1, 2, 3, 10, 100 and 1000 buckets; not from this implementation.
  it.each([
    [0n, [0, 0, 0, 0, 0, 0]],
    [1n, [0, 0, 0, 6, 55, 549]],
    [2n, [0, 0, 0, 6, 62, 338]],
    [3n, [0, 0, 2, 8, 8, 961]],
    [42n, [0, 1, 2, 2, 43, 571]],
    [0xdeadbeefn, [0, 1, 2, 5, 87, 285]],
    [0xffffffffffffffffn, [0, 1, 2, 9, 92, 313]],
    [1234567890123456789n, [0, 1, 2, 9, 96, 888]],
  ])('key %s gives the reference buckets', (key, want) => {
    expect([1, 2, 3, 10, 100, 1000].map((n) => jumpHash(key, n))).toEqual(want);
  });

  it('puts every key in bucket 0 of 1, and a key only ever moves to the newest bucket as buckets grow', () => {
    for (let i = 0; i < 200; i++) {
      const key = portalKey(`k${i}`);
      expect(jumpHash(key, 1)).toBe(0);
      let prev = 0;
      for (let n = 2; n <= 60; n++) {
        const b = jumpHash(key, n);
        expect(b === prev || b === n - 1, `key k${i}, ${n - 1} -> ${n} buckets: ${prev} -> ${b}`).toBe(true);
        prev = b;
      }
    }
  });

  it('agrees with the paper\'s algorithm, written out independently, on 64-bit keys across bucket counts', () => {
    // Keys spread over the whole 64-bit range, including both ends and the sign bit of int64.
    const keys = [0n, 1n, 2n ** 63n - 1n, 2n ** 63n, 2n ** 64n - 1n];
    for (let i = 0n; i < 300n; i++) keys.push((i * 0x9e3779b97f4a7c15n + 12345n) % 2n ** 64n);
    for (const key of keys) {
      for (const n of [1, 2, 3, 7, 16, 100, 1000]) expect(jumpHash(key, n), `key ${key}, ${n} buckets`).toBe(referenceJumpHash(key, n));
    }
  });

  it.each([0, -1, 2.5, NaN])('rejects %s buckets with a RangeError saying the buckets must be a positive integer', (n) => {
    expect(() => jumpHash(1n, n)).toThrow(new RangeError('jumpHash: buckets must be a positive integer'));
  });
});

describe('shardOf', () => {
  it('keys a portal by the first 8 bytes of SHA-256 of its name (values from sha256sum and the reference C++)', () => {
    // printf acme | sha256sum → 822b33ad87c148a0…
    expect(portalKey('acme')).toBe(0x822b33ad87c148a0n);
    expect(portalKey('globex')).toBe(0x5bc1a08d28e40fe7n);
    expect([3, 4, 10, 1000].map((n) => shardOf('acme', n))).toEqual([1, 1, 1, 126]);
    expect([3, 4, 10, 1000].map((n) => shardOf('globex', n))).toEqual([0, 0, 6, 779]);
    expect([3, 4, 10, 1000].map((n) => shardOf('initech', n))).toEqual([0, 0, 7, 321]);
  });

  it('partitions 300 portals over 3 shards exactly once each, balanced within 25 %', () => {
    const portals = names(300);
    const owners = portals.map((p) => [0, 1, 2].filter((s) => ownsPortal(p, s, 3)));
    for (const o of owners) expect(o).toHaveLength(1);
    const counts = [0, 0, 0];
    for (const p of portals) counts[shardOf(p, 3)]!++;
    expect(counts.reduce((a, b) => a + b)).toBe(300);
    for (const c of counts) {
      expect(c).toBeGreaterThanOrEqual(75);
      expect(c).toBeLessThanOrEqual(125);
    }
  });

  it('going from 3 to 4 shards moves at most 35 % of the portals, all to the new shard', () => {
    const portals = names(300);
    const moved = portals.filter((p) => shardOf(p, 3) !== shardOf(p, 4));
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.length / portals.length).toBeLessThanOrEqual(0.35);
    for (const p of moved) expect(shardOf(p, 4)).toBe(3);
  });

  it('going from n to n + 1 shards moves about 1/(n + 1) of many portals', () => {
    const portals = names(20_000, 'portal-');
    for (const n of [1, 2, 5, 9, 31, 99]) {
      const moved = portals.filter((p) => shardOf(p, n) !== shardOf(p, n + 1)).length / portals.length;
      expect(moved, `${n} -> ${n + 1}`).toBeGreaterThan(0.8 / (n + 1));
      expect(moved, `${n} -> ${n + 1}`).toBeLessThan(1.2 / (n + 1));
    }
  });

  it('gives every portal the shard of the documented rule (jump hash of SHA-256 of the UTF-8 identity), for many identities and totals', () => {
    const portals = [...names(500, 'portal-'), 'a', 'acme-eu-west', 'Café Müller', '東京', 'emoji-\u{1f512}', 'x'.repeat(300), ' spaced name '];
    for (const p of portals) {
      expect(portalKey(p), JSON.stringify(p)).toBe(referencePortalKey(p));
      for (const n of [1, 2, 3, 4, 5, 8, 13, 64, 1000]) expect(shardOf(p, n), `${JSON.stringify(p)} of ${n}`).toBe(referenceShard(p, n));
    }
  });

  it('tells identities of the same length apart: their shards follow the hash of the whole text', () => {
    // Thirty names of 11 characters each; a rule that looked only at the length would give them all one shard.
    const same = names(30, 'tenant-').map((p) => p.padEnd(11, 'x'));
    const shards = same.map((p) => shardOf(p, 3));
    expect(shards).toEqual(same.map((p) => referenceShard(p, 3)));
    expect(new Set(shards)).toEqual(new Set([0, 1, 2]));
  });

  it('puts every entry of one portal on one shard, however its base URL is written', () => {
    const written = [
      'https://acme.example.com/public-api/v1',
      'HTTPS://ACME.example.com/public-api/v1/',
      'https://Acme.Example.Com:443/public-api/v1//',
    ];
    const identity = referenceIdentity(written[0]!);
    for (const url of written) expect(portalIdentity(url), url).toBe(identity);
    for (const n of [2, 3, 7, 1000]) {
      const shards = written.map((url) => shardOf(portalIdentity(url), n));
      expect(shards, `of ${n}`).toEqual(written.map(() => referenceShard(identity, n)));
    }
  });

  it('is stable: the same name gives the same shard every time', () => {
    for (const p of names(50)) expect(shardOf(p, 7)).toBe(shardOf(`${p}`, 7));
  });
});

describe('parseShard', () => {
  it.each([
    ['0', 0],
    ['2', 2],
    [' 7 ', 7],
    ['999', 999],
    ['posture-exporter-0', 0],
    ['posture-exporter-2', 2],
    ['posture-exporter-12', 12],
    ['exporter-v2-3', 3],
    ['web-0', 0],
    ['a-3', 3],
    ['a.b-4', 4],
  ])('reads %j as shard %i', (value, want) => {
    expect(parseShard(value, SHARD_SETTING)).toBe(want);
  });

  it.each([
    ['posture-exporter-'],
    ['posture-exporter'],
    ['-2'],
    ['-1'],
    ['two'],
    ['1.5'],
    ['2x'],
    [''],
    ['posture-exporter--'],
    ['-web-2'],
    ['.web-2'],
    ['web-2x'],
    ['web-2.5'],
    ['web-2 3'],
  ])('rejects %j with a ConfigError naming the setting and the fix', (value) => {
    const e = configErrorOf(() => parseShard(value, SHARD_SETTING));
    expect(e.setting).toBe(SHARD_SETTING);
    expect(e.message).toContain('POSTURE_SHARD (--shard)');
    expect(e.message).toContain('posture-exporter-2');
    expect(e.message.split('\n')).toHaveLength(1);
  });
});

describe('parseShard with the total known', () => {
  it.each([['-1'], ['x'], ['posture-exporter-']])('refuses %j saying what a shard is: 0 to total - 1, or a pod name ending in -N', (value) => {
    const e = configErrorOf(() => parseShard(value, SHARD_SETTING, 3));
    expect(e.message).toBe(`POSTURE_SHARD (--shard): '${value}' is not a shard number: a shard is a whole number from 0 to 2 (below the total of 3 shards) or a StatefulSet pod name ending in -N (e.g. posture-exporter-2)`);
  });

  it('names the one shard number of two shards, and no range where there is none (no total, or a total of 1)', () => {
    const pod = 'or a StatefulSet pod name ending in -N (e.g. posture-exporter-2)';
    expect(configErrorOf(() => parseShard('x', SHARD_SETTING, 2)).message).toBe(`POSTURE_SHARD (--shard): 'x' is not a shard number: a shard is a whole number from 0 to 1 (below the total of 2 shards) ${pod}`);
    for (const total of [undefined, 1]) {
      expect(configErrorOf(() => parseShard('x', SHARD_SETTING, total)).message, `total ${total}`).toBe(`POSTURE_SHARD (--shard): 'x' is not a shard number: a shard is a whole number from 0 (e.g. 2) ${pod}`);
    }
  });
});

describe('parseTotalShards and validateShards', () => {
  it('rejects a shard number too large to be exact, naming the setting and the most shards', () => {
    const e = configErrorOf(() => parseShard('123456789012345678901', SHARD_SETTING));
    expect(e.setting).toBe(SHARD_SETTING);
    expect(e.message).toBe(`POSTURE_SHARD (--shard): '123456789012345678901' is too large: give a shard number below the total shards (at most ${MAX_TOTAL_SHARDS})`);
  });

  it.each([['1', 1], ['3', 3], [' 3 ', 3], ['\t12\n', 12], [String(MAX_TOTAL_SHARDS), MAX_TOTAL_SHARDS]])('reads %j', (value, want) => {
    expect(parseTotalShards(value, TOTAL_SHARDS_SETTING)).toBe(want);
  });

  it.each([['0'], ['1001'], ['-3'], ['three'], ['2.5'], [''], ['+3'], ['1e2'], ['0x10'], ['3 shards'], ['x3']])('rejects total %j naming POSTURE_TOTAL_SHARDS', (value) => {
    expect(() => parseTotalShards(value, TOTAL_SHARDS_SETTING)).toThrow(ConfigError);
    expect(() => parseTotalShards(value, TOTAL_SHARDS_SETTING)).toThrow(/^POSTURE_TOTAL_SHARDS \(--total-shards\): .*1 to 1000/);
  });

  it('accepts every shard below the total', () => {
    for (let s = 0; s < 5; s++) expect(() => validateShards(s, 5)).not.toThrow();
    expect(() => validateShards(0, 1)).not.toThrow();
    expect(() => validateShards(999, 1000)).not.toThrow();
  });

  it.each([
    [3, 3, SHARD_SETTING, /POSTURE_SHARD \(--shard\): shard 3 is not below POSTURE_TOTAL_SHARDS \(--total-shards\) 3: give 0 to 2/],
    [5, 2, SHARD_SETTING, /give 0 to 1/],
    [-1, 2, SHARD_SETTING, /POSTURE_SHARD \(--shard\).*0 to 1/],
    [0, 0, TOTAL_SHARDS_SETTING, /POSTURE_TOTAL_SHARDS \(--total-shards\).*1 to 1000/],
    [0, 1001, TOTAL_SHARDS_SETTING, /POSTURE_TOTAL_SHARDS \(--total-shards\).*1 to 1000/],
  ])('rejects shard %i of %i', (shard, total, setting, message) => {
    const error = configErrorOf(() => validateShards(shard, total));
    expect(error.setting).toBe(setting);
    expect(error.message).toMatch(message);
    expect((error as ConfigError).message).not.toContain('\n');
  });
});
