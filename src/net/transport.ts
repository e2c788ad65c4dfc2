/**
 * The HTTP client of the portal and the pushes: Node's own `http` and `https` behind undici's
 * `dispatch` (the handler callbacks PortalReader reads an answer through), over the process's
 * Agents (src/net/agents.ts: keep-alive, the environment's proxy), with three timeouts. Node parses
 * HTTP natively and hands the body over with less work per chunk than undici's Agent (llhttp
 * compiled to WebAssembly), and no process loads undici: `once` at 100,000 open alerts spends about
 * 50 ms less CPU (docs/performance.md, "Receiving"). An injected undici Dispatcher (tests) is read
 * the same way.
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { PeerCertificate } from 'node:tls';
import type { Dispatcher } from 'undici';
import { Agents, processAgents } from './agents.js';
import { errorCode } from './trust.js';

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
  /** How long a kept connection may stay unused before it is closed (undici's default, 4 s); a transport given one has Agents of its own. */
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
 * The host check of a TLS connection made inside a proxy's tunnel: https-proxy-agent names the
 * host to the TLS layer only when it is a name (SNI takes no address), and Node would then check
 * the certificate against `localhost`; the URL's own host is checked instead.
 */
function tunnelled(url: URL): { checkServerIdentity: (host: string, cert: PeerCertificate) => Error | undefined } {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return { checkServerIdentity: (_host, cert) => process.getBuiltinModule('node:tls').checkServerIdentity(host, cert) };
}

/**
 * Node's `http` and `https` (each loaded with its scheme's first request) over keep-alive Agents,
 * answering through undici's handler callbacks: onRequestStart, then onResponseStart (the final
 * answer: Node keeps 1xx ones apart), onResponseData per chunk and onResponseEnd; or
 * onResponseError once, with nothing after it. Failures carry the codes undici gives them
 * (UND_ERR_CONNECT_TIMEOUT, UND_ERR_HEADERS_TIMEOUT, UND_ERR_BODY_TIMEOUT) or the system's
 * (ECONNREFUSED, ENOTFOUND, ECONNRESET for a connection cut, a certificate's), and
 * ERR_PROXY_CONNECT when the proxy refuses the tunnel. Until a first connection to an origin has
 * been made, the requests to it wait for the one making it and share its failure: an untrusted
 * certificate or a dead host costs one connection, not one per request sent at once.
 */
export class HttpTransport implements Dispatch {
  private readonly requests = new Map<string, typeof import('node:http').request>();
  private readonly agents: Agents;
  /** Origins a connection was made to. */
  private readonly reached = new Set<string>();
  /** The first connection under way to an origin: resolves with its failure, or undefined once it is made (or was given up by its request). */
  private readonly opening = new Map<string, Promise<Error | undefined>>();

  constructor(
    private readonly timeouts: TransportTimeouts,
    agents?: Agents,
  ) {
    this.agents = agents ?? (timeouts.idleMs === undefined ? processAgents() : new Agents({ idleMs: timeouts.idleMs }));
  }

  /** The `request` of a scheme, `http:` or `https:`, loaded with its first request. */
  private requestOf(protocol: string): typeof import('node:http').request {
    let request = this.requests.get(protocol);
    if (!request) {
      const mod = protocol === 'https:' ? process.getBuiltinModule('node:https') : process.getBuiltinModule('node:http');
      request = mod.request as typeof import('node:http').request;
      this.requests.set(protocol, request);
    }
    return request;
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const url = new URL(options.path, options.origin);
    let ended = false;
    // Set once the request is made (after onRequestStart, which may abort it first).
    const sent: { req?: ClientRequest } = {};
    let timer: NodeJS.Timeout | undefined;
    /** Settles the first connection to the origin, when this request is making it: undefined once made. */
    let opened: ((failure: Error | undefined) => void) | undefined;
    /** The handler's last word: `err`, once; the connection is dropped. `connecting`: it failed the connection itself. */
    const fail = (err: Error, connecting = false): void => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      sent.req?.destroy();
      opened?.(connecting ? err : undefined);
      handler.onResponseError?.(controller, err);
    };
    const controller = new Controller(fail);
    /** The one timer running: `err` fails the request after `ms` (refreshed by each chunk of the body). */
    const arm = (ms: number, code: string, message: string, connecting = false): void => {
      clearTimeout(timer);
      timer = setTimeout(() => fail(coded(code, message), connecting), ms);
    };
    handler.onRequestStart?.(controller, {});
    // Aborted before the request started: nothing is sent.
    if (ended) return true;
    const send = (): void => {
      const route = this.agents.routeOf(url);
      // (Node takes an IPv6 literal's brackets off the URL's host itself.)
      const req = (sent.req = this.requestOf(url.protocol)(url, { agent: route.agent, method: options.method, headers: options.headers as Record<string, string>, ...(route.proxy && url.protocol === 'https:' ? tunnelled(url) : {}) }));
      // Until the socket is connected: a new connection (through the proxy's tunnel too) or the wait for a kept one.
      let connected = false;
      req.on('error', (err: Error) => fail(err, !connected));
      // A request's own timeouts, as undici reads them, else the transport's.
      const headersMs = options.headersTimeout ?? this.timeouts.headersMs;
      const bodyMs = options.bodyTimeout ?? this.timeouts.bodyMs;
      arm(this.timeouts.connectMs, 'UND_ERR_CONNECT_TIMEOUT', 'Connect Timeout Error', true);
      const waitForHeaders = () => {
        connected = true;
        this.reached.add(url.origin);
        opened?.(undefined);
        opened = undefined;
        arm(headersMs, 'UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error');
      };
      // The proxy's answer to CONNECT (https-proxy-agent; http-proxy-agent's event has no status): anything but 200 means no tunnel, and its body is not the portal's.
      req.on('proxyConnect', (answer: { statusCode?: number; statusText?: string }) => {
        if (answer.statusCode !== undefined && answer.statusCode !== 200) fail(coded('ERR_PROXY_CONNECT', `the proxy ${route.proxy} refused to open a tunnel to ${url.host} (${answer.statusCode} ${answer.statusText ?? ''})`.trimEnd()), true);
      });
      req.on('socket', (socket: Socket) => {
        if (req.reusedSocket) return waitForHeaders();
        // (Over https, the handshake's end: test/upstream/https.e2e.test.ts, outside the unit tier.)
        if (url.protocol === 'https:') socket.once('secureConnect', waitForHeaders);
        // A proxy's socket (http-proxy-agent) comes connected.
        else if (socket.connecting) socket.once('connect', waitForHeaders);
        else waitForHeaders();
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
        res.on('error', (err: Error) => fail(err));
        res.on('end', () => {
          // Stryker disable next-line ConditionalExpression: equivalent, as above: no end after a destroy
          if (ended) return;
          ended = true;
          clearTimeout(timer);
          handler.onResponseEnd?.(controller, res.trailers);
        });
      });
      const body = options.body;
      req.end(typeof body === 'string' || body instanceof Uint8Array ? body : undefined);
    };
    if (this.reached.has(url.origin)) {
      send();
      return true;
    }
    const first = this.opening.get(url.origin);
    if (first === undefined) {
      // This request makes the first connection: the others to the origin wait for it.
      this.opening.set(
        url.origin,
        new Promise<Error | undefined>((resolve) => {
          opened = (failure) => {
            this.opening.delete(url.origin);
            resolve(failure);
          };
        }),
      );
      send();
      return true;
    }
    void first.then((failure) => {
      if (ended) return;
      // The same connection failure, as this request's own error.
      if (failure !== undefined) fail(coded(errorCode(failure) ?? 'ECONNRESET', failure.message), true);
      else send();
    });
    return true;
  }
}
