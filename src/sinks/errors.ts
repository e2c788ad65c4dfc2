import { PostureError } from '../errors.js';
import type { SinkName } from './types.js';

/**
 * A push to one sink failed. `sink` names it; `status` is the receiver's HTTP status when it
 * answered. Messages never carry credentials, tokens or signatures.
 */
export class SinkError extends PostureError {
  readonly sink: SinkName;
  readonly status: number | undefined;
  constructor(sink: SinkName, message: string, options?: { status?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.sink = sink;
    this.status = options?.status;
  }
}
