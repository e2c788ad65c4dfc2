/** Time source and sleeper, injected everywhere so tests never wait on real time. */
export interface Clock {
  /** Wall time, milliseconds since the Unix epoch: for timestamps only (it may step back or forward). */
  now(): number;
  /**
   * Milliseconds on a clock that never steps back: for budgets, pauses, deadlines and durations.
   * Its origin is the process start in epoch ms, so it reads close to wall time but ignores steps.
   */
  monotonic(): number;
  /** Resolves after `ms` (clock) milliseconds; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Marks real work under way (a request to the portal); returns its release. Only a fake clock
   * that advances by itself cares: it does not jump while anything is held.
   */
  hold?(): () => void;
}

/**
 * The wall-clock time, as ISO 8601, of an instant read on `clock.monotonic()`: the two clocks'
 * difference now, added to it. Every time a message prints goes through this, so a deadline or
 * a slot reads as the date it is on the wall clock, also after the wall clock was stepped.
 */
export function wallIso(clock: Pick<Clock, 'now' | 'monotonic'>, monotonicMs: number): string {
  return new Date(clock.now() + (monotonicMs - clock.monotonic())).toISOString();
}

/** The machine's clocks: `Date.now()` for wall time, `performance.now()` for the monotonic one. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.timeOrigin + performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, ms));
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

interface Sleeper {
  until: number;
  resolve: () => void;
  reject: (reason: unknown) => void;
}

/**
 * A manual clock: time moves only when `advance` or `set` is called, or, with `autoAdvance`,
 * when every pending sleeper would otherwise wait (so a cycle that must wait a 60 s window
 * finishes at once in a test while the clock still reads the later time). Its monotonic and wall
 * readings start equal; `stepWall` moves the wall reading alone, as an NTP step or an operator does.
 */
export class FakeClock implements Clock {
  private current: number;
  private wallOffset = 0;
  private sleepers: Sleeper[] = [];
  private readonly autoAdvance: boolean;

  constructor(start = Date.UTC(2026, 10, 22, 12, 0, 0), options: { autoAdvance?: boolean } = {}) {
    this.current = start;
    this.autoAdvance = options.autoAdvance ?? false;
  }

  now(): number {
    return this.current + this.wallOffset;
  }

  monotonic(): number {
    return this.current;
  }

  /** Steps the wall clock by `ms` (negative: back), leaving the monotonic clock and the sleepers alone. */
  stepWall(ms: number): void {
    this.wallOffset += ms;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper);
        reject(signal?.reason);
      };
      // The listener goes when the sleep ends: a long-lived signal (serve's stop) must not collect one per sleep.
      const sleeper: Sleeper = {
        until: this.current + ms,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject,
      };
      this.sleepers.push(sleeper);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (this.autoAdvance) this.scheduleAdvance();
    });
  }

  private advancing = false;
  private holds = 0;

  hold(): () => void {
    this.holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      if (this.autoAdvance && this.holds === 0) this.scheduleAdvance();
    };
  }

  /**
   * With autoAdvance: once other work has run (I/O callbacks, microtasks), jump to the earliest
   * wake-up, and keep going while sleepers remain, so no sleeper is left behind by another's jump.
   */
  private scheduleAdvance(): void {
    if (this.advancing) return;
    this.advancing = true;
    setImmediate(() => {
      this.advancing = false;
      if (this.sleepers.length === 0 || this.holds > 0) return;
      const earliest = Math.min(...this.sleepers.map((s) => s.until));
      if (earliest > this.current) this.set(earliest);
      this.scheduleAdvance();
    });
  }

  /** Moves time forward and wakes every sleeper that is due. */
  advance(ms: number): void {
    this.set(this.current + ms);
  }

  /** Sets the monotonic time (never backwards) and wakes every sleeper that is due. */
  set(time: number): void {
    if (time < this.current) throw new Error('FakeClock cannot go backwards');
    this.current = time;
    const due = this.sleepers.filter((s) => s.until <= time);
    this.sleepers = this.sleepers.filter((s) => s.until > time);
    for (const s of due) s.resolve();
  }

  /** The earliest pending wake-up, if any. */
  get nextWakeAt(): number | undefined {
    return this.sleepers.length ? Math.min(...this.sleepers.map((x) => x.until)) : undefined;
  }

  /** Whether real work is under way (see Clock.hold). */
  get held(): boolean {
    return this.holds > 0;
  }

  /** Number of pending sleepers (for tests that wait until code is blocked on the clock). */
  get pending(): number {
    return this.sleepers.length;
  }
}
