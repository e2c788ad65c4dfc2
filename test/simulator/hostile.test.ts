import { Agent, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { closeAfterEach } from '../support/closing.js';
import { T0, get } from './helpers.js';

/** JS heap plus Buffers (socket write queues hold Buffers outside the heap). */
function memory(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Reads a body until `maxBytes` arrived, then aborts; returns what arrived. */
async function readUpTo(sim: Simulator, path: string, maxBytes: number, dispatcher: Agent): Promise<{ status: number; text: string; ended: boolean }> {
  const controller = new AbortController();
  const res = await request(sim.baseUrl + path, { headers: { 'X-Service-ApiKey': sim.apiKey }, dispatcher, signal: controller.signal });
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const c of res.body) {
      chunks.push(c as Buffer);
      bytes += (c as Buffer).length;
      if (bytes >= maxBytes) {
        controller.abort();
        break;
      }
    }
  } catch {
    // The abort ends the iteration with an AbortError; what arrived is kept.
  }
  return { status: res.statusCode, text: Buffer.concat(chunks).toString('utf8'), ended: bytes < maxBytes };
}

/** The records of a partial `data` array: every complete top-level object. */
function completeRecords(text: string): unknown[] {
  const start = text.indexOf('"data":[') + '"data":['.length;
  const out: unknown[] = [];
  let depth = 0;
  let inString = false;
  let from = -1;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{') {
      if (depth++ === 0) from = i;
    } else if (ch === '}' && --depth === 0) out.push(JSON.parse(text.slice(from, i + 1)));
  }
  return out;
}

describe('hostile faults: endless and drip bodies', () => {
  let sim: Simulator;
  const dispatcher = new Agent({ connections: 4 });
  beforeAll(async () => {
    sim = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, moving: false });
  });
  afterAll(async () => {
    await sim.close();
    await dispatcher.close();
  });
  beforeEach(() => sim.clearFaults());

  it('endless: streams a valid envelope whose data repeats valid records far beyond the real list', async () => {
    const whole = (await get(sim, '/alerts', { query: { filter: 'allunresolved' } })).json;
    expect(whole.data.length).toBeGreaterThan(50);
    const wholeBytes = JSON.stringify(whole).length;
    sim.addFault({ path: '/alerts', fault: { kind: 'endless' } });
    const r = await readUpTo(sim, '/alerts?filter=allunresolved', 20 * wholeBytes, dispatcher);
    expect(r.status).toBe(200);
    expect(r.ended).toBe(false);
    expect(r.text.startsWith(`{"offset":0,"limit":0,"total":${whole.total},"data":[`)).toBe(true);
    const records = completeRecords(r.text);
    expect(records.length).toBeGreaterThan(15 * whole.data.length);
    // The same records, in the same order, over and over.
    expect(records.slice(0, whole.data.length)).toEqual(whole.data);
    expect(records.slice(whole.data.length, 2 * whole.data.length)).toEqual(whole.data);
    // The portal still answers normally afterwards.
    expect((await get(sim, '/vitals')).status).toBe(200);
  });

  it('endless: an empty list streams whitespace inside a valid envelope forever', async () => {
    sim.addFault({ path: '/issues', fault: { kind: 'endless' } });
    const r = await readUpTo(sim, '/issues', 1_000_000, dispatcher);
    expect(r.ended).toBe(false);
    expect(r.text.startsWith('{"offset":0,"limit":0,"total":0,"data":[')).toBe(true);
    expect(r.text.slice('{"offset":0,"limit":0,"total":0,"data":['.length).trim()).toBe('');
  });

  it('endless: a single-object or error body never ends either', async () => {
    sim.addFault({ path: '/nowhere', fault: { kind: 'endless' } });
    const r = await readUpTo(sim, '/nowhere', 200_000, dispatcher);
    expect(r.status).toBe(404);
    expect(r.ended).toBe(false);
    expect(r.text).toMatch(/^\{"offset":0,"limit":0,"total":0,"data":\[\],"success":false,"statusCode":404,"message":"Resource not found\." +$/);
  });

  it('endless: honours backpressure (memory stays flat while the client does not read) and stops when the client goes away', async () => {
    sim.addFault({ path: '/alerts', fault: { kind: 'endless' } });
    const baseline = memory();
    const controller = new AbortController();
    const res = await request(`${sim.baseUrl}/alerts?filter=all`, { headers: { 'X-Service-ApiKey': sim.apiKey }, dispatcher, signal: controller.signal });
    expect(res.statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(memory() - baseline).toBeLessThan(20 * 1024 * 1024);
    controller.abort();
    await res.body.dump().catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    // After the client left, the server is idle and serves the next request at once.
    const started = performance.now();
    expect((await get(sim, '/alerts', { query: { filter: 'allunresolved', limit: 5 } })).json.data).toHaveLength(5);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('drip: the body arrives one byte every intervalMs and is complete', async () => {
    const expected = (await get(sim, '/settings/tags')).text;
    expect(expected.length).toBeGreaterThan(100);
    sim.addFault({ path: '/settings/tags', fault: { kind: 'drip', intervalMs: 5 } });
    const started = performance.now();
    const res = await request(`${sim.baseUrl}/settings/tags`, { headers: { 'X-Service-ApiKey': sim.apiKey }, dispatcher });
    expect(res.statusCode).toBe(200);
    expect(performance.now() - started).toBeLessThan(1_000); // headers come at once
    const text = await res.body.text();
    expect(text).toBe(expected);
    expect(performance.now() - started).toBeGreaterThanOrEqual(Buffer.byteLength(expected) * 5 - 5);
  });

  it('drip: by default one byte a second, on real time (a body timeout fires between bytes)', async () => {
    sim.addFault({ path: '/vitals', fault: { kind: 'drip' } });
    const started = performance.now();
    const res = await request(`${sim.baseUrl}/vitals`, { headers: { 'X-Service-ApiKey': sim.apiKey }, dispatcher });
    const arrivals: number[] = [];
    for await (const c of res.body) {
      for (let i = 0; i < (c as Buffer).length; i++) arrivals.push(performance.now() - started);
      if (arrivals.length >= 2) break;
    }
    expect(arrivals.length).toBeGreaterThanOrEqual(2);
    expect(arrivals[0]).toBeGreaterThanOrEqual(950);
    expect(arrivals[1]).toBeGreaterThanOrEqual(1950);
    const short = new Agent({ bodyTimeout: 300 });
    try {
      sim.addFault({ path: '/vitals', fault: { kind: 'drip' } });
      const r = await request(`${sim.baseUrl}/vitals`, { headers: { 'X-Service-ApiKey': sim.apiKey }, dispatcher: short });
      const err = await r.body.text().then(() => undefined, (e: unknown) => e);
      expect((err as { code?: string }).code).toBe('UND_ERR_BODY_TIMEOUT');
    } finally {
      await short.destroy();
    }
  });

  it('drip and endless are consumed like other rules', async () => {
    // A short body: a byte per timer turn, and a busy machine's timer turns are slow.
    sim.addFault({ path: '/settings/tags', times: 1, fault: { kind: 'drip', intervalMs: 0 } });
    const dripped = await get(sim, '/settings/tags');
    const plain = await get(sim, '/settings/tags');
    expect(plain.text.length).toBeGreaterThan(100);
    expect(dripped.text).toBe(plain.text);
    expect(() => sim.addFault({ fault: { kind: 'drip', intervalMs: -1 } })).toThrow(RangeError);
  });
});

describe('simulator closing with hostile bodies in flight', () => {
  it('closes promptly while an endless and a drip body are being sent', async () => {
    const sim = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, moving: false });
    const dispatcher = new Agent();
    try {
      sim.addFault({ path: '/alerts', fault: { kind: 'endless' } });
      sim.addFault({ path: '/vitals', fault: { kind: 'drip', intervalMs: 60_000 } });
      const a = await request(`${sim.baseUrl}/alerts?filter=all`, { headers: { 'X-Service-ApiKey': sim.apiKey }, dispatcher });
      const b = await request(`${sim.baseUrl}/vitals`, { headers: { 'X-Service-ApiKey': sim.apiKey }, dispatcher });
      expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
      const drain = async (body: AsyncIterable<unknown>) => {
        for await (const _ of body) { /* discard */ }
      };
      const bodies = Promise.allSettled([drain(a.body), drain(b.body)]);
      const started = performance.now();
      await sim.close();
      const settled = await bodies;
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    } finally {
      await sim.close();
      await dispatcher.destroy();
    }
  });
});

describe('maxPageSize: a portal that caps every list request', () => {
  let capped: Simulator;
  let free: Simulator;
  beforeAll(async () => {
    const options = { clock: new FakeClock(T0), rateLimit: false as const, moving: false, alerts: 450, devices: 330 };
    capped = await startSimulator({ ...options, maxPageSize: 100 });
    free = await startSimulator(options);
  });
  afterAll(async () => {
    await capped.close();
    await free.close();
  });

  it.each([
    ['no limit', undefined, 100],
    ['limit 0', 0, 100],
    ['a limit above the cap', 500, 100],
    ['the cap itself', 100, 100],
    ['a limit below the cap', 30, 30],
  ])('answers %s with at most the cap, and the envelope says the limit applied', async (_name, limit, expected) => {
    const query: Record<string, string | number> = { filter: 'allunresolved', ...(limit === undefined ? {} : { limit }) };
    const r = (await get(capped, '/alerts', { query })).json;
    const all = (await get(free, '/alerts', { query: { filter: 'allunresolved' } })).json;
    expect(all.total).toBeGreaterThan(300);
    expect(r.data).toHaveLength(expected);
    expect(r.limit).toBe(expected);
    expect(r.total).toBe(all.total);
    expect(r.data).toEqual(all.data.slice(0, expected));
  });

  it.each([
    ['/alerts', { filter: 'allunresolved' }],
    ['/devices', { filter: 'all' }],
  ] as const)('pages %s by offset to exactly the uncapped list', async (path, query) => {
    const all = (await get(free, path, { query })).json;
    expect(all.total).toBeGreaterThan(300);
    const pages: unknown[] = [];
    let offset = 0;
    let requests = 0;
    for (;;) {
      const r = (await get(capped, path, { query: { ...query, offset, limit: 1000 } })).json;
      requests++;
      expect(r.offset).toBe(offset);
      expect(r.total).toBe(all.total);
      pages.push(...r.data);
      offset += r.data.length;
      if (r.data.length === 0 || offset >= r.total) break;
    }
    expect(pages).toEqual(all.data);
    expect(requests).toBe(Math.ceil(all.total / 100));
  });

  it('caps small fixed lists too (a list shorter than the cap is whole)', async () => {
    const r = (await get(capped, '/vitals')).json;
    expect(r.data).toHaveLength(8);
    expect(r.limit).toBe(100);
  });

  it.each([0, -1, 1.5])('rejects maxPageSize %s', async (maxPageSize) => {
    await expect(startSimulator({ maxPageSize })).rejects.toThrow(RangeError);
  });
});

describe('alertIntegrations: alerts spread over many integrations', () => {
  const closing = closeAfterEach();
  const integrationOf = (a: { product: unknown }) => String(a.product).split(',')[0]!;
  const openIntegrations = (sim: Simulator) => {
    const seen = new Map<string, number>();
    for (const a of sim.data().alerts()) if (!a.resolved) seen.set(integrationOf(a), (seen.get(integrationOf(a)) ?? 0) + 1);
    return seen;
  };

  it('keeps the default spread over `integrations`, besides the odd products it serves on purpose', async () => {
    const sim = closing(await startSimulator({ clock: new FakeClock(T0), rateLimit: false, moving: false, alerts: 2_000 }));
    // docs/simulator.md: lone-surrogate products (written alike in UTF-8) and blank ones.
    const odd = ['Legacy Connector\ud800', 'Legacy Connector\ud801', ' ', ' \t'];
    const seen = [...openIntegrations(sim).keys()];
    expect(seen.filter((i) => !odd.includes(i))).toHaveLength(8);
    expect(seen.filter((i) => odd.includes(i)).sort()).toEqual([...odd].sort());
  });

  it('spreads alerts over fewer integrations than `integrations`', async () => {
    const sim = closing(await startSimulator({ clock: new FakeClock(T0), rateLimit: false, moving: false, alerts: 300, alertIntegrations: 3 }));
    expect([...openIntegrations(sim).keys()].sort()).toEqual(['CrowdStrike Falcon', 'Microsoft Intune', 'Okta']);
  });

  it('gives 20,000 distinct integrations when there are enough alerts, and /alerts filters by the numbered names', async () => {
    const sim = closing(await startSimulator({ clock: new FakeClock(T0), rateLimit: false, moving: false, alerts: 100_000, alertIntegrations: 20_000 }));
    const seen = openIntegrations(sim);
    expect(seen.size).toBe(20_000);
    expect(seen.has('CrowdStrike Falcon')).toBe(true);
    expect(seen.has('VMware Carbon Black 1250')).toBe(true); // index 19,999 = 16 × 1,250 - 1
    const one = await get(sim, '/alerts', { query: { filter: 'allunresolved', systemName: 'VMware Carbon Black 1250' } });
    expect(one.json.total).toBe(seen.get('VMware Carbon Black 1250'));
    expect(one.json.data.every((a: { product: string }) => integrationOf(a) === 'VMware Carbon Black 1250')).toBe(true);
    // Vitals stay on `integrations`.
    expect(sim.data().vitals()).toHaveLength(8);
    const total = (await get(sim, '/alerts', { query: { filter: 'allunresolved', limit: 1 } })).json.total;
    expect([...seen.values()].reduce((a, b) => a + b, 0)).toBe(total);
  });

  it.each([0, -5, 2.5])('rejects alertIntegrations %s', async (alertIntegrations) => {
    await expect(startSimulator({ alertIntegrations })).rejects.toThrow(RangeError);
  });
});

describe('spend: another client shares the rate-limit window', () => {
  const closing = closeAfterEach();

  it('fills the window so the next request meets a 429 whose Retry-After says when a slot frees (whole seconds, rounded up)', async () => {
    const clock = new FakeClock(T0);
    const sim = closing(await startSimulator({ clock }));
    sim.spend(10);
    clock.advance(12_300);
    const r = await get(sim, '/vitals');
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('48'); // frees at T0+60s, 47.7 s away
    expect(r.json).toMatchObject({ success: false, statusCode: 429 });
    clock.advance(47_000);
    const s = await get(sim, '/vitals');
    expect([s.status, s.headers['retry-after']]).toEqual([429, '1']); // 0.7 s rounds up
    clock.advance(700);
    expect((await get(sim, '/vitals')).status).toBe(200);
    // Spent requests are not in the log of requests the portal received.
    expect(sim.requests.map((q) => q.status)).toEqual([429, 429, 200]);
  });

  it('shares the window with the client\'s own requests', async () => {
    const clock = new FakeClock(T0);
    const sim = closing(await startSimulator({ clock, rateLimit: { requests: 5, windowMs: 10_000 } }));
    expect((await get(sim, '/vitals')).status).toBe(200);
    clock.advance(2_000);
    sim.spend(3);
    clock.advance(1_000);
    expect((await get(sim, '/vitals')).status).toBe(200);
    const r = await get(sim, '/vitals');
    expect([r.status, r.headers['retry-after']]).toEqual([429, '7']); // own request at T0 frees at T0+10s
    clock.advance(7_000);
    expect((await get(sim, '/vitals')).status).toBe(200);
    const again = await get(sim, '/vitals');
    expect([again.status, again.headers['retry-after']]).toEqual([429, '2']); // the spent ones free at T0+12s
    sim.spend(0);
  });

  it('throws without a rate limit, and for a bad count', async () => {
    const unlimited = closing(await startSimulator({ clock: new FakeClock(T0), rateLimit: false }));
    expect(() => unlimited.spend(1)).toThrow(RangeError);
    const limited = closing(await startSimulator({ clock: new FakeClock(T0) }));
    expect(() => limited.spend(-1)).toThrow(RangeError);
    expect(() => limited.spend(1.5)).toThrow(RangeError);
  });
});
