/**
 * How PortalReader reads an answer through the dispatcher's callbacks, against a plain HTTP server
 * on a loopback port that answers each test its own way: informational (1xx) answers before the
 * real one, a connection cut before or after the status, an error body longer than the part the
 * reader keeps, a signal aborted before the request is sent, a sink that fails on the status.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { getEventListeners } from 'node:events';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { NetworkError, TimeoutError, UpstreamHttpError } from '../../src/errors.js';
import { PortalReader, type PortalReaderOptions } from '../../src/upstream/reader.js';
import type { Dispatch } from '../../src/net/transport.js';
import { failure, loopbackDispatchers, sinks } from '../support/upstream.js';

const KEY = 'exchange-key-1a2b3c4d5e6f7a8b9c0d';
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
/** The dispatcher of the tests running: each describe.each block below sets its own. */
let agent: Dispatch;

type Answer = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let baseUrl = '';
/** How the server answers the next requests, in turn (the last one for every request after). */
let answers: Answer[] = [];
/** The paths of the requests that reached the server. */
let arrived: string[] = [];
/** The client port of each request's connection, in order. */
let ports: number[] = [];
/** Resolves when the server sees the client close a response that had not ended. */
let clientGone: Promise<void> = Promise.resolve();

beforeAll(async () => {
  server = createServer((req, res) => {
    arrived.push(req.url ?? '');
    ports.push(req.socket.remotePort ?? 0);
    const answer = answers.length > 1 ? answers.shift()! : answers[0]!;
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/public-api/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
afterEach(() => {
  answers = [];
  arrived = [];
  ports = [];
});

function reader(overrides: Partial<PortalReaderOptions> = {}) {
  const logger = memoryLogger();
  return { r: new PortalReader({ baseUrl, apiKey: KEY, clock: new FakeClock(T0), logger, dispatcher: agent, ...overrides }), logger };
}

const LIST = JSON.stringify({ offset: 0, limit: 0, total: 2, success: true, statusCode: 200, message: 'Successfully retrieved vitals.', data: [{ key: 'a' }, { key: 'b' }] });

/** Answers with `status` and `body` at once. */
const plain =
  (status: number, body: string, headers: Record<string, string> = {}): Answer =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };

/** Sends the head of `status` and `body`, never ends it, and notes (clientGone) when the client closes the connection. */
const unending =
  (status: number, body: string): Answer =>
  (_req, res) => {
    clientGone = new Promise((resolve) => res.on('close', () => resolve()));
    res.writeHead(status, { 'content-type': 'application/json' });
    res.write(body);
  };

const vitals = { endpoint: '/vitals', query: {} };

describe.each(loopbackDispatchers())('through %s', (_name, dispatcher) => {
  beforeAll(() => {
    agent = dispatcher;
  });

  describe('PortalReader, informational answers', () => {
    it('reads the list that follows a 103 Early Hints answer', async () => {
      answers = [
        (req, res) => {
          res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
          plain(200, LIST)(req, res);
        },
      ];
      const { made, newSink } = sinks();
      const res = await reader().r.read(vitals, newSink);
      expect(res).toMatchObject({ total: 2, received: 2, offset: 0, limit: 0 });
      expect(made).toHaveLength(1);
      expect(made[0]!.records).toEqual([{ key: 'a' }, { key: 'b' }]);
    });

    it('keeps the Retry-After of the final 429, not of a 103 before it', async () => {
      answers = [
        (req, res) => {
          res.writeEarlyHints({ link: '</a>; rel=preload', 'retry-after': '900' });
          plain(429, '', { 'retry-after': '12' })(req, res);
        },
      ];
      const err = await failure(reader().r.read(vitals, sinks().newSink));
      expect(err).toMatchObject({ status: 429, retryAfterMs: 12_000 });
    });

    it('reports a connection cut after a 103 as a failure with no status, not as a 103', async () => {
      answers = [
        (_req, res) => {
          res.writeEarlyHints({ link: '</a>; rel=preload' });
          res.socket?.destroy();
        },
      ];
      const { made, newSink } = sinks();
      const { r, logger } = reader();
      const err = await failure(r.read(vitals, newSink));
      expect(err).toBeInstanceOf(NetworkError);
      expect(err).not.toBeInstanceOf(UpstreamHttpError);
      expect(err.message).toContain('Could not get a response from the portal for /vitals');
      expect(PortalReader.codeOf(err)).toBe('error');
      expect(made).toHaveLength(0);
      expect(logger.records().find((l) => l.msg === 'upstream request')).toMatchObject({ status: 'error', records: 0 });
    });
  });

  describe('PortalReader, an error status and its body', () => {
    it('reports the status of an error answer whose body is then cut, not the cut', async () => {
      answers = [
        (_req, res) => {
          res.writeHead(503, { 'content-type': 'application/json', 'content-length': '2000' });
          res.write('{"message":"Service Unav');
          setTimeout(() => res.socket?.destroy(), 5);
        },
      ];
      const err = await failure(reader().r.read(vitals, sinks().newSink));
      expect(err.constructor).toBe(UpstreamHttpError);
      expect((err as UpstreamHttpError).status).toBe(503);
      expect(err.message).toContain('a server error (503)');
      expect(PortalReader.codeOf(err)).toBe('503');
    });

    it('answers at once after the first 64 KiB of an error body that does not end, and closes the connection', { timeout: 5_000 }, async () => {
      // Far more than 64 KiB, and never ended: waiting for its end would wait for the body timeout.
      answers = [unending(502, JSON.stringify({ message: 'Bad gateway', padding: 'x'.repeat(200 * 1024) }))];
      const err = await failure(reader({ bodyTimeoutMs: 60_000 }).r.read(vitals, sinks().newSink));
      expect(err.constructor).toBe(UpstreamHttpError);
      expect((err as UpstreamHttpError).status).toBe(502);
      await clientGone;
    });

    it("reads the portal's message from no more than the first 64 KiB of an error body", async () => {
      // Valid JSON of 80 KiB with the message in front: whole, it would say "Backend down"; its
      // first 64 KiB are not JSON, so no portal message is quoted.
      const long = JSON.stringify({ message: 'Backend down', padding: 'y'.repeat(80 * 1024) });
      const short = JSON.stringify({ message: 'Backend down', padding: 'y'.repeat(60 * 1024) });
      answers = [plain(500, long), plain(500, short)];
      const { r } = reader();
      const cut = await failure(r.read(vitals, sinks().newSink));
      expect((cut as UpstreamHttpError).status).toBe(500);
      expect(cut.message).not.toContain('The portal said');
      const whole = await failure(r.read(vitals, sinks().newSink));
      expect(whole.message).toContain('The portal said: "Backend down".');
    });

    it('gives a 3xx answer no sink and reports it as an unexpected status', async () => {
      answers = [plain(302, JSON.stringify({ total: 1, data: [{ key: 'moved' }] }), { location: '/elsewhere' })];
      const { made, newSink } = sinks();
      const err = await failure(reader().r.read(vitals, newSink));
      expect(err.constructor).toBe(UpstreamHttpError);
      expect((err as UpstreamHttpError).status).toBe(302);
      expect(err.message).toContain('an unexpected status (302)');
      expect(made).toHaveLength(0);
    });
  });

  describe('PortalReader, a sink that fails', () => {
    it("passes through the error of a sink that cannot be made, as the 200's failure, and closes the connection", async () => {
      answers = [unending(200, '{"total":1,"data":[')];
      const refused = new Error('no room for another list');
      const err = await failure(
        reader().r.read(vitals, () => {
          throw refused;
        }),
      );
      expect(err).toBe(refused);
      expect(PortalReader.codeOf(err)).toBe('200');
      await clientGone;
    });

    it('passes through whatever a sink throws, also a value that is not an object', async () => {
      answers = [plain(200, LIST)];
      let thrown: unknown;
      await reader()
        .r.read(vitals, () => ({
          record: () => {
            throw 'full';
          },
          finish: () => 0,
        }))
        .catch((err: unknown) => {
          thrown = err;
        });
      expect(thrown).toBe('full');
      expect(PortalReader.codeOf(thrown)).toBe('error');
    });

    it('passes through a sink that throws null', async () => {
      answers = [plain(200, LIST)];
      const outcome = await reader()
        .r.read(vitals, () => ({
          record: () => {
            throw null;
          },
          finish: () => 0,
        }))
        .then(
          () => 'resolved',
          (err: unknown) => ({ rejectedWith: err }),
        );
      expect(outcome).toEqual({ rejectedWith: null });
      expect(PortalReader.codeOf(null)).toBe('error');
    });

    it('cuts a body that the sink refused, without reading on to its end', { timeout: 5_000 }, async () => {
      answers = [unending(200, '{"total":3,"data":[{"key":"a"},')];
      const full = new Error('sink is full');
      const err = await failure(
        reader({ bodyTimeoutMs: 60_000 }).r.read(vitals, () => ({
          record: () => {
            throw full;
          },
          finish: () => 0,
        })),
      );
      expect(err).toBe(full);
      await clientGone;
    });
  });

  describe('PortalReader, aborts', () => {
    it('leaves no listener on a signal that many reads share, whatever their outcome', async () => {
      answers = [plain(200, LIST), plain(503, ''), plain(200, '{"total":1,"data":[')];
      const { r } = reader();
      const run = new AbortController();
      expect((await r.read(vitals, sinks().newSink, run.signal)).received).toBe(2);
      expect(await failure(r.read(vitals, sinks().newSink, run.signal))).toBeInstanceOf(UpstreamHttpError);
      expect(await failure(r.read(vitals, sinks().newSink, run.signal))).not.toBeInstanceOf(UpstreamHttpError);
      expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
    });

    it('sends nothing when the signal aborts after the call but before the connection is made', async () => {
      answers = [plain(200, LIST)];
      // A pool with no open connection: the request waits for one to be made.
      const fresh = new Agent();
      const { r } = reader({ dispatcher: fresh });
      const controller = new AbortController();
      const pending = r.read({ endpoint: '/alerts', query: { filter: 'all' } }, sinks().newSink, controller.signal);
      controller.abort(new Error('shutting down'));
      const err = await failure(pending);
      expect(err.message).toBe('shutting down');
      // A later request on the same connection pool is the first the server sees.
      const res = await r.read(vitals, sinks().newSink);
      expect(res.received).toBe(2);
      expect(arrived).toEqual(['/public-api/v1/vitals']);
      await fresh.close();
    });

    it("keeps an abort reason that is already the reader's TimeoutError as it is", async () => {
      answers = [plain(200, LIST)];
      const reason = new TimeoutError('/vitals', 'headers', 'given up waiting for headers');
      const err = await failure(reader().r.read(vitals, sinks().newSink, AbortSignal.abort(reason)));
      expect(err).toBe(reason);
      expect(arrived).toEqual([]);
    });

    it('turns a TimeoutError-named abort reason into a deadline TimeoutError, also before the request', async () => {
      answers = [plain(200, LIST)];
      const reason = new DOMException('The operation timed out', 'TimeoutError');
      const err = await failure(reader().r.read(vitals, sinks().newSink, AbortSignal.abort(reason)));
      expect(err).toBeInstanceOf(TimeoutError);
      expect(err).toMatchObject({ phase: 'deadline', endpoint: '/vitals' });
      expect(err.message).toContain("/vitals is late: its request was cut at the run's deadline");
      expect(err.cause).toBe(reason);
    });

    it('rejects with an Error when the signal aborts with a null reason', async () => {
      answers = [plain(200, LIST)];
      const controller = new AbortController();
      controller.abort(null);
      const err = await failure(reader().r.read(vitals, sinks().newSink, controller.signal));
      expect(err).toBeInstanceOf(Error);
      expect(err.message).toBe('aborted');
      expect(arrived).toEqual([]);
    });
  });
});

describe('PortalReader without a dispatcher of its own', () => {
  it('gives up connecting after its connect timeout (the TLS handshake included)', async () => {
    // Accepts the TCP connection and never answers the TLS handshake.
    const sockets: Socket[] = [];
    const silent = createNetServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      // Timeouts no other test uses, so the connection pool is this test's alone.
      const r = new PortalReader({ baseUrl: `https://127.0.0.1:${port}/public-api/v1`, apiKey: KEY, clock: new FakeClock(T0), connectTimeoutMs: 60, headersTimeoutMs: 6_543, bodyTimeoutMs: 7_654 });
      // Bounded: without its own connect timeout, the Agent would wait its default 10 s.
      const bound = new Promise<'still connecting'>((resolve) => setTimeout(() => resolve('still connecting'), 3_000).unref());
      const err = await Promise.race([failure(r.read(vitals, sinks().newSink)), bound]);
      expect(err).toBeInstanceOf(TimeoutError);
      expect(err).toMatchObject({ phase: 'connect', endpoint: '/vitals' });
    } finally {
      silent.close();
      for (const socket of sockets) socket.destroy();
    }
  });

  it("shares the process's connections between readers, whatever their timeouts (one client stack)", async () => {
    answers = [plain(200, LIST)];
    const make = (connectTimeoutMs: number) => new PortalReader({ baseUrl, apiKey: KEY, clock: new FakeClock(T0), connectTimeoutMs, headersTimeoutMs: 4_321, bodyTimeoutMs: 5_432 });
    await make(3_210).read(vitals, sinks().newSink);
    // (undici frees a connection once the answer's last callback has returned.)
    await new Promise((resolve) => setImmediate(resolve));
    await make(3_210).read(vitals, sinks().newSink);
    await new Promise((resolve) => setImmediate(resolve));
    await make(3_211).read(vitals, sinks().newSink);
    expect(ports).toHaveLength(3);
    expect(ports[1]).toBe(ports[0]);
    expect(ports[2]).toBe(ports[0]);
  });
});
