// Property tests of the streaming parser with random valid bodies and random chunking (1 byte to
// 64 KiB): its records and envelope are what JSON.parse gives for the whole body, and the size
// limits (src/upstream/limits.ts) give the same result whatever the chunking. Seeded: FUZZ_SEED
// replays a run, and a failure names the seed of its case.
import { describe, expect, it } from 'vitest';
import { EnvelopeParser, type RawEnvelope } from '../../src/upstream/json-stream.js';
import { MAX_STRING_BYTES, OversizedValue } from '../../src/upstream/limits.js';
import { Rng, anyValue, chunks, envelope, int, object, str, text, withUnknown, ws } from '../fuzz/json-gen.js';
import { casesOr } from '../support/mutation.js';

const BASE_SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const encoder = new TextEncoder();

function parseChunks(parts: readonly Uint8Array[]): { records: unknown[]; envelope: RawEnvelope } {
  const records: unknown[] = [];
  const parser = new EnvelopeParser('/alerts', (r) => records.push(r));
  for (const c of parts) parser.write(c);
  return { records, envelope: parser.end() };
}

/** Runs `cases` seeded cases; a failure says which seed to replay. */
function forSeeds(cases: number, run: (rng: Rng) => void): void {
  for (let k = 0; k < cases; k++) {
    const seed = BASE_SEED + k;
    try {
      run(new Rng(seed));
    } catch (err) {
      throw new Error(`case failed with FUZZ_SEED=${seed} (replay: FUZZ_SEED=${seed} npx vitest run test/upstream/json-stream-property.test.ts)\n${(err as Error).message}`, { cause: err });
    }
  }
}

/** A record like the portal's (compact or not), or any other JSON value the array may hold. */
function record(rng: Rng): string {
  if (rng.chance(0.1)) return anyValue(rng, 2);
  const members = withUnknown(
    rng,
    [
      ['state', str(rng, rng.pick(['Red', 'Amber', 'Green', text(rng, 6)]))],
      ['product', str(rng, text(rng))],
      ['count', int(rng, rng.int(0, 100_000))],
      ['resolved', rng.pick(['true', 'false'])],
      ['nested', anyValue(rng, 3)],
    ],
    ['state', 'product', 'count', 'resolved', 'nested'],
  );
  // Compact records take the fast path; whitespace between them sends them to the splitter.
  return rng.chance(0.5) ? JSON.stringify(JSON.parse(object(rng, members))) : object(rng, members);
}

describe('EnvelopeParser on random bodies and random chunking', () => {
  it('gives exactly the records and envelope JSON.parse gives', () => {
    forSeeds(casesOr(400, 60), (rng) => {
      const n = rng.chance(0.1) ? 0 : rng.int(1, 120);
      const body = envelope(rng, Array.from({ length: n }, () => record(rng)), { offset: 0, limit: 0, total: n });
      const bytes = encoder.encode(body);
      const want = JSON.parse(body) as Record<string, unknown>;
      const got = parseChunks(chunks(rng, bytes, rng.pick([16, 1024, 64 * 1024])));
      expect(got.records).toEqual(want.data);
      const env: Record<string, unknown> = { dataCount: n };
      for (const k of ['offset', 'limit', 'total', 'success', 'statusCode', 'message']) env[k] = want[k];
      expect(got.envelope).toEqual(env);
    });
  });

  it('applies the size limits the same way whatever the chunking, in UTF-8 bytes as sent', () => {
    forSeeds(casesOr(40, 8), (rng) => {
      // One string per record near or over MAX_STRING_BYTES: raw or escaped, one to four bytes a character.
      const bigs: Array<{ raw: string; bytes: number; value: string }> = [];
      const records = Array.from({ length: rng.int(1, 4) }, () => {
        const unit = rng.pick(['x', 'é', '数', '😀', '\u0000', '"', 'a\\']);
        let s = unit.repeat(Math.floor((MAX_STRING_BYTES - rng.int(-600, 600)) / encoder.encode(unit).length));
        s += text(rng, 8);
        const raw = str(rng, s);
        bigs.push({ raw, bytes: encoder.encode(raw).length - 2, value: s });
        const members: Array<readonly [string, string]> = [['before', str(rng, text(rng))], ['big', raw], ['after', int(rng, rng.int(0, 9))]];
        return object(rng, rng.shuffle(members));
      });
      const body = `{"total":${records.length},${ws(rng)}"data":[${records.join(',')}]}`;
      const bytes = encoder.encode(body);
      const want = (JSON.parse(body) as { data: Array<Record<string, unknown>> }).data.map((r, k) => ({
        ...r,
        big: bigs[k]!.bytes > MAX_STRING_BYTES ? new OversizedValue(bigs[k]!.bytes, 'string') : bigs[k]!.value,
      }));
      for (const parts of [[bytes], chunks(rng, bytes, 64), chunks(rng, bytes, 64 * 1024), chunks(rng, bytes, 1 << 20)]) {
        expect(parseChunks(parts).records).toEqual(want);
      }
    });
  });
});
