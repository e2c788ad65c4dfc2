/**
 * A growing list of numbers in one Float64Array (8 bytes each, doubled when full): the durations a
 * fold keeps for exact quantiles, without an object or a boxed number per alert.
 */
export class Floats {
  private data: Float64Array;
  length = 0;

  constructor(capacity = 16) {
    this.data = new Float64Array(Math.max(1, capacity));
  }

  push(x: number): void {
    if (this.length === this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = x;
  }

  /** Appends every number of `other`. */
  append(other: Floats | Float64Array): void {
    const from = other instanceof Floats ? other.view() : other;
    const need = this.length + from.length;
    if (need > this.data.length) {
      const grown = new Float64Array(Math.max(need, this.data.length * 2));
      grown.set(this.view());
      this.data = grown;
    }
    this.data.set(from, this.length);
    this.length = need;
  }

  /** The numbers so far, without a copy (valid until the next push). */
  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }

  /** The numbers so far, in an array of their own size. */
  toArray(): Float64Array {
    return this.data.slice(0, this.length);
  }
}
