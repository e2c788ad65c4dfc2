/**
 * The shapes the simulated portal's public API and its HTTP server share: the keys it accepts,
 * the requests it logs and the faults it injects (index.ts re-exports them).
 */

/** An API key the simulated portal accepts. */
export interface SimulatorKey {
  key: string;
  /** 'full' (default): everything; 'none': 403 on every path; or a list of paths (e.g. ['/vitals']) this key may NOT read (403 there). */
  permissions?: 'full' | 'none' | { deny: string[] };
  /** Team scoping (spec 2.10, 5.6): the key sees only devices that carry one of these tags (and only alerts whose item is one of those devices' hostName, plus user/system alerts). */
  team?: { name: string; tags: string[] };
}

/** One request the portal received (never the key itself). */
export interface SimRequest {
  time: number;
  path: string;
  query: Record<string, string>;
  status: number;
  keyIndex: number | null;
}

/** A fault the portal injects into a response (after auth and the rate limit). */
export type Fault =
  | { kind: 'latency'; ms: number }                                   // delay headers by ms (real time; keep small in tests)
  | { kind: 'status'; status: number; retryAfter?: string; body?: string } // e.g. 500/502/503, or 429 with or without Retry-After
  | { kind: 'truncate'; afterBytes: number }                           // send 200 + headers, cut the body after N bytes, then end the socket
  | { kind: 'reset' }                                                  // destroy the socket without a response
  | { kind: 'malformed' }                                              // 200 with a body that is not JSON
  | { kind: 'success-false'; message?: string }                        // 200, envelope success:false, statusCode 500
  | { kind: 'bad-records'; count: number; how: 'missing' | 'mistyped' }// first `count` records of the list lose a used field / get a wrong type
  | { kind: 'total-mismatch'; delta: number }                          // envelope total off by delta from the records that match
  | { kind: 'stall'; afterBytes: number }                              // send part of the body then stop sending (for body timeouts)
  | { kind: 'endless' }                                                // 200, a valid envelope whose data streams records forever (backpressure honoured) until the client goes away
  | { kind: 'drip'; intervalMs?: number }                             // the body arrives one byte every intervalMs (default 1000, real time)
  | { kind: 'huge-string'; field: string; bytes: number };             // the list's first record gets `field` set to a string of `bytes` ASCII characters, streamed in chunks (never built whole)
