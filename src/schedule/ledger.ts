/**
 * The port through which a portal's scheduler shares its requests with other processes: a restart,
 * `once` from cron, a `backfill` beside `serve`. The state directory implements it (src/state/);
 * without one, a scheduler counts only its own process's requests.
 */
export interface SendLedger {
  /**
   * Wall times (epoch ms) of the requests that other processes, running or gone, recorded for the
   * portal: at least those of the window ending at `wallNow`. Never throws (unreadable: none).
   */
  others(wallNow: number): readonly number[];
  /** Records a request this process starts at wall time `at`, before it is sent. Never throws. */
  record(at: number): void;
  /** Forgets the request recorded at `at`: it reached no portal. Never throws. */
  release(at: number): void;
}
