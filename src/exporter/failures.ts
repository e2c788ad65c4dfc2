/**
 * The one log line a failed run of a source gets: which source, why (a short reason for alerting
 * on logs, the error's own message for people) and at which level. Pure, so it is tested on data.
 */
import { endpointsOf } from '../sources/index.js';
import type { LogLevel } from '../core/log.js';
import { AuthenticationError, ConfigError, InvalidResponseError, LateError, LedgerError, NetworkError, PermissionError, PortalUnreachableError, RateLimitedError, TimeoutError, UntrustedCertificateError, UpstreamHttpError } from '../errors.js';
import type { Job } from '../domain.js';

/** Why a run failed, in a word or two (the `reason` field of its log line). */
export type FailureReason =
  | 'rejected-key'
  | 'key-unavailable'
  | 'missing-permission'
  | 'wrong-path'
  | 'refused'
  | 'unresolvable'
  | 'unreachable'
  | 'untrusted-certificate'
  | 'timeout'
  | 'rate-limited'
  | 'late'
  | 'server-error'
  | 'http-error'
  | 'invalid-response'
  | 'network'
  | 'ledger'
  | 'error';

/** The reason of a failed run's error. */
function failureReason(error: Error): FailureReason {
  if (error instanceof AuthenticationError) return 'rejected-key';
  if (error instanceof PermissionError) return 'missing-permission';
  if (error instanceof RateLimitedError) return 'rate-limited';
  if (error instanceof UpstreamHttpError) return error.status === 404 ? 'wrong-path' : error.status >= 500 ? 'server-error' : 'http-error';
  if (error instanceof PortalUnreachableError) return error.kind;
  if (isLate(error)) return 'late';
  if (error instanceof TimeoutError) return 'timeout';
  if (error instanceof NetworkError) return 'network';
  if (error instanceof InvalidResponseError) return 'invalid-response';
  if (error instanceof UntrustedCertificateError) return 'untrusted-certificate';
  // The key could not be read from its file or store (the only ConfigError a run meets).
  if (error instanceof ConfigError) return 'key-unavailable';
  // The shared ledger of requests (state directory, table) could not be read: nothing was sent.
  if (error instanceof LedgerError) return 'ledger';
  return 'error';
}

/** A run cut by its deadline, or with no slot before it: the source is late, not broken. */
function isLate(error: Error): boolean {
  return error instanceof LateError || (error instanceof TimeoutError && error.phase === 'deadline');
}

/**
 * The line of a failed run: `warn` when it is late (the budget, not the portal), else `error`. A
 * run stopped because another source of the portal found the key rejected or the portal
 * unreachable says so: its error is that source's.
 */
export function failureLine(source: Job, error: Error): { level: Extract<LogLevel, 'warn' | 'error'>; msg: string; reason: FailureReason } {
  const endpoint = (error as { endpoint?: unknown }).endpoint;
  const other = typeof endpoint === 'string' && endpoint !== '' && !endpointsOf(source).some((e) => endpoint.startsWith(e));
  const stopped = other && stopsThePortal(error) ? `, stopped after the same failure on ${endpoint}` : '';
  return { level: isLate(error) ? 'warn' : 'error', msg: `collecting ${source} failed${stopped}: ${error.message}`, reason: failureReason(error) };
}

/** A failure every source of the portal would meet alike (a rejected key, an unreachable portal, an untrusted certificate): it stops the portal's other runs. */
export function stopsThePortal(error: unknown): error is Error {
  return error instanceof AuthenticationError || error instanceof PortalUnreachableError || error instanceof UntrustedCertificateError;
}
