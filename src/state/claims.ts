/**
 * The one claim protocol of the ledger, for both kinds of record (a portal's requests, a portal
 * entry's resolved-alerts passes) over both stores (the state directory, src/state/files.ts; a
 * DynamoDB table, src/state/table.ts). A store keeps chains: per key, records numbered 1, 2, 3…,
 * each claimed by one atomic step only one writer can win (link(2) of a file, a conditional write).
 *
 * A claim reads every record of the chain, released or not (no cut-off by count: the store prunes
 * what no longer counts instead), decides against the share, and claims the next number. A writer
 * that loses reads again, so every record n was decided by a writer that had read records 1…n − 1,
 * and no window ever holds more than the share, however many processes wait on it. A writer killed
 * anywhere leaves at most a record counted that it never used.
 *
 * A request counts from its claim until a window and the margin after the moment it could last
 * have reached the portal: when its response began, or when it failed (its writer records that,
 * `arrived`). Until then it is in flight and occupies the window, at most until its claim and the
 * flight it declared (the reader's timeouts). A pass counts from its claim for its interval (less
 * the early margin, src/schedule/passes.ts). A record given back (`released`) does not count.
 *
 * Each store places the records' times on the reader's clock: the state directory on this host's
 * monotonic clock where it can trust it (src/state/host-clock.ts), the table on DynamoDB's clock.
 */
import type { ClaimResult, SendLedger } from '../schedule/ledger.js';
import { dueAfterMs, NOT_DUE, type PassClaim, type PassLedger } from '../schedule/passes.js';
import { WINDOW_MS } from '../schedule/scheduler.js';
import { WINDOW_MARGIN_MS } from '../schedule/window.js';

/** How long a request counts after it could last have reached the portal: the window and its margin. */
export const REQUEST_SPAN_MS = WINDOW_MS + WINDOW_MARGIN_MS;
/** A chain whose every record stopped counting this long ago is idle: a sweep (or TTL) removes it. */
export const IDLE_MS = 3_600_000;
/** The longest flight a request may declare: the reader's longest timeouts (300 s to connect, 600 s for the headers) and 5 s more. */
export const MAX_FLIGHT_MS = 905_000;
/** The flight of a request whose record says none (an earlier version's): the reader's default timeouts and 5 s more. */
export const DEFAULT_FLIGHT_MS = 45_000;
/** The interval of a pass whose record says none (an earlier version's): the longest there is, so it is never dropped early. */
const LEGACY_PASS_INTERVAL_MS = 86_400_000;
/** A temporary file older than this was left by a process killed between writing and linking it. */
export const STALE_TEMP_MS = 10 * 60_000;
/** Claims lost in a row to other writers before this one lets them go first. */
const MAX_RACES = 20;
/** The wait after MAX_RACES lost claims: the others go first. */
export const BACK_OFF_MS = 250;
/** How soon a claimer looks again while a request in flight counts: it may be given back, or arrive, at any moment. */
const IN_FLIGHT_LOOK_MS = 1_000;

/** One record of a chain, its times placed on the reader's clock (ms). */
export interface Rec {
  readonly n: number;
  readonly writer: string;
  readonly released: boolean;
  /** When it was claimed. */
  readonly claimed: number;
  /** When the request could last have reached the portal, once its writer said so; a pass: its claim. */
  readonly arrived: number | undefined;
  /** How long after its claim a request in flight could reach the portal at the latest (a pass: 0). */
  readonly flightMs: number;
  /** How long it counts, by its own kind and interval, after it arrived: for pruning and sweeping. */
  readonly keepMs: number;
}

/** How long a pass of `intervalMs` (undefined: an earlier version's record) counts after its claim: until the next is due. */
export function passKeepMs(intervalMs: number | undefined): number {
  return dueAfterMs(intervalMs ?? LEGACY_PASS_INTERVAL_MS);
}

/** When a record could last have reached the portal: its arrival once known, else its claim and its flight. */
export function latestArrival(r: Rec): number {
  return r.arrived ?? r.claimed + r.flightMs;
}

/** Whether a request is in flight at `now`: its writer has said neither that it arrived nor that it reached no portal, and its flight lasts. */
function inFlight(r: Rec, now: number): boolean {
  return r.arrived === undefined && !r.released && r.claimed + r.flightMs > now;
}

/** Whether a record counts at `now` for a claim whose records count `spanMs` after they arrived. */
export function counts(r: Rec, spanMs: number, now: number): boolean {
  return !r.released && latestArrival(r) + spanMs > now;
}

/** The lowest number among the records that count at `now` (`spanMs` after they arrived): a claimer reads back no further next time; undefined when none counts. */
export function lowestCounting(records: readonly Rec[], spanMs: number, now: number): number | undefined {
  const ns = records.filter((r) => counts(r, spanMs, now)).map((r) => r.n);
  return ns.length ? Math.min(...ns) : undefined;
}

/** What a look decides: how long until one more may be claimed (0: now), and the other writers' records, as the scheduler reads them. */
export interface Decision {
  readonly waitMs: number;
  readonly others: number[];
}

/**
 * The decision at `now` with at most `share` records counting `spanMs` after they arrived: the
 * wait until the one `share` places back stops counting, or, while a request in flight counts,
 * IN_FLIGHT_LOOK_MS at most (its writer may give it back, or say it arrived, at any moment); and
 * each other writer's counting record that has arrived (or whose flight has passed) as an age for
 * the scheduler's window (REQUEST_SPAN_MS), so that window counts it as long as `spanMs` does.
 */
export function decide(records: readonly Rec[], share: number, spanMs: number, now: number, writer: string): Decision {
  const counting = records.filter((r) => counts(r, spanMs, now));
  const ends = counting.map((r) => latestArrival(r) + spanMs).sort((a, b) => a - b);
  let waitMs = counting.length < share ? 0 : ends[counting.length - share]! - now;
  // (A wait of 0 stays 0.)
  if (counting.some((r) => inFlight(r, now))) waitMs = Math.min(waitMs, IN_FLIGHT_LOOK_MS);
  const others = counting.filter((r) => r.writer !== writer && !inFlight(r, now)).map((r) => now + REQUEST_SPAN_MS - (latestArrival(r) + spanMs));
  return { waitMs, others };
}

/**
 * Whether `r` may be removed at `now` by a claimer whose newest record is `newest`: a window past
 * the end of its own span, released or not (a reader whose clock places it later still counts it
 * meanwhile, and no claim decided within a window can take its number again); never the newest,
 * which carries the chain's numbering.
 */
export function prunable(r: Rec, newest: number, now: number): boolean {
  return r.n !== newest && latestArrival(r) + r.keepMs + REQUEST_SPAN_MS < now;
}

/** Whether a chain's records all stopped counting an hour ago (IDLE_MS): the chain may be removed. */
export function idle(records: readonly Rec[], now: number): boolean {
  return records.every((r) => latestArrival(r) + r.keepMs + IDLE_MS < now);
}

/** What a look at a chain found. */
export interface Look {
  /** Every record of the chain (released or not). */
  readonly records: readonly Rec[];
  /** The newest number in the chain (0: none), also when its record is not one. */
  readonly newest: number;
  /** Now, on the clock the records are placed on. */
  readonly now: number;
  /** When above 0, the chain cannot be decided on now (another process closes it; the read was cut short): look again after this long. */
  readonly busyMs: number;
}

/** What a claim records besides its writer and its times, which the store adds. */
export interface Claimed {
  /** How long the request may stay in flight before its response begins (a pass: 0). */
  readonly flightMs: number;
  /** A pass's interval (ms). */
  readonly intervalMs?: number;
}

/** How a claim changes later: given back (it reached no portal; the pass failed), or arrived now. */
export type Mark = 'released' | 'arrived';

/** One chain of a store, as one writer uses it. */
export interface Chain {
  /** The writer: its process and a random part, so every ledger a process opens is a writer of its own. */
  readonly writer: string;
  /** Reads every record. Throws LedgerError when the chain cannot be read. */
  look(): Promise<Look>;
  /**
   * Claims number `n`, decided on `look`: `won`; `lost`, another writer claimed it first; or
   * `void`, the chain changed under the look in a way that voids the claim (it is withdrawn). Either
   * of the last two: look again. Throws LedgerError when the record cannot be written.
   */
  put(look: Look, n: number, what: Claimed): Promise<'won' | 'lost' | 'void'>;
  /** Marks this writer's record `n`. Never throws: a record that stays as it was is the careful side. */
  mark(n: number, how: Mark): Promise<void>;
  /** Removes what no longer counts, after a claim of `n` decided on `look`. Never throws. */
  prune(look: Look, n: number): Promise<void>;
}

/** A claim's outcome: granted with its number, or the wait. */
type Outcome = ({ readonly granted: true; readonly n: number } | { readonly granted: false; readonly waitMs: number }) & { readonly others: number[] };

/** Claims the next number of `chain` when fewer than `share` records count (`spanMs` after they arrived). */
async function claimOn(chain: Chain, share: number, spanMs: number, what: Claimed): Promise<Outcome> {
  for (let race = 0; race < MAX_RACES; race++) {
    const look = await chain.look();
    const decision = decide(look.records, share, spanMs, look.now, chain.writer);
    if (look.busyMs > 0) return { granted: false, waitMs: look.busyMs, others: decision.others };
    if (decision.waitMs > 0) return { granted: false, waitMs: decision.waitMs, others: decision.others };
    const n = look.newest + 1;
    if ((await chain.put(look, n, what)) !== 'won') continue;
    await chain.prune(look, n);
    return { granted: true, n, others: decision.others };
  }
  // Every try lost to another writer: let them go first.
  const look = await chain.look();
  return { granted: false, waitMs: BACK_OFF_MS, others: decide(look.records, share, spanMs, look.now, chain.writer).others };
}

/** The ledger of one portal's requests over its chain (the scheduler's SendLedger port); `spanMs` is how long a request counts after it arrived. */
export function sendLedger(chain: Chain, where: string, spanMs = REQUEST_SPAN_MS): SendLedger {
  return {
    where,
    async others() {
      const look = await chain.look();
      return decide(look.records, Infinity, spanMs, look.now, chain.writer).others;
    },
    async claim(share, flightMs = DEFAULT_FLIGHT_MS): Promise<ClaimResult> {
      const out = await claimOn(chain, share, spanMs, { flightMs: Math.min(Math.max(0, flightMs), MAX_FLIGHT_MS) });
      if (!out.granted) return out;
      return { granted: true, waitMs: 0, others: out.others, release: () => chain.mark(out.n, 'released'), arrived: () => chain.mark(out.n, 'arrived') };
    },
  };
}

/** Claims the pass of an entry on its chain (the PassLedger port's decision): due when no pass counts, its interval less the early margin. */
export async function claimPass(chain: Chain, intervalMs: number): Promise<PassClaim> {
  const out = await claimOn(chain, 1, dueAfterMs(intervalMs), { flightMs: 0, intervalMs });
  // Not due, or others claimed it each time this process looked: it is theirs.
  if (!out.granted) return NOT_DUE;
  return { due: true, release: () => chain.mark(out.n, 'released') };
}

/** The PassLedger over each entry's chain (`chainOf` gives the chain of a portal's entry). */
export function passLedger(chainOf: (identity: string, entry: string) => Chain): PassLedger {
  return { claim: (identity, entry, intervalMs) => claimPass(chainOf(identity, entry), intervalMs) };
}
