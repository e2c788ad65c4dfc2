/**
 * The state directory as a process uses it: created and tried once at the start. One that cannot
 * be written gives one warning, naming the setting and what is lost, and the process goes on from
 * memory; a later failed write (a full disk) does the same, once.
 */
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../core/log.js';

/** The setting as a user sets it, for the warning. */
const SETTING = 'POSTURE_STATE_DIR (--state-dir)';

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
   * Creates the directory when missing and tries a write; `lost` says what a process loses without
   * it (the warning's words). Never throws.
   */
  static open(path: string, logger: Logger, lost: string): StateDir {
    const dir = new StateDir(path, logger, lost);
    try {
      mkdirSync(path, { recursive: true });
      const probe = join(path, `.probe-${process.pid}`);
      writeFileSync(probe, '');
      unlinkSync(probe);
    } catch (err) {
      dir.failed(err);
    }
    return dir;
  }

  /** Whether writes are still tried (false once one has failed). */
  get writable(): boolean {
    return !this.failedOnce;
  }

  /** A write failed: warn once, and write nothing more. */
  failed(err: unknown): void {
    if (this.failedOnce) return;
    this.failedOnce = true;
    const code = (err as NodeJS.ErrnoException | undefined)?.code ?? (err instanceof Error ? err.message : String(err));
    this.logger.warn(`${SETTING} ${this.path} cannot be written (${code}): ${this.lost}; the process goes on from memory. Give a writable directory to keep them.`, {
      setting: 'POSTURE_STATE_DIR',
      stateDir: this.path,
      error: code,
    });
  }
}
