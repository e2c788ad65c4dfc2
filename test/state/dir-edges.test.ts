/**
 * The state directory where a process has no user id to compare (not POSIX: `process.geteuid` is
 * missing), and the cause a folder that cannot be created carries (src/state/dir.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../src/core/log.js';
import { LedgerError } from '../../src/errors.js';
import { StateDir } from '../../src/state/dir.js';
import { anyThrown } from '../support/errors.js';
import { tempDirPerTest } from '../support/temp-dir.js';

const dir = tempDirPerTest('posture-dir-edges-');
const geteuid = Object.getOwnPropertyDescriptor(process, 'geteuid')!;
afterEach(() => {
  Object.defineProperty(process, 'geteuid', geteuid);
});

describe('a process without a user id', () => {
  it('takes the directory and its folders without comparing owners', () => {
    Object.defineProperty(process, 'geteuid', { value: undefined, configurable: true, writable: true });
    const state = StateDir.open(join(dir(), 'state'), memoryLogger(), 'lost');
    expect(state.writable).toBe(true);
    const folder = join(dir(), 'state', 'sends');
    state.ownFolder(folder);
    // Taken again, as it is.
    expect(() => state.ownFolder(folder)).not.toThrow();
  });
});

describe('a folder that cannot be created', () => {
  it('is a LedgerError whose cause is the system error', () => {
    mkdirSync(join(dir(), 'state'), { mode: 0o700 });
    const state = StateDir.open(join(dir(), 'state'), memoryLogger(), 'lost');
    writeFileSync(join(dir(), 'state', 'file'), '');
    const err = anyThrown(() => state.ownFolder(join(dir(), 'state', 'file', 'under')));
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).cause).toMatchObject({ code: 'ENOTDIR' });
  });
});
