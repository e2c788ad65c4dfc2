/**
 * The reader's default HTTP client: Node's own `http` and `https` behind undici's `dispatch` (the
 * handler callbacks PortalReader reads an answer through), with keep-alive connections and the
 * reader's three timeouts. Node parses HTTP natively and hands the body over with less work per
 * chunk than undici's Agent (llhttp compiled to WebAssembly), and a run that pushes nothing never
 * loads undici: `once` at 100,000 open alerts spends about 50 ms less CPU (docs/performance.md,
 * "Receiving"). An injected undici Dispatcher (tests, a proxy) is read the same way.
 */
import type { Agent as HttpAgent, ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Dispatcher } from 'undici';

/** What PortalReader needs of a dispatcher: undici's `dispatch` with its handler callbacks. */
export type Dispatch = Pick<Dispatcher, 'dispatch'>;

/** The transport's timeouts, in ms. */
export interface TransportTimeouts {
  /** Making a connection, the TLS handshake included. */
  connectMs: number;
  /** From the connection (new or kept) to the status and headers of the answer, unless the request sets its own (`headersTimeout`). */
  headersMs: number;
  /** The longest pause between two chunks of the body, unless the request sets its own (`bodyTimeout`). */
  bodyMs: number;
  /** How long a kept connection may stay unused before it is closed (undici's default, 4 s). */
  idleMs?: number;
}

/** An error with the code undici gives the same failure, which PortalReader maps to its typed errors. */
function coded(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** undici's DispatchController for one request: `abort` cuts it, and the handler hears onResponseError once. */
class Controller implements Dispatcher.DispatchController {
  aborted = false;
  // The reader never pauses: each chunk is parsed in the callback that delivers it.
  readonly paused = false;
  reason: Error | null = null;
  constructor(private readonly onAbort: (reason: Error) => void) {}
  abort(reason: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.onAbort(reason);
  }
  pause(): void {}
  resume(): void {}
}

/**
 * Node's `http` and `https` (each loaded with its scheme's first request), one keep-alive Agent
 * each, answering through undici's handler callbacks: onRequestStart, then onResponseStart (the
 * final answer: Node keeps 1xx ones apart), onResponseData per chunk and onResponseEnd; or
 * onResponseError once, with nothing after it. Failures carry the codes undici gives them
 * (UND_ERR_CONNECT_TIMEOUT, UND_ERR_HEADERS_TIMEOUT, UND_ERR_BODY_TIMEOUT) or the system's
 * (ECONNREFUSED, ENOTFOUND, ECONNRESET for a connection cut, a certificate's).
 */
export class HttpTransport implements Dispatch {
  private readonly clients = new Map<string, { request: typeof import('node:http').request; agent: HttpAgent }>();

  constructor(private readonly timeouts: TransportTimeouts) {}

  /** The `request` and keep-alive Agent of a scheme, `http:` or `https:`, made with its first request. */
  private client(protocol: string): { request: typeof import('node:http').request; agent: HttpAgent } {
    let client = this.clients.get(protocol);
    if (!client) {
      const mod = protocol === 'https:' ? process.getBuiltinModule('node:https') : process.getBuiltinModule('node:http');
      // `timeout` closes a kept connection left unused that long (Node's Agent destroys only free sockets on it).
      client = { request: mod.request as typeof import('node:http').request, agent: new mod.Agent({ keepAlive: true, timeout: this.timeouts.idleMs ?? 4_000 }) };
      this.clients.set(protocol, client);
    }
    return client;
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const url = new URL(options.path, options.origin);
    const { request, agent } = this.client(url.protocol);
    let ended = false;
    // Set once the request is made (after onRequestStart, which may abort it first).
    const sent: { req?: ClientRequest } = {};
    let timer: NodeJS.Timeout | undefined;
    /** The handler's last word: `err`, once; the connection is dropped. */
    const fail = (err: Error): void => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      sent.req?.destroy();
      handler.onResponseError?.(controller, err);
    };
    const controller = new Controller(fail);
    /** The one timer running: `err` fails the request after `ms` (refreshed by each chunk of the body). */
    const arm = (ms: number, code: string, message: string): void => {
      clearTimeout(timer);
      timer = setTimeout(() => fail(coded(code, message)), ms);
    };
    handler.onRequestStart?.(controller, {});
    // Aborted before the request started: nothing is sent.
    if (ended) return true;
    // (Node takes an IPv6 literal's brackets off the URL's host itself.)
    const req = (sent.req = request(url, { agent, method: options.method, headers: options.headers as Record<string, string> }));
    req.on('error', fail);
    // A request's own timeouts, as undici reads them, else the transport's.
    const headersMs = options.headersTimeout ?? this.timeouts.headersMs;
    const bodyMs = options.bodyTimeout ?? this.timeouts.bodyMs;
    req.on('socket', (socket: Socket) => {
      const waitForHeaders = () => arm(headersMs, 'UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error');
      if (req.reusedSocket) return waitForHeaders();
      arm(this.timeouts.connectMs, 'UND_ERR_CONNECT_TIMEOUT', 'Connect Timeout Error');
      // (Over https, the handshake's end: test/upstream/https.e2e.test.ts, outside the unit tier.)
      socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', waitForHeaders);
    });
    req.on('response', (res: IncomingMessage) => {
      arm(bodyMs, 'UND_ERR_BODY_TIMEOUT', 'Body Timeout Error');
      // Stryker disable next-line StringLiteral: equivalent, Node gives every response it parsed a status message ('' when none was sent)
      handler.onResponseStart?.(controller, res.statusCode!, res.headers, res.statusMessage ?? '');
      res.on('data', (chunk: Buffer) => {
        // Stryker disable next-line ConditionalExpression: equivalent, a destroyed response emits no more data (a Readable ignores what is pushed after destroy)
        if (ended) return;
        timer!.refresh();
        handler.onResponseData?.(controller, chunk);
      });
      // A connection closed before the body's end (Node emits this, ECONNRESET, only to a listener).
      res.on('error', fail);
      res.on('end', () => {
        // Stryker disable next-line ConditionalExpression: equivalent, as above: no end after a destroy
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        handler.onResponseEnd?.(controller, res.trailers);
      });
    });
    req.end();
    return true;
  }
}
