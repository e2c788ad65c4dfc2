/**
 * DynamoDB's clock as one process reads it, so that every writer of the ledger table measures its
 * windows on the same clock whatever its host's wall clock says (a host 10 s fast, or under
 * libfaketime). Each answer carries a Date header: DynamoDB's time, in whole seconds, read at some
 * moment between the request's send and its answer. So the offset between DynamoDB's clock and
 * this process's monotonic clock lies between (date − received) and (date + 1 s − sent); the clock
 * reads the highest lower bound the answers prove: at most 1 s and a round trip behind DynamoDB,
 * and never ahead of it. An answer whose upper bound lies below that (DynamoDB's clock stepped
 * back) starts again from that answer alone. (An answer whose lower bound lies above every upper
 * bound so far, a step forward, moves the clock to its lower bound as any answer does: the upper
 * bounds need not be kept.) Pure: times in, times out.
 */

/** The Date header's resolution. */
const SECOND_MS = 1_000;

export class ServerClock {
  /** The highest lower bound of DynamoDB's time less this process's monotonic time (ms). */
  private low = -Infinity;

  /** One answer: its Date header, and when (monotonic ms) its request was sent and its answer received. */
  observe(date: string | undefined, sentMono: number, receivedMono: number): void {
    // Stryker disable next-line StringLiteral: equivalent, any text that is no date parses to NaN as '' does
    const at = Date.parse(date ?? '');
    if (!Number.isFinite(at)) return;
    const low = at - receivedMono;
    const high = at + SECOND_MS - sentMono;
    this.low = high < this.low ? low : Math.max(this.low, low);
  }

  /** Whether an answer has been read: `now` is known. */
  get known(): boolean {
    return this.low > -Infinity;
  }

  /** DynamoDB's time (epoch ms) at the monotonic time `mono`, as late as the answers prove it is. */
  now(mono: number): number {
    return mono + this.low;
  }
}
