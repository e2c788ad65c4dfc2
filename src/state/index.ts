/** What a process keeps in its state directory (POSTURE_STATE_DIR): its requests to each portal; the last resolved-alerts pass of each entry; backfill's progress. */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { SendLedger } from '../schedule/ledger.js';
import { PassMemory, type PassClaim, type PassLedger } from '../schedule/passes.js';
import { claimPass, sendLedger } from './claims.js';
import { codeOf, StateDir } from './dir.js';
import { LedgerFiles } from './files.js';
import { hostClockOf } from './host-clock.js';

/** What a process that cannot write its state directory loses. */
const REQUESTS_LOST = 'the requests this process sends to each portal are not recorded, so a restart or another process does not count them against the share of the last 60 s';

/** A process's state directory, opened (created, tried) once: the ledger of each portal in it. */
export interface ProcessState {
  readonly dir: StateDir;
  /** The ledger of a portal, by identity (normalised base URL); undefined when the directory cannot be written. */
  ledgerOf(identity: string): SendLedger | undefined;
  /** When each portal entry last ran its resolved-alerts pass (in this process's memory when the directory cannot be written). */
  readonly passes: PassLedger;
}

/**
 * Opens the state directory at `path` and removes the chains idle for more than an hour (a pass's,
 * an hour past its interval); `alsoLost` adds what else the process loses without it (the one
 * warning says it). Throws ConfigError when the directory is not the process's own (see
 * StateDir.open).
 */
export function openState(path: string, logger: Logger, clock: Clock, alsoLost?: string): ProcessState {
  const dir = StateDir.open(path, logger, alsoLost ? `${REQUESTS_LOST}, and ${alsoLost}` : REQUESTS_LOST);
  const files = new LedgerFiles(dir, { logger, clock: hostClockOf(clock) });
  files.sweep();
  const where = `the state directory ${path}`;
  return { dir, ledgerOf: (identity) => (dir.writable ? sendLedger(files.requests(identity), where) : undefined), passes: new DirPasses(files, () => clock.monotonic()) };
}

/**
 * The passes of a state directory. A pass claim that the directory cannot take (not writable from
 * the start, a folder that is not the exporter's) is warned about once, and the process then
 * remembers its passes in its own memory: a pass made twice costs requests, each still claimed
 * against the share.
 */
export class DirPasses implements PassLedger {
  private readonly memory: PassMemory;
  private readonly writer: string;
  private warned = false;

  /** `monotonic`: the process's clock, for the passes it remembers in memory. */
  constructor(
    private readonly files: LedgerFiles,
    monotonic: () => number,
  ) {
    this.memory = new PassMemory(monotonic);
    this.writer = files.writer();
  }

  async claim(identity: string, entry: string, intervalMs: number): Promise<PassClaim> {
    if (!this.files.dir.writable) return this.memory.claim(identity, entry, intervalMs);
    try {
      return await claimPass(this.files.passes(identity, entry, this.writer), intervalMs);
    } catch (err) {
      if (!this.warned) {
        const why = err instanceof Error ? err.message : codeOf(err);
        this.files.options.logger.warn(`the last resolved-alerts pass cannot be remembered in the state directory (${why}): this process remembers it in its memory only`, { setting: 'POSTURE_STATE_DIR', error: codeOf((err as Error)?.cause ?? err) });
      }
      this.warned = true;
      return this.memory.claim(identity, entry, intervalMs);
    }
  }
}
