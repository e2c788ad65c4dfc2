import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type AlertRecord, type DeviceRecord, type Simulator, type VitalsRecord } from '../../src/simulator/index.js';
import { MIN_TS, T0, get } from './helpers.js';

const DAY = 86_400_000;
const ts = (ms: number) => new Date(ms).toISOString().slice(0, 23) + '0000';

function device(hostName: string, lastOnline: number, tags: string[]): DeviceRecord {
  return {
    hostName, os: 'Windows', osVersion: '10.0.22631', lastOnline: ts(lastOnline), location: { countryCode: 'gb', country: 'United Kingdom', city: 'London' },
    tags, metadata: { serial_number: 'X1', manufacturer: 'Dell', model: 'Latitude', total_disk_storage: '512 GB', free_disk_storage: '100 GB', total_memory: '16 GB', cpu_speed: '2.4 GHz', warranty_expiry: '2027-01-01 00:00:00' },
    lastUser: { name: 'A B', email: 'a@b.example' }, lastLogin: ts(lastOnline), publicIp: '203.0.113.1', privateIp: '10.0.0.1', macAddress: '00:11:22:33:44:55',
    securityTools: [], connectedSystems: [],
  };
}

function alert(item: string, product: string, resolved: boolean, entity = 'device'): AlertRecord {
  return {
    state: resolved ? 'Green' : 'Red', product, status: 'Incident', item, issue: 'x', details: 'y', itemEntityType: entity, ownerName: '',
    timestamp: ts(T0 - DAY), acknowledgedTime: MIN_TS, assignedTime: MIN_TS, resolved, acknowledged: false, resolvedBy: resolved ? 'Someone' : '',
    resolvedTime: resolved ? ts(T0 - 1000) : MIN_TS, itemId: '11111111-2222-4333-8444-555555555555', inactiveUntil: MIN_TS, hasLinkedDevice: entity === 'device',
  };
}

const VITALS: (VitalsRecord & { tags?: string[] })[] = [
  { key: 'a', name: 'Alpha', vitalsEnabled: true, agentDeployedPossibleCompliant: 10, agentDeployedCompliant: 9, agentFunctioningPossibleCompliant: 9, agentFunctioningCompliant: 8, configurationPossibleCompliant: 8, configurationCompliant: 5, tags: ['prod'] },
  { key: 'b', name: 'Beta', vitalsEnabled: false, activeAgents: 42, tags: ['prod', 'dev'] },
  { key: 'c', name: 'Gamma', vitalsEnabled: true, agentDeployedPossibleCompliant: 3, agentDeployedCompliant: 3, agentFunctioningPossibleCompliant: 3, agentFunctioningCompliant: 3, configurationPossibleCompliant: 3, configurationCompliant: 3 },
];
const strip = ({ tags: _t, ...r }: VitalsRecord & { tags?: string[] }) => r;

describe('fixtures', () => {
  let sim: Simulator;
  const clock = new FakeClock(T0);
  beforeAll(async () => {
    sim = await startSimulator({ clock, rateLimit: false, keys: [{ key: 'fixture-key-full-000000' }, { key: 'fixture-key-team-000000', team: { name: 'Prod', tags: ['prod'] } }] });
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.setFixture(null));

  it('serves fixture Vitals exactly, without the simulator-only tags', async () => {
    sim.setFixture({ vitals: VITALS });
    const r = await get(sim, '/vitals');
    expect(r.json).toMatchObject({ total: 3, success: true });
    expect(r.json.data).toEqual(VITALS.map(strip));
    expect(sim.data().vitals()).toEqual(VITALS.map(strip));
    expect((await get(sim, '/vitals', { query: { archiveDate: '20260101' } })).json.data).toEqual(VITALS.map(strip));
  });

  it('picks tag views by the records tags', async () => {
    sim.setFixture({ vitals: VITALS });
    expect((await get(sim, '/vitals', { query: { tag: 'prod' } })).json.data).toEqual([VITALS[0], VITALS[1]].map((r) => strip(r!)));
    expect((await get(sim, '/vitals', { query: { tag: 'dev' } })).json.data).toEqual([strip(VITALS[1]!)]);
    expect((await get(sim, '/vitals', { query: { tag: 'other' } })).json).toMatchObject({ total: 0, data: [] });
    expect(sim.data().vitals('dev')).toEqual([strip(VITALS[1]!)]);
  });

  it('serves an untagged fixture for every tag', async () => {
    const untagged = VITALS.map(strip);
    sim.setFixture({ vitals: untagged });
    for (const tag of ['prod', 'anything']) expect((await get(sim, '/vitals', { query: { tag } })).json.data).toEqual(untagged);
  });

  it('serves fixture devices, active by lastOnline against the clock', async () => {
    const devices = [device('fx-1', T0 - 1000, ['prod']), device('fx-2', T0 - 29 * DAY, ['dev']), device('fx-3', T0 - 45 * DAY, ['prod'])];
    sim.setFixture({ devices });
    expect((await get(sim, '/devices', { query: { filter: 'all' } })).json.data).toEqual(devices);
    expect((await get(sim, '/devices', { query: { filter: 'active' } })).json.data.map((d: DeviceRecord) => d.hostName)).toEqual(['fx-1', 'fx-2']);
    expect((await get(sim, '/devices', { query: { filter: 'inactive' } })).json.data.map((d: DeviceRecord) => d.hostName)).toEqual(['fx-3']);
    expect((await get(sim, '/devices', { query: { filter: 'all' }, key: 'fixture-key-team-000000' })).json.data.map((d: DeviceRecord) => d.hostName)).toEqual(['fx-1', 'fx-3']);
    expect((await get(sim, '/devices/fx-2')).json.data).toEqual(devices[1]);
    expect([...sim.data().devices()]).toEqual(devices);
    clock.advance(2 * DAY);
    expect((await get(sim, '/devices', { query: { filter: 'active' } })).json.data.map((d: DeviceRecord) => d.hostName)).toEqual(['fx-1']);
  });

  it('serves fixture alerts with the filters, systemName and team scoping', async () => {
    const devices = [device('fx-1', clock.now(), ['prod']), device('fx-2', clock.now(), ['dev'])];
    const alerts = [
      alert('fx-1', 'CrowdStrike Falcon, Malware', false), alert('fx-2', 'CrowdStrike Falcon, Malware', true),
      alert('jo', 'Okta, MFA', false, 'user'), alert('fx-2', 'Jamf Pro, Encryption', false),
    ];
    sim.setFixture({ devices, alerts });
    expect((await get(sim, '/alerts', { query: { filter: 'all' } })).json.data).toEqual(alerts);
    expect((await get(sim, '/alerts', { query: { filter: 'allunresolved' } })).json.data).toEqual([alerts[0], alerts[2], alerts[3]]);
    expect((await get(sim, '/alerts', { query: { filter: 'resolved' } })).json.data).toEqual([alerts[1]]);
    expect((await get(sim, '/alerts', { query: { filter: 'all', systemName: 'crowdstrike falcon' } })).json.data).toEqual([alerts[0], alerts[1]]);
    expect((await get(sim, '/alerts', { query: { filter: 'all', systemName: 'jamf' } })).json.data).toEqual([alerts[3]]);
    expect((await get(sim, '/alerts', { query: { filter: 'all' }, key: 'fixture-key-team-000000' })).json.data).toEqual([alerts[0], alerts[2]]);
    expect([...sim.data().alerts()]).toEqual(alerts);
  });

  it('replaces only the parts set, and null restores the generated data', async () => {
    const generated = (await get(sim, '/alerts', { query: { filter: 'all' } })).json;
    sim.setFixture({ vitals: VITALS });
    expect((await get(sim, '/alerts', { query: { filter: 'all' } })).json.total).toBe(generated.total);
    expect((await get(sim, '/devices', { query: { filter: 'all' } })).json.total).toBe(250);
    sim.setFixture(null);
    expect((await get(sim, '/vitals')).json.total).toBe(8);
  });

  it('injects a regression into fixture Vitals', async () => {
    sim.setFixture({ vitals: VITALS });
    sim.injectRegression({ integration: 'c', fraction: 0.5 });
    const r = (await get(sim, '/vitals')).json.data as VitalsRecord[];
    expect(r[2]!.configurationCompliant).toBe(2); // round(3 * 0.5)
    expect(r[0]).toEqual(strip(VITALS[0]!));
    sim.clearRegression();
  });
});
