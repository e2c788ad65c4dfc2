/**
 * The ledger in the state directory, on fake clocks: the share across processes (exporters on one
 * directory), every record read whatever was released after it, requests counted from when they
 * could last have reached the portal, files that are not the exporter's records, and a claim linked
 * into a folder a sweep replaced or more than a window after its look. Clocks that cannot be
 * trusted: files-clocks.test.ts; what the directory keeps: files-pruning.test.ts; a directory that
 * is not usable: files-unusable.test.ts.
 */
import { readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { Exporter } from '../../src/exporter/exporter.js';
import { PortalScheduler } from '../../src/schedule/scheduler.js';
import { sendLedger } from '../../src/state/claims.js';
import { StateDir } from '../../src/state/dir.js';
import { LedgerFiles } from '../../src/state/files.js';
import { hostClockOf } from '../../src/state/host-clock.js';
import { openState } from '../../src/state/index.js';
import { folderOf } from '../../src/state/portal-folder.js';
import { portalWithConfig, T0 } from '../integration/support.js';
import { closeAfterEach } from '../support/closing.js';
import { tempDirPerTest } from '../support/temp-dir.js';
import { maxInAnyWindow } from '../support/window.js';
import { KEY, PORTAL, portalFiles, send, SLOT } from './support.js';

const dir = tempDirPerTest('posture-state-');
const closing = closeAfterEach();

describe('the share across processes, through the state directory', () => {
  it("a second exporter on the same state directory counts the first one's requests: never more than the share in any 60 s at the portal", async () => {
    const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { moving: false }, { POSTURE_REQUESTS_PER_MINUTE: '5', POSTURE_STATE_DIR: dir() });
    const first = new Exporter(config, { clock, logger, runtime: 'once', ledgerOf: openState(config.stateDir, logger, clock).ledgerOf });
    await first.collect();
    // vitals 1 + devices 2 + alerts 1, at once (the window was empty).
    expect(sim.requests.map((q) => q.time)).toEqual([T0, T0, T0, T0]);
    // A restart: a new process (its own writer) on the same directory, at once.
    const second = new Exporter(config, { clock, logger, runtime: 'once', ledgerOf: openState(config.stateDir, logger, clock).ledgerOf });
    const [r] = await second.collect();
    expect([r!.vitals.ok, r!.devices.ok, r!.alerts.ok]).toEqual([true, true, true]);
    const times = sim.requests.map((q) => q.time);
    expect(times).toHaveLength(8);
    // One slot was left in the first window; the other three wait until the first requests leave it.
    expect(times.slice(4)).toEqual([T0, T0 + SLOT, T0 + SLOT, T0 + SLOT]);
    expect(maxInAnyWindow(times)).toBe(5);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
  });

  it('a once started right after another says, in one line, that it waits for the requests the earlier run recorded, and until when', async () => {
    const { clock, sim, config } = await portalWithConfig(closing, [KEY], { moving: false }, { POSTURE_REQUESTS_PER_MINUTE: '4', POSTURE_STATE_DIR: dir() });
    // Loggers that redact nothing: the key must not reach them at all.
    const firstLog = memoryLogger();
    await new Exporter(config, { clock, logger: firstLog, runtime: 'once', ledgerOf: openState(config.stateDir, firstLog, clock).ledgerOf }).collect();
    // vitals 1 + devices 2 + alerts 1 at T0 spend the share of 4; the first run waited for nothing.
    expect(sim.requests.map((q) => q.time)).toEqual([T0, T0, T0, T0]);
    const waits = (log: ReturnType<typeof memoryLogger>) => log.records().filter((l) => String(l.msg).startsWith("waiting for the portal's budget"));
    expect(waits(firstLog)).toEqual([]);
    clock.advance(15_000);
    const secondLog = memoryLogger();
    const [r] = await new Exporter(config, { clock, logger: secondLog, runtime: 'once', ledgerOf: openState(config.stateDir, secondLog, clock).ledgerOf }).collect();
    expect([r!.vitals.ok, r!.devices.ok, r!.alerts.ok]).toEqual([true, true, true]);
    expect(sim.requests.map((q) => q.time).slice(4)).toEqual([T0 + SLOT, T0 + SLOT, T0 + SLOT, T0 + SLOT]);
    const until = new Date(T0 + SLOT).toISOString();
    expect(waits(secondLog)).toEqual([
      expect.objectContaining({
        level: 'info',
        portal: 'test',
        msg: `waiting for the portal's budget until ${until}: requests other processes (or an earlier run) recorded in the state directory ${dir()} fill the share of 4 per 60 s`,
        reason: 'others',
        until,
        spentInWindow: 4,
        share: 4,
        ledger: `the state directory ${dir()}`,
      }),
    ]);
    expect(secondLog.lines.join('\n')).not.toContain(KEY);
  });

  it('without a shared state directory the same restart sends 8 requests in one window (what the directory prevents)', async () => {
    const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { moving: false, rateLimit: false }, { POSTURE_REQUESTS_PER_MINUTE: '5' });
    await new Exporter(config, { clock, logger, runtime: 'once' }).collect();
    await new Exporter(config, { clock, logger, runtime: 'once' }).collect();
    expect(maxInAnyWindow(sim.requests.map((q) => q.time))).toBe(8);
  });

  it('two exporters running at the same time on one state directory (serve beside once) share one share', async () => {
    const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { moving: false, alerts: 40 }, { POSTURE_REQUESTS_PER_MINUTE: '5', POSTURE_VITALS_TAGS: 'laptops,servers', POSTURE_STATE_DIR: dir() });
    const a = new Exporter(config, { clock, logger, runtime: 'once', ledgerOf: openState(config.stateDir, logger, clock).ledgerOf });
    const b = new Exporter(config, { clock, logger, runtime: 'once', ledgerOf: openState(config.stateDir, logger, clock).ledgerOf });
    const results = await Promise.all([a.collect(), b.collect()]);
    for (const [r] of results) expect([r!.vitals.ok, r!.devices.ok, r!.alerts.ok]).toEqual([true, true, true]);
    const times = sim.requests.map((q) => q.time);
    // 3 Vitals + 2 device totals + 1 /alerts each: 12 requests, 5 a window at most.
    expect(times).toHaveLength(12);
    expect(maxInAnyWindow(times)).toBe(5);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
  });

  it('honours the requests of a process that is gone, a window and the margin after they arrived', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const gone = sendLedger(new LedgerFiles(StateDir.open(dir(), logger, 'lost'), { logger, clock: hostClockOf(clock) }).requests(PORTAL), 'gone');
    // Five requests claimed at T0 whose answers began 3 s later: the window is full until T0 + 3 s + 61 s.
    const claims = await Promise.all(Array.from({ length: 5 }, () => gone.claim(5)));
    clock.advance(3_000);
    for (const c of claims) await c.arrived!();
    clock.advance(17_000);
    const sched = new PortalScheduler({ share: 5, clock, ledger: openState(dir(), logger, clock).ledgerOf(PORTAL) });
    const first = sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect(clock.pending).toBe(1);
    expect(clock.nextWakeAt).toBe(T0 + 3_000 + SLOT);
    clock.set(clock.nextWakeAt!);
    expect((await first).startedAt).toBe(T0 + 3_000 + SLOT);
  });

  it('counts a request whose process was killed in flight until the flight it declared has passed, and a window and the margin after', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const killed = sendLedger(new LedgerFiles(StateDir.open(dir(), logger, 'lost'), { logger, clock: hostClockOf(clock) }).requests(PORTAL), 'killed');
    // Its reader would have given up 20 s after the claim: the request reached the portal by then, or never.
    expect((await killed.claim(1, 20_000)).granted).toBe(true);
    const mine = openState(dir(), logger, clock).ledgerOf(PORTAL)!;
    // In flight, it counts: look again in a second (it may be given back, or arrive, at any moment).
    expect(await mine.claim(1)).toMatchObject({ granted: false, waitMs: 1_000, others: [] });
    clock.set(T0 + 20_000 + SLOT - 1);
    expect(await mine.claim(1)).toMatchObject({ granted: false, waitMs: 1 });
    clock.set(T0 + 20_000 + SLOT);
    expect((await mine.claim(1)).granted).toBe(true);
  });

  it('reads every record, however many released ones follow the ones that count: 4 sent and 60 given back leave one slot of 5', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const a = openState(dir(), logger, clock).ledgerOf(PORTAL)!;
    await send(a, 4);
    for (let i = 0; i < 60; i++) {
      const r = await a.claim(5);
      expect(r.granted).toBe(true);
      await r.release!();
    }
    // Counted from the files, not through the ledger: 64 records, 4 of them not released.
    const records = portalFiles(dir()).map((f) => JSON.parse(readFileSync(f, 'utf8')) as { released?: boolean });
    expect([records.length, records.filter((r) => !r.released).length]).toEqual([64, 4]);
    const b = openState(dir(), logger, clock).ledgerOf(PORTAL)!;
    await send(b, 1);
    expect(await b.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
  });

  it('ignores, with one warning each, a file that is not JSON, one of another shape, one of another portal and a symlink, and deletes none of them', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const real = openState(dir(), logger, clock).ledgerOf(PORTAL)!;
    await send(real, 1);
    const folder = join(portalFiles(dir())[0]!, '..');
    const outside = join(dir(), 'outside');
    writeFileSync(outside, "not the exporter's");
    writeFileSync(join(folder, 's000000000002'), '{"version":2,');
    writeFileSync(join(folder, 's000000000003'), JSON.stringify({ version: 2, sends: 'many' }));
    writeFileSync(join(folder, 's000000000004'), JSON.stringify({ version: 2, portal: 'https://other.example.com/public-api/v1', host: 'h', boot: 'b', mono: T0, wall: T0, writer: 'w' }));
    symlinkSync(outside, join(folder, 's000000000005'));
    writeFileSync(join(folder, 'notes.txt'), "a user's file");
    const reader = openState(dir(), logger, clock).ledgerOf(PORTAL)!;
    expect(await reader.others()).toEqual([0]);
    // The chain goes on past them: the next claim is number 6.
    expect((await reader.claim(5)).granted).toBe(true);
    expect(readdirSync(folder).sort()).toEqual(['notes.txt', 's000000000001', 's000000000002', 's000000000003', 's000000000004', 's000000000005', 's000000000006']);
    const warnings = logger.records().filter((r) => r.level === 'warn');
    expect(warnings.map((w) => [w.file, w.reason])).toEqual([
      [join(folder, 's000000000005'), 'a symlink'],
      [join(folder, 's000000000004'), 'not a record of requests to this portal'],
      [join(folder, 's000000000003'), 'not a record of requests to this portal'],
      [join(folder, 's000000000002'), 'not JSON'],
    ]);
    expect(readFileSync(outside, 'utf8')).toBe("not the exporter's");
  });

  it('records a request before it is sent, as in flight, and forgets one that reached no portal', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0, { autoAdvance: true });
    const { ledgerOf } = openState(dir(), logger, clock);
    const sched = new PortalScheduler({ share: 5, clock, ledger: ledgerOf(PORTAL) });
    const reader = openState(dir(), logger, clock).ledgerOf(PORTAL)!;
    const permit = await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    // Recorded, in flight: it holds the share of 1.
    expect(await reader.claim(1)).toMatchObject({ granted: false, waitMs: 1_000 });
    const [file] = portalFiles(dir());
    expect(JSON.parse(readFileSync(file!, 'utf8'))).toMatchObject({ flightMs: 45_000 });
    expect(JSON.parse(readFileSync(file!, 'utf8')).arrived).toBeUndefined();
    permit.refund();
    permit.done();
    await sched.flush();
    expect(JSON.parse(readFileSync(file!, 'utf8'))).toMatchObject({ released: true });
    expect(await reader.others()).toEqual([]);
    expect((await reader.claim(1)).granted).toBe(true);
  });

  it('records when a request could last have reached the portal once its answer began', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const sched = new PortalScheduler({ share: 5, clock, ledger: openState(dir(), logger, clock).ledgerOf(PORTAL) });
    const permit = await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    clock.advance(4_000);
    permit.arrived();
    clock.advance(2_000);
    permit.done();
    await sched.flush();
    const [file] = portalFiles(dir());
    expect(JSON.parse(readFileSync(file!, 'utf8'))).toMatchObject({ mono: T0, wall: T0, arrived: { mono: T0 + 4_000, wall: T0 + 4_000 } });
    expect(await openState(dir(), logger, clock).ledgerOf(PORTAL)!.others()).toEqual([2_000]);
  });
});

describe('claims and the folder they are linked into', () => {
  it('voids a claim linked into a folder a sweep replaced since its look (a stalled claimer): it is withdrawn and decided again', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const files = () => new LedgerFiles(StateDir.open(dir(), logger, 'lost'), { logger, clock: hostClockOf(clock) });
    await send(sendLedger(files().requests(PORTAL), 'first'), 8, 10);
    clock.advance(2 * 3_600_000);
    // A claimer reads the idle folder (newest 8), then stalls.
    const stalled = files().requests(PORTAL);
    const look = await stalled.look();
    expect(look.newest).toBe(8);
    // Meanwhile a process sweeps the folder away and five requests fill a new one.
    openState(dir(), logger, clock);
    await send(openState(dir(), logger, clock).ledgerOf(PORTAL)!, 5);
    const five = ['s000000000001', 's000000000002', 's000000000003', 's000000000004', 's000000000005'];
    expect(portalFiles(dir()).map((f) => f.slice(-13)).sort()).toEqual(five);
    // Its link of number 9 succeeds, in the new folder: void, and removed.
    expect(await stalled.put(look, 9, { flightMs: 45_000 })).toBe('void');
    expect(portalFiles(dir()).map((f) => f.slice(-13)).sort()).toEqual(five);
    // Decided again, on the new folder: the window is full.
    expect(await sendLedger(stalled, 'stalled').claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
  });

  it('voids a claim linked more than a window after its look, in the same folder', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const chain = new LedgerFiles(StateDir.open(dir(), logger, 'lost'), { logger, clock: hostClockOf(clock) }).requests(PORTAL);
    const look = await chain.look();
    clock.advance(SLOT + 1);
    expect(await chain.put(look, 1, { flightMs: 45_000 })).toBe('void');
    expect(readdirSync(join(dir(), 'sends', folderOf(PORTAL)))).toEqual([]);
    const fresh = await chain.look();
    clock.advance(SLOT);
    expect(await chain.put(fresh, 1, { flightMs: 45_000 })).toBe('won');
  });

  it('waits while another process closes the folder, and goes on past a closing mark a killed process left', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const a = openState(dir(), logger, clock).ledgerOf(PORTAL)!;
    await send(a, 1);
    const folder = join(dir(), 'sends', folderOf(PORTAL));
    const first = JSON.parse(readFileSync(join(folder, 's000000000001'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(folder, 's000000000002'), JSON.stringify({ ...first, closing: true }));
    expect(await a.claim(5)).toMatchObject({ granted: false, waitMs: 200 });
    clock.advance(10_000);
    expect((await a.claim(5)).granted).toBe(true);
    expect(readdirSync(folder)).toContain('s000000000003');
  });
});
