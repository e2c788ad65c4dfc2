/**
 * Every error the exporter raises on purpose. Each sets `name`, keeps `cause`, and is told
 * apart with `instanceof`, never by its message.
 */

import { wallIso, type Clock } from './core/clock.js';

/** Base class of the exporter's errors. */
export class PostureError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A setting is missing or invalid; `setting` names it (env name or flag), `message` says the fix. */
export class ConfigError extends PostureError {
  constructor(
    readonly setting: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A server's certificate this process does not trust (the portal's, a receiver's, an AWS endpoint's
 * behind a TLS-inspecting proxy): a configuration error, not an outage, so it is never retried and
 * ends a one-shot run with exit 2. `setting` is NODE_EXTRA_CA_CERTS, the usual fix; `host` is the
 * server's `HOST:PORT`, `code` Node's (UNABLE_TO_VERIFY_LEAF_SIGNATURE, CERT_HAS_EXPIRED,
 * ERR_TLS_CERT_ALTNAME_INVALID…), and `endpoint` the portal request that met it, if one did.
 */
export class UntrustedCertificateError extends ConfigError {
  readonly endpoint: string | undefined;
  constructor(
    readonly host: string,
    readonly code: string,
    message: string,
    options?: { cause?: unknown; endpoint?: string },
  ) {
    super('NODE_EXTRA_CA_CERTS', message, options);
    this.endpoint = options?.endpoint;
  }
}

/** Several settings are invalid at once; `problems` holds one ConfigError each. */
export class ConfigErrors extends PostureError {
  constructor(readonly problems: ConfigError[]) {
    super(problems.map((p) => p.message).join('\n'));
  }
}

/** A server could not bind its address (in use, not on this machine, not permitted); `message` names the address and `--listen`. */
export class ListenError extends PostureError {
  constructor(
    /** The address as HOST:PORT (`[v6]:PORT`). */
    readonly address: string,
    /** The system's error code, e.g. `EADDRINUSE`. */
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** An error about one request to the portal; `endpoint` names it (e.g. `/alerts`). */
export class EndpointError extends PostureError {
  constructor(
    readonly endpoint: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The portal answered with a non-success HTTP status. */
export class UpstreamHttpError extends EndpointError {
  constructor(
    endpoint: string,
    readonly status: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(endpoint, message, options);
  }
}

/** 401: the API key is missing or invalid. */
export class AuthenticationError extends UpstreamHttpError {}

/** 403: the key lacks a permission. */
export class PermissionError extends UpstreamHttpError {}

/** 429: the portal's rate limit was hit; `retryAfterMs` from `Retry-After` when sent. */
export class RateLimitedError extends UpstreamHttpError {
  constructor(
    endpoint: string,
    readonly retryAfterMs: number | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(endpoint, 429, message, options);
  }
}

/** No HTTP response: DNS, connect, reset, or a timeout. */
export class NetworkError extends EndpointError {}

/** A timeout on connect, headers or body. */
export class TimeoutError extends NetworkError {
  constructor(
    endpoint: string,
    readonly phase: 'connect' | 'headers' | 'body' | 'deadline',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(endpoint, message, options);
  }
}

/**
 * No connection to the portal at all: refused, the host name does not resolve, or no route to it.
 * The request reached no portal, so it spent none of the budget; `code` is the system's (ECONNREFUSED…).
 */
export class PortalUnreachableError extends NetworkError {
  constructor(
    endpoint: string,
    readonly code: string,
    /** What the code means: nothing listening (`refused`), no such host (`unresolvable`), no route (`unreachable`). */
    readonly kind: 'refused' | 'unresolvable' | 'unreachable',
    /** Host and port the exporter tried, from POSTURE_BASE_URL. */
    readonly host: string,
    readonly port: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(endpoint, message, options);
  }
}

/** The body could not be parsed, the envelope said `success:false`, or a required field is wrong. */
export class InvalidResponseError extends EndpointError {}

/** A paged list whose records do not add up to `total` (records moved between pages, or a truncated list). */
export class ListMismatchError extends InvalidResponseError {
  constructor(
    endpoint: string,
    readonly expected: number,
    readonly received: number,
    message: string,
  ) {
    super(endpoint, message);
  }
}

/** A body that ended cleanly but early (inside the JSON): a proxy or the portal gave up; sending again may work. */
export class TruncatedBodyError extends InvalidResponseError {}

/**
 * A request could not get a slot before its deadline: its source is due again (or the run's cap
 * passed) before the budget allowed it. Reported as a late, failed run; the last values are kept.
 */
export class LateError extends EndpointError {
  /** When the request could have started, and the deadline it had (ms on `clock.monotonic()`). */
  readonly slotAt: number;
  readonly deadline: number;
  /** The message prints both as wall-clock times, read from `clock` (wallIso). */
  constructor(endpoint: string, slotAt: number, deadline: number, clock: Pick<Clock, 'now' | 'monotonic'>, share: number, windowMs: number, options?: { cause?: unknown; why?: string }) {
    const seconds = Math.round(windowMs / 100) / 10;
    super(
      endpoint,
      `${endpoint} is late: its next request could start at ${wallIso(clock, slotAt)}${options?.why ? ` (${options.why})` : ''}, after its deadline ${wallIso(clock, deadline)} ` +
        `(budget now ${share} request(s) per ${seconds} s); the previous values are kept while fresh — run \`posture-exporter check-config\` to see the plan, lengthen this source's interval or raise POSTURE_REQUESTS_PER_MINUTE`,
      options,
    );
    this.slotAt = slotAt;
    this.deadline = deadline;
  }
}

/**
 * The shared ledger of requests (the state directory or the DynamoDB table) cannot be read or
 * written: no request goes out, as a share that cannot be seen cannot be kept. `ledger` names it
 * (the folder or the table), `message` the cause and the fix.
 */
export class LedgerError extends PostureError {
  constructor(
    readonly ledger: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
