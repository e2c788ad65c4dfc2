/**
 * What the PortalReader tests on undici's MockAgent share (reader-envelope, reader-errors and
 * reader-dispatcher): a MockAgent with no network and a FakeClock made fresh for each test, a reader
 * on them, and a sink that counts records.
 */
import { MockAgent } from 'undici';
import { afterEach, beforeEach } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { PortalReader, type PortalReaderOptions } from '../../src/upstream/reader.js';

const ORIGIN = 'http://127.0.0.1:9';
/** The reader's base URL on the mock origin. */
export const BASE = `${ORIGIN}/public-api/v1`;
/** The API key every reader here sends. */
export const KEY = 'mock-key-5f1c2e9a7b3d4c6e8f0a';
/** The fake clock's start. */
export const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

/** The running test's MockAgent. */
export let agent: MockAgent;
let clock: FakeClock;
/** Records sunk by every sink `counting` made in the running test. */
export let seen = 0;

/**
 * Makes the agent, the clock and the count fresh before each test, and after it checks that every
 * interceptor was used. Call once, at the top of the file.
 */
export function mockAgentPerTest(): void {
  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
    clock = new FakeClock(T0);
    seen = 0;
  });
  afterEach(async () => {
    agent.assertNoPendingInterceptors();
    await agent.close();
  });
}

/** A reader of BASE through the test's agent and clock, and its logger. */
export function reader(overrides: Partial<PortalReaderOptions> = {}) {
  const logger = memoryLogger();
  const r = new PortalReader({ baseUrl: BASE, apiKey: KEY, clock, logger, dispatcher: agent, ...overrides });
  return { r, logger };
}

/** A sink that counts records; `seen` counts across every sink made. */
export const counting = () => {
  let n = 0;
  return {
    record: () => {
      n++;
      seen++;
    },
    finish: () => n,
  };
};

/** The mock origin's interceptors. */
export const pool = () => agent.get(ORIGIN);
/** Reads `endpoint` with `query` into a counting sink. */
export const list = (r: PortalReader, endpoint = '/vitals', query: Record<string, string | number | undefined> = {}) => r.read({ endpoint, query }, counting);
