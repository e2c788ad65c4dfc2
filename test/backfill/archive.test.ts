import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type Simulator, type VitalsRecord } from '../../src/simulator/index.js';
import { T0, get } from '../simulator/helpers.js';

const DAY = 86_400_000;
const FORMS = ['laptops', 'desktops', 'servers', 'mobile'];
const FUNNEL = ['agentDeployedPossibleCompliant', 'agentDeployedCompliant', 'agentFunctioningPossibleCompliant', 'agentFunctioningCompliant', 'configurationPossibleCompliant', 'configurationCompliant'] as const;

function day(n: number): string {
  return new Date(Date.UTC(2026, 8, 1) + n * DAY).toISOString().slice(0, 10).replaceAll('-', '');
}

async function archived(sim: Simulator, archiveDate: string, tag?: string): Promise<VitalsRecord[]> {
  const r = await get(sim, '/vitals', { query: tag === undefined ? { archiveDate } : { archiveDate, tag } });
  expect(r.status).toBe(200);
  return r.json.data as VitalsRecord[];
}

function health(r: VitalsRecord): number {
  return r.configurationCompliant! / r.agentDeployedPossibleCompliant!;
}

describe('the simulated portal\'s daily Vitals archive', () => {
  let sim: Simulator;
  const days = 60;
  const whole: VitalsRecord[][] = [];
  beforeAll(async () => {
    sim = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, seed: 21, devices: 300 });
    for (let d = 0; d < days; d++) whole.push(await archived(sim, day(d)));
  });
  afterAll(() => sim.close());

  it('has one snapshot per day that differs from the day before, whole and per tag', async () => {
    expect(whole).toHaveLength(days);
    for (let d = 1; d < days; d++) expect(whole[d], day(d)).not.toEqual(whole[d - 1]);
    const a = await archived(sim, day(10), 'servers');
    const b = await archived(sim, day(11), 'servers');
    expect(a.length).toBe(8);
    expect(b).not.toEqual(a);
  });

  it('obeys the funnel rule on every record, and the form-factor tags add up to the whole, every day', async () => {
    let checked = 0;
    for (const d of [0, 17, 33, 59]) {
      const views = await Promise.all(FORMS.map((tag) => archived(sim, day(d), tag)));
      for (const records of [whole[d]!, ...views]) {
        for (const r of records.filter((x) => x.vitalsEnabled)) {
          expect(r.agentFunctioningPossibleCompliant).toBe(r.agentDeployedCompliant);
          expect(r.configurationPossibleCompliant).toBe(r.agentFunctioningCompliant);
          expect(r.agentDeployedCompliant!).toBeLessThanOrEqual(r.agentDeployedPossibleCompliant!);
          expect(r.configurationCompliant!).toBeLessThanOrEqual(r.configurationPossibleCompliant!);
          checked++;
        }
      }
      for (const [i, r] of whole[d]!.entries()) {
        if (!r.vitalsEnabled) continue;
        for (const f of FUNNEL) expect(views.reduce((n, v) => n + (v[i]![f] as number), 0), `${day(d)} ${r.key}.${f}`).toBe(r[f]);
      }
    }
    expect(checked).toBeGreaterThan(4 * 5 * 3);
  });

  it('drifts from day to day and regresses now and then: some days an integration is well under its usual health', () => {
    const byKey = new Map<string, number[]>();
    for (const records of whole) for (const r of records.filter((x) => x.vitalsEnabled)) byKey.set(r.key, [...(byKey.get(r.key) ?? []), health(r)]);
    expect(byKey.size).toBeGreaterThan(2);
    const low = new Set<number>();
    let moving = 0;
    for (const xs of byKey.values()) {
      const median = [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
      xs.forEach((x, i) => x < median - 0.07 && low.add(i));
      if (Math.max(...xs) - Math.min(...xs) > 0.02) moving++;
    }
    expect(moving).toBe(byKey.size);
    expect(low.size).toBeGreaterThanOrEqual(2);
    expect(low.size).toBeLessThanOrEqual(days / 3);
  });

  it('is the same whenever it is asked and from any twin with the seed', async () => {
    const twin = await startSimulator({ clock: new FakeClock(T0 + 400 * DAY), rateLimit: false, seed: 21, devices: 300 });
    try {
      for (const d of [0, 29, 59]) expect(await archived(twin, day(d))).toEqual(whole[d]);
    } finally {
      await twin.close();
    }
  });
});
