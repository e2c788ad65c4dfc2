import { PostureError } from '../errors.js';
import type { SinkName } from './types.js';

/**
 * A push to one sink failed. `sink` names it; `status` is the receiver's HTTP status when it
 * answered; `pushed` of `total` say how much of the push got through when only part of it failed
 * (absent when nothing was sent in parts). Messages never carry credentials, tokens or signatures.
 */
export class SinkError extends PostureError {
  readonly sink: SinkName;
  readonly status: number | undefined;
  readonly pushed: number | undefined;
  readonly total: number | undefined;
  constructor(sink: SinkName, message: string, options?: { status?: number; cause?: unknown; pushed?: number; total?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.sink = sink;
    this.status = options?.status;
    this.pushed = options?.pushed;
    this.total = options?.total;
  }
}
