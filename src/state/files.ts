/**
 * The ledger's chains in the state directory (the claim protocol of src/state/claims.ts on files).
 *
 * Layout: `<state dir>/sends/<portal>/s<n>`, one small file per request, and
 * `<state dir>/passes/<portal entry>/p<n>`, one per resolved-alerts pass, numbered 1, 2, 3… per
 * folder (folders 0700, files 0600). A number is claimed by `link(2)`ing a temporary file the writer
 * wrote (`.t-<pid>-<hex>`) to its name, which fails if any process claimed it first. A record is
 * changed (given back, or the moment its request arrived) by renaming a new file over it, so a
 * reader sees the old record or the new one, never half of either.
 *
 * A claim is void, and withdrawn, when the folder it linked into is not the one it looked at (a
 * sweep removed that folder and a claim made a new one, whose numbers start again at 1: the folder's
 * device, inode and birth time are compared), or when its link came more than a window after its
 * look (a process stopped meanwhile: numbers the chain has moved past may have been pruned, and
 * could be claimed again). Records that no longer count are pruned at each claim (never the newest,
 * which carries the numbering); a folder whose records all stopped counting an hour ago (a portal's
 * requests; a pass, an hour past its own interval) is removed by any process that opens the
 * directory: it claims a closing mark past the newest number first, so no claim can be made in a
 * folder being removed, and a claimer that meets the mark waits for the folder to go.
 *
 * Times are placed on this process's monotonic clock by src/state/host-clock.ts. Nothing in the
 * directory is followed if it is a symlink, and only names the exporter writes (`s<n>`, `p<n>`,
 * `.t-<pid>-<hex>`, and the first layout's `<pid>-<token>.json`) are ever deleted. A file that is
 * not a record of its folder is ignored, with one warning, and never deleted.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, lstatSync, readdirSync, renameSync, rmdirSync, type Stats } from 'node:fs';
import { basename, join } from 'node:path';
import type { Logger } from '../core/log.js';
import { LedgerError } from '../errors.js';
import { DEFAULT_FLIGHT_MS, idle, passKeepMs, prunable, REQUEST_SPAN_MS, STALE_TEMP_MS, type Chain, type Claimed, type Look, type Mark, type Rec } from './claims.js';
import { codeOf, isFull, readJsonFile, removeFile, writeTempFile, type StateDir } from './dir.js';
import { place, readingOf, type HostClock, type Reading, type Times } from './host-clock.js';
import { folderOf } from './portal-folder.js';

/** A folder being closed by another process: look again after this long. */
const CLOSING_WAIT_MS = 200;
/** A closing mark older than this was left by a process killed while closing: the chain goes on past it. */
const CLOSING_STALE_MS = 10_000;

const TEMP = /^\.t-\d+-[0-9a-f]+$/;
/** Files of the state directory's first layout (one per process): removed once idle. */
const LEGACY = /^(?:\d+-[0-9a-f]{12}\.json|\.\d+-[0-9a-f]{12}\.json\.tmp)$/;

/** One record file (version 2: an earlier version reads the fields it knows, and counts it). */
interface RecordFile {
  readonly version: 2;
  /** The portal identity (normalised base URL). */
  readonly portal: string;
  /** A pass's portal entry. */
  readonly entry?: string;
  readonly host: string;
  readonly boot: string;
  /** The claim, on the writer's monotonic clock and its wall clock (epoch ms). */
  readonly mono: number;
  readonly wall: number;
  /** Its writer (host/pid/random); a pass of an earlier version has none. */
  readonly writer?: string;
  /** A request: how long it could stay in flight after its claim; an earlier version's has none. */
  readonly flightMs?: number;
  /** A pass: its interval; an earlier version's has none. */
  readonly intervalMs?: number;
  /** When the request could last have reached the portal, on the writer's clocks. */
  readonly arrived?: Times;
  /** Given back: it does not count. */
  readonly released?: true;
  /** Not a claim: the folder is being removed (idle). */
  readonly closing?: true;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A record as read from its file. */
interface FileRec extends Rec {
  readonly file: RecordFile;
}

/** The two kinds of chain in the directory. */
interface Kind {
  readonly root: 'sends' | 'passes';
  readonly prefix: 's' | 'p';
  /** What a warning calls a record of it. */
  readonly what: string;
}
const REQUESTS: Kind = { root: 'sends', prefix: 's', what: 'a record of requests to this portal' };
const PASSES: Kind = { root: 'passes', prefix: 'p', what: "a record of this portal entry's resolved-alerts pass" };

const slotName = (kind: Kind, n: number): string => `${kind.prefix}${String(n).padStart(12, '0')}`;
const slotOf = (kind: Kind, name: string): number | undefined => {
  const m = new RegExp(`^${kind.prefix}(\\d{12})$`).exec(name);
  return m ? Number(m[1]) : undefined;
};

/** Whether `v` is a record of the chain of `portal` (and `entry`, for a pass). */
function isRecord(v: unknown, portal: string, entry: string | undefined): v is RecordFile {
  if (v === null || typeof v !== 'object') return false;
  const f = v as Partial<RecordFile>;
  if (f.version !== 2 || f.portal !== portal || f.entry !== entry || typeof f.host !== 'string' || typeof f.boot !== 'string' || !finite(f.mono) || !finite(f.wall)) return false;
  if (f.writer !== undefined && typeof f.writer !== 'string') return false;
  if (f.arrived !== undefined && !(finite(f.arrived?.mono) && finite(f.arrived?.wall))) return false;
  return (f.flightMs === undefined || finite(f.flightMs)) && (f.intervalMs === undefined || finite(f.intervalMs));
}

/** A folder's identity: a sweep that removes it and a claim that makes it again give another. */
interface FolderId {
  readonly dev: number;
  readonly ino: number;
  readonly birth: number;
}
const idOf = (st: Stats): FolderId => ({ dev: st.dev, ino: st.ino, birth: st.birthtimeMs });
const sameFolder = (a: FolderId, b: FolderId): boolean => a.dev === b.dev && a.ino === b.ino && a.birth === b.birth;

/** The error of a write that failed: a full disk named as such, with the fix. */
function writeFailed(folder: string, err: unknown): LedgerError {
  const code = codeOf(err);
  const message = isFull(err)
    ? `${folder} in the state directory cannot record a claim: its disk is full (${code}); no request goes to the portal until one can be recorded: free space on that file system, or give POSTURE_STATE_DIR a directory on another`
    : `${folder} in the state directory cannot be written (${code})`;
  return new LedgerError(folder, message, { cause: err });
}

/** The options of the store. */
export interface LedgerFilesOptions {
  logger: Logger;
  clock: HostClock;
}

/** The chains of one state directory. */
export class LedgerFiles {
  /** Files already warned about (once each per process). */
  private readonly warned = new Set<string>();

  constructor(
    readonly dir: StateDir,
    readonly options: LedgerFilesOptions,
  ) {}

  /** A writer name of this process: host, pid and a random part. */
  writer(): string {
    return `${this.options.clock.host}/${process.pid}/${randomBytes(6).toString('hex')}`;
  }

  /** The chain of a portal's requests (by its identity), as a writer of its own. */
  requests(identity: string): Chain {
    return new FolderChain(this, REQUESTS, identity, undefined, this.writer());
  }

  /** The chain of a portal entry's passes, as `writer`. */
  passes(identity: string, entry: string, writer: string): Chain {
    return new FolderChain(this, PASSES, identity, entry, writer);
  }

  /** @internal The folder of a kind's root. */
  rootOf(kind: Kind): string {
    return join(this.dir.path, kind.root);
  }

  /** Removes the folders of both kinds whose records all stopped counting an hour ago, and what an earlier layout left. Never throws. */
  sweep(): void {
    if (!this.dir.writable) return;
    for (const kind of [REQUESTS, PASSES]) {
      const root = this.rootOf(kind);
      let names: string[];
      try {
        this.dir.ownFolder(root);
        names = readdirSync(root);
      } catch {
        continue;
      }
      for (const name of names) {
        try {
          if (lstatSync(join(root, name)).isDirectory()) this.closeIfIdle(kind, join(root, name));
        } catch {
          // Another process closes it, or it is not ours: leave it.
        }
      }
    }
  }

  /** @internal Reads a folder's records (every one that is a record of its chain: `portal`, `entry`; any, when undefined). */
  read(kind: Kind, folder: string, now: Reading, portal: string | undefined, entry: string | undefined): { records: FileRec[]; newest: number; names: string[] } {
    const names = readdirSync(folder);
    const numbers = names.map((n) => slotOf(kind, n)).filter((n): n is number => n !== undefined);
    let newest = Math.max(0, ...numbers);
    // A listing may miss the newest names: whatever exists past it is newer still.
    while (exists(join(folder, slotName(kind, newest + 1)))) numbers.push(++newest);
    const records: FileRec[] = [];
    // Newest first: what a look warns about comes in that order.
    for (const n of numbers.sort((a, b) => b - a)) {
      const path = join(folder, slotName(kind, n));
      const read = readJsonFile(path);
      if (read === undefined) continue;
      if ('problem' in read) {
        this.warn(path, read.problem);
        continue;
      }
      const value = read.value as RecordFile;
      // Read by a sweep: a record of the chain whose folder it is in.
      const ofFolder = (v: RecordFile) => folderOf(v.entry === undefined ? v.portal : `${v.portal}#${v.entry}`) === basename(folder);
      if (portal === undefined ? !isRecord(value, value?.portal, value?.entry) || !ofFolder(value) : !isRecord(value, portal, entry)) {
        this.warn(path, `not ${kind.what}`);
        continue;
      }
      const claimed = place(value, value, read.mtimeMs, now);
      records.push({
        n,
        file: value,
        // Stryker disable next-line StringLiteral: equivalent, a record with no writer is never this writer's, whatever it is called
        writer: value.writer ?? '',
        released: value.released === true,
        claimed,
        // A pass arrives as it is claimed.
        arrived: value.arrived ? place(value, value.arrived, read.mtimeMs, now) : kind === PASSES ? claimed : undefined,
        flightMs: kind === PASSES ? 0 : (value.flightMs ?? DEFAULT_FLIGHT_MS),
        keepMs: kind === PASSES ? passKeepMs(value.intervalMs) : REQUEST_SPAN_MS,
      });
    }
    return { records, newest, names };
  }

  /** @internal Removes temporary files (and the first layout's) a killed process left. */
  dropStale(folder: string, names: readonly string[], now: Reading): void {
    for (const name of names) {
      const legacy = LEGACY.test(name);
      if (!TEMP.test(name) && !legacy) continue;
      const path = join(folder, name);
      try {
        const st = lstatSync(path);
        const written = now.writtenAt(st.mtimeMs);
        if (st.isFile() && written !== undefined && now.mono - written > (legacy ? 3_600_000 : STALE_TEMP_MS)) removeFile(path);
      } catch {
        // Gone meanwhile.
      }
    }
  }

  /** @internal Writes `file` to a new temporary file of `folder`; returns its path. Throws the write's error. */
  writeTemp(folder: string, file: RecordFile): string {
    return writeTempFile(folder, JSON.stringify(file), (fd) => this.options.clock.stamp(fd));
  }

  /**
   * Closes a folder whose records all stopped counting an hour ago: claims the next number with a
   * closing mark (so no claim can be made behind it), removes the records, then the mark and the
   * folder. A folder left with nothing of ours but temporary files goes too.
   */
  private closeIfIdle(kind: Kind, folder: string): void {
    const { clock } = this.options;
    const now = readingOf(clock, folder);
    const { records, newest, names } = this.read(kind, folder, now, undefined, undefined);
    this.dropStale(folder, names, now);
    if (newest === 0) {
      // Removed only when empty: with anything left in it (a young temporary file, a user's file) it stays.
      rmdirQuiet(folder);
      return;
    }
    const head = records.find((r) => r.n === newest);
    if (!head || !idle(records, now.mono)) return;
    const file: RecordFile = { ...head.file, host: clock.host, boot: clock.boot, mono: now.mono, wall: now.wall, writer: `${clock.host}/${process.pid}/sweep`, closing: true };
    const mark = join(folder, slotName(kind, newest + 1));
    let temp: string;
    try {
      temp = this.writeTemp(folder, file);
    } catch {
      return;
    }
    try {
      linkSync(temp, mark);
    } catch {
      return;
    } finally {
      removeFile(temp);
    }
    for (const r of records) removeFile(join(folder, slotName(kind, r.n)));
    removeFile(mark);
    rmdirQuiet(folder);
  }

  /** @internal Warns once per file. */
  warn(path: string, reason: string): void {
    if (this.warned.has(path)) return;
    this.warned.add(path);
    this.options.logger.warn(`${path} in the state directory is ${reason}: it is ignored; remove it`, { file: path, reason });
  }
}

/** What a look at a folder found, and what a claim decided on it must check. */
interface FolderLook extends Look {
  /** The folder's identity at the look; undefined when it did not exist. */
  readonly id: FolderId | undefined;
  /** The look's time on this process's monotonic clock. */
  readonly at: number;
}

/** One chain in the state directory, as one writer uses it. */
class FolderChain implements Chain {
  private readonly folder: string;
  /** The records this writer claimed, by number: what a mark rewrites. */
  private readonly mine = new Map<number, RecordFile>();

  constructor(
    private readonly files: LedgerFiles,
    private readonly kind: Kind,
    private readonly portal: string,
    private readonly entry: string | undefined,
    readonly writer: string,
  ) {
    this.folder = join(files.rootOf(kind), folderOf(entry === undefined ? portal : `${portal}#${entry}`));
  }

  // Async, though the file system calls are synchronous: a LedgerError rejects, as the port says.
  async look(): Promise<FolderLook> {
    return this.lookNow();
  }

  private lookNow(): FolderLook {
    const { files, folder } = this;
    const { clock } = files.options;
    let id: FolderId | undefined;
    try {
      files.dir.ownFolder(files.rootOf(this.kind));
      // Only a claim creates the chain's folder: a look at one never claimed finds nothing.
      if (exists(folder)) {
        files.dir.ownFolder(folder);
        id = idOf(lstatSync(folder));
      }
    } catch (err) {
      throw err instanceof LedgerError ? err : new LedgerError(folder, `${folder} in the state directory cannot be used (${codeOf(err)})`, { cause: err });
    }
    const now = readingOf(clock, folder);
    if (id === undefined) return { records: [], newest: 0, now: now.mono, busyMs: 0, id, at: now.mono };
    let read: ReturnType<LedgerFiles['read']>;
    try {
      read = files.read(this.kind, folder, now, this.portal, this.entry);
    } catch (err) {
      throw new LedgerError(folder, `${folder} in the state directory cannot be read (${codeOf(err)})`, { cause: err });
    }
    files.dropStale(folder, read.names, now);
    const head = read.records.find((r) => r.n === read.newest);
    // Another process is removing this idle folder: wait for it, or go on past a mark it left when killed.
    const closing = head?.file.closing === true && now.mono - head.claimed < CLOSING_STALE_MS;
    const records = read.records.filter((r) => r.file.closing !== true);
    return { records, newest: read.newest, now: now.mono, busyMs: closing ? CLOSING_WAIT_MS : 0, id, at: now.mono };
  }

  async put(look: Look, n: number, what: Claimed): Promise<'won' | 'lost' | 'void'> {
    const { files, folder } = this;
    const { clock } = files.options;
    const seen = look as FolderLook;
    try {
      files.dir.ownFolder(folder);
    } catch (err) {
      throw err instanceof LedgerError ? err : writeFailed(folder, err);
    }
    const file: RecordFile = {
      version: 2,
      portal: this.portal,
      // A request's record has none: JSON leaves an undefined field out.
      entry: this.entry,
      host: clock.host,
      boot: clock.boot,
      mono: clock.monotonic(),
      wall: clock.wall(),
      writer: this.writer,
      ...(this.kind === REQUESTS ? { flightMs: what.flightMs } : { intervalMs: what.intervalMs }),
    };
    const name = join(folder, slotName(this.kind, n));
    let temp: string;
    try {
      temp = files.writeTemp(folder, file);
    } catch (err) {
      throw writeFailed(folder, err);
    }
    try {
      linkSync(temp, name);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return 'lost';
      throw writeFailed(folder, err);
    } finally {
      removeFile(temp);
    }
    // Void: linked into another folder than the one looked at (a sweep replaced it), or a window after the look.
    let now: FolderId | undefined;
    try {
      now = idOf(lstatSync(folder));
    } catch {
      now = undefined;
    }
    const replaced = now === undefined || (seen.id !== undefined && !sameFolder(seen.id, now));
    if (replaced || clock.monotonic() - seen.at > REQUEST_SPAN_MS) {
      removeFile(name);
      return 'void';
    }
    this.mine.set(n, file);
    return 'won';
  }

  async mark(n: number, how: Mark): Promise<void> {
    const file = this.mine.get(n);
    if (!file) return;
    const { clock } = this.files.options;
    const changed: RecordFile = how === 'released' ? { ...file, released: true } : { ...file, arrived: { mono: clock.monotonic(), wall: clock.wall() } };
    try {
      const temp = this.files.writeTemp(this.folder, changed);
      // Replaces our own file (a symlink planted at its name is replaced, never followed).
      renameSync(temp, join(this.folder, slotName(this.kind, n)));
      this.mine.set(n, changed);
    } catch {
      // It stays as it was: counted, as in flight until its flight has passed.
    }
    if (how === 'released') this.mine.delete(n);
  }

  async prune(look: Look, n: number): Promise<void> {
    for (const r of look.records) if (prunable(r, n, look.now)) removeFile(join(this.folder, slotName(this.kind, r.n)));
  }
}

function rmdirQuiet(folder: string): void {
  try {
    rmdirSync(folder);
  } catch {
    // A claim was made in it meanwhile (ENOTEMPTY): it stays.
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    // Nothing there, or nothing this process can see.
  }
  return false;
}
