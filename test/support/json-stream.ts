import { EnvelopeParser, type RawEnvelope } from '../../src/upstream/json-stream.js';

export const encoder = new TextEncoder();

/** Feeds `chunks` to a fresh /alerts parser and returns the records and the envelope. */
export function parse(chunks: Array<string | Uint8Array>): { records: unknown[]; envelope: RawEnvelope } {
  const records: unknown[] = [];
  const parser = new EnvelopeParser('/alerts', (r) => records.push(r));
  for (const c of chunks) parser.write(c);
  return { records, envelope: parser.end() };
}

/** Splits bytes into pieces of `size`. */
export function pieces(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}
