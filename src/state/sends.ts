/**
 * The requests every process sent to each portal, recorded in the state directory so that a
 * restart, `once` from cron or a second process counts them against the share (the scheduler's
 * SendLedger port).
 *
 * Layout: `<state dir>/sends/<portal>/s<n>`, one small file per request, numbered 1, 2, 3… A slot
 * is granted by one atomic step: a process reads the portal's requests, decides against the share,
 * and claims request n + 1 by `link(2)`ing a file it wrote to that name, which fails if any process
 * claimed it first (the loser reads again). So every request n was decided by a writer that saw
 * requests 1…n − 1, and no window ever holds more than the share, however many processes wait on
 * it: there is no lock to leave behind, and a process killed anywhere leaves at most a request
 * counted that it never sent, or a temporary file it wrote.
 *
 * Times compare on the host's monotonic clock with its boot id (src/state/host-clock.ts), so a
 * wall-clock step moves nothing; a record of another boot or host falls back to wall time, and one
 * in the future counts as now until it expires. Nothing in the folder is followed if it is a
 * symlink, and only names the exporter writes (`s<n>`, `.t-<pid>-<hex>`) are ever deleted. A
 * portal whose last request is more than an hour old is removed by any process that opens the
 * directory.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, lstatSync, readdirSync, renameSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../core/log.js';
import { LedgerError } from '../errors.js';
import { nextStart, type ClaimResult, type SendLedger } from '../schedule/ledger.js';
import { WINDOW_MS } from '../schedule/scheduler.js';
import { WINDOW_MARGIN_MS } from '../schedule/window.js';
import { codeOf, readJsonFile, removeFile, writeTempFile, type StateDir } from './dir.js';
import { startOnMonotonic, type HostClock } from './host-clock.js';
import { folderOf } from './portal-folder.js';

/** A portal whose newest request is older than this is removed from the directory. */
const IDLE_MS = 3_600_000;
/** Requests kept behind the newest: more than any share, so the window's requests are never pruned. */
const KEEP = 64;
/** A temporary file older than this was left by a process killed between writing and linking it. */
const STALE_TEMP_MS = 10 * 60_000;
/** A portal being closed (idle) by another process: look again after this long. */
const CLOSING_WAIT_MS = 200;
/** A closing mark older than this was left by a process killed while closing: the chain goes on past it. */
const CLOSING_STALE_MS = 10_000;
/** Claims lost in a row before the claimer gives the others a moment. */
const MAX_RACES = 50;

const SLOT = /^s(\d{12})$/;
const TEMP = /^\.t-\d+-[0-9a-f]+$/;
/** Files of the state directory's first layout (one per process): removed once idle. */
const LEGACY = /^(?:\d+-[0-9a-f]{12}\.json|\.\d+-[0-9a-f]{12}\.json\.tmp)$/;

/** The contents of one request's file. */
interface SlotFile {
  version: 2;
  /** The portal identity (normalised base URL) the request went to. */
  portal: string;
  host: string;
  boot: string;
  /** The start on the host's monotonic clock, ms. */
  mono: number;
  /** The start on the wall clock, epoch ms. */
  wall: number;
  /** The writer (process and ledger) that claimed it. */
  writer: string;
  /** Claimed but never sent (the request reached no portal). */
  released?: true;
  /** Not a request: the portal is being removed (idle). */
  closing?: true;
}

const slotName = (n: number): string => `s${String(n).padStart(12, '0')}`;

function isSlotFile(value: unknown, identity: string): value is SlotFile {
  if (value === null || typeof value !== 'object') return false;
  const f = value as Partial<SlotFile>;
  return f.version === 2 && f.portal === identity && typeof f.host === 'string' && typeof f.boot === 'string' && Number.isFinite(f.mono) && Number.isFinite(f.wall) && typeof f.writer === 'string';
}

/** The options of the store. */
export interface SendFilesOptions {
  logger: Logger;
  clock: HostClock;
}

/** The recorded requests of every portal in one state directory. */
export class SendFiles {
  /** Files already warned about (once each per process). */
  private readonly warned = new Set<string>();
  readonly root: string;

  constructor(
    readonly dir: StateDir,
    readonly options: SendFilesOptions,
  ) {
    this.root = join(dir.path, 'sends');
  }

  /** The ledger of one portal (by its identity); each call is a writer of its own. */
  ledger(identity: string): SendLedger {
    return new PortalSends(this, identity, join(this.root, folderOf(identity)), `${this.options.clock.host}/${process.pid}/${randomBytes(6).toString('hex')}`);
  }

  /** Removes the portals idle for more than an hour (and what an earlier layout left). Never throws. */
  sweep(): void {
    if (!this.dir.writable) return;
    let names: string[];
    try {
      this.dir.ownFolder(this.root);
      names = readdirSync(this.root);
    } catch {
      return;
    }
    for (const name of names) {
      const folder = join(this.root, name);
      try {
        const st = lstatSync(folder);
        if (!st.isDirectory()) continue;
        this.closeIfIdle(folder);
      } catch {
        // Another process closes it, or it is not ours: leave it.
      }
    }
  }

  /** @internal The chain of a folder: its slot numbers, newest first. */
  slots(folder: string): number[] {
    const out: number[] = [];
    for (const name of readdirSync(folder)) {
      const m = SLOT.exec(name);
      if (m) out.push(Number(m[1]));
    }
    return out.sort((a, b) => b - a);
  }

  /** @internal Reads one slot's record; undefined when gone or not a record of `identity` (warned once). */
  read(folder: string, n: number, identity: string | undefined): SlotFile | undefined {
    const path = join(folder, slotName(n));
    const read = readJsonFile(path);
    if (read === undefined) return undefined;
    if ('problem' in read) {
      this.warn(path, read.problem);
      return undefined;
    }
    const value = read.value;
    if (identity === undefined ? value !== null && typeof value === 'object' && (value as Partial<SlotFile>).version === 2 : isSlotFile(value, identity)) return value as SlotFile;
    this.warn(path, 'not a record of requests to this portal');
    return undefined;
  }

  /** @internal Writes `file` to a new temporary file of `folder`; returns its path. */
  writeTemp(folder: string, file: SlotFile): string {
    return writeTempFile(folder, JSON.stringify(file));
  }

  /** @internal The effective start of a record on this host's monotonic clock now (`mono`, `wall` read together). */
  startOf(file: SlotFile, mono: number, wall: number): number {
    return startOnMonotonic(file, this.options.clock, mono, wall);
  }

  /** @internal Removes a file of ours by name. Never throws. */
  remove(path: string): void {
    removeFile(path);
  }

  /** @internal Removes temporary files older than STALE_TEMP_MS (a writer killed before its link). */
  dropStaleTemps(folder: string, names: readonly string[], wall: number): void {
    for (const name of names) {
      if (!TEMP.test(name) && !LEGACY.test(name)) continue;
      const path = join(folder, name);
      try {
        const st = lstatSync(path);
        if (st.isFile() && wall - st.mtimeMs > (LEGACY.test(name) ? IDLE_MS : STALE_TEMP_MS)) this.remove(path);
      } catch {
        // Gone meanwhile.
      }
    }
  }

  /**
   * Closes a portal folder whose newest request is more than an hour old: claims the next number
   * with a closing mark (so no request can be claimed behind it), removes the requests, then the
   * mark and the folder. A claimer that meets the mark waits for the folder to go.
   */
  private closeIfIdle(folder: string): void {
    const { clock } = this.options;
    const mono = clock.monotonic();
    const wall = clock.wall();
    const names = readdirSync(folder);
    this.dropStaleTemps(folder, names, wall);
    const slots = this.slots(folder);
    if (slots.length === 0) {
      if (names.every((n) => TEMP.test(n) || LEGACY.test(n))) this.rmdirQuiet(folder);
      return;
    }
    const newest = this.read(folder, slots[0]!, undefined);
    if (!newest || mono - this.startOf(newest, mono, wall) <= IDLE_MS || newest.closing) return;
    const mark: SlotFile = { ...newest, mono, wall, writer: `${clock.host}/${process.pid}/sweep`, closing: true };
    const temp = this.writeTemp(folder, mark);
    try {
      linkSync(temp, join(folder, slotName(slots[0]! + 1)));
    } catch {
      return;
    } finally {
      this.remove(temp);
    }
    for (const n of slots) this.remove(join(folder, slotName(n)));
    this.remove(join(folder, slotName(slots[0]! + 1)));
    this.rmdirQuiet(folder);
  }

  private rmdirQuiet(folder: string): void {
    try {
      rmdirSync(folder);
    } catch {
      // A request was claimed in it meanwhile (ENOTEMPTY): it stays.
    }
  }

  /** @internal Warns once per file. */
  warn(path: string, reason: string): void {
    if (this.warned.has(path)) return;
    this.warned.add(path);
    this.options.logger.warn(`${path} in the state directory is ${reason}: it is ignored; remove it`, { file: path, reason });
  }
}

/** One portal's ledger in the state directory. */
class PortalSends implements SendLedger {
  constructor(
    private readonly files: SendFiles,
    private readonly identity: string,
    private readonly folder: string,
    private readonly writer: string,
  ) {}

  // Async, though the file system calls are synchronous: a LedgerError rejects, as the port says.
  async others(): Promise<readonly number[]> {
    return this.look(Infinity).others;
  }

  async claim(share: number): Promise<ClaimResult> {
    return this.claimNow(share);
  }

  private claimNow(share: number): ClaimResult {
    for (let race = 0; race < MAX_RACES; race++) {
      const seen = this.look(share);
      if (seen.waitMs > 0) return { granted: false, waitMs: seen.waitMs, others: seen.others };
      const { clock } = this.files.options;
      const file: SlotFile = { version: 2, portal: this.identity, host: clock.host, boot: clock.boot, mono: seen.mono, wall: seen.wall, writer: this.writer };
      const name = join(this.folder, slotName(seen.newest + 1));
      if (!this.link(file, name)) continue;
      this.prune(seen.newest + 1, seen.mono, seen.wall);
      return { granted: true, waitMs: 0, others: seen.others, release: () => Promise.resolve(this.release(name, file)) };
    }
    // Every try lost to another writer: let them go first.
    return { granted: false, waitMs: CLOSING_WAIT_MS, others: this.look(Infinity).others };
  }

  /**
   * Reads the portal's requests in the window, newest first: when one more may start (0: now) at
   * `share`, the ages of the other writers' requests, and the newest number in the chain.
   */
  private look(share: number): { waitMs: number; others: number[]; newest: number; mono: number; wall: number } {
    const { files, folder } = this;
    try {
      files.dir.ownFolder(files.root);
      // Only a claim creates the portal's folder; a look at a portal never claimed finds nothing.
      if (Number.isFinite(share) || exists(folder)) files.dir.ownFolder(folder);
      else return { waitMs: 0, others: [], newest: 0, mono: files.options.clock.monotonic(), wall: files.options.clock.wall() };
    } catch (err) {
      throw err instanceof LedgerError ? err : new LedgerError(folder, `${folder} in the state directory cannot be used (${codeOf(err)})`, { cause: err });
    }
    const { clock } = files.options;
    const mono = clock.monotonic();
    const wall = clock.wall();
    let slots: number[];
    try {
      slots = files.slots(folder);
    } catch (err) {
      throw new LedgerError(folder, `${folder} in the state directory cannot be read (${codeOf(err)})`, { cause: err });
    }
    // A listing may miss the newest names: whatever exists past it is newer still.
    let newest = slots[0] ?? 0;
    while (exists(join(folder, slotName(newest + 1)))) slots.unshift(++newest);
    const cutoff = mono - WINDOW_MS - WINDOW_MARGIN_MS;
    const starts: number[] = [];
    const others: number[] = [];
    for (const [i, n] of slots.entries()) {
      if (i >= KEEP) break;
      const file = files.read(folder, n, this.identity);
      if (!file) continue;
      if (file.closing) {
        // Another process is removing this idle portal: wait for it, or go on past a mark it left when killed.
        if (i === 0 && wall - file.wall < CLOSING_STALE_MS) return { waitMs: CLOSING_WAIT_MS, others, newest, mono, wall };
        continue;
      }
      if (file.released) continue;
      const at = files.startOf(file, mono, wall);
      // This boot's records are in claim order, so the first one out of the window ends the look.
      if (at <= cutoff) {
        if (file.host === clock.host && file.boot === clock.boot) break;
        continue;
      }
      starts.push(at);
      if (file.writer !== this.writer) others.push(mono - at);
    }
    const waitMs = Number.isFinite(share) ? nextStart(starts, share, mono, WINDOW_MS, WINDOW_MARGIN_MS) - mono : 0;
    return { waitMs, others, newest, mono, wall };
  }

  /** Claims `name` with `file`; false when another writer claimed it first. */
  private link(file: SlotFile, name: string): boolean {
    const { files, folder } = this;
    let temp: string;
    try {
      temp = files.writeTemp(folder, file);
    } catch (err) {
      throw new LedgerError(folder, `${folder} in the state directory cannot be written (${codeOf(err)})`, { cause: err });
    }
    try {
      linkSync(temp, name);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw new LedgerError(folder, `${folder} in the state directory cannot be written (${codeOf(err)})`, { cause: err });
    } finally {
      files.remove(temp);
    }
  }

  /** Marks a claimed request as never sent: it no longer counts. */
  private release(name: string, file: SlotFile): void {
    try {
      const temp = this.files.writeTemp(this.folder, { ...file, released: true });
      // Replaces our own file (a symlink planted at its name is replaced, never followed).
      renameSync(temp, name);
    } catch {
      // It stays counted: more careful, never less.
    }
  }

  /** Removes requests far behind the newest that have left the window twice over, and stale temporary files. */
  private prune(newest: number, mono: number, wall: number): void {
    const { files, folder } = this;
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      return;
    }
    files.dropStaleTemps(folder, names, wall);
    for (const name of names) {
      const m = SLOT.exec(name);
      if (!m || Number(m[1]) > newest - KEEP) continue;
      const file = files.read(folder, Number(m[1]), this.identity);
      if (file && mono - files.startOf(file, mono, wall) > 2 * (WINDOW_MS + WINDOW_MARGIN_MS)) files.remove(join(folder, name));
    }
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
