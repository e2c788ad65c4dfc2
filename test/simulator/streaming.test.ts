import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { World } from '../../src/simulator/model.js';
import { T0, get } from './helpers.js';

/** JS heap plus Buffers (socket write queues hold Buffers outside the heap). */
function memory(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Counts top-level records of `data` by their first key, across chunk boundaries, keeping nothing else. */
function recordCounter(firstKey: string) {
  const needle = `{"${firstKey}":`;
  let carry = '';
  let count = 0;
  return {
    feed(chunk: string) {
      const text = carry + chunk;
      let i = text.indexOf(needle);
      while (i >= 0) {
        count++;
        i = text.indexOf(needle, i + needle.length);
      }
      carry = text.slice(-(needle.length - 1));
    },
    get count() {
      return count;
    },
  };
}

describe('streaming large lists', () => {
  let sim: Simulator;
  const dispatcher = new Agent();
  beforeAll(async () => {
    sim = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, moving: false, alerts: 100_000, devices: 100_000 });
  });
  afterAll(async () => {
    await sim.close();
    await dispatcher.close();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('streams 100,000 unresolved alerts with flat memory, the length unknown when the body starts', async () => {
    const baseline = memory();
    let peak = baseline;
    const started = performance.now();
    const res = await request(`${sim.baseUrl}/alerts?filter=allunresolved`, { headers: { 'X-Service-ApiKey': sim.apiKey }, dispatcher });
    expect(res.statusCode).toBe(200);
    // A body built before it is sent would carry its length; a streamed one is chunked.
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const counter = recordCounter('state');
    let head = '';
    let tail = '';
    let bytes = 0;
    for await (const chunk of res.body) {
      const text = (chunk as Buffer).toString('latin1'); // the counted needle is ASCII
      if (head.length < 200) head += text.slice(0, 200);
      tail = (tail + text).slice(-300);
      bytes += (chunk as Buffer).length;
      counter.feed(text);
      peak = Math.max(peak, memory());
    }
    const elapsed = performance.now() - started;
    const total = Number(/"total":(\d+)/.exec(head)![1]);
    expect(total).toBeGreaterThan(90_000);
    expect(total).toBeLessThan(110_000);
    expect(counter.count).toBe(total);
    expect(tail).toMatch(/\],"success":true,"statusCode":200,"message":"Successfully retrieved alerts\."\}$/);
    expect(bytes).toBeGreaterThan(50_000_000);
    // A body built in memory would hold the ~60 MB string plus its records.
    expect(peak - baseline).toBeLessThan(50 * 1024 * 1024);
    console.info(`streamed ${total} alerts (${(bytes / 1e6).toFixed(1)} MB) in ${elapsed.toFixed(0)} ms; heap+buffers +${((peak - baseline) / 1e6).toFixed(1)} MB`);
  });

  it('stops generating records while a client does not read (backpressure), with flat memory, and finishes when it reads', async () => {
    const generated = vi.spyOn(World.prototype, 'alert');
    const baseline = memory();
    const res = await request(`${sim.baseUrl}/alerts?filter=allunresolved`, { headers: { 'X-Service-ApiKey': sim.apiKey }, dispatcher });
    // Read nothing; wait until the server has stopped making records (socket buffers full).
    let last = -1;
    let quiet = 0;
    for (let polls = 0; quiet < 8; polls++) {
      if (polls > 2_000) throw new Error(`the server kept generating records for a client that reads nothing (${generated.mock.calls.length} so far)`);
      await new Promise((r) => setTimeout(r, 25));
      const now = generated.mock.calls.length;
      quiet = now === last && now > 0 ? quiet + 1 : 0;
      last = now;
    }
    const during = memory();
    const stalledAt = generated.mock.calls.length;
    const counter = recordCounter('state');
    let head = '';
    for await (const chunk of res.body) {
      const text = (chunk as Buffer).toString('latin1');
      if (head.length < 200) head += text.slice(0, 200);
      counter.feed(text);
    }
    const total = Number(/"total":(\d+)/.exec(head)![1]);
    expect(counter.count).toBe(total);
    // Only what the buffers hold was made before the client read: a small part of the list.
    expect(stalledAt).toBeLessThan(total / 4);
    expect(generated.mock.calls.length).toBe(total);
    expect(during - baseline).toBeLessThan(20 * 1024 * 1024);
  });

  it('pages deep into 100,000 devices without generating the skipped ones', async () => {
    const generated = vi.spyOn(World.prototype, 'device');
    const r = await get(sim, '/devices', { query: { filter: 'all', offset: 99_990, limit: 50 } });
    expect(r.json.total).toBe(100_000);
    expect(r.json.data).toHaveLength(10);
    // Only the ten records sent were made.
    expect(generated).toHaveBeenCalledTimes(10);
    expect(generated.mock.calls.map(([i]) => i)).toEqual(Array.from({ length: 10 }, (_, k) => 99_990 + k));
  });

  it('counts active devices among 100,000', async () => {
    const active = (await get(sim, '/devices', { query: { filter: 'active', limit: 1 } })).json.total;
    const inactive = (await get(sim, '/devices', { query: { filter: 'inactive', limit: 1 } })).json.total;
    expect(active + inactive).toBe(100_000);
    expect(active).toBeGreaterThan(80_000);
  });
});
