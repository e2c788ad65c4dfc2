/**
 * The last resolved-alerts pass of each portal entry, in the state directory: one small file per
 * entry, `passes/<folder>.json`, the folder 0700 and the file 0600, written to a new temporary file
 * (O_EXCL, O_NOFOLLOW) then renamed over the last, never through a symlink. Times compare on this
 * host's monotonic clock within one boot (a wall-clock step moves nothing); a record of another
 * boot or host by wall time, one from the future counting as now. A record that cannot be read
 * counts as none (the pass runs), and one that cannot be written is warned about once.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../core/log.js';
import { passDue, PassMemory, type PassCheck, type PassLedger } from '../schedule/passes.js';
import { codeOf, NEW_FILE, READ_FILE, type StateDir } from './dir.js';
import type { HostClock } from './host-clock.js';
import { folderOf } from './portal-folder.js';

/** One pass as recorded. */
interface PassFile {
  readonly version: 1;
  readonly portal: string;
  readonly entry: string;
  readonly host: string;
  readonly boot: string;
  /** When the pass started, on the host's monotonic clock (ms) and on the wall clock (epoch ms). */
  readonly mono: number;
  readonly wall: number;
}

function isPassFile(v: unknown, identity: string, entry: string): v is PassFile {
  if (v === null || typeof v !== 'object') return false;
  const f = v as Partial<PassFile>;
  return f.version === 1 && f.portal === identity && f.entry === entry && typeof f.host === 'string' && typeof f.boot === 'string' && Number.isFinite(f.mono) && Number.isFinite(f.wall);
}

/** The passes of a state directory; with the directory not writable, those of this process only. */
export class PassFiles implements PassLedger {
  private readonly memory: PassMemory;
  private warned = false;

  constructor(
    private readonly dir: StateDir,
    private readonly options: { readonly logger: Logger; readonly clock: HostClock },
  ) {
    this.memory = new PassMemory(() => options.clock.monotonic());
  }

  private get root(): string {
    return join(this.dir.path, 'passes');
  }

  check(identity: string, entry: string, intervalMs: number): PassCheck {
    if (!this.dir.writable) return this.memory.check(identity, entry, intervalMs);
    const { clock } = this.options;
    const mono = clock.monotonic();
    const wall = clock.wall();
    const path = join(this.root, `${folderOf(`${identity}#${entry}`)}.json`);
    const last = this.read(path, identity, entry);
    // Another boot or host: its wall time, a future one counting as now.
    const elapsed = last === undefined ? undefined : last.host === clock.host && last.boot === clock.boot ? mono - last.mono : Math.max(0, wall - last.wall);
    const file: PassFile = { version: 1, portal: identity, entry, host: clock.host, boot: clock.boot, mono, wall };
    return { due: passDue(elapsed, intervalMs), record: () => this.write(path, file) };
  }

  private read(path: string, identity: string, entry: string): PassFile | undefined {
    let fd: number;
    try {
      fd = openSync(path, READ_FILE);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.warn(path, codeOf(err) === 'ELOOP' ? 'a symlink' : codeOf(err));
      return undefined;
    }
    try {
      if (!fstatSync(fd).isFile()) return this.warn(path, 'not a file');
      const value: unknown = JSON.parse(readFileSync(fd, 'utf8'));
      return isPassFile(value, identity, entry) ? value : this.warn(path, 'not a record of this portal\'s pass');
    } catch {
      return this.warn(path, 'not JSON');
    } finally {
      closeSync(fd);
    }
  }

  private write(path: string, file: PassFile): void {
    const temp = join(this.root, `.t-${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      this.dir.ownFolder(this.root);
      const fd = openSync(temp, NEW_FILE, 0o600);
      try {
        writeSync(fd, JSON.stringify(file));
      } finally {
        closeSync(fd);
      }
      // Replaces the last record (a symlink planted at its name is replaced, never followed).
      renameSync(temp, path);
    } catch (err) {
      try {
        unlinkSync(temp);
      } catch {
        // Never created, or already renamed.
      }
      this.warn(path, codeOf(err));
    }
  }

  /** Warns once: the pass then runs on every run until the record can be read and written. */
  private warn(path: string, why: string): undefined {
    if (!this.warned) this.options.logger.warn(`the last resolved-alerts pass cannot be remembered in the state directory (${path}: ${why}): it runs again on the next run`, { setting: 'POSTURE_STATE_DIR', path, error: why });
    this.warned = true;
    return undefined;
  }
}
