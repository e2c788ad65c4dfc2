/**
 * The port through which a portal's scheduler shares its budget with other processes: a restart,
 * `once` from cron, a `backfill` beside `serve`, other Lambda containers. The state directory
 * (src/state/) and a DynamoDB table (src/state/table.ts) implement it; without one, a scheduler
 * counts only its own process's requests.
 *
 * Granting a slot is one atomic step across every process that shares the ledger: the read of
 * every recorded request, the decision against the share and the record of the new request. Both
 * implementations make it a claim that only one writer can win: request number n of a portal is
 * written only if no request n exists yet, by a writer that has read requests up to n − 1.
 */

/** What a claim saw, and whether it won a slot. */
export interface ClaimResult {
  /** Whether a request may start now: it is recorded, and counts for every process from now on. */
  readonly granted: boolean;
  /** When not granted: ms from now until the window may hold a free slot (look again then). */
  readonly waitMs: number;
  /** How long ago (ms) each request that other writers recorded in the window started: the scheduler's view of them. */
  readonly others: readonly number[];
  /** When granted: forgets the request again (it reached no portal). Never throws. */
  release?(): Promise<void>;
}

export interface SendLedger {
  /**
   * Claims one slot now if the portal's window (`windowMs` and its margin, every writer's
   * requests) holds fewer than `share`. Throws LedgerError when the ledger cannot be read or
   * written: the caller sends nothing, as a share it cannot see is no share.
   */
  claim(share: number): Promise<ClaimResult>;
  /** Ages (ms) of the requests other writers recorded in the window now; throws LedgerError like `claim`. */
  others(): Promise<readonly number[]>;
}

/**
 * The decision every ledger makes, on its own clock: the earliest time, not before `now`, at
 * which one more request may start with at most `share` starts (given in any order) in any window
 * of `windowMs` + `marginMs`. `now` when a slot is free.
 */
export function nextStart(starts: readonly number[], share: number, now: number, windowMs: number, marginMs: number): number {
  const cutoff = now - windowMs - marginMs;
  const inWindow = starts.filter((t) => t > cutoff).sort((a, b) => a - b);
  const n = inWindow.length;
  if (n < share) return now;
  return Math.max(now, inWindow[n - share]! + windowMs + marginMs);
}
