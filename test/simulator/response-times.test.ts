// The simulated portal's alert history (docs/simulator.md, "Alerts"): resolved alerts keep their
// severity and, with 35 days of history (the default), reach back past the longest response window (30 days); most are resolved within
// their severity's default SLA (red 1d, amber 7d, green 30d), some are not, and some are
// acknowledged late; and some open amber alerts are older than 3 days, some green older than 7.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type AlertRecord, type Simulator } from '../../src/simulator/index.js';
import { MIN_TS, T0, get } from './helpers.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const parse = (ts: string) => Date.parse(ts.slice(0, 23) + 'Z');
const SLA: Record<string, number> = { Red: DAY, Amber: 7 * DAY, Green: 30 * DAY };

describe('the simulated alert history', () => {
  let sim: Simulator;
  let resolved: AlertRecord[];
  let open: AlertRecord[];
  beforeAll(async () => {
    sim = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, moving: false, alerts: 200, seed: 5, resolvedHistoryDays: 35 });
    resolved = (await get(sim, '/alerts', { query: { filter: 'resolved' } })).json.data;
    open = (await get(sim, '/alerts', { query: { filter: 'allunresolved' } })).json.data;
  });
  afterAll(async () => {
    await sim.close();
  });

  it('keeps 35 days of resolved alerts by default, so its 30-day window holds more of every severity than its 7-day one', async () => {
    const month = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, moving: false, alerts: 200, seed: 5 });
    try {
      const data = (await get(month, '/alerts', { query: { filter: 'resolved' } })).json.data as AlertRecord[];
      const ages = data.map((a) => T0 - parse(a.resolvedTime));
      expect(Math.max(...ages)).toBeLessThanOrEqual(35 * DAY);
      expect(Math.max(...ages)).toBeGreaterThan(34 * DAY);
      for (const state of ['Red', 'Amber', 'Green']) {
        const within = (days: number) => data.filter((a, i) => a.state === state && ages[i]! < days * DAY).length;
        expect(within(30), state).toBeGreaterThan(within(7));
      }
    } finally {
      await month.close();
    }
  });

  it('serves resolved alerts of every severity over more than the last 30 days', () => {
    const ages = resolved.map((a) => T0 - parse(a.resolvedTime));
    expect(Math.max(...ages)).toBeGreaterThan(30 * DAY);
    for (const state of ['Red', 'Amber', 'Green']) expect(resolved.filter((a) => a.state === state && T0 - parse(a.resolvedTime) < DAY).length, state).toBeGreaterThan(5);
  });

  it('resolves most alerts of each severity within its SLA, and some red ones past it', () => {
    for (const state of ['Red', 'Amber', 'Green']) {
      const took = resolved.filter((a) => a.state === state && a.timestamp !== MIN_TS).map((a) => parse(a.resolvedTime) - parse(a.timestamp));
      const late = took.filter((d) => d > SLA[state]!).length;
      expect(late / took.length, state).toBeLessThan(0.3);
    }
    const red = resolved.filter((a) => a.state === 'Red' && a.timestamp !== MIN_TS).map((a) => parse(a.resolvedTime) - parse(a.timestamp));
    expect(red.filter((d) => d > SLA.Red!).length / red.length).toBeGreaterThan(0.1);
  });

  it('acknowledges most red alerts within the hour and some late, never after their resolution', () => {
    const red = resolved.filter((a) => a.state === 'Red' && a.acknowledged && a.timestamp !== MIN_TS);
    const delay = red.map((a) => parse(a.acknowledgedTime) - parse(a.timestamp));
    expect(delay.filter((d) => d <= HOUR).length / delay.length).toBeGreaterThan(0.6);
    expect(delay.filter((d) => d > 3 * HOUR).length).toBeGreaterThan(5);
    for (const a of resolved.filter((x) => x.acknowledged)) expect(parse(a.acknowledgedTime)).toBeLessThanOrEqual(parse(a.resolvedTime));
    // Not every resolved alert was acknowledged first.
    expect(resolved.some((a) => !a.acknowledged)).toBe(true);
  });

  it('has open amber alerts older than 3 days and open green ones older than 7', () => {
    const age = (a: AlertRecord) => (a.timestamp === MIN_TS ? 0 : T0 - parse(a.timestamp));
    expect(open.filter((a) => a.state === 'Amber' && age(a) > 3 * DAY).length).toBeGreaterThan(0);
    expect(open.filter((a) => a.state === 'Green' && age(a) > 7 * DAY).length).toBeGreaterThan(0);
    // Still about `alerts` open.
    expect(open.length).toBeGreaterThan(140);
    expect(open.length).toBeLessThan(260);
  });
});
