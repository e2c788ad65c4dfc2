/**
 * HttpTransport, the reader's default dispatcher, against a plain HTTP server on a loopback port:
 * the handler callbacks in undici's order and never after the last word, kept connections and
 * their idle close, the three timeouts with undici's codes, aborts, cuts and a refused connection.
 * The reader's own tests run through it as well (reader.test.ts, reader-exchange.test.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpTransport, type TransportTimeouts } from '../../src/net/transport.js';

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let origin = '';
let answer: Answer = (_req, res) => res.end('ok');
/** What reached the server: each request's path and client port; each connection's close. */
let arrived: Array<{ path: string; port: number }> = [];
let closedPorts: number[] = [];
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((req, res) => {
    arrived.push({ path: req.url ?? '', port: req.socket.remotePort ?? 0 });
    answer(req, res);
  });
  server.on('connection', (socket: Socket) => {
    const port = socket.remotePort ?? 0;
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      closedPorts.push(port);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
afterEach(async () => {
  // Every connection closed before the next test counts closes.
  for (const s of sockets) s.destroy();
  await until('the connections to close', () => sockets.size === 0);
  arrived = [];
  closedPorts = [];
  answer = (_req, res) => res.end('ok');
});

const TIMEOUTS: TransportTimeouts = { connectMs: 2_000, headersMs: 5_000, bodyMs: 5_000 };

/** What a handler heard, in order, and how the request ended. */
interface Heard {
  calls: string[];
  /** What dispatch returned. */
  returned?: boolean;
  status?: number;
  statusText?: string;
  headers?: Record<string, unknown>;
  body: Buffer[];
  error?: Error & { code?: string };
  controller?: Dispatcher.DispatchController;
}

/**
 * One GET of `path` through `transport`; `act` may abort from a callback. Resolves at the last word
 * (end or error), then waits a moment to catch any callback after it.
 */
function get(transport: HttpTransport, path: string, act: { onStart?: (c: Dispatcher.DispatchController) => void; onStatus?: (c: Dispatcher.DispatchController) => void; onData?: (c: Dispatcher.DispatchController) => void; onEnd?: (c: Dispatcher.DispatchController) => void } = {}, extra: Partial<Dispatcher.DispatchOptions> = {}): Promise<Heard> {
  const heard: Heard = { calls: [], body: [] };
  return new Promise((resolve) => {
    const done = () => setTimeout(() => resolve(heard), 50);
    heard.returned = transport.dispatch(
      { origin, path, method: 'GET', headers: { accept: 'application/json' }, ...extra },
      {
        onRequestStart: (c) => {
          heard.calls.push('start');
          heard.controller = c;
          act.onStart?.(c);
        },
        onResponseStart: (c, status, headers, statusText) => {
          heard.calls.push(`status ${status}`);
          heard.status = status;
          heard.statusText = statusText;
          heard.headers = headers;
          act.onStatus?.(c);
        },
        onResponseData: (c, chunk) => {
          heard.calls.push('data');
          heard.body.push(chunk);
          act.onData?.(c);
        },
        onResponseEnd: (c) => {
          heard.calls.push('end');
          act.onEnd?.(c);
          done();
        },
        onResponseError: (_c, err) => {
          heard.calls.push('error');
          heard.error = err;
          done();
        },
      },
    );
  });
}

/** The calls with each run of `data` as one. */
const shape = (calls: string[]) => calls.filter((c, i) => c !== 'data' || calls[i - 1] !== 'data');

/** Resolves once `cond` holds (checked every 10 ms), or fails after `ms`. */
async function until(what: string, cond: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('HttpTransport, an answer', () => {
  it('calls start, the final status with its headers, the body in order and the end, and nothing after', async () => {
    const body = Buffer.alloc(300_000, 'x');
    answer = (_req, res) => {
      res.writeEarlyHints({ link: '</a>; rel=preload' });
      res.writeHead(200, { 'content-type': 'application/json', 'retry-after': '7' });
      res.end(body);
    };
    // An abort after the end is too late to be heard.
    const heard = await get(new HttpTransport(TIMEOUTS), '/list?limit=0', { onEnd: (c) => c.abort(new Error('too late')) });
    expect(shape(heard.calls)).toEqual(['start', 'status 200', 'data', 'end']);
    expect(heard.returned).toBe(true);
    expect(heard.statusText).toBe('OK');
    // The reader never pauses it.
    expect(heard.controller).toMatchObject({ paused: false });
    expect(heard.headers).toMatchObject({ 'content-type': 'application/json', 'retry-after': '7' });
    expect(Buffer.concat(heard.body).equals(body)).toBe(true);
    expect(arrived).toEqual([{ path: '/list?limit=0', port: expect.any(Number) }]);
  });

  it('sends the method and headers it is given', async () => {
    let seen: IncomingMessage | undefined;
    answer = (req, res) => {
      seen = req;
      res.end();
    };
    await get(new HttpTransport(TIMEOUTS), '/h', {}, { headers: { 'x-service-apikey': 'k-123', accept: 'application/json' } });
    expect(seen?.method).toBe('GET');
    expect(seen?.headers).toMatchObject({ 'x-service-apikey': 'k-123', accept: 'application/json', host: origin.slice('http://'.length) });
  });
});

describe('HttpTransport, kept connections', () => {
  it('sends the next request on the same connection, and closes a connection left unused for idleMs', async () => {
    const transport = new HttpTransport({ ...TIMEOUTS, idleMs: 200 });
    await get(transport, '/1');
    await get(transport, '/2');
    expect(arrived.map((a) => a.port)).toEqual([arrived[0]!.port, arrived[0]!.port]);
    expect(closedPorts).toEqual([]);
    // The client closes it: the server's keep-alive timeout (5 s) is far longer.
    const t0 = Date.now();
    await until('the idle connection to close', () => closedPorts.length === 1);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(closedPorts).toEqual([arrived[0]!.port]);
    await get(transport, '/3');
    expect(arrived[2]!.port).not.toBe(arrived[0]!.port);
  });
});

describe('HttpTransport, failures carry the codes the reader maps', () => {
  it('ends a request the server never answers with UND_ERR_HEADERS_TIMEOUT, the request`s own timeout first', async () => {
    answer = () => {};
    const transport = new HttpTransport({ ...TIMEOUTS, headersMs: 100 });
    const heard = await get(transport, '/slow');
    expect(heard.calls).toEqual(['start', 'error']);
    expect(heard.error).toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT', message: 'Headers Timeout Error' });
    // A request's own headersTimeout, as undici reads it, over the transport's.
    const t0 = Date.now();
    const own = await get(new HttpTransport(TIMEOUTS), '/slow', {}, { headersTimeout: 150 });
    expect(own.error?.code).toBe('UND_ERR_HEADERS_TIMEOUT');
    expect(Date.now() - t0).toBeLessThan(TIMEOUTS.headersMs);
  });

  it('waits for headers on a kept connection as on a new one', async () => {
    const transport = new HttpTransport({ ...TIMEOUTS, headersMs: 150 });
    await get(transport, '/first');
    answer = () => {};
    const heard = await get(transport, '/never');
    expect(arrived.map((a) => a.port)).toEqual([arrived[0]!.port, arrived[0]!.port]);
    expect(heard.error?.code).toBe('UND_ERR_HEADERS_TIMEOUT');
  });

  it('ends a body that stalls with UND_ERR_BODY_TIMEOUT after what came, and each chunk restarts the wait', async () => {
    answer = (_req, res) => {
      res.writeHead(200);
      // Three chunks 150 ms apart, each within the 250 ms timeout (the third after it, without a restart), then nothing.
      res.write('a');
      setTimeout(() => res.write('b'), 150);
      setTimeout(() => res.write('c'), 300);
    };
    const heard = await get(new HttpTransport({ ...TIMEOUTS, bodyMs: 250 }), '/stall');
    expect(shape(heard.calls)).toEqual(['start', 'status 200', 'data', 'error']);
    expect(Buffer.concat(heard.body).toString()).toBe('abc');
    expect(heard.error).toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT', message: 'Body Timeout Error' });
    const own = await get(new HttpTransport(TIMEOUTS), '/stall', {}, { bodyTimeout: 150 });
    expect(own.error?.code).toBe('UND_ERR_BODY_TIMEOUT');
  });

  it('ends a body cut inside it with one error, never an end', async () => {
    answer = (_req, res) => {
      res.writeHead(200);
      res.write('{"data":[');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const heard = await get(new HttpTransport(TIMEOUTS), '/cut');
    expect(shape(heard.calls)).toEqual(['start', 'status 200', 'data', 'error']);
    // Node's own error for the cut, which the reader quotes.
    expect(heard.error).toMatchObject({ code: 'ECONNRESET' });
  });

  it('ends a connection whose TLS handshake never finishes with UND_ERR_CONNECT_TIMEOUT', async () => {
    // Accepts the TCP connection and never answers the handshake.
    const held: Socket[] = [];
    const silent = createNetServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const at = `https://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const t0 = Date.now();
      const heard = await new Promise<Heard>((resolve) => {
        const h: Heard = { calls: [], body: [] };
        new HttpTransport({ ...TIMEOUTS, connectMs: 150 }).dispatch({ origin: at, path: '/', method: 'GET', headers: {} }, { onResponseError: (_c, err) => resolve({ ...h, error: err }) });
      });
      expect(heard.error).toMatchObject({ code: 'UND_ERR_CONNECT_TIMEOUT', message: 'Connect Timeout Error' });
      expect(Date.now() - t0).toBeLessThan(TIMEOUTS.headersMs);
    } finally {
      silent.close();
      for (const socket of held) socket.destroy();
    }
  });

  it('reports a refused connection with the system code', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const transport = new HttpTransport(TIMEOUTS);
    const heard = await new Promise<Heard>((resolve) => {
      const h: Heard = { calls: [], body: [] };
      transport.dispatch({ origin: `http://127.0.0.1:${port}`, path: '/', method: 'GET', headers: {} }, { onRequestStart: () => h.calls.push('start'), onResponseError: (_c, err) => resolve({ ...h, error: err }) });
    });
    expect(heard.error?.code).toBe('ECONNREFUSED');
  });
});

describe('HttpTransport, aborts', () => {
  it('sends nothing when the handler aborts at the start, and reports the reason once', async () => {
    const reason = new Error('not now');
    const heard = await get(new HttpTransport(TIMEOUTS), '/none', { onStart: (c) => c.abort(reason) });
    expect(heard.calls).toEqual(['start', 'error']);
    expect(heard.returned).toBe(true);
    expect(heard.error).toBe(reason);
    expect(heard.controller).toMatchObject({ aborted: true, reason });
    await new Promise((r) => setTimeout(r, 50));
    expect(arrived).toEqual([]);
  });

  it('drops the connection on an abort inside the body: no data after it, the reason once', async () => {
    answer = (_req, res) => {
      res.writeHead(200);
      res.write('first');
      setTimeout(() => res.write('second'), 50);
    };
    const reason = new Error('enough');
    const heard = await get(new HttpTransport(TIMEOUTS), '/drip', {
      onData: (c) => {
        c.abort(reason);
        // A second abort changes nothing.
        c.abort(new Error('again'));
      },
    });
    expect(heard.calls).toEqual(['start', 'status 200', 'data', 'error']);
    expect(heard.error).toBe(reason);
    expect(heard.controller).toMatchObject({ aborted: true, reason });
    await until('the server to see the connection closed', () => closedPorts.length === 1);
  });

  it('drops the connection on an abort at the status, before any of the body', async () => {
    answer = (_req, res) => {
      res.writeHead(500);
      res.write('x'.repeat(1000));
    };
    const heard = await get(new HttpTransport(TIMEOUTS), '/status', { onStatus: (c) => c.abort(new Error('no body')) });
    expect(heard.calls).toEqual(['start', 'status 500', 'error']);
    await until('the server to see the connection closed', () => closedPorts.length === 1);
  });
});

describe('HttpTransport, a handler with callbacks left out', () => {
  it('calls only the callbacks a handler has, on an answer and on a failure', async () => {
    // undici's handler callbacks are all optional: one that lacks them is not called.
    const transport = new HttpTransport(TIMEOUTS);
    answer = (_req, res) => res.end('body');
    await new Promise<void>((resolve) => transport.dispatch({ origin, path: '/quiet', method: 'GET', headers: {} }, { onResponseEnd: () => resolve() }));
    await new Promise<void>((resolve) => {
      transport.dispatch({ origin, path: '/quiet', method: 'GET', headers: {} }, { onResponseData: () => {} });
      server.once('request', (_req, res: ServerResponse) => res.once('finish', () => setTimeout(resolve, 50)));
    });
    expect(() => transport.dispatch({ origin, path: '/never', method: 'GET', headers: {} }, { onRequestStart: (c) => c.abort(new Error('no')) })).not.toThrow();
    expect(arrived.map((a) => a.path)).toEqual(['/quiet', '/quiet']);
  });
});
