import type { Clock } from '../core/clock.js';
import { SinkError } from './errors.js';
import type { SinkName } from './types.js';

/** Requests a sink has in flight at once unless configured (POSTURE_PUSH_CONCURRENCY's default). */
export const DEFAULT_CONCURRENCY = 8;

/** How many items were sent, of how many, and why the others were not. */
export interface PoolOutcome<T> {
  sent: number;
  total: number;
  failures: Array<{ item: T; error: unknown }>;
}

/** What bounds a pool: how many at once, until when, and what cancels it. */
export interface PoolLimits {
  concurrency: number;
  /** Ms on `clock.monotonic()`: an item not started by then is not sent. */
  deadline: number;
  clock: Clock;
  signal?: AbortSignal;
}

/**
 * Sends every item with at most `concurrency` in flight, in order; an item whose turn comes after
 * the deadline or after `signal` aborts is not sent and counts as failed. Never rejects: each
 * failure is in the outcome, so one item failing never stops the others (as Prometheus' remote-write
 * queue keeps a bounded number of shards busy whatever one of them meets).
 */
export async function sendAll<T>(items: readonly T[], send: (item: T) => Promise<void>, limits: PoolLimits): Promise<PoolOutcome<T>> {
  const outcome: PoolOutcome<T> = { sent: 0, total: items.length, failures: [] };
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      if (limits.signal?.aborted) {
        outcome.failures.push({ item, error: new Error('not sent: the push was cancelled') });
        continue;
      }
      if (limits.clock.monotonic() >= limits.deadline) {
        outcome.failures.push({ item, error: new Error('not sent: the push deadline passed before its turn') });
        continue;
      }
      try {
        await send(item);
        outcome.sent++;
      } catch (error) {
        outcome.failures.push({ item, error });
      }
    }
  };
  const workers = Math.max(1, Math.min(Math.floor(limits.concurrency), items.length));
  await Promise.all(Array.from({ length: workers }, worker));
  return outcome;
}

/**
 * The error of a pool that did not send everything: `N of M <what> pushed`, the failure count and
 * the first reason; `pushed` and `total` say how much got through. Undefined when all were sent.
 */
export function poolError<T>(sink: SinkName, what: string, outcome: PoolOutcome<T>): SinkError | undefined {
  if (outcome.failures.length === 0) return undefined;
  const first = outcome.failures[0]!.error;
  const firstError = first instanceof SinkError ? first : undefined;
  const reason = first instanceof Error ? first.message : String(first);
  const failed = outcome.failures.length;
  return new SinkError(sink, `${outcome.sent} of ${outcome.total} ${what} pushed; ${failed} failed, first: ${reason}`, {
    status: firstError?.status,
    cause: failed === 1 ? first : new AggregateError(outcome.failures.map((f) => f.error), `${what} that failed`),
    pushed: outcome.sent,
    total: outcome.total,
  });
}
