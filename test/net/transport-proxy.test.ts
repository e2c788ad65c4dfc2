/**
 * HttpTransport through a proxy, in process: a stand-in proxy on a loopback port that answers as a
 * proxy does (a request in absolute form for an http:// address; CONNECT for an https:// one), so
 * the branches the real proxy's test (proxy.e2e.test.ts, Debian's tinyproxy) cannot force run
 * here: a tunnel refused, a connection that comes connected. Also a request's body, as the pushes
 * send it.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { exchange } from '../../src/net/exchange.js';
import { HttpTransport } from '../../src/net/transport.js';

const TIMEOUTS = { connectMs: 2_000, headersMs: 2_000, bodyMs: 2_000 };

/** What the stand-in proxy was asked, first line of each request; how it answers CONNECT below. */
let asked: string[] = [];
/** The Proxy-Authorization header of each request the stand-in was asked, '' when none. */
let proxyAuth: string[] = [];
const CONNECT_ANSWER = 'HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n';
let proxy: NetServer;
let proxyUrl = '';
let target: Server;
let targetOrigin = '';
/** The bodies the target received. */
let bodies: string[] = [];
const sockets = new Set<Socket>();

beforeAll(async () => {
  target = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(`${req.method} ${req.url} ${req.headers['content-length'] ?? '-'} ${Buffer.concat(chunks).toString('utf8')}`);
      res.end('answered');
    });
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetOrigin = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  // A forward proxy for plain http (passes the absolute-form request on) that refuses every CONNECT.
  proxy = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      const text = head.subarray(0, end).toString('latin1');
      const line = text.slice(0, text.indexOf('\r\n'));
      asked.push(line);
      proxyAuth.push(/\r\nproxy-authorization: ([^\r]*)/i.exec(text)?.[1] ?? '');
      if (line.startsWith('CONNECT ')) return void socket.end(CONNECT_ANSWER);
      // Relay the rest as is to the target (the stand-in knows only one).
      const upstream = createConnectionTo(targetOrigin);
      upstream.write(head);
      socket.pipe(upstream).pipe(socket);
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

function createConnectionTo(origin: string): Socket {
  const { port } = new URL(origin);
  return process.getBuiltinModule('node:net').connect(Number(port), '127.0.0.1');
}

afterEach(() => {
  vi.unstubAllEnvs();
  asked = [];
  proxyAuth = [];
  bodies = [];
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  target.closeAllConnections();
  await new Promise((resolve) => target.close(resolve));
  await new Promise((resolve) => proxy.close(resolve));
});

/** One dispatch to its last word: the status and body, or the error. */
function send(transport: HttpTransport, url: string, init: Partial<Dispatcher.DispatchOptions> = {}): Promise<{ status?: number; body?: string; error?: Error & { code?: string } }> {
  const u = new URL(url);
  return new Promise((resolve) => {
    let status = 0;
    const chunks: Buffer[] = [];
    transport.dispatch(
      { origin: u.origin, path: u.pathname, method: 'GET', headers: {}, ...init },
      {
        onResponseStart: (_c, s) => void (status = s),
        onResponseData: (_c, d) => void chunks.push(d),
        onResponseEnd: () => resolve({ status, body: Buffer.concat(chunks).toString('utf8') }),
        onResponseError: (_c, error) => resolve({ error }),
      },
    );
  });
}

describe('HttpTransport through a proxy', () => {
  it('sends an http:// request to HTTP_PROXY in absolute form, on a connection that comes connected', async () => {
    vi.stubEnv('HTTP_PROXY', proxyUrl);
    vi.stubEnv('NO_PROXY', '');
    const r = await send(new HttpTransport({ ...TIMEOUTS, idleMs: 500 }), `${targetOrigin}/metrics/job/x`);
    expect(r.error).toBeUndefined();
    expect(r).toEqual({ status: 200, body: 'answered' });
    expect(asked).toEqual([`GET ${targetOrigin}/metrics/job/x HTTP/1.1`]);
  });

  it('fails with ERR_PROXY_CONNECT, naming the proxy (without its password) and its answer, when the proxy refuses the tunnel', async () => {
    vi.stubEnv('HTTPS_PROXY', proxyUrl.replace('http://', 'http://scanner:s3cr%40t@'));
    vi.stubEnv('NO_PROXY', '');
    const r = await send(new HttpTransport({ ...TIMEOUTS, idleMs: 500 }), 'https://127.0.0.1:9/public-api/v1/vitals');
    expect(r.error?.code).toBe('ERR_PROXY_CONNECT');
    expect(r.error?.message).toBe(`the proxy ${proxyUrl} refused to open a tunnel to 127.0.0.1:9 (403 Forbidden)`);
    expect(asked).toEqual(['CONNECT 127.0.0.1:9 HTTP/1.1']);
    // The proxy's credentials, as basic Proxy-Authorization (percent-decoded).
    expect(proxyAuth).toEqual([`Basic ${Buffer.from('scanner:s3cr@t').toString('base64')}`]);
  });

  it('shares a refused tunnel with the requests that started with it: one CONNECT for three requests', async () => {
    vi.stubEnv('HTTPS_PROXY', proxyUrl);
    vi.stubEnv('NO_PROXY', '');
    const transport = new HttpTransport({ ...TIMEOUTS, idleMs: 500 });
    const all = await Promise.all(['/a', '/b', '/c'].map((p) => send(transport, `https://127.0.0.1:9${p}`)));
    expect(all.map((r) => r.error?.code)).toEqual(['ERR_PROXY_CONNECT', 'ERR_PROXY_CONNECT', 'ERR_PROXY_CONNECT']);
    expect(asked).toEqual(['CONNECT 127.0.0.1:9 HTTP/1.1']);
    // The next request (a later run) tries again.
    await send(transport, 'https://127.0.0.1:9/d');
    expect(asked).toHaveLength(2);
  });

  it('goes direct when NO_PROXY names the host', async () => {
    vi.stubEnv('HTTP_PROXY', proxyUrl);
    vi.stubEnv('NO_PROXY', '127.0.0.1');
    const r = await send(new HttpTransport({ ...TIMEOUTS, idleMs: 500 }), `${targetOrigin}/direct`);
    expect(r).toEqual({ status: 200, body: 'answered' });
    expect(asked).toEqual([]);
  });
});

describe('exchange (a push\'s request)', () => {
  it('sends its body with its length and reads the answer whole', async () => {
    vi.stubEnv('HTTP_PROXY', '');
    const answer = await exchange(`${targetOrigin}/api/v1/write`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'héllo', signal: new AbortController().signal }, new HttpTransport({ ...TIMEOUTS, idleMs: 500 }));
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('answered');
    expect(bodies).toEqual(['POST /api/v1/write 6 héllo']);
  });

  it('rejects with the signal\'s reason, and sends nothing, when it was aborted before', async () => {
    const stop = new AbortController();
    stop.abort(new Error('the push was cancelled'));
    await expect(exchange(`${targetOrigin}/x`, { method: 'PUT', headers: {}, body: new Uint8Array([1]), signal: stop.signal })).rejects.toThrow('the push was cancelled');
    expect(bodies).toEqual([]);
  });
});
