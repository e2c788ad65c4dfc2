/**
 * The state directory as a process opens and uses it (src/state/dir.ts): refused when it is not a
 * directory or not this user's own, one warning when it cannot be written at the start; the
 * exporter's folders inside it (created 0700, made 0700 when an earlier version left them readable,
 * refused when a symlink, a file, another user's or impossible to create); temporary files and the
 * JSON records read without following a symlink; the codes errors are named by.
 *
 * Another user's folder: as root (as CI runs), a folder given to nobody (uid 65534); as any other
 * user, `/`, which root owns.
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../src/core/log.js';
import { ConfigError, LedgerError } from '../../src/errors.js';
import { codeOf, isFull, readJsonFile, removeFile, StateDir, writeTempFile } from '../../src/state/dir.js';
import { anyThrown } from '../support/errors.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'posture-state-dir-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const me = process.geteuid!();
/** A directory another user owns: its path and that user's id. */
function foreign(): { path: string; uid: number } {
  if (me !== 0) return { path: '/', uid: 0 };
  const path = join(dir, 'nobodys');
  mkdirSync(path, { mode: 0o700 });
  chownSync(path, 65534, 65534);
  return { path, uid: 65534 };
}

describe('opening the state directory', () => {
  it('refuses a file in its place, naming the setting and the fix', () => {
    writeFileSync(join(dir, 'file'), '');
    const err = anyThrown(() => StateDir.open(join(dir, 'file'), memoryLogger(), 'lost'));
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).setting).toBe('POSTURE_STATE_DIR');
    expect((err as ConfigError).message).toBe(`POSTURE_STATE_DIR (--state-dir) ${join(dir, 'file')} is not a directory: give a directory of this user's own, or a path where the exporter can create one (0700).`);
  });

  it("refuses another user's directory", () => {
    const { path, uid } = foreign();
    const err = anyThrown(() => StateDir.open(path, memoryLogger(), 'lost'));
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toBe(
      `POSTURE_STATE_DIR (--state-dir) ${path} is owned by uid ${uid}, not by this user (uid ${me}): whoever can write it could change what the exporter counts and deletes. Give a directory of this user's own that only it can write (chmod 700), or a path where the exporter creates one.`,
    );
  });

  it('takes a directory of its own, group- and world-readable, leaving nothing of its probe behind', () => {
    const path = join(dir, 'mine');
    mkdirSync(path, { mode: 0o755 });
    chmodSync(path, 0o755);
    const logger = memoryLogger();
    const state = StateDir.open(path, logger, 'lost');
    expect(state.writable).toBe(true);
    expect(state.path).toBe(path);
    expect(readdirSync(path)).toEqual([]);
    expect(logger.records()).toEqual([]);
  });

  it('warns once, naming the setting, the code and what is lost, when nothing can be written there at the start', () => {
    // /proc/self: this process's own directory, which takes no file.
    const logger = memoryLogger();
    const state = StateDir.open('/proc/self', logger, 'the requests are not recorded');
    expect(state.writable).toBe(false);
    state.failed(new Error('again'));
    const warnings = logger.records();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 'warn', setting: 'POSTURE_STATE_DIR', stateDir: '/proc/self' });
    expect(warnings[0]!.msg).toBe(`POSTURE_STATE_DIR (--state-dir) /proc/self cannot be written (${String(warnings[0]!.error)}): the requests are not recorded; the process goes on from memory. Give a writable directory to keep them.`);
    expect(warnings[0]!.error).toMatch(/^E[A-Z]+$/);
  });

  it('warns when the directory can be neither read nor created (a file in the path), and stays usable for nothing', () => {
    writeFileSync(join(dir, 'file'), '');
    const logger = memoryLogger();
    expect(StateDir.open(join(dir, 'file', 'state'), logger, 'lost').writable).toBe(false);
    expect(logger.records().map((r) => r.error)).toEqual(['ENOTDIR']);
  });
});

describe("the exporter's folders in it", () => {
  const open = () => StateDir.open(join(dir, 'state'), memoryLogger(), 'lost');

  it('creates a folder 0700, takes it again as it is, and makes one an earlier version left readable 0700', () => {
    const state = open();
    const folder = join(dir, 'state', 'sends');
    state.ownFolder(folder);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    state.ownFolder(folder);
    chmodSync(folder, 0o755);
    state.ownFolder(folder);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    chmodSync(folder, 0o701);
    state.ownFolder(folder);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
  });

  it('refuses a symlink, a file, a folder it cannot create and another user\'s, each a LedgerError naming it', () => {
    const state = open();
    const link = join(dir, 'state', 'link');
    symlinkSync(dir, link);
    const file = join(dir, 'state', 'file');
    writeFileSync(file, '');
    const { path, uid } = foreign();
    const cases: Array<[string, string]> = [
      [link, `${link} in the state directory is a symlink: it is not followed; remove it`],
      [file, `${file} in the state directory is not a directory: it is not followed; remove it`],
      [join(file, 'under'), `${join(file, 'under')} in the state directory cannot be created (ENOTDIR)`],
      [path, `${path} in the state directory is owned by uid ${uid}, not by this user: it is not used; remove it`],
    ];
    for (const [folder, message] of cases) {
      const err = anyThrown(() => state.ownFolder(folder));
      expect(err).toBeInstanceOf(LedgerError);
      expect([(err as LedgerError).ledger, (err as LedgerError).message]).toEqual([folder, message]);
    }
  });
});

describe('temporary files', () => {
  it('are written 0600 under a name of this process and 12 hex digits, stamped before they are closed', () => {
    let stamped: number | undefined;
    const path = writeTempFile(dir, '{"a":1}', (fd) => (stamped = fd));
    expect(path.slice(dir.length + 1)).toMatch(new RegExp(`^\\.t-${process.pid}-[0-9a-f]{12}$`));
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(typeof stamped).toBe('number');
    expect(writeTempFile(dir, '')).not.toBe(path);
  });

  it('leave nothing behind when the write fails', () => {
    const failing = new Error('stamp failed');
    expect(anyThrown(() => writeTempFile(dir, 'x', () => {
      throw failing;
    }))).toBe(failing);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('reading a JSON file', () => {
  it('gives its value and when it was written; nothing for a file that is not there; why it holds none otherwise', () => {
    writeFileSync(join(dir, 'ok'), '{"v":2}');
    writeFileSync(join(dir, 'bad'), '{"v":');
    mkdirSync(join(dir, 'folder'));
    symlinkSync(join(dir, 'ok'), join(dir, 'link'));
    expect(readJsonFile(join(dir, 'ok'))).toEqual({ value: { v: 2 }, mtimeMs: statSync(join(dir, 'ok')).mtimeMs });
    expect(readJsonFile(join(dir, 'missing'))).toBeUndefined();
    expect(readJsonFile(join(dir, 'bad'))).toEqual({ problem: 'not JSON' });
    expect(readJsonFile(join(dir, 'folder'))).toEqual({ problem: 'not a file' });
    expect(readJsonFile(join(dir, 'link'))).toEqual({ problem: 'a symlink' });
    expect(readJsonFile(join(dir, 'ok', 'under'))).toEqual({ problem: 'ENOTDIR' });
  });
});

describe('errors and removals', () => {
  it('removes a file, and a missing one quietly', () => {
    writeFileSync(join(dir, 'f'), '');
    removeFile(join(dir, 'f'));
    removeFile(join(dir, 'f'));
    expect(readdirSync(dir)).toEqual([]);
  });

  it('names an error by its system code, else its message, else itself', () => {
    expect(codeOf(Object.assign(new Error('no space left'), { code: 'ENOSPC' }))).toBe('ENOSPC');
    expect(codeOf(new Error('broken'))).toBe('broken');
    expect(codeOf('plain')).toBe('plain');
    expect(codeOf(undefined)).toBe('undefined');
  });

  it('tells a full file system by its codes: no space, or the quota', () => {
    const err = (code: string) => Object.assign(new Error(code), { code });
    expect([isFull(err('ENOSPC')), isFull(err('EDQUOT')), isFull(err('EACCES')), isFull(undefined)]).toEqual([true, true, false, false]);
  });
});
