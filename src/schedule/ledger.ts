/**
 * The port through which a portal's scheduler shares its budget with other processes: a restart,
 * `once` from cron, a `backfill` beside `serve`, other Lambda containers. The state directory and a
 * DynamoDB table implement it, with one claim protocol (src/state/claims.ts); without one, a
 * scheduler counts only its own process's requests.
 *
 * Granting a slot is one atomic step across every process that shares the ledger: the read of
 * every recorded request, the decision against the share and the record of the new request. Both
 * implementations make it a claim that only one writer can win: request number n of a portal is
 * written only if no request n exists yet, by a writer that has read requests up to n − 1.
 *
 * The portal counts a request when it arrives, which may be well after its claim (a slow DNS
 * answer, a lost SYN, a relay that holds the bytes). So a request counts from its claim until a
 * window and the margin after the moment it could last have reached the portal: when its response
 * began, or when it failed (`arrived`). Until then it is in flight and occupies the window.
 */

/** What a claim saw, and whether it won a slot. */
export interface ClaimResult {
  /** Whether a request may start now: it is recorded, and counts for every process from now on. */
  readonly granted: boolean;
  /** When not granted: ms from now until the window may hold a free slot (look again then). */
  readonly waitMs: number;
  /**
   * The requests other writers recorded that count now, each as how long ago it could last have
   * reached the portal (ms; 0 for one still in flight), read so that the scheduler's own window
   * counts it as long as the ledger does.
   */
  readonly others: readonly number[];
  /** When granted: forgets the request again (it reached no portal). Never throws. */
  release?(): Promise<void>;
  /**
   * When granted: records that the request could last have reached the portal now (its response
   * began, or it failed); it counts until a window and the margin after this. Never throws: a
   * request whose arrival cannot be recorded stays counted as in flight, which is the careful side.
   */
  arrived?(): Promise<void>;
}

export interface SendLedger {
  /** Where the requests are recorded, for what the log says: `the state directory /x`, `the DynamoDB table t`. */
  readonly where: string;
  /**
   * Claims one slot now if the portal's window (every writer's requests, those in flight
   * included) holds fewer than `share`. `flightMs` is the longest this request may stay in flight
   * before its response begins (the reader's timeouts): a request whose writer never says it
   * arrived counts as arriving then. Throws LedgerError when the ledger cannot be read or
   * written: the caller sends nothing, as a share it cannot see is no share.
   */
  claim(share: number, flightMs?: number): Promise<ClaimResult>;
  /** The requests other writers recorded that count now, as `ClaimResult.others`; throws LedgerError like `claim`. */
  others(): Promise<readonly number[]>;
}

/**
 * The decision every ledger makes, on its own clock: the earliest time, not before `now`, at
 * which one more request may start with at most `share` requests in any window of `windowMs` +
 * `marginMs`, each request given by the latest time it could have reached the portal (any order).
 * `now` when a slot is free.
 */
export function nextStart(arrivals: readonly number[], share: number, now: number, windowMs: number, marginMs: number): number {
  const cutoff = now - windowMs - marginMs;
  const inWindow = arrivals.filter((t) => t > cutoff).sort((a, b) => a - b);
  const n = inWindow.length;
  if (n < share) return now;
  return Math.max(now, inWindow[n - share]! + windowMs + marginMs);
}
