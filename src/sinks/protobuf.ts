/**
 * A minimal protobuf writer: just the wire types remote write needs (varint, 64-bit, length-
 * delimited), so the Lambda bundle does not carry a protobuf runtime.
 */

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;

const utf8 = new TextEncoder();

/** Appends protobuf fields to a growing buffer. */
export class ProtoWriter {
  private buf = new Uint8Array(256);
  private len = 0;

  private ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  private rawVarint(value: bigint): void {
    this.ensure(10);
    let v = value;
    while (v > 0x7fn) {
      this.buf[this.len++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.len++] = Number(v);
  }

  private tag(field: number, wire: number): void {
    this.rawVarint(BigInt((field << 3) | wire));
  }

  /** An int64/uint64/int32/enum field; negative values use the 10-byte two's complement form. */
  varint(field: number, value: number | bigint): this {
    const big = typeof value === 'bigint' ? value : BigInt(Math.trunc(value));
    this.tag(field, WIRE_VARINT);
    this.rawVarint(BigInt.asUintN(64, big));
    return this;
  }

  /** A double field (little-endian IEEE 754). */
  double(field: number, value: number): this {
    this.tag(field, WIRE_I64);
    this.ensure(8);
    new DataView(this.buf.buffer, this.buf.byteOffset + this.len, 8).setFloat64(0, value, true);
    this.len += 8;
    return this;
  }

  /** A length-delimited field holding raw bytes. */
  bytes(field: number, value: Uint8Array): this {
    this.tag(field, WIRE_LEN);
    this.rawVarint(BigInt(value.length));
    this.ensure(value.length);
    this.buf.set(value, this.len);
    this.len += value.length;
    return this;
  }

  /** A string field, UTF-8 encoded. */
  string(field: number, value: string): this {
    return this.bytes(field, utf8.encode(value));
  }

  /** An embedded message field, written by `write` into its own buffer first (its length comes first). */
  message(field: number, write: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    write(inner);
    return this.bytes(field, inner.finish());
  }

  /** The bytes written so far. */
  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}
