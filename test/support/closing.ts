import { afterAll, afterEach, beforeAll } from 'vitest';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';

/** Something a test opens and must close: a simulated portal, a receiver, a fake. */
export interface Closable {
  close(): Promise<unknown>;
}

/**
 * Registers an `afterEach` (in the calling file or `describe`) that closes everything handed to the
 * returned function during the test, even when the test failed; that function returns what it was
 * given, so `const sim = closing(await startSimulator(...))`.
 */
export function closeAfterEach(): <T extends Closable>(resource: T) => T {
  const open: Closable[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
  });
  return (resource) => {
    open.push(resource);
    return resource;
  };
}

/**
 * A simulated portal for the whole file or `describe`: started before its tests, closed after
 * them. Call the returned function inside a test to get it.
 */
export function portalForAll(options: SimulatorOptions): () => Simulator {
  let sim: Simulator | undefined;
  beforeAll(async () => {
    sim = await startSimulator(options);
  });
  afterAll(async () => {
    await sim?.close();
  });
  return () => {
    if (!sim) throw new Error('the simulated portal is not started yet: use it inside a test');
    return sim;
  };
}
