/**
 * A shared ledger in memory with the claim protocol's semantics (src/state/claims.ts): every
 * writer's requests on one clock, one claim decided at a time, a request counting a window and the
 * margin after it could last have reached the portal (in flight until its writer says it arrived).
 * For the scheduler's tests on the fake clock; the state directory and the table are tested
 * themselves, with real processes.
 */
import type { Clock } from '../../src/core/clock.js';
import { nextStart, type ClaimResult, type SendLedger } from '../../src/schedule/ledger.js';

const WINDOW = 60_000;
const MARGIN = 1_000;

interface Entry {
  /** When it was claimed. */
  at: number;
  /** When it could last have reached the portal: undefined while in flight. */
  arrived?: number;
  writer: string;
  released: boolean;
}

export class MemoryLedger {
  readonly entries: Entry[] = [];
  /** Claims asked, granted or not. */
  claims = 0;
  /** Reads of the others' requests (`others()`). */
  reads = 0;

  constructor(private readonly clock: Pick<Clock, 'monotonic'>) {}

  /** A request another process recorded, which arrived at `at` (monotonic ms of the test's clock). */
  add(at: number, writer = 'another process'): void {
    this.entries.push({ at, arrived: at, writer, released: false });
  }

  /** When the requests that count (not released) were claimed, by `writer` or everyone. */
  starts(writer?: string): number[] {
    return this.entries.filter((e) => !e.released && (writer === undefined || e.writer === writer)).map((e) => e.at);
  }

  /** A writer of its own (one process's scheduler). */
  writer(name = 'this process'): SendLedger {
    // In flight: counts as arriving now.
    const arrivals = (now: number, who?: string) => this.entries.filter((e) => !e.released && (who === undefined || e.writer !== who)).map((e) => e.arrived ?? now);
    const agesOfOthers = (now: number) => arrivals(now, name).filter((t) => t > now - WINDOW - MARGIN).map((t) => now - t);
    return {
      where: 'the memory ledger',
      others: () => {
        this.reads++;
        return Promise.resolve(agesOfOthers(this.clock.monotonic()));
      },
      claim: (share: number): Promise<ClaimResult> => {
        this.claims++;
        const now = this.clock.monotonic();
        const next = nextStart(arrivals(now), share, now, WINDOW, MARGIN);
        if (next > now) return Promise.resolve({ granted: false, waitMs: next - now, others: agesOfOthers(now) });
        const entry: Entry = { at: now, writer: name, released: false };
        this.entries.push(entry);
        return Promise.resolve({
          granted: true,
          waitMs: 0,
          others: agesOfOthers(now),
          release: () => Promise.resolve(void (entry.released = true)),
          arrived: () => Promise.resolve(void (entry.arrived ??= this.clock.monotonic())),
        });
      },
    };
  }
}
