/**
 * The last resolved-alerts pass of each portal entry, in the state directory (the PassLedger port).
 *
 * Layout: `<state dir>/passes/<entry>/p<n>`, one small file per pass claimed, numbered 1, 2, 3…
 * (folders 0700, files 0600). A pass is claimed by one atomic step, as a request is in sends/: a
 * process reads the entry's newest records, decides whether the pass is due, and claims pass n + 1
 * by `link(2)`ing a file it wrote to that name, which fails if another process claimed it first
 * (the loser reads again, and finds the pass no longer due). So of several runs at once only one
 * makes the pass. A pass that fails is given back: its file is replaced by one marked `released`,
 * which no longer counts, so the next run tries again. A process killed during its pass leaves its
 * claim: the pass waits for its interval.
 *
 * Times compare on this host's monotonic clock within one boot (a wall-clock step moves nothing);
 * a record of another boot or host by wall time, one from the future counting as now. Nothing is
 * followed if it is a symlink, and only the names written here (`p<n>`, `.t-<pid>-<hex>`) are ever
 * deleted. A record that cannot be read counts as none (warned once); a folder that cannot be
 * written is warned about once, and the process then remembers its passes in its own memory.
 */
import { linkSync, lstatSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../core/log.js';
import { NOT_DUE, passDue, PassMemory, type PassClaim, type PassLedger } from '../schedule/passes.js';
import { codeOf, readJsonFile, removeFile, writeTempFile, type StateDir } from './dir.js';
import { startOnMonotonic, type HostClock } from './host-clock.js';
import { folderOf } from './portal-folder.js';

/** Claims kept behind the newest: the last pass that counts is among them unless every later one was due too. */
const KEEP = 8;
/** Claims lost in a row to other processes before this one leaves the pass to them. */
const MAX_RACES = 20;
/** A temporary file older than this was left by a process killed between writing and linking it. */
const STALE_TEMP_MS = 10 * 60_000;

const CLAIM = /^p(\d{12})$/;
const TEMP = /^\.t-\d+-[0-9a-f]+$/;
const claimName = (n: number): string => `p${String(n).padStart(12, '0')}`;

/** One pass as claimed. */
interface PassFile {
  readonly version: 2;
  readonly portal: string;
  readonly entry: string;
  readonly host: string;
  readonly boot: string;
  /** When the pass started, on the host's monotonic clock (ms) and on the wall clock (epoch ms). */
  readonly mono: number;
  readonly wall: number;
  /** The pass failed and was given back: it does not count. */
  readonly released?: true;
}

function isPassFile(v: unknown, identity: string, entry: string): v is PassFile {
  if (v === null || typeof v !== 'object') return false;
  const f = v as Partial<PassFile>;
  return f.version === 2 && f.portal === identity && f.entry === entry && typeof f.host === 'string' && typeof f.boot === 'string' && Number.isFinite(f.mono) && Number.isFinite(f.wall);
}

/** Why the directory could not be used for a claim: the process falls back to its memory. */
class Unusable extends Error {}

/** The passes of a state directory; with the directory not writable, those of this process only. */
export class PassFiles implements PassLedger {
  private readonly memory: PassMemory;
  private warned = false;
  private ignored = false;

  constructor(
    private readonly dir: StateDir,
    private readonly options: { readonly logger: Logger; readonly clock: HostClock },
  ) {
    this.memory = new PassMemory(() => options.clock.monotonic());
  }

  private get root(): string {
    return join(this.dir.path, 'passes');
  }

  claim(identity: string, entry: string, intervalMs: number): Promise<PassClaim> {
    if (!this.dir.writable) return this.memory.claim(identity, entry, intervalMs);
    const folder = join(this.root, folderOf(`${identity}#${entry}`));
    try {
      return Promise.resolve(this.claimIn(folder, identity, entry, intervalMs));
    } catch (err) {
      this.warn(folder, err instanceof Unusable ? err.message : codeOf(err));
      return this.memory.claim(identity, entry, intervalMs);
    }
  }

  private claimIn(folder: string, identity: string, entry: string, intervalMs: number): PassClaim {
    try {
      this.dir.ownFolder(this.root);
      this.dir.ownFolder(folder);
    } catch (err) {
      throw new Unusable(codeOf(err));
    }
    const { clock } = this.options;
    for (let race = 0; race < MAX_RACES; race++) {
      const claims = this.claims(folder);
      const newest = claims[0] ?? 0;
      const mono = clock.monotonic();
      const wall = clock.wall();
      const last = this.lastPass(folder, claims, identity, entry);
      if (!passDue(last === undefined ? undefined : this.elapsed(last, mono, wall), intervalMs)) return NOT_DUE;
      const file: PassFile = { version: 2, portal: identity, entry, host: clock.host, boot: clock.boot, mono, wall };
      const name = join(folder, claimName(newest + 1));
      if (!this.link(folder, file, name)) continue;
      this.prune(folder, newest + 1, wall);
      return { due: true, release: () => Promise.resolve(this.release(folder, name, file)) };
    }
    // Others claimed it each time this process looked: it is theirs.
    return NOT_DUE;
  }

  /** The claim numbers of a folder, newest first. */
  private claims(folder: string): number[] {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch (err) {
      throw new Unusable(codeOf(err));
    }
    const out: number[] = [];
    for (const name of names) {
      const m = CLAIM.exec(name);
      if (m) out.push(Number(m[1]));
    }
    return out.sort((a, b) => b - a);
  }

  /** The newest pass that counts (not given back); undefined when there is none. */
  private lastPass(folder: string, claims: readonly number[], identity: string, entry: string): PassFile | undefined {
    for (const n of claims) {
      const file = this.read(join(folder, claimName(n)), identity, entry);
      if (file && !file.released) return file;
    }
    return undefined;
  }

  /** How long ago a pass started: on this boot's monotonic clock, else by wall time (a future one counting as now). */
  private elapsed(file: PassFile, mono: number, wall: number): number {
    return mono - startOnMonotonic(file, this.options.clock, mono, wall);
  }

  private read(path: string, identity: string, entry: string): PassFile | undefined {
    let read: ReturnType<typeof readJsonFile>;
    try {
      read = readJsonFile(path);
    } catch {
      return this.ignore(path, 'not JSON');
    }
    if (read === undefined) return undefined;
    if ('problem' in read) return this.ignore(path, read.problem);
    return isPassFile(read.value, identity, entry) ? read.value : this.ignore(path, 'not a record of this portal\'s pass');
  }


  /** Claims `name` with `file`; false when another process claimed it first. */
  private link(folder: string, file: PassFile, name: string): boolean {
    let temp: string;
    try {
      temp = writeTempFile(folder, JSON.stringify(file));
    } catch (err) {
      throw new Unusable(codeOf(err));
    }
    try {
      linkSync(temp, name);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw new Unusable(codeOf(err));
    } finally {
      removeFile(temp);
    }
  }

  /** Gives a failed pass back: its file is replaced by one marked released. Never throws. */
  private release(folder: string, name: string, file: PassFile): void {
    try {
      const temp = writeTempFile(folder, JSON.stringify({ ...file, released: true }));
      // Replaces our own file (a symlink planted at its name is replaced, never followed).
      renameSync(temp, name);
    } catch (err) {
      this.options.logger.warn(`a failed resolved-alerts pass cannot be given back in the state directory (${name}: ${codeOf(err)}): it counts until its interval has passed`, { setting: 'POSTURE_STATE_DIR', path: name, error: codeOf(err) });
    }
  }

  /** Removes claims KEEP behind the newest, and temporary files a killed process left. */
  private prune(folder: string, newest: number, wall: number): void {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      return;
    }
    for (const name of names) {
      const m = CLAIM.exec(name);
      if (m && Number(m[1]) <= newest - KEEP) removeFile(join(folder, name));
      else if (TEMP.test(name)) {
        try {
          if (wall - lstatSync(join(folder, name)).mtimeMs > STALE_TEMP_MS) removeFile(join(folder, name));
        } catch {
          // Linked and removed by its writer meanwhile.
        }
      }
    }
  }

  /** Warns once that the folder cannot be used: this process then remembers its passes in its memory. */
  private warn(path: string, why: string): undefined {
    if (!this.warned) this.options.logger.warn(`the last resolved-alerts pass cannot be remembered in the state directory (${path}: ${why}): this process remembers it in its memory only`, { setting: 'POSTURE_STATE_DIR', path, error: why });
    this.warned = true;
    return undefined;
  }

  /** Warns once about a record that is not one: it counts as none. */
  private ignore(path: string, why: string): undefined {
    if (!this.ignored) this.options.logger.warn(`a record of the last resolved-alerts pass in the state directory is ignored (${path}: ${why}): delete it`, { setting: 'POSTURE_STATE_DIR', path, error: why });
    this.ignored = true;
    return undefined;
  }
}
