import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type Simulator, type VitalsRecord } from '../../src/simulator/index.js';
import { T0, get } from './helpers.js';

const DAY = 86_400_000;
const NUMBERS = ['agentDeployedPossibleCompliant', 'agentDeployedCompliant', 'agentFunctioningPossibleCompliant', 'agentFunctioningCompliant',
  'configurationPossibleCompliant', 'configurationCompliant', 'activeAgents'] as const;

function byKey(records: VitalsRecord[]): Map<string, VitalsRecord> {
  return new Map(records.map((r) => [r.key, r]));
}

describe('/vitals tag and archiveDate', () => {
  let sim: Simulator;
  const clock = new FakeClock(T0);
  beforeAll(async () => {
    sim = await startSimulator({ clock, rateLimit: false, seed: 21, devices: 500 });
  });
  afterAll(() => sim.close());

  it('writes whole numbers as floats on the wire now and then (5.0, 5e0, a total of 8.0), the same numbers as data()', async () => {
    const r = await get(sim, '/vitals');
    expect(r.text).toMatch(/"total":\d+\.0,/);
    expect(r.text).toMatch(/"(agentDeployedPossibleCompliant|activeAgents)":\d+\.0[,}]/);
    expect(r.text).toMatch(/"(agentDeployedPossibleCompliant|activeAgents)":\d+e0[,}]/);
    expect(r.json.total).toBe(r.json.data.length);
    expect(r.json.data).toEqual(sim.data().vitals());
    const archived = await get(sim, '/vitals', { query: { archiveDate: '20261120' } });
    expect(archived.text).toMatch(/":\d+\.0[,}]/);
  });

  it('serves smaller numbers for a tag, the same every time', async () => {
    const all = byKey((await get(sim, '/vitals')).json.data);
    const tagged = (await get(sim, '/vitals', { query: { tag: 'laptops' } })).json.data as VitalsRecord[];
    expect((await get(sim, '/vitals', { query: { tag: 'laptops' } })).json.data).toEqual(tagged);
    expect(tagged.map((r) => r.key)).toEqual([...all.keys()]);
    let smaller = 0;
    for (const r of tagged) {
      for (const n of NUMBERS) {
        if (r[n] === undefined) continue;
        expect(r[n]!).toBeLessThanOrEqual(all.get(r.key)![n]!);
        if (r[n]! < all.get(r.key)![n]!) smaller++;
      }
    }
    expect(smaller).toBeGreaterThan(0);
  });

  it('partitions devices by form-factor tags: the tag views add up to the whole', async () => {
    const all = (await get(sim, '/vitals')).json.data as VitalsRecord[];
    const views = await Promise.all(['laptops', 'desktops', 'servers', 'mobile'].map(async (tag) => byKey((await get(sim, '/vitals', { query: { tag } })).json.data)));
    const enabled = all.filter((x) => x.vitalsEnabled);
    expect(enabled.length).toBeGreaterThan(0);
    for (const r of enabled) {
      for (const n of NUMBERS.slice(0, 6)) {
        expect(views.reduce((sum, v) => sum + (v.get(r.key)![n] as number), 0), `${r.key}.${n}`).toBe(r[n]);
      }
    }
  });

  it('serves zeros for a tag no device carries', async () => {
    const r = (await get(sim, '/vitals', { query: { tag: 'no-such-tag' } })).json;
    expect(r.total).toBe(8);
    const values = (r.data as VitalsRecord[]).flatMap((v) => NUMBERS.map((n) => v[n]).filter((x) => x !== undefined));
    expect(values.length).toBeGreaterThan(0);
    expect(new Set(values)).toEqual(new Set([0]));
  });

  it('treats a blank tag as no tag', async () => {
    expect((await get(sim, '/vitals', { query: { tag: '' } })).json.data).toEqual((await get(sim, '/vitals')).json.data);
  });

  it('serves one fixed snapshot per archived day, whenever it is asked', async () => {
    const day1 = await get(sim, '/vitals', { query: { archiveDate: '20261115' } });
    const day2 = await get(sim, '/vitals', { query: { archiveDate: '20261116' } });
    const tagged = await get(sim, '/vitals', { query: { archiveDate: '20261115', tag: 'servers' } });
    expect(day1.status).toBe(200);
    expect(day1.json.total).toBe(8);
    expect(day2.json.data).not.toEqual(day1.json.data);
    clock.advance(3 * 60 * 60_000 + 123);
    expect((await get(sim, '/vitals', { query: { archiveDate: '20261115' } })).json.data).toEqual(day1.json.data);
    clock.advance(2 * DAY);
    expect((await get(sim, '/vitals', { query: { archiveDate: '20261115' } })).json.data).toEqual(day1.json.data);
    expect((await get(sim, '/vitals', { query: { archiveDate: '20261115', tag: 'servers' } })).json.data).toEqual(tagged.json.data);
    const twin = await startSimulator({ clock: new FakeClock(T0 + 40 * DAY), rateLimit: false, seed: 21, devices: 500 });
    try {
      expect((await get(twin, '/vitals', { query: { archiveDate: '20261115' } })).json.data).toEqual(day1.json.data);
    } finally {
      await twin.close();
    }
  });

  it('has no archive yet for today or a future day', async () => {
    const today = new Date(clock.now()).toISOString().slice(0, 10).replaceAll('-', '');
    for (const archiveDate of [today, '20991231']) {
      const r = await get(sim, '/vitals', { query: { archiveDate } });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ total: 0, data: [], success: true });
    }
  });

  it.each(['abc', '2026-11-01', '20261301', '20260230', '2026111', '202611011', '00000101'])('rejects archiveDate=%s with 400', async (archiveDate) => {
    const r = await get(sim, '/vitals', { query: { archiveDate } });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ success: false, statusCode: 400, data: [] });
    expect(r.json.message).toContain('archiveDate');
  });
});

describe('Vitals regressions', () => {
  it('injects a regression on the first enabled integration until cleared, leaving archives alone', async () => {
    const sim = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, moving: false });
    try {
      const before = (await get(sim, '/vitals')).json.data as VitalsRecord[];
      const archived = (await get(sim, '/vitals', { query: { archiveDate: '20261120' } })).json.data;
      sim.injectRegression();
      const during = (await get(sim, '/vitals')).json.data as VitalsRecord[];
      const first = before.findIndex((r) => r.vitalsEnabled);
      expect(during[first]!.configurationCompliant).toBe(Math.round(before[first]!.configurationCompliant! * 0.7));
      expect(during[first]!.configurationCompliant!).toBeLessThan(before[first]!.configurationCompliant!);
      expect(during.filter((_, i) => i !== first)).toEqual(before.filter((_, i) => i !== first));
      expect(sim.data().vitals()).toEqual(during);
      expect((await get(sim, '/vitals', { query: { archiveDate: '20261120' } })).json.data).toEqual(archived);
      const tagged = (await get(sim, '/vitals', { query: { tag: 'laptops' } })).json.data as VitalsRecord[];
      sim.clearRegression();
      expect((await get(sim, '/vitals')).json.data).toEqual(before);
      const taggedAfter = (await get(sim, '/vitals', { query: { tag: 'laptops' } })).json.data as VitalsRecord[];
      expect(tagged[first]!.configurationCompliant).toBe(Math.round(taggedAfter[first]!.configurationCompliant! * 0.7));
    } finally {
      await sim.close();
    }
  });

  it('injects on a named integration with a chosen fraction, and refuses unknown or Vitals-disabled ones', async () => {
    const sim = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, moving: false });
    try {
      const before = byKey(sim.data().vitals());
      sim.injectRegression({ integration: 'Jamf Pro', fraction: 0.5 });
      const after = byKey(sim.data().vitals());
      expect(after.get('jamf')!.configurationCompliant).toBe(Math.round(before.get('jamf')!.configurationCompliant! * 0.5));
      expect(after.get('crowdstrike')).toEqual(before.get('crowdstrike'));
      expect(() => sim.injectRegression({ integration: 'nope' })).toThrow(RangeError);
      expect(() => sim.injectRegression({ integration: 'okta' })).toThrow(RangeError);
      expect(() => sim.injectRegression({ fraction: 1.5 })).toThrow(RangeError);
    } finally {
      await sim.close();
    }
  });

  it('dips now and then by itself: a few regressions of about an hour per simulated day', async () => {
    const sim = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, seed: 2, devices: 600 });
    try {
      const start = Date.UTC(2026, 10, 1);
      const days = 3;
      const step = 5 * 60_000;
      const episodes: number[] = [];
      for (let day = 0; day < days; day++) {
        const series = new Map<string, number[]>();
        for (let t = start + day * DAY; t < start + (day + 1) * DAY; t += step) {
          for (const r of sim.data(t).vitals()) {
            if (!r.vitalsEnabled) continue;
            const rates = [r.agentDeployedCompliant! / r.agentDeployedPossibleCompliant!, r.agentFunctioningCompliant! / r.agentFunctioningPossibleCompliant!,
              r.configurationCompliant! / r.configurationPossibleCompliant!];
            rates.forEach((x, i) => {
              const k = `${r.key}/${i}`;
              if (!series.has(k)) series.set(k, []);
              series.get(k)!.push(x);
            });
          }
        }
        for (const xs of series.values()) {
          const median = [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
          let run = 0;
          for (const x of [...xs, Infinity]) {
            // Dips take 10–14 % off a stage's pass rate: 7 % below the day's median is one.
            if (x < median * 0.93) run++;
            else if (run) {
              episodes.push(run * 5);
              run = 0;
            }
          }
        }
      }
      expect(episodes.length).toBeGreaterThanOrEqual(days);
      expect(episodes.length).toBeLessThanOrEqual(6 * days);
      for (const minutes of episodes) {
        expect(minutes).toBeGreaterThanOrEqual(40);
        expect(minutes).toBeLessThanOrEqual(80);
      }
    } finally {
      await sim.close();
    }
  });
});
