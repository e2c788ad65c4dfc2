/**
 * DynamoDB's clock as one process reads it, so that every writer of the ledger table measures its
 * windows on the same clock whatever its host's wall clock says (a host 10 s fast, or under
 * libfaketime). Each answer carries a Date header: DynamoDB's time, in whole seconds, read at some
 * moment between the request's send and its answer. So the offset between DynamoDB's clock and
 * this process's monotonic clock lies between (date − received) and (date + 1 s − sent); every
 * answer narrows the two bounds, and the clock reads the lower one: at most 1 s and a round trip
 * behind DynamoDB, and never ahead of it. Answers whose bounds cannot hold together (DynamoDB's
 * clock stepped) start the bounds again. Pure: times in, times out.
 */

/** The Date header's resolution. */
const SECOND_MS = 1_000;

export class ServerClock {
  /** Bounds of DynamoDB's time less this process's monotonic time (ms). */
  private low = -Infinity;
  private high = Infinity;

  /** One answer: its Date header, and when (monotonic ms) its request was sent and its answer received. */
  observe(date: string | undefined, sentMono: number, receivedMono: number): void {
    const at = Date.parse(date ?? '');
    if (!Number.isFinite(at)) return;
    const low = at - receivedMono;
    const high = at + SECOND_MS - sentMono;
    if (Math.max(low, this.low) > Math.min(high, this.high)) {
      this.low = low;
      this.high = high;
      return;
    }
    this.low = Math.max(this.low, low);
    this.high = Math.min(this.high, high);
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
