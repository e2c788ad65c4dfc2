/**
 * PortalReader against the simulated portal: one request each, never a retry (retries are the
 * scheduler's: test/schedule/request-retries.test.ts). The envelope and error cases the simulator
 * cannot produce are in reader-envelope.test.ts, reader-errors.test.ts and reader-dispatcher.test.ts.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request as undiciRequest } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { AuthenticationError, InvalidResponseError, NetworkError, PermissionError, RateLimitedError, TimeoutError, TruncatedBodyError, UpstreamHttpError } from '../../src/errors.js';
import { startSimulator, type Fault, type Simulator } from '../../src/simulator/index.js';
import { PortalReader, type ListRequest, type PortalReaderOptions } from '../../src/upstream/reader.js';
import type { Dispatch } from '../../src/net/transport.js';
import { failure, itemIds, loopbackAgent, loopbackDispatchers, sinks } from '../support/upstream.js';
import { exposedGc } from '../support/gc.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

/** The dispatcher of the tests running: each describe.each block below sets its own. */
let agent: Dispatch;
/** For the raw requests that check what the portal takes, beside the reader's. */
const raw = loopbackAgent();

/** A reader of `sim` on `clock`; everything else overridable. */
function setup(sim: Simulator, clock: FakeClock, overrides: Partial<PortalReaderOptions> = {}) {
  const logger = memoryLogger();
  const reader = new PortalReader({ baseUrl: sim.baseUrl, apiKey: sim.apiKey, clock, logger, dispatcher: agent, ...overrides });
  return { reader, logger };
}

const statuses = (sim: Simulator) => sim.requests.map((r) => r.status);

describe.each(loopbackDispatchers())('through %s', (_name, dispatcher) => {
  beforeAll(() => {
    agent = dispatcher;
  });

  describe('PortalReader against the simulated portal', () => {
    let sim: Simulator;
    let clock: FakeClock;

    beforeAll(async () => {
      clock = new FakeClock(T0);
      sim = await startSimulator({ seed: 7, clock, rateLimit: false, moving: false, alerts: 150, devices: 300 });
    });
    afterAll(async () => {
      await sim.close();
    });
    afterEach(() => {
      sim.clearFaults();
      sim.requests.length = 0;
    });

    /** What a read of `list` fails with once the portal answers it with `fault` (by a reader with `overrides`). */
    async function failedRead(fault: Fault, list: ListRequest = { endpoint: '/vitals', query: {} }, overrides: Partial<PortalReaderOptions> = {}) {
      const { reader } = setup(sim, clock, overrides);
      sim.addFault({ path: list.endpoint, fault });
      return failure(reader.read(list, sinks().newSink));
    }

    it('reads a whole list in one request and reports the envelope', async () => {
      const { reader, logger } = setup(sim, clock);
      const { made, newSink } = sinks();
      const expected = [...sim.data().alerts()];
      expect(expected.length).toBeGreaterThan(0);
      const res = await reader.read({ endpoint: '/alerts', query: { filter: 'all', systemName: undefined } }, newSink);
      expect(res.total).toBe(expected.length);
      expect(res.received).toBe(expected.length);
      expect(res.offset).toBe(0);
      expect(res.limit).toBe(0);
      expect(itemIds(res.result)).toEqual(itemIds(expected));
      expect(made).toHaveLength(1);
      expect(res.result).toBe(made[0]!.records);
      // The undefined query value is left out of the URL.
      expect(sim.requests.map((r) => [r.path, r.query, r.status])).toEqual([['/alerts', { filter: 'all' }, 200]]);
      const debug = logger.records().filter((r) => r.level === 'debug' && r.msg === 'upstream request');
      expect(debug).toHaveLength(1);
      expect(debug[0]).toMatchObject({ endpoint: '/alerts', query: { filter: 'all' }, status: 200, records: expected.length });
      expect(typeof debug[0]!.durationMs).toBe('number');
      expect(logger.lines.join('\n')).not.toContain(sim.apiKey);
    });

    it('pages with offset and limit, and the pages add up to the whole list', async () => {
      const { reader } = setup(sim, clock, { baseUrl: sim.baseUrl + '/' });
      const whole = [...sim.data().alerts()].filter((a) => !a.resolved);
      const pageSize = 40;
      expect(whole.length).toBeGreaterThan(pageSize);
      const seen: string[] = [];
      let offset = 0;
      for (;;) {
        const res = await reader.read({ endpoint: '/alerts', query: { filter: 'allunresolved', offset, limit: pageSize } }, sinks().newSink);
        expect(res.total).toBe(whole.length);
        expect(res.offset).toBe(offset);
        expect(res.limit).toBe(pageSize);
        expect(res.received).toBe(Math.min(pageSize, whole.length - offset));
        seen.push(...itemIds(res.result));
        offset += res.received;
        if (offset >= res.total) break;
      }
      expect(seen).toEqual(itemIds(whole));
      expect(sim.requests.map((r) => r.query.offset)).toEqual(Array.from({ length: Math.ceil(whole.length / pageSize) }, (_, i) => String(i * pageSize)));
    });

    it('counts devices per filter with limit=1', async () => {
      const { reader } = setup(sim, clock);
      const totals: Record<string, number> = {};
      for (const filter of ['active', 'inactive', 'all']) {
        const res = await reader.read({ endpoint: '/devices', query: { filter, limit: 1 } }, sinks().newSink);
        expect(res.received).toBe(1);
        expect(res.limit).toBe(1);
        totals[filter] = res.total;
      }
      expect(totals.all).toBe([...sim.data().devices()].length);
      expect(totals.active! + totals.inactive!).toBe(totals.all);
      expect(totals.inactive).toBeGreaterThan(0);
    });

    it('turns 404 into an UpstreamHttpError that points at POSTURE_BASE_URL', async () => {
      const { reader } = setup(sim, clock, { baseUrl: sim.baseUrl.replace('/public-api/v1', '') });
      const { made, newSink } = sinks();
      const err = await failure(reader.read({ endpoint: '/vitals', query: {} }, newSink));
      expect(err).toBeInstanceOf(UpstreamHttpError);
      expect(err).not.toBeInstanceOf(AuthenticationError);
      expect((err as UpstreamHttpError).status).toBe(404);
      expect((err as UpstreamHttpError).endpoint).toBe('/vitals');
      expect(err.message).toContain('POSTURE_BASE_URL');
      expect(err.message).toContain('/public-api/v1');
      expect(err.message).not.toContain(sim.apiKey);
      expect(PortalReader.codeOf(err)).toBe('404');
      expect(made).toHaveLength(0); // no sink for a body that is not a list
      expect(statuses(sim)).toEqual([404]);
    });

    it("turns 400 into an UpstreamHttpError carrying the portal's message", async () => {
      const { reader } = setup(sim, clock);
      const err = await failure(reader.read({ endpoint: '/devices', query: { filter: 'sometimes' } }, sinks().newSink));
      expect(err).toBeInstanceOf(UpstreamHttpError);
      expect((err as UpstreamHttpError).status).toBe(400);
      expect(err.message).toContain('/devices');
      expect(err.message).toContain("Invalid 'filter'");
      expect(statuses(sim)).toEqual([400]);
    });

    it.each([500, 502, 503, 504])('turns %i into an UpstreamHttpError with one request', async (status) => {
      const { reader } = setup(sim, clock);
      sim.addFault({ path: '/vitals', times: 2, fault: { kind: 'status', status } });
      const err = await failure(reader.read({ endpoint: '/vitals', query: {} }, sinks().newSink));
      expect(err).toBeInstanceOf(UpstreamHttpError);
      expect((err as UpstreamHttpError).status).toBe(status);
      expect(err.message).toContain(`server error (${status})`);
      expect(PortalReader.codeOf(err)).toBe(String(status));
      expect(statuses(sim)).toEqual([status]);
    });

    it.each<[string, string | undefined, number | undefined]>([
      ['whole seconds', '7', 7_000],
      ['an HTTP-date 12 s ahead', new Date(T0 + 12_000).toUTCString(), 12_000],
      ['nothing', undefined, undefined],
    ])('turns 429 with Retry-After %s into a RateLimitedError with that wait, without sleeping', async (_name, retryAfter, expected) => {
      const { reader } = setup(sim, clock);
      expect(clock.now()).toBe(T0);
      sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 429, ...(retryAfter === undefined ? {} : { retryAfter }) } });
      const before = clock.now();
      const err = await failure(reader.read({ endpoint: '/vitals', query: {} }, sinks().newSink));
      expect(err).toBeInstanceOf(RateLimitedError);
      expect((err as RateLimitedError).status).toBe(429);
      expect((err as RateLimitedError).retryAfterMs).toBe(expected);
      expect(err.message).toContain(expected === undefined ? 'no Retry-After was sent' : `wait ${expected / 1000} s`);
      expect(PortalReader.codeOf(err)).toBe('429');
      expect(clock.now()).toBe(before);
      expect(statuses(sim)).toEqual([429]);
    });

    it('turns a body cut off mid-way into a retryable error, after the sink saw part of the list', async () => {
      const { reader } = setup(sim, clock);
      const { made, newSink } = sinks();
      const expected = [...sim.data().alerts()];
      sim.addFault({ path: '/alerts', fault: { kind: 'truncate', afterBytes: 3_000 } });
      const err = await failure(reader.read({ endpoint: '/alerts', query: { filter: 'all' } }, newSink));
      // The socket ends inside a chunked body: undici sees the connection cut, not a clean end.
      expect(err).toBeInstanceOf(NetworkError);
      expect(err).not.toBeInstanceOf(TimeoutError);
      expect((err as NetworkError).endpoint).toBe('/alerts');
      expect(err.message).toContain('cut while reading /alerts');
      expect(PortalReader.codeOf(err)).toBe('200'); // the portal answered; its body was cut
      expect(made).toHaveLength(1);
      expect(made[0]!.records.length).toBeGreaterThan(0);
      expect(made[0]!.records.length).toBeLessThan(expected.length);
      expect(statuses(sim)).toEqual([200]);
    });

    it('turns a connection reset into a NetworkError with code error', async () => {
      const err = await failedRead({ kind: 'reset' });
      expect(err).toBeInstanceOf(NetworkError);
      expect(err).not.toBeInstanceOf(TimeoutError);
      expect(err.message).toContain('/vitals');
      expect(PortalReader.codeOf(err)).toBe('error');
      expect(statuses(sim)).toEqual([0]); // the simulator logs a reset as status 0
    });

    it('turns a stalled body into a body TimeoutError', async () => {
      const err = await failedRead({ kind: 'stall', afterBytes: 500 }, { endpoint: '/alerts', query: { filter: 'all' } }, { bodyTimeoutMs: 200 });
      expect(err).toBeInstanceOf(TimeoutError);
      expect((err as TimeoutError).phase).toBe('body');
      expect(err.message).toContain('/alerts');
      expect(err.message).toContain('200 ms');
      expect(PortalReader.codeOf(err)).toBe('200');
      expect(statuses(sim)).toEqual([200]);
    });

    it('turns a slow answer into a headers TimeoutError', async () => {
      const err = await failedRead({ kind: 'latency', ms: 1_500 }, { endpoint: '/vitals', query: {} }, { headersTimeoutMs: 200 });
      expect(err).toBeInstanceOf(TimeoutError);
      expect((err as TimeoutError).phase).toBe('headers');
      expect(err.message).toContain('200 ms');
      expect(PortalReader.codeOf(err)).toBe('error');
    });

    it("reports the envelope's total as sent, leaving a total that does not match the records to the caller", async () => {
      const { reader } = setup(sim, clock);
      sim.addFault({ path: '/vitals', fault: { kind: 'total-mismatch', delta: 3 } });
      const res = await reader.read({ endpoint: '/vitals', query: {} }, sinks().newSink);
      expect(res.received).toBe(sim.data().vitals().length);
      expect(res.total).toBe(res.received + 3);
    });

    it('rejects success:false with an InvalidResponseError naming the message', async () => {
      const err = await failedRead({ kind: 'success-false', message: 'Vitals are being recalculated' });
      expect(err).toBeInstanceOf(InvalidResponseError);
      expect(err).not.toBeInstanceOf(TruncatedBodyError);
      expect(err.message).toContain('Vitals are being recalculated');
      expect(err.message).toContain('/vitals');
      expect(PortalReader.codeOf(err)).toBe('200');
      expect(statuses(sim)).toEqual([200]);
    });

    it('rejects a malformed body with an InvalidResponseError that is not a truncation', async () => {
      const err = await failedRead({ kind: 'malformed' });
      expect(err).toBeInstanceOf(InvalidResponseError);
      expect(err).not.toBeInstanceOf(TruncatedBodyError);
      expect((err as InvalidResponseError).endpoint).toBe('/vitals');
      expect(PortalReader.codeOf(err)).toBe('200');
      expect(statuses(sim)).toEqual([200]);
    });

    it('rejects with the reason of a signal aborted before the request, sending nothing', async () => {
      const { reader } = setup(sim, clock);
      const err = await failure(reader.read({ endpoint: '/vitals', query: {} }, sinks().newSink, AbortSignal.abort(new Error('shutting down'))));
      expect(err.message).toBe('shutting down');
      expect(sim.requests).toHaveLength(0);
    });

    it('cuts a body in flight when the signal aborts, with the signal reason', async () => {
      const { reader } = setup(sim, clock);
      sim.addFault({ path: '/alerts', fault: { kind: 'stall', afterBytes: 200 } });
      const inFlight = new AbortController();
      setTimeout(() => inFlight.abort(new Error('cancelled mid-body')), 50);
      const started = Date.now();
      await expect(reader.read({ endpoint: '/alerts', query: { filter: 'all' } }, sinks().newSink, inFlight.signal)).rejects.toThrow('cancelled mid-body');
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it('reads a TimeoutError-named abort reason (AbortSignal.timeout, the Deadline) as a deadline TimeoutError', async () => {
      const { reader } = setup(sim, clock);
      sim.addFault({ path: '/alerts', fault: { kind: 'stall', afterBytes: 200 } });
      const started = Date.now();
      // The timeout starts with the body (the sink is made after the 200), so a busy machine that is
      // slow to answer cannot make it fire before the status arrives.
      const deadline = new AbortController();
      const { newSink } = sinks();
      const startingTimeout = () => {
        const timeout = AbortSignal.timeout(50);
        timeout.addEventListener('abort', () => deadline.abort(timeout.reason));
        return newSink();
      };
      const err = await failure(reader.read({ endpoint: '/alerts', query: { filter: 'all' } }, startingTimeout, deadline.signal));
      expect(err).toBeInstanceOf(TimeoutError);
      expect((err as TimeoutError).phase).toBe('deadline');
      expect((err as TimeoutError).endpoint).toBe('/alerts');
      expect(PortalReader.codeOf(err)).toBe('200');
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it("passes a sink's own error through unchanged", async () => {
      const { reader } = setup(sim, clock);
      class TooMany extends Error {}
      const err = await failure(
        reader.read({ endpoint: '/alerts', query: { filter: 'all' } }, () => ({
          record: () => {
            throw new TooMany('sink is full');
          },
          finish: () => 0,
        })),
      );
      expect(err).toBeInstanceOf(TooMany);
      expect(err.message).toBe('sink is full');
      expect(PortalReader.codeOf(err)).toBe('200');
      expect(statuses(sim)).toEqual([200]);
    });
  });

  describe('PortalReader and keys', () => {
    const fullKey = 'sim-full-0123456789abcdef01234567';
    const vitalsOnlyKey = 'sim-part-0123456789abcdef01234567';
    let sim: Simulator;
    let clock: FakeClock;

    beforeAll(async () => {
      clock = new FakeClock(T0);
      sim = await startSimulator({ seed: 3, clock, rateLimit: false, moving: false, keys: [{ key: fullKey }, { key: vitalsOnlyKey, permissions: { deny: ['/alerts'] } }] });
    });
    afterAll(async () => {
      await sim.close();
    });
    afterEach(() => {
      sim.requests.length = 0;
    });

    it('turns 401 into an AuthenticationError that names the settings and never the key', async () => {
      const wrongKey = 'wrong-key-that-must-not-leak-42';
      const { reader, logger } = setup(sim, clock, { apiKey: wrongKey });
      const err = await failure(reader.read({ endpoint: '/vitals', query: {} }, sinks().newSink));
      expect(err).toBeInstanceOf(AuthenticationError);
      expect((err as AuthenticationError).status).toBe(401);
      expect(err.message).toContain('POSTURE_API_KEY');
      expect(err.message).toContain('POSTURE_API_KEY_HEADER');
      expect(err.message).not.toContain(wrongKey);
      expect(JSON.stringify(err)).not.toContain(wrongKey);
      expect(logger.lines.length).toBeGreaterThan(0);
      expect(logger.lines.join('\n')).not.toContain(wrongKey);
      expect(statuses(sim)).toEqual([401]);
    });

    it('sends the key in X-Service-ApiKey by default, and the portal takes it', async () => {
      const { reader } = setup(sim, clock, { apiKey: fullKey });
      const outcome = await reader.read({ endpoint: '/vitals', query: {} }, sinks().newSink).catch((err: unknown) => err);
      // keyIndex 0: the portal found the first key in X-Service-ApiKey (the only header it reads).
      expect(sim.requests.map((r) => [r.keyIndex, r.status])).toEqual([[0, 200]]);
      expect(outcome).not.toBeInstanceOf(Error);
      expect((outcome as { received: number }).received).toBeGreaterThan(0);
    });

    it('sends the key in the configured header, and only there', async () => {
      // A proxy in front of the portal records what arrives, and hands the Authorization header on as
      // X-Service-ApiKey (the only header the simulated portal reads).
      const seen: IncomingHttpHeaders[] = [];
      const proxy = createServer((req, res) => {
        seen.push(req.headers);
        const auth = req.headers.authorization;
        const target = new URL(req.url ?? '/', sim.baseUrl);
        undiciRequest(target, { headers: auth === undefined ? {} : { 'X-Service-ApiKey': auth }, dispatcher: raw }).then(
          async (up) => {
            res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type']) });
            res.end(Buffer.from(await up.body.arrayBuffer()));
          },
          () => res.destroy(),
        );
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = proxy.address() as AddressInfo;
        const { reader } = setup(sim, clock, { baseUrl: `http://127.0.0.1:${port}${new URL(sim.baseUrl).pathname}`, apiKey: fullKey, apiKeyHeader: 'Authorization' });
        const outcome = await reader.read({ endpoint: '/vitals', query: {} }, sinks().newSink).catch((err: unknown) => err);
        // What was sent first, then what came of it.
        expect(seen).toHaveLength(1);
        // Compared, never printed: a failure must not show the key.
        expect(seen[0]!.authorization === fullKey, 'the key arrived in Authorization').toBe(true);
        expect('x-service-apikey' in seen[0]!, 'no X-Service-ApiKey header besides').toBe(false);
        expect(Object.entries(seen[0]!).filter(([, v]) => String(v).includes(fullKey)).map(([k]) => k)).toEqual(['authorization']);
        expect(sim.requests.map((r) => [r.keyIndex, r.status])).toEqual([[0, 200]]);
        expect(outcome).not.toBeInstanceOf(Error);
        expect((outcome as { received: number }).received).toBeGreaterThan(0);
      } finally {
        await new Promise((resolve) => proxy.close(resolve));
      }
    });

    it('is refused (401 naming the header) when the key goes in a header the portal does not read', async () => {
      const { reader } = setup(sim, clock, { apiKey: fullKey, apiKeyHeader: 'Authorization' });
      const err = await failure(reader.read({ endpoint: '/vitals', query: {} }, sinks().newSink));
      // The simulator reads only X-Service-ApiKey: the key sent elsewhere is no key.
      expect(err).toBeInstanceOf(AuthenticationError);
      expect(err.message).toContain("'Authorization'");
      expect(sim.requests.map((r) => r.keyIndex)).toEqual([null]);
    });

    it('turns 403 into a PermissionError that says which permission to grant', async () => {
      const { reader } = setup(sim, clock, { apiKey: vitalsOnlyKey });
      const ok = await reader.read({ endpoint: '/vitals', query: {} }, sinks().newSink);
      expect(ok.received).toBeGreaterThan(0);
      const err = await failure(reader.read({ endpoint: '/alerts', query: { filter: 'allunresolved' } }, sinks().newSink));
      expect(err).toBeInstanceOf(PermissionError);
      expect((err as PermissionError).status).toBe(403);
      expect((err as PermissionError).endpoint).toBe('/alerts');
      expect(err.message).toContain('/alerts');
      expect(err.message).toContain('deviceVisibility');
      expect(err.message).not.toContain(vitalsOnlyKey);
      expect(sim.requests.map((r) => [r.keyIndex, r.status])).toEqual([
        [1, 200],
        [1, 403],
      ]);
    });
  });

  describe('PortalReader streaming a large list', () => {
    it('streams 100,000 alerts with flat memory', async () => {
      const gc = exposedGc();
      const clock = new FakeClock(T0);
      const sim = await startSimulator({ seed: 11, clock, rateLimit: false, moving: false, alerts: 100_000 });
      try {
        const { reader } = setup(sim, clock);
        gc();
        const baseline = process.memoryUsage().heapUsed;
        let peak = 0;
        let bytes = 0;
        let count = 0;
        const res = await reader.read({ endpoint: '/alerts', query: { filter: 'allunresolved' } }, () => ({
          record: (raw: unknown) => {
            count++;
            // What the read still holds, garbage collected first: without the collect, the figure
            // is mostly garbage of chunks already read, whose amount depends on when V8 collects.
            if (count % 10_000 === 0) {
              gc();
              peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
            }
            bytes += JSON.stringify(raw).length;
          },
          finish: () => count,
        }));
        expect(res.received).toBe(res.total);
        expect(res.result).toBe(res.total);
        expect(res.total).toBeGreaterThanOrEqual(90_000);
        expect(bytes / res.total).toBeGreaterThan(300);
        // The body is tens of MB; holding it or its records would show here (about 1.3 MB is held).
        expect(peak).toBeLessThan(bytes / 8);
      } finally {
        await sim.close();
      }
    });
  });
});
