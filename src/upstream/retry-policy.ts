/**
 * The portal's transport policy: which failed requests are worth sending again (what the spec
 * calls temporary), after what backoff, and whether a failed request reached the portal at all.
 * It reads only the errors the reader raises; the scheduler (src/schedule/request.ts) asks it and
 * keeps the budget to itself: the slots, the pause after a 429, the deadline and the retries left.
 */
import { equalJitterBackoffMs, fullJitterBackoffMs, type RetryDecision } from '../core/retry.js';
import { NetworkError, PortalUnreachableError, TimeoutError, TruncatedBodyError, UntrustedCertificateError, UpstreamHttpError } from '../errors.js';

/** A temporary failure of an answering portal: full jitter from up to 1 s, doubling, up to 30 s. */
const BACKOFF = { baseMs: 1_000, maxMs: 30_000 };
/**
 * A 429 without Retry-After: the spec asks for exponential backoff, and the portal counts 60 s
 * windows, so the pause starts at 10 s and doubles up to the window, with equal jitter (never
 * less than half) so it never comes back at once into a window that is still full.
 */
const RATE_LIMITED_BACKOFF = { baseMs: 10_000, maxMs: 60_000 };
/** A portal that could not be reached: a few quick tries (it may be restarting), no long waits. */
const UNREACHABLE_BACKOFF = { baseMs: 500, maxMs: 4_000 };

/**
 * The retry policy of one request, its attempts together: for the error of attempt `n` (0-based),
 * whether to send it again and after what backoff. 502, 503 and 504 (temporary, spec 6), a 500 once
 * per request (the spec does not call it temporary, so a persistent one does not burn the budget),
 * an unreachable portal, a cut or stalled body and a reset connection are retried; any other answer,
 * a certificate this process does not trust (UntrustedCertificateError, the same on every try), a
 * request cut at its run's deadline and a 429 are not (a 429 is the scheduler's: it pauses the portal).
 */
export function transportRetry(random: () => number): (err: unknown, n: number) => RetryDecision {
  let serverErrors = 0;
  return (err, n) => {
    if (err instanceof UpstreamHttpError) {
      if (err.status === 500 && serverErrors++ < 1) return { retry: true, waitMs: backoffMs(n, random), reason: '500' };
      if (err.status === 502 || err.status === 503 || err.status === 504) return { retry: true, waitMs: backoffMs(n, random), reason: String(err.status) };
      return { retry: false };
    }
    if (err instanceof PortalUnreachableError) return { retry: true, waitMs: fullJitterBackoffMs(n, { ...UNREACHABLE_BACKOFF, random }), reason: err.code };
    if (err instanceof TruncatedBodyError || (err instanceof NetworkError && !(err instanceof TimeoutError && err.phase === 'deadline'))) {
      return { retry: true, waitMs: backoffMs(n, random), reason: err.name };
    }
    return { retry: false };
  };
}

function backoffMs(attempt: number, random: () => number): number {
  return fullJitterBackoffMs(attempt, { ...BACKOFF, random });
}

/** How long the portal pauses after the 429 of attempt `n` (0-based) that came without Retry-After. */
export function rateLimitedBackoffMs(n: number, random: () => number): number {
  return equalJitterBackoffMs(n, { ...RATE_LIMITED_BACKOFF, random });
}

/** A failure before any request was sent (refused, unresolvable, connect timeout, an untrusted certificate): the portal saw no request. */
export function reachedNoPortal(err: unknown): boolean {
  return err instanceof PortalUnreachableError || err instanceof UntrustedCertificateError || (err instanceof TimeoutError && err.phase === 'connect');
}
