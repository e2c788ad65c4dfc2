// The devices source (spec 4.1, 3): two requests, `filter=active` and `filter=inactive`, each for
// one record, whose envelope `total` is the count; the portal decides activity (online within its
// threshold, 30 days by default). The simulated portal's fixture devices straddle that threshold,
// so the totals below are counted by hand from their lastOnline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPPED_FAMILIES } from '../../src/collect/samples.js';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type DeviceRecord, type Simulator } from '../../src/simulator/index.js';
import { devices } from '../../src/sources/devices.js';
import { moduleOf } from '../../src/sources/index.js';
import { runContexts } from '../support/run-context.js';

const DAY = 86_400_000;

/** An API timestamp (seven fraction digits, no zone) of `ms`. */
const apiTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 23)}0000`;

describe('the devices source', () => {
  const setup = runContexts();
  let sim: Simulator;
  const clock = new FakeClock();
  const now = clock.now();
  beforeAll(async () => {
    sim = await startSimulator({ rateLimit: false, moving: false, clock });
  });
  afterAll(async () => {
    await sim.close();
  });

  const device = (hostName: string, lastOnlineMs: number) => ({ hostName, lastOnline: apiTime(lastOnlineMs), tags: [] }) as unknown as DeviceRecord;
  const fleet = [
    device('online-now', now),
    device('a-day-ago', now - DAY),
    device('just-within', now - 30 * DAY + 1), // a millisecond inside 30 days: active
    device('exactly-30-days', now - 30 * DAY), // online within 30 days: active
    device('just-over', now - 30 * DAY - 1), // a millisecond past: inactive
    device('31-days', now - 31 * DAY),
    device('a-year', now - 365 * DAY),
  ];

  it('reads the active and inactive totals from one request each, for one record', async () => {
    sim.setFixture({ devices: fleet });
    const { ctx } = setup(sim, clock);
    const from = sim.requests.length;
    const totals = await devices.run(ctx);
    // active: online now, a day ago, a millisecond within and exactly 30 days; inactive: the other three.
    expect(totals).toEqual({ active: 4, inactive: 3 });
    expect(sim.requests.slice(from).map((q) => [q.path, q.query])).toEqual([
      ['/devices', { filter: 'active', limit: '1' }],
      ['/devices', { filter: 'inactive', limit: '1' }],
    ]);
    expect(ctx.requests.get('/devices\u0000200')).toBe(2);
  });

  it('reads 0 for an activity with no device, not a missing value', async () => {
    sim.setFixture({ devices: fleet.slice(0, 2) });
    expect(await devices.run(setup(sim, clock).ctx)).toEqual({ active: 2, inactive: 0 });
    sim.setFixture({ devices: [] });
    expect(await devices.run(setup(sim, clock).ctx)).toEqual({ active: 0, inactive: 0 });
  });

  it('gives one posture_devices series per activity, and never an invalid record', () => {
    const rows: Array<[string, Record<string, string>, number]> = [];
    const folded = new Map<string, number>();
    const module = moduleOf('devices');
    module.samples({ active: 4, inactive: 3 }, (name, labels, value) => rows.push([name, labels, value]), 1, folded);
    expect(rows).toEqual([
      ['posture_devices', { activity: 'active' }, 4],
      ['posture_devices', { activity: 'inactive' }, 3],
    ]);
    expect(folded.size).toBe(0);
    expect(CAPPED_FAMILIES).not.toContain('posture_devices');
    expect(module.invalidOf({ active: 4, inactive: 3 })).toBe(0);
  });
});
