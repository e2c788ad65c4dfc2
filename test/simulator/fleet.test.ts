import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { shardOf } from '../../src/config/shard.js';
import { FakeClock } from '../../src/core/clock.js';
import { startFleet } from '../../src/simulator/fleet.js';
import { startSimulator } from '../../src/simulator/index.js';
import { closeAfterEach } from '../support/closing.js';
import { T0, agent } from './helpers.js';
import { exposedGc } from '../support/gc.js';

async function get(url: string, key: string | null): Promise<{ status: number; retryAfter: string | undefined; json: any }> {
  const res = await request(url, { headers: key === null ? {} : { 'X-Service-ApiKey': key }, dispatcher: agent });
  const text = await res.body.text();
  const ra = res.headers['retry-after'];
  return { status: res.statusCode, retryAfter: Array.isArray(ra) ? ra[0] : ra, json: JSON.parse(text) };
}

describe('startFleet', () => {
  const closing = closeAfterEach();

  it('serves each portal under its own base URL with its own data and key', async () => {
    const clock = new FakeClock(T0);
    const fleet = closing(await startFleet({ portals: 3, clock }));
    expect(fleet.names).toEqual(['portal-00000', 'portal-00001', 'portal-00002']);
    const bases = fleet.names.map((n) => fleet.baseUrl(n));
    expect(new Set(bases).size).toBe(3);
    for (const [i, n] of fleet.names.entries()) expect(bases[i]).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/p/${n}/public-api/v1$`));
    expect(new Set(fleet.names.map((n) => fleet.apiKey(n))).size).toBe(3);

    const devices = await Promise.all(fleet.names.map(async (n) => (await get(`${fleet.baseUrl(n)}/devices?filter=all`, fleet.apiKey(n))).json));
    for (const d of devices) {
      expect(d).toMatchObject({ success: true, total: 20 });
      expect(d.data).toHaveLength(20);
    }
    const ids = devices.map((d) => d.data.map((x: { hostName: string }) => x.hostName).join());
    expect(new Set(ids).size).toBe(3);
    // Each portal's data is what its own controls say it serves.
    expect(devices[1].data.map((x: { hostName: string }) => x.hostName)).toEqual([...fleet.portal('portal-00001').data().devices()].map((x) => x.hostName));
    const vitals = (await get(`${fleet.baseUrl('portal-00002')}/vitals`, fleet.apiKey('portal-00002'))).json;
    expect(vitals.data).toHaveLength(4);
  });

  it('is deterministic: the same seed and names give the same keys and data', async () => {
    const clock = new FakeClock(T0);
    const a = closing(await startFleet({ portals: ['acme', 'globex'], seed: 7, clock, moving: false }));
    const b = closing(await startFleet({ portals: ['acme', 'globex'], seed: 7, clock, moving: false }));
    const c = closing(await startFleet({ portals: ['acme', 'globex'], seed: 8, clock, moving: false }));
    expect(a.apiKey('acme')).toBe(b.apiKey('acme'));
    expect(a.apiKey('acme')).not.toBe(c.apiKey('acme'));
    const body = async (f: typeof a) => JSON.stringify((await get(`${f.baseUrl('globex')}/alerts?filter=all`, f.apiKey('globex'))).json.data);
    expect(await body(a)).toBe(await body(b));
    expect(await body(a)).not.toBe(await body(c));
  });

  it("answers another portal's key with 401, and an unknown portal with 404", async () => {
    const clock = new FakeClock(T0);
    const fleet = closing(await startFleet({ portals: ['acme', 'globex'], clock }));
    const wrong = await get(`${fleet.baseUrl('acme')}/vitals`, fleet.apiKey('globex'));
    expect(wrong.status).toBe(401);
    expect(wrong.json).toMatchObject({ success: false, statusCode: 401 });
    expect((await get(`${fleet.baseUrl('acme')}/vitals`, fleet.apiKey('acme'))).status).toBe(200);
    const origin = new URL(fleet.baseUrl('acme')).origin;
    expect((await get(`${origin}/p/initech/public-api/v1/vitals`, fleet.apiKey('acme'))).status).toBe(404);
    expect((await get(`${origin}/public-api/v1/vitals`, fleet.apiKey('acme'))).status).toBe(404);
    expect(() => fleet.baseUrl('initech')).toThrow(RangeError);
    // Requests are recorded per portal, without the key.
    expect(fleet.requests('acme').map((r) => [r.path, r.status])).toEqual([['/vitals', 401], ['/vitals', 200]]);
    expect(fleet.requests('globex')).toEqual([]);
    expect(JSON.stringify(fleet.requests('acme'))).not.toContain(fleet.apiKey('acme'));
    expect(JSON.stringify(fleet.requests('acme'))).not.toContain(fleet.apiKey('globex'));
  });

  it('gives each portal its own 10 requests per 60 s: a 429 with Retry-After past it, others unaffected', async () => {
    const clock = new FakeClock(T0);
    const fleet = closing(await startFleet({ portals: ['acme', 'globex'], clock }));
    const acme = (path: string) => get(`${fleet.baseUrl('acme')}${path}`, fleet.apiKey('acme'));
    for (let i = 0; i < 10; i++) {
      expect((await acme('/vitals')).status).toBe(200);
      clock.advance(1_000);
    }
    const over = await acme('/vitals');
    expect(over.status).toBe(429);
    expect(over.retryAfter).toBe('50');
    expect(fleet.overBudget()).toEqual(['acme']);
    // globex's budget is its own.
    for (let i = 0; i < 10; i++) expect((await get(`${fleet.baseUrl('globex')}/vitals`, fleet.apiKey('globex'))).status).toBe(200);
    expect(fleet.overBudget()).toEqual(['acme']);
    clock.advance(50_000);
    expect((await acme('/vitals')).status).toBe(200);
    expect(fleet.requests('acme').map((r) => r.status).filter((s) => s === 429)).toHaveLength(1);
  });

  it('builds a portal only when it is called: 10,000 names cost little until then', async () => {
    const gc = exposedGc();
    gc();
    const before = process.memoryUsage().heapUsed;
    const fleet = closing(await startFleet({ portals: 10_000, clock: new FakeClock(T0) }));
    expect(fleet.names).toHaveLength(10_000);
    for (const n of fleet.names) {
      fleet.baseUrl(n);
      fleet.apiKey(n);
      expect(fleet.requests(n)).toHaveLength(0);
    }
    expect(fleet.built()).toBe(0);
    expect(new Set(fleet.names.map((n) => fleet.apiKey(n))).size).toBe(10_000);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    console.log(`10,000 unbuilt portals: heap +${(grown / 1e6).toFixed(1)} MB`);
    expect(grown).toBeLessThan(15e6);
    const last = fleet.names[9_999]!;
    expect((await get(`${fleet.baseUrl(last)}/devices?filter=all`, fleet.apiKey(last))).json.total).toBe(20);
    expect(fleet.built()).toBe(1);
    expect(fleet.overBudget()).toEqual([]);
  });

  it('tells sharded collectors (each portal once) from replicas (each portal twice) by the portals over budget', async () => {
    const clock = new FakeClock(T0);
    const fleet = closing(await startFleet({ portals: 30, clock }));
    // One collection of a portal: 6 requests, within its 10 per 60 s alone, over it when done twice.
    const collect = async (name: string) => {
      for (const path of ['/vitals', '/alerts?filter=allunresolved', '/devices?filter=all', '/settings/integrations', '/vitals/integrations', '/users?filter=all']) {
        await get(`${fleet.baseUrl(name)}${path}`, fleet.apiKey(name));
      }
    };
    for (let shard = 0; shard < 3; shard++) {
      for (const name of fleet.names.filter((n) => shardOf(n, 3) === shard)) await collect(name);
    }
    expect(fleet.overBudget()).toEqual([]);
    for (const name of fleet.names) expect(fleet.requests(name)).toHaveLength(6);
    clock.advance(60_000);
    // Two replicas of one exporter, each collecting every portal.
    for (let replica = 0; replica < 2; replica++) for (const name of fleet.names.slice(0, 5)) await collect(name);
    expect(fleet.overBudget()).toEqual(fleet.names.slice(0, 5));
  });

  it('leaves startSimulator serving one portal at the plain base path', async () => {
    const sim = closing(await startSimulator({ clock: new FakeClock(T0), devices: 5 }));
    expect(sim.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/public-api\/v1$/);
    expect((await get(`${sim.baseUrl}/devices?filter=all`, sim.apiKey)).json.total).toBe(5);
    expect(sim.requests).toHaveLength(1);
  });

  it('rejects repeated or slashed names', async () => {
    await expect(startFleet({ portals: ['a', 'a'] })).rejects.toThrow(RangeError);
    await expect(startFleet({ portals: ['a/b'] })).rejects.toThrow(RangeError);
    await expect(startFleet({ portals: 0 })).rejects.toThrow(RangeError);
  });
});
