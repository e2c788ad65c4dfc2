/**
 * The state directory as a process uses it: the exporter's own. Created 0700 (files 0600); one
 * that another user owns, or that group or others may write, is refused at the start (exit 2),
 * before any request, because whoever can write it can steer what the exporter counts and deletes.
 * Inside it no symlink is followed.
 *
 * One that cannot be created or written at the start (a read-only file system, a file in the way,
 * no permission) gives one warning naming the setting and what is lost, and the process goes on
 * from memory. A full disk is not that: a claim that cannot be recorded sends nothing (fail
 * closed), and each run it stops says so in one line naming the directory and the disk, at the
 * start (the probe writes a record's worth of data, which a full disk refuses) as later.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../core/log.js';
import { ConfigError, LedgerError } from '../errors.js';

/** The setting as a user sets it, for the warning. */
const SETTING = 'POSTURE_STATE_DIR (--state-dir)';

/** This process's effective user, or undefined where there is none (not POSIX): nothing to compare. */
const euid = (): number | undefined => process.geteuid?.();

/** What is wrong with a directory's owner or mode for a state directory, or undefined. */
function unsafe(st: Stats): string | undefined {
  const me = euid();
  if (me !== undefined && st.uid !== me) return `is owned by uid ${st.uid}, not by this user (uid ${me})`;
  if ((st.mode & 0o022) !== 0) return `is writable by ${(st.mode & 0o020) !== 0 ? 'its group' : 'others'} (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`;
  return undefined;
}

/** Flags of a new file of the exporter's: created here, never through a symlink, never an existing one. */
const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
/** Flags of a file read: never through a symlink. */
const READ_FILE = constants.O_RDONLY | constants.O_NOFOLLOW;
/** What the start-up probe writes: as much as a record. */
const PROBE_BYTES = ' '.repeat(512);

/** Whether `err` says the file system is full (no space, or the user's quota). */
export function isFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** A state directory: `writable` until a write has failed (then everything stays in memory). */
export class StateDir {
  private failedOnce = false;

  private constructor(
    readonly path: string,
    private readonly logger: Logger,
    /** What the process loses when nothing can be written there, for the warning. */
    private readonly lost: string,
  ) {}

  /**
   * Creates the directory (0700) when missing and tries a write; `lost` says what a process loses
   * without it (the warning's words). Throws ConfigError when the directory is not the process's
   * own: owned by another user, writable by group or others, or not a directory.
   */
  static open(path: string, logger: Logger, lost: string): StateDir {
    const dir = new StateDir(path, logger, lost);
    let st: Stats | undefined;
    try {
      st = statSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return dir.failedWith(err);
    }
    if (st === undefined) {
      try {
        mkdirSync(path, { recursive: true, mode: 0o700 });
        st = statSync(path);
      } catch (err) {
        return dir.failedWith(err);
      }
    }
    if (!st.isDirectory()) throw new ConfigError('POSTURE_STATE_DIR', `${SETTING} ${path} is not a directory: give a directory of this user's own, or a path where the exporter can create one (0700).`);
    const problem = unsafe(st);
    if (problem) {
      throw new ConfigError(
        'POSTURE_STATE_DIR',
        `${SETTING} ${path} ${problem}: whoever can write it could change what the exporter counts and deletes. Give a directory of this user's own that only it can write (chmod 700), or a path where the exporter creates one.`,
      );
    }
    try {
      const probe = join(path, `.probe-${process.pid}`);
      const fd = openSync(probe, NEW_FILE, 0o600);
      try {
        // Data, not an empty file: a full disk still has room for an inode.
        writeSync(fd, PROBE_BYTES);
      } finally {
        closeSync(fd);
        unlinkSync(probe);
      }
    } catch (err) {
      // A full disk fails every claim closed, with its own line; the directory stays the ledger.
      if (!isFull(err)) dir.failed(err);
    }
    return dir;
  }

  /** Whether writes are still tried (false once one has failed). */
  get writable(): boolean {
    return !this.failedOnce;
  }

  /**
   * A folder of the exporter's inside the directory: created 0700 when missing; one that is a
   * symlink, not a directory, or not the process's own is refused (LedgerError: nothing is read,
   * written or deleted through it). A folder of ours left group- or world-readable by an earlier
   * version is made 0700.
   */
  ownFolder(path: string): void {
    try {
      // Stryker disable next-line ObjectLiteral: equivalent, a folder made with the default mode is made 0700 below
      mkdirSync(path, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new LedgerError(path, `${path} in the state directory cannot be created (${codeOf(err)})`, { cause: err });
    }
    const st = lstatSync(path);
    if (st.isSymbolicLink() || !st.isDirectory()) throw new LedgerError(path, `${path} in the state directory is ${st.isSymbolicLink() ? 'a symlink' : 'not a directory'}: it is not followed; remove it`);
    const me = euid();
    if (me !== undefined && st.uid !== me) throw new LedgerError(path, `${path} in the state directory is owned by uid ${st.uid}, not by this user: it is not used; remove it`);
    if ((st.mode & 0o077) !== 0) chmodSync(path, 0o700);
  }

  /** The directory cannot be written at the start: warn once, and write nothing more. */
  failed(err: unknown): void {
    if (this.failedOnce) return;
    this.failedOnce = true;
    const code = codeOf(err);
    this.logger.warn(`${SETTING} ${this.path} cannot be written (${code}): ${this.lost}; the process goes on from memory. Give a writable directory to keep them.`, {
      setting: 'POSTURE_STATE_DIR',
      stateDir: this.path,
      error: code,
    });
  }

  private failedWith(err: unknown): StateDir {
    this.failed(err);
    return this;
  }
}

/**
 * Writes `text` to a new temporary file of `folder` (`.t-<pid>-<hex>`, 0600, created exclusively and
 * never through a symlink), stamped by `stamp` (its descriptor), for a claim to link(2) under its
 * name; returns its path. A failed write leaves no file behind.
 */
export function writeTempFile(folder: string, text: string, stamp?: (fd: number) => void): string {
  const path = join(folder, `.t-${process.pid}-${randomBytes(6).toString('hex')}`);
  const fd = openSync(path, NEW_FILE, 0o600);
  try {
    writeSync(fd, text);
    stamp?.(fd);
  } catch (err) {
    closeSync(fd);
    removeFile(path);
    throw err;
  }
  closeSync(fd);
  return path;
}

/**
 * A JSON file of ours, opened without following a symlink: undefined when there is none, else its
 * value and when it was last written (mtime, ms), or why it holds none (a symlink, not a file, not
 * JSON, the open's error code). A read that fails once the file is open throws.
 */
export function readJsonFile(path: string): { value: unknown; mtimeMs: number } | { problem: string } | undefined {
  let fd: number;
  try {
    fd = openSync(path, READ_FILE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { problem: codeOf(err) === 'ELOOP' ? 'a symlink' : codeOf(err) };
  }
  let text: string;
  let mtimeMs: number;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { problem: 'not a file' };
    mtimeMs = st.mtimeMs;
    // Stryker disable next-line StringLiteral: equivalent, without an encoding the bytes come back, and JSON.parse reads them as UTF-8
    text = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  try {
    return { value: JSON.parse(text) as unknown, mtimeMs };
  } catch {
    return { problem: 'not JSON' };
  }
}

/** Removes a file of ours by name. Never throws. */
export function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Removed by another process already.
  }
}

/** The system's code of an error (EACCES), else its message. */
export function codeOf(err: unknown): string {
  return (err as NodeJS.ErrnoException | undefined)?.code ?? (err instanceof Error ? err.message : String(err));
}
