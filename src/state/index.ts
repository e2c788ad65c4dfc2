/** What a process keeps in its state directory (POSTURE_STATE_DIR): its requests to each portal; the last resolved-alerts pass of each entry; backfill's progress. */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/log.js';
import type { SendLedger } from '../schedule/ledger.js';
import { StateDir } from './dir.js';
import { hostClockOf } from './host-clock.js';
import { SendFiles } from './sends.js';
import { PassFiles } from './passes.js';
import type { PassLedger } from '../schedule/passes.js';

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
 * Opens the state directory at `path` and removes the portals idle for more than an hour;
 * `alsoLost` adds what else the process loses without it (the one warning says it). Throws
 * ConfigError when the directory is not the process's own (see StateDir.open).
 */
export function openState(path: string, logger: Logger, clock: Clock, alsoLost?: string): ProcessState {
  const dir = StateDir.open(path, logger, alsoLost ? `${REQUESTS_LOST}, and ${alsoLost}` : REQUESTS_LOST);
  const files = new SendFiles(dir, { logger, clock: hostClockOf(clock) });
  files.sweep();
  const passes = new PassFiles(dir, { logger, clock: hostClockOf(clock) });
  return { dir, ledgerOf: (identity) => (dir.writable ? files.ledger(identity) : undefined), passes };
}
