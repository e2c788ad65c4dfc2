/**
 * The requests each process sent to each portal, recorded in the state directory so that a
 * restart, `once` from cron or a second process counts them against the share (the scheduler's
 * SendLedger port).
 *
 * Layout: `<state dir>/sends/<portal>/<pid>-<token>.json`, one file per process (and per portal
 * scheduler) holding its requests of the last two windows, rewritten whole through a temporary
 * file and a rename, so a reader never sees half a file and no two writers share a file: there is
 * nothing to lock. A reader reads every file of the portal but its own. A file whose requests have
 * all left the window is removed once its process is gone.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../core/log.js';
import type { SendLedger } from '../schedule/ledger.js';
import { WINDOW_MS } from '../schedule/scheduler.js';
import { WINDOW_MARGIN_MS } from '../schedule/window.js';
import type { StateDir } from './dir.js';

/** How long a process keeps its requests in its file, and reads others': the window, its margin, and a window of slack for clock skew between readers. */
const KEEP_MS = 2 * WINDOW_MS + WINDOW_MARGIN_MS;
/** A file of another host (whose processes cannot be asked whether they still run) is removed this long after its last request. */
const FOREIGN_HOST_MS = 24 * 3_600_000;
/** A temporary file left by a process killed between its write and its rename is removed this long after it was written. */
const STALE_TEMP_MS = 10 * 60_000;

/** The contents of one process's file. */
interface SendsFile {
  version: 1;
  /** The portal identity (normalised base URL) the requests went to. */
  portal: string;
  host: string;
  pid: number;
  /** Wall times (epoch ms) of the requests, oldest first. */
  sends: number[];
}

/** The folder name of a portal: readable, and unique by a hash of the identity. */
function folderOf(identity: string): string {
  const readable = identity.replace(/^[a-z]+:\/\//, '').replace(/[^A-Za-z0-9.-]+/g, '_').slice(0, 64);
  return `${readable}-${createHash('sha256').update(identity).digest('hex').slice(0, 12)}`;
}

/** What is wrong with a file's contents, or undefined when it is a record of `identity`. */
function problemOf(value: unknown, identity: string): string | undefined {
  if (value === null || typeof value !== 'object') return 'not a record of requests';
  const f = value as Partial<SendsFile>;
  if (f.version !== 1 || typeof f.host !== 'string' || !Number.isSafeInteger(f.pid) || !Array.isArray(f.sends) || !f.sends.every((t) => Number.isFinite(t))) return 'not a record of requests (version 1 expected)';
  if (f.portal !== identity) return `a record of another portal (${JSON.stringify(f.portal)})`;
  return undefined;
}

/** The options of the store; each defaults to this process. */
export interface SendFilesOptions {
  logger: Logger;
  pid?: number;
  host?: string;
  /** Whether the process `pid` on this host still runs. */
  isRunning?: (pid: number) => boolean;
}

/** The recorded requests of every portal in one state directory. */
export class SendFiles {
  private readonly pid: number;
  private readonly host: string;
  private readonly isRunning: (pid: number) => boolean;
  /** Files already warned about (once each per process). */
  private readonly warned = new Set<string>();

  constructor(
    private readonly dir: StateDir,
    private readonly options: SendFilesOptions,
  ) {
    this.pid = options.pid ?? process.pid;
    this.host = options.host ?? hostname();
    this.isRunning = options.isRunning ?? processRuns;
  }

  /** The ledger of one portal (by its identity); each call is a writer of its own. */
  ledger(identity: string): SendLedger {
    return new PortalSends(this, identity, join(this.dir.path, 'sends', folderOf(identity)), `${this.pid}-${randomBytes(6).toString('hex')}.json`);
  }

  /** @internal Writes a ledger's file, unless the directory has failed once. */
  write(folder: string, name: string, file: SendsFile): void {
    if (!this.dir.writable) return;
    const path = join(folder, name);
    const temp = join(folder, `.${name}.tmp`);
    try {
      mkdirSync(folder, { recursive: true });
      writeFileSync(temp, JSON.stringify(file));
      renameSync(temp, path);
    } catch (err) {
      this.dir.failed(err);
    }
  }

  /** @internal The requests other writers recorded for `identity` since `from` (wall ms); removes files nobody needs any more. */
  read(folder: string, own: string, identity: string, from: number, wallNow: number): number[] {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      return [];
    }
    const out: number[] = [];
    for (const name of names) {
      if (name === own) continue;
      const path = join(folder, name);
      if (name.startsWith('.')) {
        this.dropStaleTemp(path);
        continue;
      }
      let value: unknown;
      try {
        value = JSON.parse(readFileSync(path, 'utf8'));
      } catch (err) {
        // Gone since the listing (its process removed it): nothing to count.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        this.warn(path, err instanceof SyntaxError ? 'not JSON' : ((err as NodeJS.ErrnoException).code ?? String(err)));
        continue;
      }
      const problem = problemOf(value, identity);
      if (problem) {
        this.warn(path, problem);
        continue;
      }
      const file = value as SendsFile;
      const recent = file.sends.filter((t) => t > from);
      out.push(...recent);
      if (recent.length === 0 && this.gone(file, wallNow)) this.remove(path);
    }
    return out;
  }

  /** Whether the writer of a file whose requests have left the window has stopped: it will not write it again. */
  private gone(file: SendsFile, wallNow: number): boolean {
    if (file.host !== this.host) return file.sends.every((t) => t < wallNow - FOREIGN_HOST_MS);
    // Our own pid on another writer's file: an earlier process that had it (pid 1 in a restarted
    // container), or another scheduler of this process, which rewrites its recent requests whole.
    if (file.pid === this.pid) return true;
    return !this.isRunning(file.pid);
  }

  private remove(path: string): void {
    if (!this.dir.writable) return;
    try {
      unlinkSync(path);
    } catch {
      // Removed by another reader, or not ours to remove: harmless either way.
    }
  }

  private dropStaleTemp(path: string): void {
    try {
      if (Date.now() - statSync(path).mtimeMs > STALE_TEMP_MS) this.remove(path);
    } catch {
      // Renamed or removed meanwhile.
    }
  }

  private warn(path: string, reason: string): void {
    if (this.warned.has(path)) return;
    this.warned.add(path);
    this.options.logger.warn(`${path} in the state directory is ${reason}: it is ignored; remove it`, { file: path, reason });
  }

  /** @internal The identity of this writer, for its file. */
  owner(): { host: string; pid: number } {
    return { host: this.host, pid: this.pid };
  }
}

/** One portal's ledger in the state directory. */
class PortalSends implements SendLedger {
  /** This writer's requests (wall ms), oldest first. */
  private sends: number[] = [];

  constructor(
    private readonly files: SendFiles,
    private readonly identity: string,
    private readonly folder: string,
    private readonly name: string,
  ) {}

  others(wallNow: number): readonly number[] {
    return this.files.read(this.folder, this.name, this.identity, wallNow - KEEP_MS, wallNow);
  }

  record(at: number): void {
    this.sends = this.sends.filter((t) => t > at - KEEP_MS);
    this.sends.push(at);
    this.save();
  }

  release(at: number): void {
    const i = this.sends.lastIndexOf(at);
    if (i < 0) return;
    this.sends.splice(i, 1);
    this.save();
  }

  private save(): void {
    this.files.write(this.folder, this.name, { version: 1, portal: this.identity, ...this.files.owner(), sends: this.sends });
  }
}

/** Whether a process of this host runs (a signal 0 reaches it, or it exists but is not ours to signal). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
