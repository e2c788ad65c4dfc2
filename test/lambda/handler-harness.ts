/**
 * What the tests of the Lambda handler invoked in-process share (handler and handler-settings):
 * Debian's Pushgateway for the file, and for each test a FakeClock, the simulated portals and
 * loopback fakes it starts (closed after it), and its log lines, checked after it for the secrets
 * none may contain.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { createHandler, type InvocationFailedError, type HandlerDeps } from '../../src/runtime/lambda.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { FakeClock } from '../../src/core/clock.js';
import { startPushgateway, type Peer } from '../support/peers.js';
import type { Receiver } from '../sinks/receiver.js';
import { startAwsFake, type AwsFake } from './aws-fake.js';
import { lambdaContext, pushgatewayGroups, scheduledEvent, valueIn } from './support.js';

/** The simulated portals' API key. */
export const KEY = 'sim-lambda-key-0123456789abcdef';
/** The sources with their own Pushgateway group. */
export const SOURCES = ['vitals', 'alerts', 'devices'] as const;

/** The file's Pushgateway. */
export let pgw: Peer;
/** The test's clock. */
export let clock: FakeClock;
let sims: Simulator[] = [];
/** What the test started that is closed after it. */
export let fakes: Array<AwsFake | Receiver> = [];
/** Every log line written in the current test, and the secrets none of them may contain. */
export let logs: string[] = [];
/** Secrets of the current test: KEY, and any the test adds. */
export let secrets: string[] = [];

/** Starts the Pushgateway and, around each test, the clock, the logs and the closing. Call once, at the top of the file. */
export function handlerPerTest(): void {
  beforeAll(async () => {
    pgw = await startPushgateway();
  });
  afterAll(async () => {
    await pgw?.stop();
  });
  beforeEach(() => {
    // Time moves only when a test says so, or when the code under test sleeps.
    clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0), { autoAdvance: true });
    logs = [];
    secrets = [KEY];
  });
  afterEach(async () => {
    const text = logs.join('\n');
    for (const s of secrets) expect(text).not.toContain(s);
    await Promise.all([...sims, ...fakes].map((x) => x.close()));
    sims = [];
    fakes = [];
  });
}

/** A simulated portal on the test's clock, taking KEY, closed after the test. */
export async function portal(opts: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({ clock, keys: [{ key: KEY }], ...opts });
  sims.push(sim);
  return sim;
}

/** A loopback AWS key-store fake holding `store`, closed after the test. */
export async function awsFake(store?: Parameters<typeof startAwsFake>[0]): Promise<AwsFake> {
  const aws = await startAwsFake(store);
  fakes.push(aws);
  return aws;
}

/** One container: a handler built once, invoked as often as the test likes (`req-1`, `req-2`, …). */
export function lambda(env: Record<string, string | undefined>, deps: Partial<HandlerDeps> = {}) {
  const lines: string[] = [];
  const handler = createHandler({
    env,
    clock,
    write: (line) => {
      lines.push(line);
      logs.push(line);
    },
    ...deps,
  });
  let n = 0;
  const invoke = (remainingMs = 60_000) => handler(scheduledEvent(clock.now()), lambdaContext(remainingMs, `req-${++n}`));
  const failure = (remainingMs?: number) =>
    invoke(remainingMs).then(
      (summary) => {
        throw new Error(`expected the invocation to fail, it returned ${JSON.stringify(summary)}`);
      },
      (err: unknown) => err as InvocationFailedError,
    );
  return { invoke, failure, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

/** Settings of one portal, `portalName`, on `sim`, pushing to the Pushgateway; `more` added or replaced. */
export function envFor(sim: Simulator, portalName: string, more: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: portalName, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: pgw.url, ...more };
}

/** `posture_collection_success` of a portal's exporter group, by source. */
export function successOf(groups: Awaited<ReturnType<typeof pushgatewayGroups>>, portalName: string): Record<string, number | undefined> {
  const group = groups.get(`portal=${portalName}`);
  return Object.fromEntries(SOURCES.map((source) => [source, valueIn(group?.samples, 'posture_collection_success', { source })]));
}

/** The Pushgateway groups of a portal's sources, sorted. */
export function sourceGroups(groups: Awaited<ReturnType<typeof pushgatewayGroups>>, portalName: string): string[] {
  return [...groups.keys()].filter((k) => k.startsWith(`portal=${portalName},source=`)).sort();
}
