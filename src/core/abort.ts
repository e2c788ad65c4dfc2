import { systemClock, type Clock } from './clock.js';

/** What ends a wait early: a deadline, a cancel signal, and the errors each one rejects with. */
export interface UntilDeadlineOptions {
  /** Ms on `clock.monotonic()`; the wait lasts the time left, measured in real time (as an invocation's own timeout runs). */
  deadline?: number;
  /** @default systemClock */
  clock?: Clock;
  signal?: AbortSignal;
  /** What the wait rejects with when the deadline comes first. @default an Error saying the deadline passed */
  onDeadline?: () => unknown;
  /** What the wait rejects with when `signal` aborts first (also when it already has). @default the signal's reason */
  onAbort?: (reason: unknown) => unknown;
}

/**
 * Settles with `promise`, unless the deadline passes or the signal aborts first: then rejects at
 * once, leaving `promise` to finish unobserved (its later rejection is swallowed). For work that
 * cannot be cancelled itself (a key store read, an SDK export) but must not hold up its caller.
 */
export function untilDeadline<T>(promise: Promise<T>, options: UntilDeadlineOptions): Promise<T> {
  const { deadline, signal } = options;
  const clock = options.clock ?? systemClock;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = () => finish(() => reject(options.onAbort ? options.onAbort(signal?.reason) : signal?.reason));
    if (deadline !== undefined) {
      const onDeadline = () => finish(() => reject(options.onDeadline ? options.onDeadline() : new Error('the deadline passed')));
      timer = setTimeout(onDeadline, Math.max(0, deadline - clock.monotonic()));
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    promise.then(
      (value) => finish(() => resolve(value)),
      (err: unknown) => finish(() => reject(err)),
    );
  });
}
