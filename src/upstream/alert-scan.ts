import { ALERT_SCAN_WASM } from './alert-scan-wasm.js';

/**
 * The alert scanner (wasm/alert-scan.ts, WebAssembly with SIMD): reads compact alert records from
 * the received bytes, validating them as JSON.parse would, and keeps per record only what the open
 * alerts' fold reads, without making a string or an object for the rest. docs/performance.md
 * ("The alert scanner") says why and what it saves.
 */
interface Exports {
  readonly memory: { readonly buffer: ArrayBuffer };
  input(): number;
  table(): number;
  capacity(): number;
  stride(): number;
  generation(): number;
  resume(): number;
  internStart(field: number, id: number): number;
  internLength(field: number, id: number): number;
  internEscaped(field: number, id: number): number;
  scan(len: number): number;
}

/** The strings a row holds as ids, each field with ids of its own. */
export const enum Interned {
  State = 0,
  Product = 1,
  Status = 2,
}

/** A row's Int32 slots (wasm/alert-scan/layout.ts's R_* byte offsets / 4) from the row's first. */
export const enum Slot {
  Start = 0,
  End = 1,
  /** 1: read this record with JSON.parse (the scanner did not read it the plain way). */
  Slow = 2,
  State = 3,
  Product = 4,
  Status = 5,
  OwnerEmpty = 6,
  Resolved = 7,
  Acknowledged = 8,
  /** 1: acknowledgedTime is a string (its seconds at Time.Acknowledged); 0: absent or of another type. */
  AcknowledgedSet = 9,
}

/** A row's Float64 slots from the row's first: Unix seconds, NaN for the unset timestamp. */
export const enum Time {
  Created = 5,
  Until = 6,
  Acknowledged = 7,
}

/** Ids per interned field (wasm/alert-scan/layout.ts's MAX_IDS): every id is below it. */
export const MAX_IDS = 4096;

/** Int32 slots per row (and Float64 slots: half as many). */
export const ROW_INTS = 16;
export const ROW_FLOATS = 8;

/** The records of one scan: rows of `ints` and `floats`, valid until the next scan. */
export interface AlertScan {
  /** Rows read; a row starts at `k * ROW_INTS` in ints and `k * ROW_FLOATS` in floats. Start and End are offsets in `input`. */
  readonly count: number;
  /** The buffer offset after the comma that follows the last row's record. */
  readonly resume: number;
  readonly ints: Int32Array;
  readonly floats: Float64Array;
  /** The bytes scanned, from the scan's `start` (a prefix first, when one was given): a row's Start and End index them. */
  readonly input: Buffer;
  /** Changes when the ids start over: an id of an earlier generation names nothing now. */
  readonly generation: number;
  /** The text of an interned string, as JSON.parse of its record gives it. */
  text(field: Interned, id: number): string;
}

class Scanner implements AlertScan {
  count = 0;
  resume = 0;
  generation = 0;
  readonly ints: Int32Array;
  readonly floats: Float64Array;
  readonly input: Buffer;
  private readonly bytes: Buffer;
  private readonly inputAt: number;
  readonly capacity: number;

  constructor(private readonly wasm: Exports) {
    // A module whose rows are not the ones read here is not used (the parser reads without it).
    // Stryker disable next-line ConditionalExpression,StringLiteral: a guard against a module built for other rows; the committed one never is
    if (wasm.stride() !== ROW_INTS * 4) throw new Error(`alert scanner: rows of ${wasm.stride()} bytes, not ${ROW_INTS * 4}`);
    // The module's memory is static (it never grows), so these views stay valid.
    const buffer = wasm.memory.buffer;
    this.bytes = Buffer.from(buffer);
    this.inputAt = wasm.input();
    this.capacity = wasm.capacity();
    // Stryker disable next-line ArithmeticOperator: equivalent, a negative end counts from the end of the memory, past the window, so the rows' offsets index the same bytes
    this.input = this.bytes.subarray(this.inputAt, this.inputAt + this.capacity);
    const rows = wasm.table();
    this.ints = new Int32Array(buffer, rows, (this.bytes.length - rows) >> 2);
    this.floats = new Float64Array(buffer, rows, (this.bytes.length - rows) >> 3);
  }

  text(field: Interned, id: number): string {
    const start = this.wasm.internStart(field, id);
    const body = this.bytes.toString('utf8', start, start + this.wasm.internLength(field, id));
    // A body with escapes, validated by the scanner: JSON.parse gives the string the record's parse would.
    // Stryker disable next-line ConditionalExpression: equivalent, JSON.parse of a body without escapes gives the body
    return this.wasm.internEscaped(field, id) === 1 ? (JSON.parse(`"${body}"`) as string) : body;
  }

  /** Scans `prefix` then `buf[start, end)` (at most `capacity` bytes together, a record start first). */
  scan(prefix: Buffer | undefined, buf: Buffer, start: number, end: number): number {
    const before = prefix === undefined ? 0 : prefix.copy(this.bytes, this.inputAt);
    buf.copy(this.bytes, this.inputAt + before, start, end);
    this.count = this.wasm.scan(before + end - start);
    this.resume = start + this.wasm.resume() - before;
    this.generation = this.wasm.generation();
    return this.count;
  }
}

/** What this module uses of the WebAssembly API (not in the ES2022 library's types). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { readonly exports: unknown };
}

/** The scanner once made; null where WebAssembly is not available (`--jitless`). */
let scanner: Scanner | null | undefined;

function theScanner(): Scanner | null {
  if (scanner === undefined) {
    try {
      const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;
      const module = new wasm.Module(Buffer.from(ALERT_SCAN_WASM, 'base64'));
      scanner = new Scanner(new wasm.Instance(module).exports as Exports);
    } catch {
      scanner = null;
    }
  }
  return scanner;
}

/**
 * Compiles the scanner now, under the compiler settings in force: src/runtime/v8-flags.ts compiles it
 * with TurboFan before it keeps WebAssembly on Liftoff. Later calls change nothing.
 */
export function compileAlertScanner(): void {
  // Stryker disable next-line all: equivalent, the first scan compiles it anyway; this only moves the compile (and the settings it runs under) earlier
  theScanner();
}

/**
 * The alert records of `buf` from `start` (a record's `{`) within `window` bytes: those complete and
 * each followed by a comma, or undefined when there is none or the bytes are not plain JSON records
 * (the caller then reads them its own way, which reports what is wrong with them). With a `prefix`
 * (a record's first bytes, carried from the chunk before), the record starts there and goes on at
 * `start`, and the window counts the prefix. A row's Start and End index the scan's `input`;
 * `resume` is an index in `buf`. The result is valid until the next call.
 */
export function scanAlerts(buf: Buffer, start: number, window: number, prefix?: Buffer): AlertScan | undefined {
  const s = theScanner();
  if (s === null) return undefined;
  const room = Math.min(window, s.capacity) - (prefix?.length ?? 0);
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a guard; the parser's prefixes are at most half the window (json-stream.ts, MAX_CARRIED)
  if (room <= 0) return undefined;
  const end = Math.min(buf.length, start + room);
  if (s.scan(prefix, buf, start, end) === 0) return undefined;
  return s;
}
