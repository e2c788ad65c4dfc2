import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type AlertRecord, type DeviceRecord } from '../../src/simulator/index.js';
import { MIN_TS, T0, get } from './helpers.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const parse = (ts: string) => Date.parse(ts.slice(0, 23) + 'Z');
/** An alert's identity: what never changes while it moves from open to resolved. */
const identity = (a: AlertRecord) => `${a.timestamp}|${a.itemId}|${a.product}|${a.issue}`;

function activeHosts(devices: Iterable<DeviceRecord>, at: number): Set<string> {
  const out = new Set<string>();
  for (const d of devices) if (at - parse(d.lastOnline) <= 30 * DAY) out.add(d.hostName);
  return out;
}

describe('data movement and determinism', () => {
  it('is a pure function of (seed, sizes, time)', async () => {
    const clock = new FakeClock(T0);
    const a = await startSimulator({ clock, rateLimit: false, seed: 5 });
    const b = await startSimulator({ clock, rateLimit: false, seed: 5 });
    const c = await startSimulator({ clock, rateLimit: false, seed: 6 });
    try {
      const at = T0 + 5 * HOUR + 17_000;
      expect([...a.data(at).alerts()]).toEqual([...a.data(at).alerts()]);
      expect([...a.data(at).alerts()]).toEqual([...b.data(at).alerts()]);
      expect([...a.data(at).devices()]).toEqual([...b.data(at).devices()]);
      expect(a.data(at).vitals('finance')).toEqual(b.data(at).vitals('finance'));
      expect(a.apiKey).toBe(b.apiKey);
      expect(a.apiKey).toMatch(/^sim-[0-9a-f]{24}$/);
      expect(c.apiKey).not.toBe(a.apiKey);
      expect([...c.data(at).devices()]).not.toEqual([...a.data(at).devices()]);
      // The server serves exactly data(now).
      const served = (await get(a, '/alerts', { query: { filter: 'all' } })).json.data;
      expect(served).toEqual([...a.data().alerts()]);
      const devices = (await get(b, '/devices', { query: { filter: 'all' } })).json.data;
      expect(devices).toEqual([...b.data().devices()]);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it('opens and resolves alerts as clock time passes, keeping about `alerts` unresolved', async () => {
    const clock = new FakeClock(T0);
    const sim = await startSimulator({ clock, rateLimit: false, seed: 7, alerts: 120 });
    try {
      const before: AlertRecord[] = (await get(sim, '/alerts', { query: { filter: 'allunresolved' } })).json.data;
      clock.advance(6 * HOUR);
      const after: AlertRecord[] = (await get(sim, '/alerts', { query: { filter: 'allunresolved' } })).json.data;
      const all: AlertRecord[] = (await get(sim, '/alerts', { query: { filter: 'all' } })).json.data;
      const beforeIds = new Set(before.map(identity));
      const afterIds = new Set(after.map(identity));
      const resolvedSince = before.filter((a) => !afterIds.has(identity(a)));
      const openedSince = after.filter((a) => !beforeIds.has(identity(a)));
      expect(resolvedSince.length).toBeGreaterThan(0);
      expect(openedSince.length).toBeGreaterThan(0);
      // Those with a creation time (a few have it unset, spec 2.2) were created since.
      for (const a of openedSince.filter((x) => x.timestamp !== MIN_TS)) expect(parse(a.timestamp)).toBeGreaterThan(T0 - 1);
      // A resolved alert is still listed under filter=all, resolved in the meantime.
      const nowAll = new Map(all.map((a) => [identity(a), a]));
      for (const a of resolvedSince) {
        const later = nowAll.get(identity(a))!;
        expect(later.resolved).toBe(true);
        expect(parse(later.resolvedTime)).toBeGreaterThan(T0);
        expect(parse(later.resolvedTime)).toBeLessThanOrEqual(T0 + 6 * HOUR);
      }
      let min = Infinity;
      let max = 0;
      for (let h = 0; h < 7 * 24; h += 3) {
        let n = 0;
        for (const a of sim.data(T0 + h * HOUR).alerts()) if (!a.resolved) n++;
        min = Math.min(min, n);
        max = Math.max(max, n);
      }
      expect(min).toBeGreaterThanOrEqual(84);
      expect(max).toBeLessThanOrEqual(156);
    } finally {
      await sim.close();
    }
  });

  it('acknowledges and assigns open alerts over time without changing their identity', async () => {
    const sim = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, seed: 8 });
    try {
      const early = new Map([...sim.data(T0).alerts()].map((a) => [identity(a), a]));
      let changed = 0;
      // What an alert had acknowledged or assigned early, and what the same alert says later.
      const acknowledged: Array<{ early: unknown; later: unknown }> = [];
      const assigned: Array<{ early: unknown; later: unknown }> = [];
      for (const a of sim.data(T0 + 12 * HOUR).alerts()) {
        const e = early.get(identity(a));
        if (!e || e.resolved) continue;
        if (e.acknowledged) acknowledged.push({ early: e.acknowledgedTime, later: a.acknowledgedTime });
        if (e.ownerName) assigned.push({ early: e.ownerName, later: a.ownerName });
        if (a.acknowledged !== e.acknowledged || a.ownerName !== e.ownerName || a.resolved !== e.resolved) changed++;
      }
      expect(acknowledged.length).toBeGreaterThan(0);
      expect(acknowledged.map((x) => x.later)).toEqual(acknowledged.map((x) => x.early));
      expect(assigned.length).toBeGreaterThan(0);
      expect(assigned.map((x) => x.later)).toEqual(assigned.map((x) => x.early));
      expect(changed).toBeGreaterThan(0);
    } finally {
      await sim.close();
    }
  });

  it('turns devices inactive and active again slowly', async () => {
    const clock = new FakeClock(T0);
    const sim = await startSimulator({ clock, rateLimit: false, seed: 9 });
    try {
      const now = activeHosts(sim.data(T0).devices(), T0);
      const nextHour = activeHosts(sim.data(T0 + HOUR).devices(), T0 + HOUR);
      const later = activeHosts(sim.data(T0 + 60 * DAY).devices(), T0 + 60 * DAY);
      const diff = (a: Set<string>, b: Set<string>) => [...a].filter((h) => !b.has(h)).length + [...b].filter((h) => !a.has(h)).length;
      expect(diff(now, nextHour)).toBeLessThanOrEqual(2);
      expect(diff(now, later)).toBeGreaterThan(5);
      for (const s of [now, later]) {
        expect(s.size).toBeGreaterThan(250 * 0.75);
        expect(s.size).toBeLessThan(250);
      }
      clock.advance(60 * DAY);
      const served = (await get(sim, '/devices', { query: { filter: 'active' } })).json.data as DeviceRecord[];
      expect(new Set(served.map((d) => d.hostName))).toEqual(later);
    } finally {
      await sim.close();
    }
  });

  it('drifts Vitals numbers between 5-minute buckets and holds them within one', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0));
    const sim = await startSimulator({ clock, rateLimit: false, seed: 10 });
    try {
      const first = (await get(sim, '/vitals')).json.data;
      clock.advance(4 * 60_000);
      expect((await get(sim, '/vitals')).json.data).toEqual(first);
      const seen = new Set<string>([JSON.stringify(first)]);
      for (let i = 0; i < 12; i++) {
        clock.advance(30 * 60_000);
        seen.add(JSON.stringify((await get(sim, '/vitals')).json.data));
      }
      expect(seen.size).toBeGreaterThan(6);
    } finally {
      await sim.close();
    }
  });

  it('freezes everything at the start time when moving is false', async () => {
    const clock = new FakeClock(T0);
    const sim = await startSimulator({ clock, rateLimit: false, moving: false, seed: 12 });
    try {
      const alerts = (await get(sim, '/alerts', { query: { filter: 'all' } })).json.data;
      const vitals = (await get(sim, '/vitals')).json.data;
      const devices = (await get(sim, '/devices', { query: { filter: 'active' } })).json.data;
      clock.advance(3 * DAY);
      expect((await get(sim, '/alerts', { query: { filter: 'all' } })).json.data).toEqual(alerts);
      expect((await get(sim, '/vitals')).json.data).toEqual(vitals);
      expect((await get(sim, '/devices', { query: { filter: 'active' } })).json.data).toEqual(devices);
      expect([...sim.data(T0 + 9 * DAY).alerts()]).toEqual(alerts);
    } finally {
      await sim.close();
    }
  });
});
