import { afterEach } from 'vitest';

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
