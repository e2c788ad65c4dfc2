import { describe, expect, it } from 'vitest';
import { asWritten } from '../../src/core/utf8.js';
import { itMaps } from '../support/maps.js';

/** What Node's own UTF-8 codec makes of a string: the oracle. */
const roundTrip = (s: string) => Buffer.from(s, 'utf8').toString('utf8');

describe('asWritten', () => {
  const CASES = [
    ['', ''],
    ['plain', 'plain'],
    ['X\ud800', 'X\ufffd'],
    ['\udc00X', '\ufffdX'],
    ['\ud83d\ude00', '\ud83d\ude00'],
    ['\ude00\ud83d', '\ufffd\ufffd'],
    ['\ud83d\ud83d\ude00', '\ufffd\ud83d\ude00'],
    ['a\u0000b\nc"d\\e', 'a\u0000b\nc"d\\e'],
  ] as const;
  itMaps('writes %j as UTF-8 does', asWritten, CASES);
  it.each(CASES.map(([s]) => s))('writes %j as the UTF-8 codec does', (s) => {
    expect(asWritten(s)).toBe(roundTrip(s));
  });

  it('agrees with the UTF-8 codec on random UTF-16 text, surrogates in any order', () => {
    let seed = 1;
    const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const units = [0x41, 0x0, 0xe9, 0xfffd, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xd83d, 0xde00];
    for (let n = 0; n < 5000; n++) {
      const s = String.fromCharCode(...Array.from({ length: Math.floor(next() * 8) }, () => units[Math.floor(next() * units.length)]!));
      expect(asWritten(s), JSON.stringify(s)).toBe(roundTrip(s));
    }
  });
});
