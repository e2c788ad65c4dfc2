/**
 * Helpers for tests of the upstream reader and of requests through the scheduler: record sinks
 * that keep what they saw, a way to await an expected rejection, a loopback undici Agent, and the
 * two kinds of dispatcher a reader reads through.
 */
import { Agent } from 'undici';
import { afterAll } from 'vitest';
import type { RecordSink } from '../../src/upstream/reader.js';
import { HttpTransport, type Dispatch } from '../../src/net/transport.js';

/** A sink that keeps its records; `made` lists every sink created, so tests can see one per attempt. */
export function sinks() {
  const made: Array<{ records: unknown[] }> = [];
  const newSink = (): RecordSink<unknown[]> => {
    const records: unknown[] = [];
    made.push({ records });
    return { record: (raw: unknown) => void records.push(raw), finish: () => records };
  };
  return { made, newSink };
}

/** The `itemId` of each kept record, in order. */
export const itemIds = (records: unknown[]) => records.map((r) => (r as { itemId: string }).itemId);

/** Awaits `p` and returns what it rejected with; fails the test when it resolved. */
export async function failure(p: Promise<unknown>): Promise<Error> {
  let result: unknown;
  try {
    result = await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
}

/** An Agent for the calling test file's requests to the simulated portal, closed after its tests. */
export function loopbackAgent(): Agent {
  const agent = new Agent({ connect: { timeout: 2_000 } });
  afterAll(async () => {
    await agent.close();
  });
  return agent;
}

/**
 * The dispatchers a PortalReader reads through, by name: its default, HttpTransport (Node's http),
 * and an injected undici Agent. Reader tests run once through each (`describe.each`).
 */
export function loopbackDispatchers(): Array<[string, Dispatch]> {
  return [
    ['HttpTransport', new HttpTransport({ connectMs: 2_000, headersMs: 30_000, bodyMs: 30_000 })],
    ['an undici Agent', loopbackAgent()],
  ];
}
