/** Device totals by activity, read from the `total` of `/devices?filter=active|inactive&limit=1`. */
export interface DevicesTotals {
  readonly active: number;
  readonly inactive: number;
}

/** A sink that ignores the records: only the envelope's `total` matters for device totals. */
export class CountOnlySink {
  private n = 0;
  record(): void {
    this.n++;
  }
  finish(): number {
    return this.n;
  }
}
