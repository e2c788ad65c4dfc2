import type { Clock } from '../core/clock.js';
import { BudgetExhaustedError } from '../errors.js';

interface Waiter {
  endpoint: string;
  deadline: number;
  signal: AbortSignal | undefined;
  settled: boolean;
  resolve: () => void;
  reject: (reason: unknown) => void;
  onAbort: () => void;
}

/** At most `limit` request starts in any `windowMs` sliding window (the portal's budget), per portal. */
export class RateLimiter {
  readonly limit: number;
  /** Length of the sliding window in ms. */
  readonly windowMs: number;
  private readonly clock: Clock;
  /** Start times still inside the window, oldest first (starts are recorded in clock order). */
  private starts: number[] = [];
  /** Callers waiting for a slot, served strictly in arrival order; only the head sleeps. */
  private queue: Waiter[] = [];
  private pumping = false;

  constructor(options: { limit: number; windowMs?: number; clock: Clock }) {
    const windowMs = options.windowMs ?? 60_000;
    if (!Number.isInteger(options.limit) || options.limit < 1) {
      throw new RangeError(`RateLimiter limit must be a positive integer, got ${String(options.limit)}`);
    }
    if (!Number.isFinite(windowMs) || windowMs <= 0) {
      throw new RangeError(`RateLimiter windowMs must be a positive number, got ${String(windowMs)}`);
    }
    this.limit = options.limit;
    this.windowMs = windowMs;
    this.clock = options.clock;
  }

  /** Waits (clock.sleep) until a request may start, records its start, resolves. Rejects with BudgetExhaustedError (src/errors.ts) at once if the earliest slot is later than `deadline` (epoch ms); rejects with signal.reason if aborted. Concurrent callers are served FIFO. */
  acquire(endpoint: string, deadline: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    // Callers already queued take the slots before this one.
    const slot = this.slotAfter(this.queue.length);
    if (slot > deadline) return Promise.reject(this.exhausted(endpoint, slot, deadline));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        endpoint,
        deadline,
        signal,
        settled: false,
        resolve: () => {
          if (waiter.settled) return;
          waiter.settled = true;
          signal?.removeEventListener('abort', waiter.onAbort);
          resolve();
        },
        reject: (reason) => {
          if (waiter.settled) return;
          waiter.settled = true;
          signal?.removeEventListener('abort', waiter.onAbort);
          reject(reason);
        },
        onAbort: () => {
          this.remove(waiter);
          waiter.reject(signal?.reason);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.queue.push(waiter);
      void this.pump();
    });
  }

  /** How many more requests could START by `deadline - reserveMs`, given the recorded history (greedy simulation of the window); pure, records nothing. Callers still queued in `acquire` count as already started. */
  availableBy(deadline: number, reserveMs = 0): number {
    const by = deadline - reserveMs;
    const slots = this.firstSlots();
    // After the first `limit` slots the greedy schedule repeats every window: slot k+limit = slot k + windowMs.
    let count = 0;
    for (const t of slots) {
      if (t > by) continue;
      count += by === Infinity ? Infinity : Math.floor((by - t) / this.windowMs) + 1;
    }
    return Math.max(0, count - this.queue.length);
  }

  /** Earliest epoch ms at which the next request may start (after any callers already queued). */
  nextSlotAt(): number {
    return this.slotAfter(this.queue.length);
  }

  /** Starts recorded in the current window (for logs/tests). */
  inWindow(): number {
    this.prune(this.clock.now());
    return this.starts.length;
  }

  /** The start time of the (n+1)-th request from now, counting n requests that start before it. */
  private slotAfter(n: number): number {
    const slots = this.firstSlots();
    const cycle = Math.floor(n / this.limit);
    return slots[n % this.limit]! + cycle * this.windowMs;
  }

  /** The next `limit` start times a greedy client would get, in order. */
  private firstSlots(): number[] {
    const now = this.clock.now();
    this.prune(now);
    const history = this.starts;
    const slots: number[] = [];
    for (let k = 0; k < this.limit; k++) {
      // The new start k must be a full window after the start `limit` places before it.
      const back = history.length + k - this.limit;
      let t = now;
      if (back >= 0) {
        const earlier = back < history.length ? history[back]! : slots[back - history.length]!;
        t = Math.max(t, earlier + this.windowMs);
      }
      if (k > 0) t = Math.max(t, slots[k - 1]!);
      slots.push(t);
    }
    return slots;
  }

  private prune(now: number): void {
    const cutoff = now - this.windowMs;
    let drop = 0;
    while (drop < this.starts.length && this.starts[drop]! <= cutoff) drop++;
    if (drop > 0) this.starts.splice(0, drop);
  }

  private remove(waiter: Waiter): void {
    const i = this.queue.indexOf(waiter);
    if (i >= 0) this.queue.splice(i, 1);
  }

  private exhausted(endpoint: string, slot: number, deadline: number): BudgetExhaustedError {
    const seconds = Math.round(this.windowMs / 100) / 10;
    return new BudgetExhaustedError(
      endpoint,
      `Rate budget exhausted for ${endpoint}: the next request could start at ${new Date(slot).toISOString()}, ` +
        `after the deadline ${new Date(deadline).toISOString()} (budget: ${this.limit} requests per ${seconds} s); ` +
        'it will be tried on a later cycle — lengthen the polling interval or collect fewer sources if this repeats',
    );
  }

  /** Serves the queue head by head; only the head ever sleeps, so later callers keep FIFO order. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0) {
        const head = this.queue[0]!;
        if (head.settled) {
          this.remove(head);
          continue;
        }
        const slot = this.slotAfter(0);
        const now = this.clock.now();
        if (slot > head.deadline) {
          this.remove(head);
          head.reject(this.exhausted(head.endpoint, slot, head.deadline));
          continue;
        }
        if (slot <= now) {
          this.remove(head);
          this.starts.push(now);
          head.resolve();
          continue;
        }
        try {
          await this.clock.sleep(slot - now, head.signal);
        } catch (reason) {
          // Only an abort of the head's own signal ends its sleep early.
          this.remove(head);
          head.reject(reason);
        }
      }
    } finally {
      this.pumping = false;
    }
  }
}
