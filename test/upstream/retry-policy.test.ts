import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  InvalidResponseError,
  ListMismatchError,
  NetworkError,
  PermissionError,
  PortalUnreachableError,
  RateLimitedError,
  TimeoutError,
  TruncatedBodyError,
  UntrustedCertificateError,
  UpstreamHttpError,
} from '../../src/errors.js';
import { rateLimitedBackoffMs, reachedNoPortal, transportRetry } from '../../src/upstream/retry-policy.js';

const http = (status: number) => new UpstreamHttpError('/alerts', status, `HTTP ${status}`);
const refused = () => new PortalUnreachableError('/alerts', 'ECONNREFUSED', 'refused', '127.0.0.1', 9, 'refused');
const timeout = (phase: TimeoutError['phase']) => new TimeoutError('/alerts', phase, `${phase} timeout`);
const untrusted = () => new UntrustedCertificateError('portal.example.com:443', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'not trusted', { endpoint: '/alerts' });
/** The top of each backoff window (random() at its upper end). */
const top = () => 1;

describe('the transport retry policy', () => {
  // Spec section 6: 502 "temporary, retry", 503 "retry later"; 504 is a gateway's temporary failure too.
  it.each([
    ['a first 500', http(500), '500'],
    ['502', http(502), '502'],
    ['503', http(503), '503'],
    ['504', http(504), '504'],
    ['a refused connection', refused(), 'ECONNREFUSED'],
    ['a body cut off early', new TruncatedBodyError('/alerts', 'cut'), 'TruncatedBodyError'],
    ['a reset connection', new NetworkError('/alerts', 'reset'), 'NetworkError'],
    ['a connect timeout', timeout('connect'), 'TimeoutError'],
    ['a headers timeout', timeout('headers'), 'TimeoutError'],
    ['a stalled body', timeout('body'), 'TimeoutError'],
  ])('sends again after %s', (_, err, reason) => {
    expect(transportRetry(top)(err, 0)).toMatchObject({ retry: true, reason });
  });

  it.each([
    ['400', http(400)],
    ['401', new AuthenticationError('/alerts', 401, 'rejected')],
    ['403', new PermissionError('/alerts', 403, 'denied')],
    ['404', http(404)],
    ['501', http(501)],
    ['a 429 (the scheduler pauses the portal for it)', new RateLimitedError('/alerts', 1000, 'slow down')],
    ['a malformed body', new InvalidResponseError('/alerts', 'not JSON')],
    ['a list that does not add up', new ListMismatchError('/alerts', 3, 2, 'short')],
    ['a request cut at its run\'s deadline', timeout('deadline')],
    ['a certificate this process does not trust (the same on every try)', untrusted()],
    ['something that is not an Error', 'boom'],
  ])('does not send again after %s', (_, err) => {
    expect(transportRetry(top)(err, 0)).toEqual({ retry: false });
  });

  it('retries a 500 once per request (the spec does not call it temporary), counting each request apart', () => {
    const first = transportRetry(top);
    expect(first(http(500), 0).retry).toBe(true);
    expect(first(http(500), 1).retry).toBe(false);
    // A 502 between them does not give the 500 another try.
    expect(first(http(502), 2).retry).toBe(true);
    expect(first(http(500), 3).retry).toBe(false);
    expect(transportRetry(top)(http(500), 0).retry).toBe(true);
  });

  it('waits a short backoff for an unreachable portal: full jitter over 0.5 s, 1 s, 2 s, at most 4 s (docs/budget.md)', () => {
    const policy = transportRetry(top);
    expect([0, 1, 2, 3, 4, 9].map((n) => waitOf(policy(refused(), n)))).toEqual([500, 1_000, 2_000, 4_000, 4_000, 4_000]);
    expect(waitOf(transportRetry(() => 0)(refused(), 3))).toBe(0);
  });

  it('waits up to 1 s, doubling to at most 30 s, after a temporary failure of an answering portal', () => {
    const policy = transportRetry(top);
    expect([0, 1, 2, 3, 4, 5, 9].map((n) => waitOf(policy(http(503), n)))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(waitOf(transportRetry(() => 0.25)(http(503), 2))).toBe(1_000);
  });

  it('pauses after a 429 without Retry-After from 10 s, doubling to the 60 s window, never less than half the window', () => {
    expect([0, 1, 2, 3, 8].map((n) => rateLimitedBackoffMs(n, top))).toEqual([10_000, 20_000, 40_000, 60_000, 60_000]);
    expect([0, 1, 2, 3, 8].map((n) => rateLimitedBackoffMs(n, () => 0))).toEqual([5_000, 10_000, 20_000, 30_000, 30_000]);
  });

  it('says a request reached no portal only when nothing was sent: no connection, or a TLS handshake refused', () => {
    expect(reachedNoPortal(refused())).toBe(true);
    expect(reachedNoPortal(timeout('connect'))).toBe(true);
    expect(reachedNoPortal(untrusted())).toBe(true);
    for (const err of [timeout('headers'), timeout('body'), timeout('deadline'), new NetworkError('/alerts', 'reset'), http(503), new RateLimitedError('/alerts', undefined, '429')]) {
      expect(reachedNoPortal(err), err.message).toBe(false);
    }
  });
});

function waitOf(decision: ReturnType<ReturnType<typeof transportRetry>>): number | undefined {
  return decision.retry ? decision.waitMs : undefined;
}
