import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { GUID_RE, T0, get } from './helpers.js';

const LISTS: [string, Record<string, string>, string][] = [
  ['/devices', { filter: 'all' }, 'devices'],
  ['/users', {}, 'users'],
  ['/inventory', { systemName: 'CrowdStrike Falcon' }, 'inventory'],
  ['/alerts', { filter: 'all' }, 'alerts'],
  ['/vitals', {}, 'vitals'],
  ['/settings/usermanagement/users', {}, 'portal users'],
  ['/settings/usermanagement/roles', {}, 'roles'],
  ['/settings/usermanagement/teams', {}, 'teams'],
];

describe('envelope, paging and parameters', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, moving: false, seed: 3 });
  });
  afterAll(() => sim.close());

  it.each(LISTS)('wraps %s in the 2.1 envelope with total = every matching record', async (path, query, resource) => {
    const r = await get(sim, path, { query });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(r.json)).toEqual(['offset', 'limit', 'total', 'data', 'success', 'statusCode', 'message']);
    expect(r.json).toMatchObject({ offset: 0, limit: 0, success: true, statusCode: 200, message: `Successfully retrieved ${resource}.` });
    expect(r.json.data.length).toBe(r.json.total);
    expect(r.json.total).toBeGreaterThan(0);
  });

  it('pages with offset and limit, and the pages add up to the whole list', async () => {
    const whole = (await get(sim, '/alerts', { query: { filter: 'all' } })).json;
    const pageSize = 37;
    const seen: unknown[] = [];
    for (let offset = 0; offset < whole.total; offset += pageSize) {
      const page = (await get(sim, '/alerts', { query: { filter: 'all', offset, limit: pageSize } })).json;
      expect(page).toMatchObject({ offset, limit: pageSize, total: whole.total });
      expect(page.data.length).toBe(Math.min(pageSize, whole.total - offset));
      seen.push(...page.data);
    }
    expect(seen).toEqual(whole.data);
  });

  it('treats limit=0 and an omitted limit alike: everything from the offset', async () => {
    const all = (await get(sim, '/devices', { query: { filter: 'all' } })).json;
    const zero = (await get(sim, '/devices', { query: { filter: 'all', limit: 0, offset: 10 } })).json;
    expect(zero.total).toBe(all.total);
    expect(zero.data).toEqual(all.data.slice(10));
  });

  it('answers an offset past the end with no records and the full total', async () => {
    const r = (await get(sim, '/vitals', { query: { offset: 1000, limit: 5 } })).json;
    expect(r).toMatchObject({ offset: 1000, limit: 5, total: 8, data: [], success: true });
  });

  it.each([
    ['offset', '-1'], ['offset', '1.5'], ['offset', 'abc'], ['limit', '-5'], ['limit', '2e3'], ['limit', '10x'],
  ])('rejects %s=%s with 400 and an error envelope', async (name, value) => {
    const r = await get(sim, '/vitals', { query: { [name]: value } });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ success: false, statusCode: 400, data: [], total: 0 });
    expect(r.json.message).toContain(name);
  });

  it.each([
    ['/devices', {}, 'filter'],
    ['/devices', { filter: 'everything' }, 'filter'],
    ['/devices', { filter: '' }, 'filter'],
    ['/alerts', {}, 'filter'],
    ['/alerts', { filter: 'open' }, 'filter'],
    ['/inventory', {}, 'systemName'],
    ['/inventory', { systemName: 'Not An Integration' }, 'systemName'],
    ['/inventory', { systemName: 'okta', type: 'printers' }, 'type'],
    ['/users', { filter: 'weird' }, 'filter'],
  ] as const)('answers %s %o with 400 naming %s', async (path, query, name) => {
    const r = await get(sim, path, { query });
    expect(r.status).toBe(400);
    expect(Object.keys(r.json)).toEqual(['offset', 'limit', 'total', 'data', 'success', 'statusCode', 'message']);
    expect(r.json).toMatchObject({ success: false, statusCode: 400, data: [] });
    expect(r.json.message).toContain(name);
  });

  it('accepts the required filters in any letter case', async () => {
    const a = await get(sim, '/devices', { query: { filter: 'Active' } });
    const b = await get(sim, '/devices', { query: { filter: 'active' } });
    expect(a.status).toBe(200);
    expect(a.json.total).toBe(b.json.total);
  });

  it.each(['/nope', '/devices/extra/segments', '/settings', '/public-api/v2/vitals'])('answers unknown path %s with a 404 envelope', async (path) => {
    const r = await get(sim, path.startsWith('/public-api') ? sim.baseUrl.replace('/public-api/v1', '') + path : path);
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ success: false, statusCode: 404, data: [] });
  });

  it.each(['POST', 'DELETE'] as const)('answers %s with 405', async (method) => {
    const r = await get(sim, '/vitals', { method });
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET');
    expect(r.json).toMatchObject({ success: false, statusCode: 405 });
  });

  it('tolerates a trailing slash on a path', async () => {
    const r = await get(sim, '/vitals/');
    expect(r.status).toBe(200);
    expect(r.json.total).toBe(8);
  });
});

describe('paths of spec 4.9', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, moving: false, seed: 4 });
  });
  afterAll(() => sim.close());

  it('serves /devices/{id} by the GUID that alerts carry, and by host name', async () => {
    const alerts = (await get(sim, '/alerts', { query: { filter: 'allunresolved' } })).json.data;
    const deviceAlert = alerts.find((a: { itemEntityType: string }) => a.itemEntityType === 'device');
    expect(deviceAlert.itemId).toMatch(GUID_RE);
    const byId = await get(sim, `/devices/${deviceAlert.itemId}`);
    expect(byId.status).toBe(200);
    expect(byId.json).toMatchObject({ success: true, statusCode: 200, message: 'Successfully retrieved device.' });
    expect(byId.json.data.hostName).toBe(deviceAlert.item);
    const byName = await get(sim, `/devices/${encodeURIComponent(deviceAlert.item)}`);
    expect(byName.json.data).toEqual(byId.json.data);
  });

  it('answers /devices/{id} for an unknown id with 404', async () => {
    const r = await get(sim, '/devices/00000000-0000-4000-8000-000000000000');
    expect(r.status).toBe(404);
  });

  it('serves /users/{id} by the GUID of user alerts and by email', async () => {
    const users = (await get(sim, '/users')).json.data;
    const byEmail = await get(sim, `/users/${encodeURIComponent(users[5].email)}`);
    expect(byEmail.status).toBe(200);
    expect(byEmail.json.data).toEqual(users[5]);
    const alerts = (await get(sim, '/alerts', { query: { filter: 'all' } })).json.data;
    const userAlert = alerts.find((a: { itemEntityType: string }) => a.itemEntityType === 'user');
    const byId = await get(sim, `/users/${userAlert.itemId}`);
    expect(byId.status).toBe(200);
    expect(byId.json.data.name).toBe(userAlert.item);
  });

  it('serves /vitals/integrations as the /vitals list', async () => {
    const a = await get(sim, '/vitals/integrations');
    const b = await get(sim, '/vitals');
    expect(a.json.data).toEqual(b.json.data);
  });

  it('serves /settings/tags as the tags devices carry', async () => {
    const tags: string[] = (await get(sim, '/settings/tags')).json.data;
    const devices = (await get(sim, '/devices', { query: { filter: 'all' } })).json.data;
    const carried = new Set<string>(devices.flatMap((d: { tags: string[] }) => d.tags));
    expect(carried.size).toBeGreaterThan(0);
    expect([...carried].filter((t) => !tags.includes(t))).toEqual([]);
  });

  it('serves /settings/integrations with the names /inventory accepts', async () => {
    const integrations = (await get(sim, '/settings/integrations')).json.data;
    expect(integrations).toHaveLength(8);
    for (const i of integrations) {
      const r = await get(sim, '/inventory', { query: { systemName: i.name } });
      expect(r.status).toBe(200);
    }
  });

  it.each(['/inventory/devices', '/inventory/software', '/issues', '/vitals/devices'])('answers %s with an empty list envelope', async (path) => {
    const r = await get(sim, path);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ offset: 0, limit: 0, total: 0, data: [], success: true, statusCode: 200 });
  });
});
