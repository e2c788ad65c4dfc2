import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { T0, get } from './helpers.js';

const FULL = 'full-key-1111111111111111';
const NONE = 'none-key-2222222222222222';
const NO_VITALS = 'novitals-key-333333333333';
const FINANCE = 'finance-key-4444444444444';

describe('authentication and permissions', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({
      clock: new FakeClock(T0),
      rateLimit: false,
      moving: false,
      keys: [
        { key: FULL },
        { key: NONE, permissions: 'none' },
        { key: NO_VITALS, permissions: { deny: ['/vitals', '/settings/usermanagement'] } },
        { key: FINANCE, team: { name: 'Finance IT', tags: ['finance'] } },
      ],
    });
  });
  afterAll(() => sim.close());

  it('uses the first key as apiKey', () => {
    expect(sim.apiKey).toBe(FULL);
  });

  it('answers a missing key with 401 and an error envelope', async () => {
    const r = await get(sim, '/vitals', { key: null });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ success: false, statusCode: 401, data: [] });
  });

  it('answers an unknown key with 401 without echoing it', async () => {
    const r = await get(sim, '/vitals', { key: 'wrong-key-value-xyz' });
    expect(r.status).toBe(401);
    expect(r.text).not.toContain('wrong-key-value-xyz');
  });

  it.each(['x-service-apikey', 'X-SERVICE-APIKEY', 'X-Service-ApiKey'])('reads the key header case-insensitively (%s)', async (headerName) => {
    const r = await get(sim, '/vitals', { headerName });
    expect(r.status).toBe(200);
  });

  it('answers every path with 403 for a key without permissions', async () => {
    for (const path of ['/vitals', '/devices?filter=all', '/alerts?filter=all', '/settings/tags']) {
      expect((await get(sim, path, { key: NONE })).status).toBe(403);
    }
  });

  it('answers only the denied paths with 403', async () => {
    expect((await get(sim, '/vitals', { key: NO_VITALS })).status).toBe(403);
    expect((await get(sim, '/vitals/integrations', { key: NO_VITALS })).status).toBe(403);
    expect((await get(sim, '/settings/usermanagement/roles', { key: NO_VITALS })).status).toBe(403);
    expect((await get(sim, '/alerts', { key: NO_VITALS, query: { filter: 'all' } })).status).toBe(200);
    expect((await get(sim, '/settings/tags', { key: NO_VITALS })).status).toBe(200);
  });

  it('records which key was used by index, never the key itself', async () => {
    sim.requests.length = 0;
    await get(sim, '/vitals', { key: NO_VITALS });
    await get(sim, '/vitals', { key: 'nobody' });
    await get(sim, '/vitals', { key: null });
    expect(sim.requests.map((r) => [r.keyIndex, r.status])).toEqual([[2, 403], [null, 401], [null, 401]]);
    const dump = JSON.stringify(sim.requests);
    for (const k of [FULL, NONE, NO_VITALS, FINANCE, 'nobody']) expect(dump).not.toContain(k);
  });
});

describe('team scoping', () => {
  let sim: Simulator;
  const clock = new FakeClock(T0);
  beforeAll(async () => {
    sim = await startSimulator({
      clock, rateLimit: false, moving: false, seed: 9, devices: 400, alerts: 300,
      keys: [{ key: FULL }, { key: FINANCE, team: { name: 'Finance IT', tags: ['finance'] } }, { key: 'srv-key-55555555555555', team: { name: 'Servers', tags: ['servers', 'production'] } }],
    });
  });
  afterAll(() => sim.close());

  it('shows a team key only the devices carrying one of its tags', async () => {
    const all = (await get(sim, '/devices', { query: { filter: 'all' } })).json.data as { tags: string[]; hostName: string }[];
    const scoped = (await get(sim, '/devices', { key: FINANCE, query: { filter: 'all' } })).json;
    const expected = all.filter((d) => d.tags.includes('finance'));
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(all.length);
    expect(scoped.total).toBe(expected.length);
    expect(scoped.data).toEqual(expected);
    const servers = (await get(sim, '/devices', { key: 'srv-key-55555555555555', query: { filter: 'active' } })).json.data as { tags: string[] }[];
    expect(servers.length).toBeGreaterThan(0);
    for (const d of servers) expect(d.tags.some((t) => t === 'servers' || t === 'production')).toBe(true);
  });

  it("shows a team key only its devices' alerts plus every user and system alert", async () => {
    const devices = (await get(sim, '/devices', { key: FINANCE, query: { filter: 'all' } })).json.data as { hostName: string }[];
    const hosts = new Set(devices.map((d) => d.hostName));
    const all = (await get(sim, '/alerts', { query: { filter: 'all' } })).json.data as { itemEntityType: string; item: string }[];
    const scoped = (await get(sim, '/alerts', { key: FINANCE, query: { filter: 'all' } })).json;
    const expected = all.filter((a) => a.itemEntityType !== 'device' || hosts.has(a.item));
    expect(scoped.total).toBe(expected.length);
    expect(scoped.data).toEqual(expected);
    expect(expected.some((a) => a.itemEntityType === 'device')).toBe(true);
    expect(expected.length).toBeLessThan(all.length);
  });

  it('hides a device outside the team from /devices/{id}', async () => {
    const all = (await get(sim, '/devices', { query: { filter: 'all' } })).json.data as { tags: string[]; hostName: string }[];
    const outside = all.find((d) => !d.tags.includes('finance'))!;
    expect((await get(sim, `/devices/${outside.hostName}`)).status).toBe(200);
    expect((await get(sim, `/devices/${outside.hostName}`, { key: FINANCE })).status).toBe(404);
  });

  it('keeps /vitals portal-wide for a team key', async () => {
    const a = (await get(sim, '/vitals')).json.data;
    const b = (await get(sim, '/vitals', { key: FINANCE })).json.data;
    expect(b).toEqual(a);
  });

  it("lists a key's team in /settings/usermanagement/teams", async () => {
    const teams = (await get(sim, '/settings/usermanagement/teams')).json.data as { name: string }[];
    expect(teams.map((t) => t.name)).toContain('Servers');
    expect(teams.filter((t) => t.name === 'Finance IT')).toHaveLength(1);
  });
});
