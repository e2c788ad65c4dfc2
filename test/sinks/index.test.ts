import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { loadSink, pushAll, SinkError, type Sink } from '../../src/sinks/index.js';
import { batchFor } from './fixtures.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

describe('loadSink', () => {
  it.each(['remote_write', 'pushgateway', 'otlp'] as const)('imports and builds the %s sink from its settings', async (name) => {
    const sink = await loadSink(name, {
      sinks: [name],
      remoteWrite: { url: 'https://aps-workspaces.eu-west-1.amazonaws.com/workspaces/ws-1/api/v1/remote_write', auth: { kind: 'sigv4', region: 'eu-west-1' } },
      pushgateway: { url: 'http://pushgateway:9091' },
      otlp: {},
    });
    expect(sink.name).toBe(name);
  });
});

describe('pushAll', () => {
  function fakeSink(name: Sink['name'], behaviour: (clock: FakeClock) => Promise<void>, clock: FakeClock): Sink & { calls: number } {
    const sink = {
      name,
      calls: 0,
      async push() {
        sink.calls++;
        await behaviour(clock);
      },
    };
    return sink;
  }

  it('starts every push before any finishes: each of two sinks waits for the other to have started', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const signal = () => {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve };
    };
    const started = { remote_write: signal(), pushgateway: signal() };
    /** Marks `name` started, then waits for `other`; gives up (fails) after 10 s of fake time so a sequential pushAll fails rather than hangs. */
    const waitsFor = (name: keyof typeof started, other: keyof typeof started) =>
      fakeSink(name, async (c) => {
        started[name].resolve();
        const stop = new AbortController();
        const gaveUp = c.sleep(10_000, stop.signal).then(() => {
          throw new Error(`${name} waited 10 s for ${other} to start: the pushes ran one after the other`);
        });
        try {
          await Promise.race([started[other].promise, gaveUp]);
        } finally {
          stop.abort();
          gaveUp.catch(() => undefined);
        }
      }, clock);
    const outcomes = await pushAll([waitsFor('remote_write', 'pushgateway'), waitsFor('pushgateway', 'remote_write')], [batchFor('acme', T0)], { clock, logger: memoryLogger(), deadline: T0 + 60_000 });
    expect(outcomes.map((o) => [o.sink, o.ok, o.error?.message])).toEqual([
      ['remote_write', true, undefined],
      ['pushgateway', true, undefined],
    ]);
    expect(outcomes.map((o) => o.durationMs)).toEqual([0, 0]);
  });

  it('reports each outcome; one failure stops no other', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const logger = memoryLogger();
    const sinks = [
      fakeSink('remote_write', async (c) => c.sleep(1500), clock),
      fakeSink('pushgateway', async () => {
        throw new SinkError('pushgateway', 'HTTP 400: bad', { status: 400 });
      }, clock),
      fakeSink('otlp', async () => {
        throw new TypeError('boom');
      }, clock),
    ];
    const outcomes = await pushAll(sinks, [batchFor('acme', T0)], { clock, logger, deadline: T0 + 60_000 });
    expect(sinks.map((s) => s.calls)).toEqual([1, 1, 1]);
    expect(outcomes.map((o) => [o.sink, o.ok])).toEqual([
      ['remote_write', true],
      ['pushgateway', false],
      ['otlp', false],
    ]);
    expect(outcomes[0]!.durationMs).toBe(1500);
    expect(outcomes[1]!.error).toBeInstanceOf(SinkError);
    expect(outcomes[1]!.error!.status).toBe(400);
    // A bug in a sink still comes back as a SinkError naming that sink, with the original as cause.
    expect(outcomes[2]!.error).toBeInstanceOf(SinkError);
    expect(outcomes[2]!.error!.sink).toBe('otlp');
    expect(outcomes[2]!.error!.cause).toBeInstanceOf(TypeError);
    // One line per failed push, at error: the caller (once, the Lambda) does not log it again.
    expect(logger.records().filter((r) => r.msg === 'push failed').map((r) => [r.level, r.sink])).toEqual([
      ['error', 'pushgateway'],
      ['error', 'otlp'],
    ]);
  });
});
