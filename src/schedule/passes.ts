/**
 * When each portal entry last ran its resolved-alerts pass, for the one-shot runs (`once`, the
 * Lambda), which may run every few minutes while the pass runs hourly: a pass is due when none is
 * recorded, or when its interval (less a small margin) has passed since the last one started.
 *
 * A run claims the pass before it starts, in one atomic step that decides and records (so of two
 * runs at once only one makes the pass), and gives the claim back when the pass fails (so the next
 * run tries again). A run killed during its pass keeps its claim: the pass then waits for its
 * interval. The state directory (src/state/passes.ts) and the DynamoDB table (src/state/table.ts)
 * implement it; PassMemory is the fallback of a process with neither (every `once` without a
 * writable state directory; a warm Lambda container between invocations).
 */

/** A look at an entry's last pass, claiming it when due. */
export interface PassClaim {
  /** Whether this run makes the pass: it was due and this run claimed it. */
  readonly due: boolean;
  /** Gives a claimed pass back (it failed): the record is the one before the claim again. Never throws. */
  release(): Promise<void>;
}

/** Where the last pass of each portal entry is remembered. */
export interface PassLedger {
  /**
   * Claims the pass of `entry` of the portal `identity`, whose interval is `intervalMs`, when it is
   * due (as started now). Throws (LedgerError) when the record cannot be read or written and no
   * pass may run blind: the table; the state directory warns and falls back instead.
   */
  claim(identity: string, entry: string, intervalMs: number): Promise<PassClaim>;
}

/**
 * The margin by which a pass may come early: a minute, or a tenth of a shorter interval, so that a
 * run every few minutes starting a little before the hour is up still runs the hourly pass.
 */
function earlyMarginMs(intervalMs: number): number {
  return Math.min(60_000, intervalMs / 10);
}

/** How long after the last pass started the next one is due. */
export function dueAfterMs(intervalMs: number): number {
  return intervalMs - earlyMarginMs(intervalMs);
}

/** Whether a pass last started `elapsedMs` ago (undefined: never) is due at `intervalMs`. */
function passDue(elapsedMs: number | undefined, intervalMs: number): boolean {
  return elapsedMs === undefined || elapsedMs >= dueAfterMs(intervalMs);
}

/** A claim that was not due: nothing to give back. */
export const NOT_DUE: PassClaim = { due: false, release: () => Promise.resolve() };

/** The passes of this process only, on its monotonic clock: lost when it ends. */
export class PassMemory implements PassLedger {
  private readonly last = new Map<string, number>();

  constructor(private readonly monotonic: () => number) {}

  claim(identity: string, entry: string, intervalMs: number): Promise<PassClaim> {
    const key = `${identity}\u0000${entry}`;
    const now = this.monotonic();
    const before = this.last.get(key);
    if (!passDue(before === undefined ? undefined : now - before, intervalMs)) return Promise.resolve(NOT_DUE);
    this.last.set(key, now);
    const release = (): Promise<void> => {
      // Only our own claim is given back.
      if (this.last.get(key) === now) {
        if (before === undefined) this.last.delete(key);
        else this.last.set(key, before);
      }
      return Promise.resolve();
    };
    return Promise.resolve({ due: true, release });
  }
}
