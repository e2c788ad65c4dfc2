import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { systemClock, type Clock } from '../core/clock.js';
import { parseRetryAfter } from '../core/retry.js';
import { redact, silentLogger, type Logger } from '../core/log.js';
import { AuthenticationError, ConfigError, InvalidResponseError, NetworkError, PermissionError, PortalUnreachableError, RateLimitedError, TimeoutError, TruncatedBodyError, UntrustedCertificateError, UpstreamHttpError } from '../errors.js';
import type { AlertScan } from './alert-scan.js';
import { EnvelopeParser, type RawEnvelope } from './json-stream.js';
import { HttpTransport, type Dispatch } from '../net/transport.js';
import { errorCode, untrustedCode, untrustedReason } from '../net/trust.js';
import { USER_AGENT } from '../version.js';

/** One GET of a list endpoint: the path under the base URL and its query (undefined values are left out). */
export interface ListRequest {
  endpoint: string /* '/vitals' | '/alerts' | '/devices' | ... */;
  query: Record<string, string | number | undefined>;
}

/** Receives one attempt's records; a fresh sink is made for every attempt so a retried request never double counts. */
export interface RecordSink<T> {
  record(raw: unknown): void;
  /**
   * Takes rows `[from, to)` of a scan of alert records (src/upstream/alert-scan.ts) instead of the
   * parsed records, where the sink reads only the fields the scan keeps. Sinks without it get every
   * record parsed.
   */
  scanned?(scan: AlertScan, from: number, to: number): void;
  finish(): T;
}

/** What a successful read returns: the envelope's paging fields, the records delivered and the sink's result. */
export interface ListResult<T> {
  total: number;
  offset: number;
  limit: number;
  received: number;
  result: T;
}

/** Settings of a PortalReader; what varies (clock, logger, dispatcher) is injectable. */
export interface PortalReaderOptions {
  /** The portal's API root, `https://<cloud_id>.<host>/public-api/v1` (with or without a trailing slash). */
  baseUrl: string;
  apiKey: string;
  /** @default 'X-Service-ApiKey' */
  apiKeyHeader?: string;
  /** Reads Retry-After dates against it. @default systemClock */
  clock?: Clock;
  /** @default silentLogger */
  logger?: Logger;
  /** An undici Dispatcher (or anything with its `dispatch`); the timeouts below only shape the default one. @default an HttpTransport shared by the readers with the same timeouts */
  dispatcher?: Dispatch;
  /** @default 10_000 */
  connectTimeoutMs?: number;
  /** @default 30_000 */
  headersTimeoutMs?: number;
  /** Max idle time between body chunks. @default 30_000 */
  bodyTimeoutMs?: number;
}

const BODY_SNIPPET_BYTES = 64 * 1024;

/** How one request was answered: the status, and the parser its 2xx body went through or the start of another body. */
interface Answer {
  status: number;
  retryAfter: string | string[] | undefined;
  parser: EnvelopeParser | undefined;
  snippet: string;
}

/** The status of a response whose body then failed (cut, stalled, invalid, refused by the sink), by the error thrown. */
const answeredWith = new WeakMap<object, number | 'error'>();

// One transport per timeout set, shared by every reader of the process so sockets are reused.
const transports = new Map<string, HttpTransport>();
function defaultTransport(connectMs: number, headersMs: number, bodyMs: number): HttpTransport {
  const key = `${connectMs}/${headersMs}/${bodyMs}`;
  let transport = transports.get(key);
  if (!transport) {
    transport = new HttpTransport({ connectMs, headersMs, bodyMs });
    transports.set(key, transport);
  }
  return transport;
}

/** System codes of a connection that was never made, so no request reached the portal. */
const UNREACHABLE: Record<string, PortalUnreachableError['kind']> = {
  ECONNREFUSED: 'refused',
  ENOTFOUND: 'unresolvable',
  EAI_AGAIN: 'unresolvable',
  EAI_FAIL: 'unresolvable',
  EAI_NONAME: 'unresolvable',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  EHOSTDOWN: 'unreachable',
  ENETDOWN: 'unreachable',
};

/** A count as JSON may write it (`5`, `5.0`, `5e0`), up to 2^53 - 1: past it a double is no longer the number sent. */
function isNonNegativeInteger(v: unknown): v is number {
  // (Number.isSafeInteger is false for anything that is not a number.)
  return Number.isSafeInteger(v) && (v as number) >= 0;
}

/** Why a 403 on this endpoint happens, in the portal's own permission words (spec 2.9, 5.6). */
function permissionHint(endpoint: string): string {
  if (endpoint.startsWith('/vitals')) return "give the key's role the Vitals permission (vitals) and device visibility (deviceVisibility All or Team)";
  if (endpoint.startsWith('/alerts')) return "give the key's role the needed visibility (deviceVisibility All or Team, userVisibility for user alerts)";
  if (endpoint.startsWith('/devices') || endpoint.startsWith('/inventory')) return "give the key's role the needed visibility (deviceVisibility All or Team)";
  if (endpoint.startsWith('/users')) return "give the key's role the needed visibility (userVisibility)";
  if (endpoint.startsWith('/settings')) return "give the key's role the matching settings permission (users, roles, teams)";
  return "give the key's role the needed visibility (e.g. deviceVisibility All or Team)";
}

/**
 * Reads one list request from the portal: sends it, streams the body record by record into a
 * fresh sink, and validates the envelope. Every failure is a typed error (src/errors.ts); whether
 * and when to send again is the scheduler's decision (src/schedule/), never the reader's.
 */
export class PortalReader {
  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly apiKeyHeader: string;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly dispatcher: Dispatch;
  private readonly headersTimeoutMs: number;
  private readonly bodyTimeoutMs: number;
  private readonly connectTimeoutMs: number;

  constructor(options: PortalReaderOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch (err) {
      throw new ConfigError('POSTURE_BASE_URL', `POSTURE_BASE_URL is not a URL: use https://<cloud_id>.<host>/public-api/v1`, { cause: err });
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new ConfigError('POSTURE_BASE_URL', `POSTURE_BASE_URL must start with https:// (got ${url.protocol})`);
    }
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.apiKeyHeader = options.apiKeyHeader ?? 'X-Service-ApiKey';
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.headersTimeoutMs = options.headersTimeoutMs ?? 30_000;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
    this.dispatcher = options.dispatcher ?? defaultTransport(this.connectTimeoutMs, this.headersTimeoutMs, this.bodyTimeoutMs);
  }

  /**
   * One request: send, check the status, stream the body into a fresh sink, validate the envelope.
   * `signal` aborts the request and the body read (the run's deadline).
   */
  async read<T>(req: ListRequest, newSink: () => RecordSink<T>, signal?: AbortSignal): Promise<ListResult<T>> {
    const started = performance.now();
    let status: number | 'error' = 'error';
    let records = 0;
    let sink: RecordSink<T> | undefined;
    try {
      const answer = await this.exchange(req, signal, (code) => {
        status = code;
        // (Informational 1xx answers never get here: the exchange waits for the final one.)
        if (code >= 300) return undefined;
        const into = (sink = newSink());
        return new EnvelopeParser(
          req.endpoint,
          (raw) => {
            into.record(raw);
            records++;
          },
          into.scanned
            ? (scan, from, to) => {
                into.scanned!(scan, from, to);
                records += to - from;
              }
            : undefined,
        );
      });
      if (answer.parser === undefined) throw this.httpError(req.endpoint, answer.status, answer.snippet, answer.retryAfter);
      const envelope = this.ended(req.endpoint, answer.parser);
      const { total, offset, limit } = this.validate(req.endpoint, req, envelope);
      // (The sink is made with the parser.)
      return { total, offset, limit, received: envelope.dataCount, result: sink!.finish() };
    } catch (err) {
      const thrown = signal?.aborted ? this.aborted(req.endpoint, signal.reason, err) : err;
      // (A WeakMap takes only objects; a sink may throw anything.)
      if (typeof thrown === 'object' && thrown !== null) answeredWith.set(thrown, status);
      throw thrown;
    } finally {
      this.logger.debug('upstream request', { endpoint: req.endpoint, query: req.query, status, durationMs: Math.round(performance.now() - started), records });
    }
  }

  /** The HTTP status of a failure, also when the body failed after it (`error` when there was no response), for the request counts. */
  static codeOf(err: unknown): string {
    if (err instanceof UpstreamHttpError) return String(err.status);
    // WeakMap#get of a value that is not an object is undefined, as for an error no read threw.
    return String(answeredWith.get(err as object) ?? 'error');
  }

  private url(req: ListRequest): URL {
    const path = '/' + req.endpoint.replace(/^\/+/, '');
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query)) if (v !== undefined) params.append(k, String(v));
    const qs = params.toString();
    return new URL(this.baseUrl + path + (qs ? '?' + qs : ''));
  }

  /**
   * Sends the request through the dispatcher (HttpTransport unless one was injected) and reads the
   * answer in its handler's callbacks. At the status, `onStatus` gives the parser of a body to stream
   * (a 2xx) or nothing (the first BODY_SNIPPET_BYTES are then kept, for the portal's message). Each
   * chunk is parsed in the callback that delivers it (undici's `request` would wrap the same
   * callbacks in a Readable body: a stream event and often a tick per chunk, docs/performance.md).
   * Resolves at the body's end; rejects with a typed error (src/errors.ts), the parser's or the
   * sink's own error (the connection is then cut), or the signal's reason.
   */
  private exchange(req: ListRequest, signal: AbortSignal | undefined, onStatus: (status: number) => EnvelopeParser | undefined): Promise<Answer> {
    const { endpoint } = req;
    return new Promise<Answer>((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined;
      let settled = false;
      let status = 0;
      let retryAfter: string | string[] | undefined;
      let parser: EnvelopeParser | undefined;
      const snippet: Buffer[] = [];
      let snippetBytes = 0;
      // Called again after a cut (the dispatcher then reports the abort): the promise keeps its first outcome.
      const settle = (err?: unknown): void => {
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        if (err !== undefined) reject(err);
        else resolve({ status, retryAfter, parser, snippet: Buffer.concat(snippet).toString('utf8', 0, Math.min(snippetBytes, BODY_SNIPPET_BYTES)) });
      };
      /** Ends the exchange with `err` and cuts the request (a body that drips is cut now, not at its next chunk). */
      const cut = (err: unknown): void => {
        settle(err);
        // (the controller ignores a second abort.)
        controller?.abort(err instanceof Error ? err : new Error(String(err)));
      };
      // Stryker disable next-line OptionalChaining: equivalent, it runs only for a signal
      const onAbort = (): void => cut(signal?.reason ?? new Error('aborted'));
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: (c) => {
          controller = c;
          // Aborted before the request started: it is not sent.
          if (settled) {
            // Stryker disable next-line all: equivalent, the read has already ended with the signal's reason; nothing reads this one
            c.abort(new Error('the read ended before the request was sent'));
          }
        },
        onResponseStart: (_c, statusCode, headers) => {
          // 1xx (informational) answers come before the real one.
          if (statusCode < 200) return;
          // Stryker disable next-line ConditionalExpression: equivalent, the dispatcher (HttpTransport or undici) calls nothing after an abort, and every settle before the end aborts
          if (settled) return;
          status = statusCode;
          retryAfter = headers['retry-after'];
          try {
            parser = onStatus(statusCode);
          } catch (err) {
            cut(err);
          }
        },
        onResponseData: (_c, chunk) => {
          // Stryker disable next-line ConditionalExpression: equivalent, as in onResponseStart
          if (settled) return;
          if (parser !== undefined) {
            try {
              parser.write(chunk);
            } catch (err) {
              // Malformed JSON and the sink's own errors surface unchanged.
              cut(err);
            }
            return;
          }
          snippet.push(chunk);
          snippetBytes += chunk.length;
          // Enough of an error body for the portal's message: the rest is dropped with the connection.
          if (snippetBytes >= BODY_SNIPPET_BYTES) {
            settle();
            // Stryker disable next-line OptionalChaining,StringLiteral: equivalent, the dispatcher (HttpTransport or undici) starts the request (sets controller) before any data, and nothing reads the reason of an abort after the end
            controller?.abort(new Error('the rest of an error body is not read'));
          }
        },
        onResponseEnd: () => settle(),
        onResponseError: (_c, err) => {
          if (status === 0) settle(this.transportError(endpoint, err, 'request'));
          // An error status is what matters: a broken error body is not worth reporting.
          else if (parser === undefined) settle();
          else settle(this.transportError(endpoint, err, 'body'));
        },
      };
      if (signal?.aborted) return onAbort();
      // (An AbortSignal fires once, and settle removes the listener.)
      signal?.addEventListener('abort', onAbort);
      const url = this.url(req);
      try {
        this.dispatcher.dispatch(
          {
            origin: url.origin,
            path: url.pathname + url.search,
            method: 'GET',
            headers: { [this.apiKeyHeader]: this.apiKey, accept: 'application/json', 'user-agent': USER_AGENT },
            headersTimeout: this.headersTimeoutMs,
            bodyTimeout: this.bodyTimeoutMs,
          },
          handler,
        );
      } catch (err) {
        settle(this.transportError(endpoint, err, 'request'));
      }
    });
  }

  /** The envelope of a body read to its end; a clean end inside the JSON is a TruncatedBodyError. */
  private ended(endpoint: string, parser: EnvelopeParser): RawEnvelope {
    try {
      return parser.end();
    } catch (err) {
      // The parser's errors while the body came ended the read already: at the end, it fails only for a
      // clean end inside the JSON, a body cut short (sending again may work).
      throw new TruncatedBodyError(endpoint, (err as Error).message, { cause: err });
    }
  }

  private validate(endpoint: string, req: ListRequest, env: RawEnvelope): { total: number; offset: number; limit: number } {
    if (env.success !== undefined && env.success !== true) {
      const said = typeof env.message === 'string' && env.message ? `: ${JSON.stringify(this.clean(env.message))}` : '';
      const code = env.statusCode !== undefined ? ` (statusCode ${JSON.stringify(env.statusCode)})` : '';
      throw new InvalidResponseError(endpoint, `The portal answered ${endpoint} with success:false${code}${said}; the data was not used — retry later or check the portal's status`);
    }
    if (!isNonNegativeInteger(env.total)) {
      const what = env.total === undefined ? 'has no "total"' : `has an invalid "total" (${JSON.stringify(env.total)})`;
      throw new InvalidResponseError(endpoint, `The response from ${endpoint} ${what}; expected a whole number from 0 to 2^53 - 1 (spec 2.1)`);
    }
    const asked = (name: 'offset' | 'limit'): number => {
      const n = Number(req.query[name] ?? 0);
      return Number.isFinite(n) ? n : 0;
    };
    return {
      total: env.total,
      offset: isNonNegativeInteger(env.offset) ? env.offset : asked('offset'),
      limit: isNonNegativeInteger(env.limit) ? env.limit : asked('limit'),
    };
  }

  /** Removes the key from any text that came from the portal (in case it echoes it). */
  private clean(text: string): string {
    const cleaned = redact(text, [this.apiKey]);
    return cleaned.length > 300 ? cleaned.slice(0, 300) + '…' : cleaned;
  }

  /** The portal's `message` in an error body, trimmed and cleaned ('' or undefined when there is none to quote). */
  private portalMessage(text: string): string | undefined {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON (error pages from proxies carry nothing useful): `body` stays undefined, with no message.
    }
    const message = (body as { message?: unknown } | null)?.message;
    return typeof message === 'string' ? this.clean(message.trim()) : undefined;
  }

  private httpError(endpoint: string, status: number, text: string, retryAfter: string | string[] | undefined): UpstreamHttpError {
    const said = this.portalMessage(text);
    const portalSaid = said ? ` The portal said: ${JSON.stringify(said)}.` : '';
    switch (status) {
      case 401:
        return new AuthenticationError(
          endpoint,
          401,
          `The portal rejected the API key (401) on ${endpoint}: check the key in POSTURE_API_KEY / POSTURE_API_KEY_FILE / POSTURE_API_KEY_SSM_PARAMETER / POSTURE_API_KEY_SECRET_ID and the key header (POSTURE_API_KEY_HEADER, now '${this.apiKeyHeader}'); the key must belong to this portal's Cloud ID.`,
        );
      case 403:
        return new PermissionError(
          endpoint,
          403,
          `The API key is valid but its role may not read ${endpoint} (403): ${permissionHint(endpoint)}, or disable this source.${portalSaid}`,
        );
      case 404:
        return new UpstreamHttpError(endpoint, 404, `The portal has no ${endpoint} (404): check POSTURE_BASE_URL ends with /public-api/v1 (https://<cloud_id>.<host>/public-api/v1).${portalSaid}`);
      case 400:
        return new UpstreamHttpError(
          endpoint,
          400,
          said
            ? `The portal rejected the request to ${endpoint} as invalid (400): ${JSON.stringify(said)}; check the query settings for this source.`
            : `The portal rejected the request to ${endpoint} as invalid (400); check the query settings for this source (filters, tag, archiveDate).`,
        );
      case 429: {
        const ms = parseRetryAfter(retryAfter, this.clock.now());
        const when = ms === undefined ? 'no Retry-After was sent' : `it asked to wait ${Math.ceil(ms / 1000)} s`;
        return new RateLimitedError(
          endpoint,
          ms,
          `The portal's rate limit was hit on ${endpoint} (429; ${when}): the budget (about 10 requests per minute) is shared by every client of this portal — lower the request rate or lengthen the polling interval.`,
        );
      }
      default: {
        const kind = status >= 500 ? 'a server error' : 'an unexpected status';
        const advice = status >= 500 ? 'the portal may be down or overloaded; it will be tried again on the next cycle' : 'check POSTURE_BASE_URL and the source settings';
        return new UpstreamHttpError(endpoint, status, `The portal answered ${endpoint} with ${kind} (${status}): ${advice}.${portalSaid}`);
      }
    }
  }

  /** Maps the dispatcher's failures (undici's codes, the system's) to NetworkError / TimeoutError; `stage` tells a cut body from no response. */
  private transportError(endpoint: string, err: unknown, stage: 'request' | 'body'): Error {
    const code = errorCode(err);
    const detail = err instanceof Error ? err.message : String(err);
    if (code === 'UND_ERR_CONNECT_TIMEOUT') {
      return new TimeoutError(endpoint, 'connect', `Connecting to the portal for ${endpoint} timed out after ${this.connectTimeoutMs} ms: check POSTURE_BASE_URL and that the host is reachable.`, { cause: err });
    }
    if (code === 'UND_ERR_HEADERS_TIMEOUT') {
      return new TimeoutError(endpoint, 'headers', `The portal did not answer ${endpoint} within ${this.headersTimeoutMs} ms (headers timeout); it may be overloaded.`, { cause: err });
    }
    if (code === 'UND_ERR_BODY_TIMEOUT') {
      return new TimeoutError(endpoint, 'body', `The portal stopped sending the ${endpoint} response for ${this.bodyTimeoutMs} ms (body timeout); the partial data was discarded.`, { cause: err });
    }
    // A certificate this process does not trust: the same on every try, so a configuration error.
    const untrusted = untrustedCode(err);
    if (untrusted !== undefined) {
      const at = this.hostAndPort();
      return new UntrustedCertificateError(at, untrusted, `The TLS connection to the portal at ${at} (${endpoint}) failed: ${untrustedReason(untrusted)}. Nothing was sent to the portal, and nothing more is tried.`, { cause: err, endpoint });
    }
    if (code === 'ERR_PROXY_CONNECT') {
      return new NetworkError(endpoint, `Could not reach the portal for ${endpoint}: ${detail}; check HTTPS_PROXY / HTTP_PROXY and the proxy's rules for this host, or name the host in NO_PROXY to go direct.`, { cause: err });
    }
    // (String(undefined) is 'undefined', no key of UNREACHABLE.)
    const unreachable = stage === 'request' ? UNREACHABLE[String(code)] : undefined;
    if (unreachable !== undefined) return this.unreachableError(endpoint, code!, unreachable, err);
    if (stage === 'body') {
      return new NetworkError(endpoint, `The connection to the portal was cut while reading ${endpoint} (${code ?? detail}); the partial data was discarded.`, { cause: err });
    }
    return new NetworkError(endpoint, `Could not get a response from the portal for ${endpoint} (${code ?? detail}): check POSTURE_BASE_URL and network access.`, { cause: err });
  }

  /** The portal's `HOST:PORT` (the port its scheme implies when the base URL names none). */
  private hostAndPort(): string {
    const url = new URL(this.baseUrl);
    return `${url.hostname}:${url.port !== '' ? url.port : url.protocol === 'https:' ? 443 : 80}`;
  }

  /** No connection to the portal: says which host and port, and what to check. */
  private unreachableError(endpoint: string, code: string, kind: PortalUnreachableError['kind'], cause: unknown): PortalUnreachableError {
    const url = new URL(this.baseUrl);
    const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    const at = this.hostAndPort();
    const message =
      kind === 'refused'
        ? `connection refused by ${at} (${endpoint}): nothing accepts connections there — check the host and port in POSTURE_BASE_URL and that the portal, or the proxy in front of it, is up and reachable from this network.`
        : kind === 'unresolvable'
          ? `cannot resolve ${url.hostname} (${code}, ${endpoint}): check the host name in POSTURE_BASE_URL (https://<cloud_id>.<host>/public-api/v1) and this network's DNS.`
          : `cannot reach ${at} (${code}, ${endpoint}): no route to the portal — check POSTURE_BASE_URL and this network (routes, firewall, proxy).`;
    return new PortalUnreachableError(endpoint, code, kind, url.hostname, port, message, { cause });
  }

  /** An abort ends the request; a deadline (a TimeoutError-named reason) reads as the run's deadline passing. */
  private aborted(endpoint: string, reason: unknown, err: unknown): unknown {
    if ((reason as { name?: unknown } | null)?.name === 'TimeoutError' && !(reason instanceof TimeoutError)) {
      return new TimeoutError(endpoint, 'deadline', `${endpoint} is late: its request was cut at the run's deadline before the answer was read; the previous values are kept while fresh.`, { cause: err });
    }
    return reason ?? err;
  }
}
