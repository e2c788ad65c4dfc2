import { performance } from 'node:perf_hooks';
import { Agent, request as undiciRequest, type Dispatcher } from 'undici';
import { systemClock, type Clock } from '../core/clock.js';
import { redact, silentLogger, type Logger } from '../core/log.js';
import {
  AuthenticationError,
  BudgetExhaustedError,
  ConfigError,
  InvalidResponseError,
  NetworkError,
  PermissionError,
  RateLimitedError,
  TimeoutError,
  UpstreamHttpError,
} from '../errors.js';
import { EnvelopeParser, type RawEnvelope } from './json-stream.js';
import type { RateLimiter } from './limiter.js';
import { backoffMs, parseRetryAfter } from './retry.js';

/** One GET of a list endpoint: the path under the base URL and its query (undefined values are left out). */
export interface ListRequest {
  endpoint: string /* '/vitals' | '/alerts' | '/devices' | ... */;
  query: Record<string, string | number | undefined>;
}

/** Receives one attempt's records; a fresh sink is made for every attempt so a retried request never double counts. */
export interface RecordSink<T> {
  record(raw: unknown): void;
  finish(): T;
}

/** What a successful `list` returns: the envelope's paging fields, the records delivered and the sink's result. */
export interface ListResult<T> {
  total: number;
  offset: number;
  limit: number;
  received: number;
  result: T;
  attempts: number;
}

/** Settings of a PortalClient; everything that varies (clock, logger, dispatcher, jitter) is injectable. */
export interface PortalClientOptions {
  /** The portal's API root, `https://<cloud_id>.<host>/public-api/v1` (with or without a trailing slash). */
  baseUrl: string;
  apiKey: string;
  /** @default 'X-Service-ApiKey' */
  apiKeyHeader?: string;
  limiter: RateLimiter;
  /** Used for backoff sleeps, Retry-After dates and deadline checks. @default systemClock */
  clock?: Clock;
  /** @default silentLogger */
  logger?: Logger;
  /** undici Dispatcher; the connect timeout only applies to the default one. @default a module-level Agent */
  dispatcher?: Dispatcher;
  /** @default 10_000 */
  connectTimeoutMs?: number;
  /** @default 30_000 */
  headersTimeoutMs?: number;
  /** Max idle time between body chunks. @default 30_000 */
  bodyTimeoutMs?: number;
  /** Retries after the first attempt. @default 3 */
  maxRetries?: number;
  /** @default 1_000 */
  backoffBaseMs?: number;
  /** @default 30_000 */
  backoffMaxMs?: number;
  /** Jitter source. @default Math.random */
  random?: () => number;
  /** Called once per HTTP attempt with the endpoint and the status as a string, or 'error' when there was no response. */
  onResponse?: (endpoint: string, code: string) => void;
  /** @default 'posture-exporter' */
  userAgent?: string;
}

const BODY_SNIPPET_BYTES = 64 * 1024;

// One Agent per connect timeout, shared by every client of the process so sockets are reused.
const agents = new Map<number, Agent>();
function defaultAgent(connectTimeoutMs: number, headersTimeoutMs: number, bodyTimeoutMs: number): Agent {
  let agent = agents.get(connectTimeoutMs);
  if (!agent) {
    agent = new Agent({ connect: { timeout: connectTimeoutMs }, headersTimeout: headersTimeoutMs, bodyTimeout: bodyTimeoutMs });
    agents.set(connectTimeoutMs, agent);
  }
  return agent;
}

/** Failures that say nothing about the request itself and may succeed when sent again. */
const transient = new WeakSet<Error>();

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function isNonNegativeInteger(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
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
 * The budget-aware client of the portal's list endpoints. Retry policy: 429 waits `Retry-After`
 * (seconds or HTTP-date) when sent, else backoff; 502, 503 and 504 (temporary by nature), network
 * errors, timeouts and a body cut off mid-way are retried with backoff; 500 is retried once only,
 * because the spec does not call it temporary and a persistent 500 would only burn the budget;
 * other 4xx, a complete but malformed body and `success:false` are never retried. Retries stop
 * after `maxRetries`, or when the wait (or the next rate-limit slot) would end after the deadline,
 * and then the last error is thrown.
 */
export class PortalClient {
  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly apiKeyHeader: string;
  private readonly limiter: RateLimiter;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly dispatcher: Dispatcher;
  private readonly headersTimeoutMs: number;
  private readonly bodyTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly maxRetries: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly random: () => number;
  private readonly onResponse: ((endpoint: string, code: string) => void) | undefined;
  private readonly userAgent: string;

  constructor(options: PortalClientOptions) {
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
    this.limiter = options.limiter;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
    this.headersTimeoutMs = options.headersTimeoutMs ?? 30_000;
    this.bodyTimeoutMs = options.bodyTimeoutMs ?? 30_000;
    this.dispatcher = options.dispatcher ?? defaultAgent(this.connectTimeoutMs, this.headersTimeoutMs, this.bodyTimeoutMs);
    this.maxRetries = options.maxRetries ?? 3;
    this.backoffBaseMs = options.backoffBaseMs ?? 1_000;
    this.backoffMaxMs = options.backoffMaxMs ?? 30_000;
    this.random = options.random ?? Math.random;
    this.onResponse = options.onResponse;
    this.userAgent = options.userAgent ?? 'posture-exporter';
  }

  /** GET a list endpoint and stream its records into a sink. `request` may be a function of the attempt number (0-based) so a planner can change `limit`/`offset` on a retry. */
  async list<T>(
    request: ListRequest | ((attempt: number) => ListRequest),
    newSink: () => RecordSink<T>,
    options: { deadline: number; signal?: AbortSignal },
  ): Promise<ListResult<T>> {
    const { deadline, signal } = options;
    let lastError: Error | undefined;
    let serverErrorRetries = 0;
    for (let attempt = 0; ; attempt++) {
      const req = typeof request === 'function' ? request(attempt) : request;
      const endpoint = req.endpoint;
      try {
        await this.limiter.acquire(endpoint, deadline, signal);
      } catch (err) {
        if (signal?.aborted) throw this.aborted(endpoint, signal.reason);
        if (lastError && err instanceof BudgetExhaustedError) {
          // The retry no longer fits the budget before the deadline: the failure that caused it is the news.
          this.logger.warn('upstream retry abandoned: no rate-limit slot before the deadline', { endpoint, attempt });
          throw lastError;
        }
        throw err;
      }
      let error: Error;
      try {
        return { ...(await this.attempt(req, newSink, signal, attempt)), attempts: attempt + 1 };
      } catch (err) {
        if (signal?.aborted) throw this.aborted(endpoint, signal.reason);
        if (!(err instanceof Error)) throw err;
        error = err;
      }
      let waitMs: number;
      if (error instanceof RateLimitedError && error.retryAfterMs !== undefined) waitMs = error.retryAfterMs;
      else if (this.retryable(error, serverErrorRetries)) waitMs = this.backoff(attempt);
      else throw error;
      if (error instanceof UpstreamHttpError && error.status === 500) serverErrorRetries++;
      const status = error instanceof UpstreamHttpError ? error.status : error.name;
      if (attempt >= this.maxRetries) {
        this.logger.warn('upstream request failed, retries used up', { endpoint, status, attempt: attempt + 1 });
        throw error;
      }
      const now = this.clock.now();
      const resumeAt = Math.max(now + waitMs, this.limiter.nextSlotAt());
      if (resumeAt > deadline) {
        this.logger.warn('upstream request failed, no time left to retry before the deadline', {
          endpoint,
          status,
          attempt: attempt + 1,
          waitMs: Math.round(resumeAt - now),
          deadlineInMs: deadline - now,
        });
        throw error;
      }
      // `attempt` is 1-based in logs: the attempt that failed; the retry is attempt + 1.
      this.logger.warn('upstream request failed, retrying', { endpoint, status, attempt: attempt + 1, waitMs: Math.round(waitMs) });
      lastError = error;
      try {
        await this.clock.sleep(waitMs, signal);
      } catch (err) {
        throw this.aborted(endpoint, signal?.aborted ? signal.reason : err);
      }
    }
  }

  private retryable(error: Error, serverErrorRetries: number): boolean {
    if (error instanceof RateLimitedError) return true;
    if (error instanceof UpstreamHttpError) {
      if (error.status === 500) return serverErrorRetries < 1;
      return error.status === 502 || error.status === 503 || error.status === 504;
    }
    if (error instanceof NetworkError) return true;
    return transient.has(error);
  }

  private backoff(attempt: number): number {
    return backoffMs(attempt, { baseMs: this.backoffBaseMs, maxMs: this.backoffMaxMs, random: this.random });
  }

  private url(req: ListRequest): string {
    const path = '/' + req.endpoint.replace(/^\/+/, '');
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(req.query)) if (v !== undefined) params.append(k, String(v));
    const qs = params.toString();
    return this.baseUrl + path + (qs ? '?' + qs : '');
  }

  /** One HTTP attempt: send, check the status, stream the body into a fresh sink, validate the envelope. */
  private async attempt<T>(
    req: ListRequest,
    newSink: () => RecordSink<T>,
    signal: AbortSignal | undefined,
    attempt: number,
  ): Promise<Omit<ListResult<T>, 'attempts'>> {
    const endpoint = req.endpoint;
    const started = performance.now();
    let status: number | 'error' = 'error';
    let records = 0;
    try {
      let res: Dispatcher.ResponseData;
      try {
        res = await undiciRequest(this.url(req), {
          method: 'GET',
          dispatcher: this.dispatcher,
          headers: { [this.apiKeyHeader]: this.apiKey, accept: 'application/json', 'user-agent': this.userAgent },
          headersTimeout: this.headersTimeoutMs,
          bodyTimeout: this.bodyTimeoutMs,
          signal,
        });
      } catch (err) {
        this.onResponse?.(endpoint, 'error');
        throw this.transportError(endpoint, err, 'request');
      }
      status = res.statusCode;
      this.onResponse?.(endpoint, String(status));
      if (status < 200 || status >= 300) {
        const text = await readSnippet(res.body);
        throw this.httpError(endpoint, status, text, res.headers['retry-after']);
      }

      const sink = newSink();
      const parser = new EnvelopeParser(endpoint, (raw) => {
        sink.record(raw);
        records++;
      });
      const chunks = res.body[Symbol.asyncIterator]();
      try {
        for (;;) {
          let step: IteratorResult<unknown>;
          try {
            step = await chunks.next();
          } catch (err) {
            throw this.transportError(endpoint, err, 'body');
          }
          if (step.done) break;
          // Malformed JSON and the sink's own errors surface from here unchanged.
          parser.write(step.value as Uint8Array);
        }
      } finally {
        if (!res.body.destroyed) res.body.destroy();
      }
      let envelope: RawEnvelope;
      try {
        envelope = parser.end();
      } catch (err) {
        // A clean end inside the JSON means the body was cut short (a proxy or the portal gave up): send again.
        if (err instanceof Error) transient.add(err);
        throw err;
      }
      const { total, offset, limit } = this.validate(endpoint, req, envelope);
      return { total, offset, limit, received: envelope.dataCount, result: sink.finish() };
    } finally {
      this.logger.debug('upstream request', {
        endpoint,
        query: req.query,
        attempt: attempt + 1,
        status,
        durationMs: Math.round(performance.now() - started),
        records,
      });
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
      throw new InvalidResponseError(endpoint, `The response from ${endpoint} ${what}; expected a non-negative integer (spec 2.1)`);
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

  private portalMessage(text: string): string | undefined {
    try {
      const body = JSON.parse(text) as { message?: unknown };
      if (body && typeof body.message === 'string' && body.message.trim()) return this.clean(body.message.trim());
    } catch {
      // Not JSON: error pages from proxies carry nothing useful.
    }
    return undefined;
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

  /** Maps undici's failures to NetworkError / TimeoutError; `stage` tells a cut body from no response. */
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
    if (stage === 'body') {
      return new NetworkError(endpoint, `The connection to the portal was cut while reading ${endpoint} (${code ?? detail}); the partial data was discarded.`, { cause: err });
    }
    return new NetworkError(endpoint, `Could not get a response from the portal for ${endpoint} (${code ?? detail}): check POSTURE_BASE_URL and network access.`, { cause: err });
  }

  /** An abort ends everything; a timeout signal (AbortSignal.timeout) reads as the deadline passing. */
  private aborted(endpoint: string, reason: unknown): unknown {
    if ((reason as { name?: unknown } | null)?.name === 'TimeoutError' && !(reason instanceof TimeoutError)) {
      return new TimeoutError(endpoint, 'deadline', `The request to ${endpoint} was cancelled because the collection deadline passed.`, { cause: reason });
    }
    return reason;
  }
}

/** Reads at most BODY_SNIPPET_BYTES of an error body (for the portal's message), then drops the rest. */
async function readSnippet(body: Dispatcher.ResponseData['body']): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      parts.push(buf);
      size += buf.length;
      if (size >= BODY_SNIPPET_BYTES) break;
    }
  } catch {
    // The status is what matters; a broken error body is not worth reporting.
  } finally {
    if (!body.destroyed) body.destroy();
  }
  return Buffer.concat(parts).toString('utf8', 0, Math.min(size, BODY_SNIPPET_BYTES));
}
