/**
 * When each portal entry last ran its resolved-alerts pass, for the one-shot runs (`once`, the
 * Lambda), which may run every few minutes while the pass runs hourly: a pass is due when none is
 * recorded, or when its interval (less a small margin) has passed since the last one started. The
 * state directory implements it (src/state/passes.ts); PassMemory is the fallback of a process with
 * no writable state directory (every `once`; a warm Lambda container between invocations).
 */

/** What a look at an entry's last pass says, and how to record the pass about to run. */
export interface PassCheck {
  /** Whether the pass runs now. */
  readonly due: boolean;
  /** Records a pass that succeeded, as started when `check` was called. Never throws. */
  record(): void;
}

/** Where the last pass of each portal entry is remembered. */
export interface PassLedger {
  /** The pass of `entry` of the portal `identity`, whose interval is `intervalMs`. */
  check(identity: string, entry: string, intervalMs: number): PassCheck;
}

/**
 * The margin by which a pass may come early: a minute, or a tenth of a shorter interval, so that a
 * run every few minutes starting a little before the hour is up still runs the hourly pass.
 */
function earlyMarginMs(intervalMs: number): number {
  return Math.min(60_000, intervalMs / 10);
}

/** Whether a pass last started `elapsedMs` ago (undefined: never) is due at `intervalMs`. */
export function passDue(elapsedMs: number | undefined, intervalMs: number): boolean {
  return elapsedMs === undefined || elapsedMs >= intervalMs - earlyMarginMs(intervalMs);
}

/** The passes of this process only, on its monotonic clock: lost when it ends. */
export class PassMemory implements PassLedger {
  private readonly last = new Map<string, number>();

  constructor(private readonly monotonic: () => number) {}

  check(identity: string, entry: string, intervalMs: number): PassCheck {
    const key = `${identity}\u0000${entry}`;
    const now = this.monotonic();
    const at = this.last.get(key);
    return { due: passDue(at === undefined ? undefined : now - at, intervalMs), record: () => void this.last.set(key, now) };
  }
}
