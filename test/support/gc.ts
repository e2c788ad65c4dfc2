import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's collector, exposed at run time (the vitest workers do not start with --expose-gc). A test
 * that reads the heap calls it before each reading, so the figure does not depend on when V8
 * chooses to collect.
 */
export function exposedGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
