import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type AlertRecord, type DeviceRecord, type Simulator, type VitalsRecord } from '../../src/simulator/index.js';
import { GUID_RE, MIN_TS, T0, TS_RE, get } from './helpers.js';

const DAY = 86_400_000;
const parse = (ts: string) => Date.parse(ts.slice(0, 23) + 'Z');

/** Collects shape problems so one record loop ends in one assertion (vitest's expect is slow in hot loops). */
class Problems {
  readonly list: string[] = [];
  check(ok: boolean, what: string): void {
    if (!ok && this.list.length < 20) this.list.push(what);
  }
  types(record: Record<string, unknown>, types: Record<string, string>, where: string): void {
    const keys = Object.keys(record).sort().join(',');
    this.check(keys === Object.keys(types).sort().join(','), `${where}: keys ${keys}`);
    for (const [k, t] of Object.entries(types)) {
      const v = record[k];
      const actual = Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v;
      this.check(actual === t, `${where}.${k}: ${actual}, expected ${t}`);
    }
  }
}

const ENABLED_KEYS = ['key', 'name', 'vitalsEnabled', 'agentDeployedPossibleCompliant', 'agentDeployedCompliant',
  'agentFunctioningPossibleCompliant', 'agentFunctioningCompliant', 'configurationPossibleCompliant', 'configurationCompliant'].join();

/** Spec 2.7's field presence and funnel rule for one record; '' when it holds. */
function funnelProblem(r: VitalsRecord): string {
  if (r.vitalsEnabled) {
    if (Object.keys(r).join() !== ENABLED_KEYS) return `${r.key}: fields ${Object.keys(r).join()}`;
    if (!Object.values(r).slice(3).every((v) => Number.isInteger(v) && (v as number) >= 0)) return `${r.key}: counts`;
    if (r.agentFunctioningPossibleCompliant !== r.agentDeployedCompliant) return `${r.key}: function possible != deployed compliant`;
    if (r.configurationPossibleCompliant !== r.agentFunctioningCompliant) return `${r.key}: configuration possible != function compliant`;
    if (r.agentDeployedCompliant! > r.agentDeployedPossibleCompliant!) return `${r.key}: deployed compliant > possible`;
    if (r.agentFunctioningCompliant! > r.agentFunctioningPossibleCompliant!) return `${r.key}: function compliant > possible`;
    if (r.configurationCompliant! > r.configurationPossibleCompliant!) return `${r.key}: configuration compliant > possible`;
    return '';
  }
  if (Object.keys(r).join() !== 'key,name,vitalsEnabled,activeAgents') return `${r.key}: fields ${Object.keys(r).join()}`;
  return Number.isInteger(r.activeAgents) && r.activeAgents! >= 0 ? '' : `${r.key}: activeAgents`;
}

describe('record shapes (spec 2.3–2.10)', () => {
  let sim: Simulator;
  const clock = new FakeClock(T0);
  beforeAll(async () => {
    sim = await startSimulator({ clock, rateLimit: false, seed: 11, devices: 300, alerts: 200 });
  });
  afterAll(() => sim.close());

  it('serves devices in the full 2.3 shape', async () => {
    const devices: DeviceRecord[] = (await get(sim, '/devices', { query: { filter: 'all' } })).json.data;
    expect(devices).toHaveLength(300);
    expect(new Set(devices.map((d) => d.hostName)).size).toBe(300);
    const p = new Problems();
    for (const d of devices) {
      const at = d.hostName;
      p.types(d as unknown as Record<string, unknown>, {
        hostName: 'string', os: 'string', osVersion: 'string', lastOnline: 'string', location: 'object', tags: 'array', metadata: 'object',
        lastUser: 'object', lastLogin: 'string', publicIp: 'string', privateIp: 'string', macAddress: 'string', securityTools: 'array', connectedSystems: 'array',
      }, at);
      p.check(['Windows', 'macOS', 'Linux', 'iOS', 'Android'].includes(d.os), `${at}.os`);
      p.check(TS_RE.test(d.lastOnline) && TS_RE.test(d.lastLogin), `${at} timestamps`);
      p.check(/^[a-z]{2}$/.test(d.location.countryCode), `${at}.location.countryCode`);
      p.types(d.location as unknown as Record<string, unknown>, { countryCode: 'string', country: 'string', city: 'string' }, `${at}.location`);
      p.check(d.tags.length > 0 && d.tags.every((t) => typeof t === 'string'), `${at}.tags`);
      const m = d.metadata;
      p.types(m as unknown as Record<string, unknown>, {
        serial_number: 'string', manufacturer: 'string', model: 'string', total_disk_storage: 'string', free_disk_storage: 'string',
        total_memory: 'string', cpu_speed: 'string', warranty_expiry: 'string',
      }, `${at}.metadata`);
      p.check(/^\d+ GB$/.test(m.total_disk_storage) && /^\d+ GB$/.test(m.free_disk_storage) && /^\d+ GB$/.test(m.total_memory), `${at} sizes`);
      p.check(/^\d+(\.\d+)? GHz$/.test(m.cpu_speed), `${at}.cpu_speed`);
      p.check(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(m.warranty_expiry), `${at}.warranty_expiry`);
      p.check(parseInt(m.free_disk_storage) <= parseInt(m.total_disk_storage), `${at} free <= total`);
      p.types(d.lastUser as unknown as Record<string, unknown>, { name: 'string', email: 'string' }, `${at}.lastUser`);
      p.check(/^([0-9A-F]{2}:){5}[0-9A-F]{2}$/.test(d.macAddress), `${at}.macAddress`);
      for (const s of d.securityTools) p.types(s as unknown as Record<string, unknown>, { name: 'string', redAlerts: 'number', amberAlerts: 'number' }, `${at}.securityTools`);
      for (const s of d.connectedSystems) p.types(s as unknown as Record<string, unknown>, { name: 'string', isConnected: 'boolean', isActive: 'boolean' }, `${at}.connectedSystems`);
      p.check(parse(d.lastLogin) <= parse(d.lastOnline) && parse(d.lastOnline) <= T0, `${at} lastLogin <= lastOnline <= now`);
    }
    expect(p.list).toEqual([]);
  });

  it('splits devices into active (online within 30 days) and inactive', async () => {
    const active: DeviceRecord[] = (await get(sim, '/devices', { query: { filter: 'active' } })).json.data;
    const inactive: DeviceRecord[] = (await get(sim, '/devices', { query: { filter: 'inactive' } })).json.data;
    expect(active.length + inactive.length).toBe(300);
    expect(active.length).toBeGreaterThan(inactive.length); // most are active
    expect(inactive.length).toBeGreaterThan(0);
    for (const d of active) expect(T0 - parse(d.lastOnline)).toBeLessThanOrEqual(30 * DAY);
    for (const d of inactive) expect(T0 - parse(d.lastOnline)).toBeGreaterThan(30 * DAY);
  });

  it('serves alerts in the 2.6 shape with consistent flags and timestamps', async () => {
    const alerts: AlertRecord[] = (await get(sim, '/alerts', { query: { filter: 'all' } })).json.data;
    const integrations = (await get(sim, '/settings/integrations')).json.data.map((i: { name: string }) => i.name);
    expect(alerts.length).toBeGreaterThan(200);
    const seen = { state: new Set(), status: new Set(), entity: new Set() };
    const p = new Problems();
    alerts.forEach((a, i) => {
      const at = `alert[${i}]`;
      p.types(a as unknown as Record<string, unknown>, {
        state: 'string', product: 'string', status: 'string', item: 'string', issue: 'string', details: 'string', itemEntityType: 'string',
        ownerName: 'string', timestamp: 'string', acknowledgedTime: 'string', assignedTime: 'string', resolved: 'boolean', acknowledged: 'boolean',
        resolvedBy: 'string', resolvedTime: 'string', itemId: 'string', inactiveUntil: 'string', hasLinkedDevice: 'boolean',
      }, at);
      seen.state.add(a.state);
      seen.status.add(a.status);
      seen.entity.add(a.itemEntityType);
      p.check(['Red', 'Amber', 'Green'].includes(a.state), `${at}.state`);
      p.check(['Incident', 'Warning', 'Info'].includes(a.status), `${at}.status`);
      p.check(['device', 'user', 'system'].includes(a.itemEntityType), `${at}.itemEntityType`);
      const [integration, category] = a.product.split(', ');
      // Besides `<integration>, <category>`, the odd products docs/simulator.md lists: lone surrogates and blanks.
      const odd = ['Legacy Connector\ud800', 'Legacy Connector\ud801'].includes(integration!) || [' ', ' \t, Connector'].includes(a.product);
      p.check(odd || (integrations.includes(integration) && !!category), `${at}.product ${a.product}`);
      p.check(GUID_RE.test(a.itemId), `${at}.itemId`);
      p.check([a.timestamp, a.acknowledgedTime, a.assignedTime, a.resolvedTime, a.inactiveUntil].every((ts) => TS_RE.test(ts)), `${at} timestamp form`);
      // A few have their creation time unset (spec 2.2: the minimum date).
      p.check(a.timestamp === MIN_TS || parse(a.timestamp) <= T0, `${at}.timestamp`);
      p.check(a.acknowledged === (a.acknowledgedTime !== MIN_TS), `${at} acknowledged vs acknowledgedTime`);
      p.check((a.ownerName === '') === (a.assignedTime === MIN_TS), `${at} ownerName vs assignedTime`);
      p.check((a.resolvedBy === '') === !a.resolved, `${at} resolvedBy`);
      p.check((a.resolvedTime === MIN_TS) === !a.resolved, `${at} resolvedTime`);
      if (a.resolved) p.check(parse(a.resolvedTime) > parse(a.timestamp) && parse(a.resolvedTime) <= T0, `${at} resolvedTime order`);
      if (a.acknowledged) p.check(parse(a.acknowledgedTime) >= parse(a.timestamp), `${at} acknowledgedTime order`);
      if (a.itemEntityType === 'system') p.check(!a.hasLinkedDevice, `${at} system alerts have no device`);
      if (a.itemEntityType === 'device') p.check(a.hasLinkedDevice, `${at} device alerts have a device`);
      p.check(a.details.includes(a.item), `${at}.details names the item`);
    });
    expect(p.list).toEqual([]);
    expect(seen.state.size).toBe(3);
    expect(seen.status.size).toBe(3);
    expect(seen.entity.size).toBe(3);
    // Some unresolved alerts are snoozed into the future, some are unassigned.
    const open = alerts.filter((a) => !a.resolved);
    expect(open.some((a) => a.inactiveUntil !== MIN_TS && parse(a.inactiveUntil) > T0)).toBe(true);
    expect(open.some((a) => a.ownerName === '')).toBe(true);
    expect(open.some((a) => a.ownerName !== '')).toBe(true);
    // And the legal oddities: unresolved alerts created at an unset time, both lone-surrogate products, a blank product.
    expect(open.filter((a) => a.timestamp === MIN_TS).length).toBeGreaterThan(0);
    expect(open.some((a) => a.product.startsWith('Legacy Connector\ud800,'))).toBe(true);
    expect(open.some((a) => a.product.startsWith('Legacy Connector\ud801,'))).toBe(true);
    expect(open.some((a) => a.product.trim() === '' || a.product.split(',')[0]!.trim() === '')).toBe(true);
  });

  it('serves newest alerts first', async () => {
    const alerts: AlertRecord[] = (await get(sim, '/alerts', { query: { filter: 'all' } })).json.data;
    const created = alerts.filter((a) => a.timestamp !== MIN_TS);
    const unordered = created.filter((a, i) => i > 0 && parse(created[i - 1]!.timestamp) < parse(a.timestamp));
    expect(unordered).toEqual([]);
  });

  it('partitions alerts: all = allunresolved + resolved', async () => {
    const all: AlertRecord[] = (await get(sim, '/alerts', { query: { filter: 'all' } })).json.data;
    const open: AlertRecord[] = (await get(sim, '/alerts', { query: { filter: 'allunresolved' } })).json.data;
    const resolved: AlertRecord[] = (await get(sim, '/alerts', { query: { filter: 'resolved' } })).json.data;
    expect(open.every((a) => !a.resolved)).toBe(true);
    expect(resolved.every((a) => a.resolved)).toBe(true);
    expect(open).toEqual(all.filter((a) => !a.resolved));
    expect(resolved).toEqual(all.filter((a) => a.resolved));
    // About `alerts` (200) are unresolved.
    expect(open.length).toBeGreaterThan(140);
    expect(open.length).toBeLessThan(260);
  });

  it.each(['CrowdStrike Falcon', 'crowdstrike falcon', 'okta'])('restricts alerts to one integration with systemName=%s', async (systemName) => {
    const all: AlertRecord[] = (await get(sim, '/alerts', { query: { filter: 'all' } })).json.data;
    const some: AlertRecord[] = (await get(sim, '/alerts', { query: { filter: 'all', systemName } })).json.data;
    const want = systemName === 'okta' ? 'Okta' : 'CrowdStrike Falcon';
    expect(some.length).toBeGreaterThan(0);
    expect(some).toEqual(all.filter((a) => a.product.split(',')[0] === want));
  });

  it('treats a blank systemName as all integrations and an unknown one as none', async () => {
    const all = (await get(sim, '/alerts', { query: { filter: 'all' } })).json;
    expect((await get(sim, '/alerts', { query: { filter: 'all', systemName: '' } })).json.total).toBe(all.total);
    expect((await get(sim, '/alerts', { query: { filter: 'all', systemName: 'Nothing' } })).json.total).toBe(0);
  });

  it('serves directory users in the 2.4 shape, linked to their devices', async () => {
    const users = (await get(sim, '/users')).json.data;
    const devices: DeviceRecord[] = (await get(sim, '/devices', { query: { filter: 'all' } })).json.data;
    const hosts = new Set(devices.map((d) => d.hostName));
    expect(new Set(users.map((u: { email: string }) => u.email)).size).toBe(users.length);
    const p = new Problems();
    for (const u of users) {
      p.types(u, { name: 'string', email: 'string', jobTitle: 'string', department: 'string', tags: 'array', lastActivity: 'string', lastSuccessLogin: 'object', lastFailedLogin: 'object', recentDevices: 'array' }, u.email);
      p.check(TS_RE.test(u.lastActivity), `${u.email}.lastActivity`);
      for (const l of [u.lastSuccessLogin, u.lastFailedLogin]) {
        p.check(TS_RE.test(l.lastLoginTime), `${u.email} login time`);
        p.types(l.lastLoginLocation, { ip: 'string', countryCode: 'string', country: 'string', city: 'string' }, `${u.email} login location`);
      }
      for (const d of u.recentDevices) {
        p.types(d, { itemId: 'string', name: 'string', multiple: 'boolean', isInactive: 'boolean' }, `${u.email}.recentDevices`);
        p.check(GUID_RE.test(d.itemId) && hosts.has(d.name) && d.multiple === u.recentDevices.length > 1, `${u.email} device ${d.name}`);
      }
    }
    expect(p.list).toEqual([]);
    expect(users.filter((u: { recentDevices: unknown[] }) => u.recentDevices.length > 0).length).toBeGreaterThan(users.length / 2);
    const active = (await get(sim, '/users', { query: { filter: 'active' } })).json.total;
    const inactive = (await get(sim, '/users', { query: { filter: 'inactive' } })).json.total;
    expect(active + inactive).toBe(users.length);
  });

  it('serves inventory items with the 2.5 sample fields and types', async () => {
    const items = (await get(sim, '/inventory', { query: { systemName: 'crowdstrike', type: 'workstations' } })).json.data;
    expect(items.length).toBeGreaterThan(0);
    const p = new Problems();
    for (const it of items) {
      p.check(Object.keys(it).join() === ['name', 'tenantId', 'tenantName', 'patches', 'pendingPatches', 'nextPatchTime', 'lastUpdateTime', 'lastRefreshTime',
        'uptimeDisplay', 'needsReboot', 'osFamily', 'osName', 'createTime', 'osVersion', 'ipAddresses', 'agentVersion', 'customName', 'totalCount',
        'displayName', 'connected', 'lastLoggedInUser', 'lastLoggedInTime', 'uuid', 'risk', 'itemId'].join(), `${it.name} keys`);
      p.check(typeof it.agentVersion === 'number' && typeof it.patches === 'number' && typeof it.pendingPatches === 'number', `${it.name} numbers`);
      p.check(typeof it.needsReboot === 'boolean' && typeof it.connected === 'boolean', `${it.name} booleans`);
      p.check(['Red', 'Amber', 'Green'].includes(it.risk), `${it.name}.risk`);
    }
    expect(p.list).toEqual([]);
    const users = (await get(sim, '/inventory', { query: { systemName: 'Okta' } })).json.data;
    expect(users.length).toBeGreaterThan(0);
    expect((await get(sim, '/inventory', { query: { systemName: 'Okta', type: 'workstations' } })).json.total).toBe(0);
  });

  it('serves portal users, roles and teams in the 2.8–2.10 shapes, cross-referenced', async () => {
    const users = (await get(sim, '/settings/usermanagement/users')).json.data;
    const roles = (await get(sim, '/settings/usermanagement/roles')).json.data;
    const teams = (await get(sim, '/settings/usermanagement/teams')).json.data;
    const roleIds = roles.map((r: { id: string }) => r.id);
    const p = new Problems();
    expect(roleIds).toEqual(expect.arrayContaining(['superAdmin', 'analyst', 'viewer']));
    expect(users.length).toBeGreaterThan(0);
    expect(users.some((u: { currentteams: unknown[] }) => u.currentteams.length > 0)).toBe(true);
    for (const u of users) {
      p.types(u, { username: 'string', name: 'string', surname: 'string', roleid: 'string', mfastatus: 'string', enabled: 'boolean', ssostatus: 'string', currentteams: 'array' }, u.username);
      expect(u.username).toMatch(/^[^@\s]+@[^@\s]+$/);
      expect(roleIds).toContain(u.roleid);
      expect(['enabled', 'disabled']).toContain(u.mfastatus);
      expect(['enabled', 'disabled']).toContain(u.ssostatus);
      for (const t of u.currentteams) {
        expect(t.id).toMatch(GUID_RE);
        expect(teams.find((x: { id: string }) => x.id === t.id).members.map((m: { username: string }) => m.username)).toContain(u.username);
      }
    }
    for (const r of roles) {
      p.types(r, { id: 'string', name: 'string', description: 'string', default: 'boolean', permissions: 'object', users: 'array' }, r.id);
      expect(['All', 'Team', 'None']).toContain(r.permissions.deviceVisibility);
      for (const v of Object.values(r.permissions)) expect(typeof v).toBe('string');
      for (const m of r.users) expect(users.find((u: { username: string }) => u.username === m.username).roleid).toBe(r.id);
      expect(r.default).toBe(['superAdmin', 'analyst', 'viewer'].includes(r.id));
    }
    for (const t of teams) {
      p.types(t, { id: 'string', name: 'string', members: 'array' }, t.name);
      for (const m of t.members) p.types(m, { username: 'string', name: 'string', surname: 'string' }, t.name);
    }
    expect(p.list).toEqual([]);
  });
});

describe('Vitals funnel rule', () => {
  it('holds on every generated record across seeds, sizes, times, tags and archives', async () => {
    const clock = new FakeClock(T0);
    for (const [seed, devices, integrations] of [[1, 250, 8], [2, 40, 3], [5, 800, 20], [8, 0, 4]] as const) {
      const sim = await startSimulator({ clock, rateLimit: false, seed, devices, integrations });
      try {
        const tags = (await get(sim, '/settings/tags')).json.data as string[];
        let records = 0;
        let enabled = 0;
        const problems: string[] = [];
        for (const tag of [undefined, ...tags, 'no-such-tag']) {
          for (const archiveDate of [undefined, '20261101', '20260315']) {
            const q: Record<string, string> = {};
            if (tag) q.tag = tag;
            if (archiveDate) q.archiveDate = archiveDate;
            const r = await get(sim, '/vitals', { query: q });
            expect(r.json.total).toBe(integrations);
            for (const v of r.json.data as VitalsRecord[]) {
              const problem = funnelProblem(v);
              if (problem) problems.push(`seed ${seed} tag ${tag} archive ${archiveDate}: ${problem}`);
              records++;
              if (v.vitalsEnabled) enabled++;
            }
          }
        }
        expect(problems).toEqual([]);
        expect(records).toBe((tags.length + 2) * 3 * integrations);
        // A mix of both modes (every case has several integrations).
        expect(enabled).toBeGreaterThan(0);
        expect(enabled).toBeLessThan(records);
        clock.advance(37 * 60_000);
      } finally {
        await sim.close();
      }
    }
  });
});
