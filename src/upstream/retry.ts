/** Moved to core/retry.ts (one retry owner); kept until src/upstream imports it from there. */
export { fullJitterBackoffMs, fullJitterBackoffMs as backoffMs, parseRetryAfter } from '../core/retry.js';
