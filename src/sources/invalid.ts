import type { Logger } from '../core/log.js';

/** How many malformed records are logged one by one per list before only the count goes on. */
const INVALID_LOG_LIMIT = 5;

/** Counts malformed records and logs the first few (which field, never the whole record). */
export class InvalidRecords {
  count = 0;
  constructor(
    private readonly source: string,
    private readonly logger?: Logger,
  ) {}

  add(index: number, reason: string): void {
    this.count++;
    if (this.logger && this.count <= INVALID_LOG_LIMIT) {
      this.logger.warn('skipped a malformed record', { source: this.source, index, reason });
    }
  }
}
