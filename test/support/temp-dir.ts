/** A temporary folder of its own for each test of a file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/**
 * Makes a new empty folder named from `prefix` before each test of the file and removes it after;
 * call it at the top level of the file and read the folder with the function it returns.
 */
export function tempDirPerTest(prefix: string): () => string {
  let dir: string | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  return () => {
    if (dir === undefined) throw new Error('tempDirPerTest: the folder is read outside a test');
    return dir;
  };
}
