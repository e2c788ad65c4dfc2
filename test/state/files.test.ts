/**
 * The ledger in the state directory, on fake clocks: the share across processes (exporters on one
 * directory), every record read whatever was released after it, requests counted from when they
 * could last have reached the portal, clocks that cannot be trusted (another host, libfaketime with
 * or without the monotonic clock, a time namespace, a wall-clock step), a claim linked into a folder
 * a sweep replaced, pruning, and the directory's own safety (modes, symlinks, foreign files).
 *
 * Host clocks here are read off one fake kernel clock, which also stamps the files written (their
 * mtime): a process whose clocks are faked or offset reads others, as libfaketime and a time
 * namespace do, while the kernel's stamps stay true.
 */
import { chmodSync, futimesSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spendSlots } from '../support/slots.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { Exporter } from '../../src/exporter/exporter.js';
import type { SendLedger } from '../../src/schedule/ledger.js';
import { PortalScheduler } from '../../src/schedule/scheduler.js';
import { sendLedger } from '../../src/state/claims.js';
import { StateDir } from '../../src/state/dir.js';
import { LedgerFiles } from '../../src/state/files.js';
import { openState } from '../../src/state/index.js';
import { hostClockOf, type HostClock } from '../../src/state/host-clock.js';
import { folderOf } from '../../src/state/portal-folder.js';
import { ConfigError, LedgerError } from '../../src/errors.js';
import { maxInAnyWindow } from '../support/window.js';
import { portalWithConfig, T0 } from '../integration/support.js';
import { closeAfterEach } from '../support/closing.js';
import { runMain } from '../support/cli.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { portalIdentity } from '../../src/config/identity.js';

const KEY = 'sim-state-key-0123456789abcdef';
const PORTAL = 'https://acme.example.com/public-api/v1';
const MINUTE = 60_000;
/** The window and the 1 s kept beyond it (src/schedule/window.ts): how long a request counts after it arrived. */
const SLOT = MINUTE + 1_000;
/** A host's monotonic clock: milliseconds since its boot, far from wall time. */
const UPTIME = 4_000_000;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'posture-state-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const closing = closeAfterEach();

/** The one portal folder of the state directory, and the files in it. */
function portalFiles(root = dir): string[] {
  const folders = readdirSync(join(root, 'sends'));
  expect(folders).toHaveLength(1);
  return readdirSync(join(root, 'sends', folders[0]!)).map((f) => join(root, 'sends', folders[0]!, f));
}

/**
 * A process's host clocks, read off `kernel`: by default its monotonic clock is the boot's (UPTIME
 * at T0) and its wall clock the kernel's; `mono` and `wall` fake them. Files it writes are stamped
 * by the kernel.
 */
function hostClock(kernel: FakeClock, o: { host?: string; boot?: string; mono?: () => number; wall?: () => number } = {}): HostClock {
  return {
    host: o.host ?? 'host-a',
    boot: o.boot ?? 'boot-1',
    monotonic: o.mono ?? (() => kernel.monotonic() - T0 + UPTIME),
    wall: o.wall ?? (() => kernel.now()),
    fileNow: () => kernel.now(),
    stamp: (fd) => futimesSync(fd, kernel.now() / 1000, kernel.now() / 1000),
  };
}

/** A process's ledger of PORTAL in the state directory, on `clock`. */
function ledgerOn(clock: HostClock, logger = memoryLogger()): SendLedger {
  return sendLedger(new LedgerFiles(StateDir.open(dir, logger, 'lost'), { logger, clock }).requests(PORTAL), `the state directory ${dir}`);
}

/** Claims `n` slots that must be granted, each arriving at once. */
async function send(ledger: SendLedger, n: number, share = 5): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await ledger.claim(share);
    expect(r.granted).toBe(true);
    await r.arrived!();
  }
}

describe('the share across processes, through the state directory', () => {
  it("a second exporter on the same state directory counts the first one's requests: never more than the share in any 60 s at the portal", async () => {
    const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { moving: false }, { POSTURE_REQUESTS_PER_MINUTE: '5', POSTURE_STATE_DIR: dir });
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
    const { clock, sim, config } = await portalWithConfig(closing, [KEY], { moving: false }, { POSTURE_REQUESTS_PER_MINUTE: '4', POSTURE_STATE_DIR: dir });
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
        msg: `waiting for the portal's budget until ${until}: requests other processes (or an earlier run) recorded in the state directory ${dir} fill the share of 4 per 60 s`,
        reason: 'others',
        until,
        spentInWindow: 4,
        share: 4,
        ledger: `the state directory ${dir}`,
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
    const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { moving: false, alerts: 40 }, { POSTURE_REQUESTS_PER_MINUTE: '5', POSTURE_VITALS_TAGS: 'laptops,servers', POSTURE_STATE_DIR: dir });
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
    const gone = sendLedger(new LedgerFiles(StateDir.open(dir, logger, 'lost'), { logger, clock: hostClockOf(clock) }).requests(PORTAL), 'gone');
    // Five requests claimed at T0 whose answers began 3 s later: the window is full until T0 + 3 s + 61 s.
    const claims = await Promise.all(Array.from({ length: 5 }, () => gone.claim(5)));
    clock.advance(3_000);
    for (const c of claims) await c.arrived!();
    clock.advance(17_000);
    const sched = new PortalScheduler({ share: 5, clock, ledger: openState(dir, logger, clock).ledgerOf(PORTAL) });
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
    const killed = sendLedger(new LedgerFiles(StateDir.open(dir, logger, 'lost'), { logger, clock: hostClockOf(clock) }).requests(PORTAL), 'killed');
    // Its reader would have given up 20 s after the claim: the request reached the portal by then, or never.
    expect((await killed.claim(1, 20_000)).granted).toBe(true);
    const mine = openState(dir, logger, clock).ledgerOf(PORTAL)!;
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
    const a = openState(dir, logger, clock).ledgerOf(PORTAL)!;
    await send(a, 4);
    for (let i = 0; i < 60; i++) {
      const r = await a.claim(5);
      expect(r.granted).toBe(true);
      await r.release!();
    }
    // Counted from the files, not through the ledger: 64 records, 4 of them not released.
    const records = portalFiles().map((f) => JSON.parse(readFileSync(f, 'utf8')) as { released?: boolean });
    expect([records.length, records.filter((r) => !r.released).length]).toEqual([64, 4]);
    const b = openState(dir, logger, clock).ledgerOf(PORTAL)!;
    await send(b, 1);
    expect(await b.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
  });

  it('ignores, with one warning each, a file that is not JSON, one of another shape, one of another portal and a symlink, and deletes none of them', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const real = openState(dir, logger, clock).ledgerOf(PORTAL)!;
    await send(real, 1);
    const folder = join(portalFiles()[0]!, '..');
    const outside = join(dir, 'outside');
    writeFileSync(outside, "not the exporter's");
    writeFileSync(join(folder, 's000000000002'), '{"version":2,');
    writeFileSync(join(folder, 's000000000003'), JSON.stringify({ version: 2, sends: 'many' }));
    writeFileSync(join(folder, 's000000000004'), JSON.stringify({ version: 2, portal: 'https://other.example.com/public-api/v1', host: 'h', boot: 'b', mono: T0, wall: T0, writer: 'w' }));
    symlinkSync(outside, join(folder, 's000000000005'));
    writeFileSync(join(folder, 'notes.txt'), "a user's file");
    const reader = openState(dir, logger, clock).ledgerOf(PORTAL)!;
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
    const { ledgerOf } = openState(dir, logger, clock);
    const sched = new PortalScheduler({ share: 5, clock, ledger: ledgerOf(PORTAL) });
    const reader = openState(dir, logger, clock).ledgerOf(PORTAL)!;
    const permit = await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    // Recorded, in flight: it holds the share of 1.
    expect(await reader.claim(1)).toMatchObject({ granted: false, waitMs: 1_000 });
    const [file] = portalFiles();
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
    const sched = new PortalScheduler({ share: 5, clock, ledger: openState(dir, logger, clock).ledgerOf(PORTAL) });
    const permit = await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    clock.advance(4_000);
    permit.arrived();
    clock.advance(2_000);
    permit.done();
    await sched.flush();
    const [file] = portalFiles();
    expect(JSON.parse(readFileSync(file!, 'utf8'))).toMatchObject({ mono: T0, wall: T0, arrived: { mono: T0 + 4_000, wall: T0 + 4_000 } });
    expect(await openState(dir, logger, clock).ledgerOf(PORTAL)!.others()).toEqual([2_000]);
  });
});

describe('clocks a record is placed by', () => {
  it("another host's record is placed by its wall time; one from a clock 90 s ahead counts from when its file was written, a window and the margin, not 90 s more", async () => {
    const kernel = new FakeClock(T0);
    const there = ledgerOn(hostClock(kernel, { host: 'there', boot: 'b2', mono: () => 1, wall: () => kernel.now() + 90_000 }));
    await send(there, 5);
    const mine = ledgerOn(hostClock(kernel));
    expect(await mine.others()).toEqual([0, 0, 0, 0, 0]);
    expect(await mine.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
    kernel.advance(SLOT - 1);
    expect((await mine.claim(5)).granted).toBe(false);
    kernel.advance(1);
    expect((await mine.claim(5)).granted).toBe(true);
  });

  it('a process under libfaketime 90 s behind, its monotonic clock faked too, counts the real records, and they count its own', async () => {
    const kernel = new FakeClock(T0);
    // libfaketime's monotonic clock reads its faked wall time, far from this boot's.
    const faked = hostClock(kernel, { mono: () => kernel.now() - 90_000, wall: () => kernel.now() - 90_000 });
    await send(ledgerOn(hostClock(kernel)), 5);
    expect(await ledgerOn(faked).claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
    kernel.advance(SLOT);
    await send(ledgerOn(faked), 5);
    // The real process's next run counts the faked one's requests from when they were written.
    const real = ledgerOn(hostClock(kernel));
    expect(await real.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
    kernel.advance(SLOT);
    expect((await real.claim(5)).granted).toBe(true);
  });

  it('a run under libfaketime a day ahead blocks a real run a window and the margin after its requests, not a day', async () => {
    const kernel = new FakeClock(T0);
    const dayAhead = hostClock(kernel, { mono: () => kernel.now() + 86_400_000, wall: () => kernel.now() + 86_400_000 });
    await send(ledgerOn(dayAhead), 5);
    const real = ledgerOn(hostClock(kernel));
    expect(await real.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
    kernel.advance(SLOT);
    expect((await real.claim(5)).granted).toBe(true);
  });

  it.each([
    ['90 s behind', -90_000],
    ['45 s ahead', 45_000],
  ])('a wall clock %s with the monotonic clock left alone (DONT_FAKE_MONOTONIC) leaves the records counted a window and the margin after they arrived', async (_what, offset) => {
    const kernel = new FakeClock(T0);
    await send(ledgerOn(hostClock(kernel)), 5);
    kernel.advance(10_000);
    const stepped = ledgerOn(hostClock(kernel, { wall: () => kernel.now() + offset }));
    expect(await stepped.claim(5)).toMatchObject({ granted: false, waitMs: SLOT - 10_000 });
    kernel.set(T0 + SLOT);
    await send(stepped, 5);
    const real = ledgerOn(hostClock(kernel));
    expect(await real.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
  });

  it.each([
    ['ahead', 1_000_000],
    ['behind', -1_000_000],
  ])("a writer in a time namespace whose monotonic clock runs 1000 s %s is counted from its wall time or when its file was written, never earlier", async (_what, offset) => {
    const kernel = new FakeClock(T0);
    await send(ledgerOn(hostClock(kernel, { mono: () => kernel.monotonic() - T0 + UPTIME + offset })), 5);
    kernel.advance(10_000);
    const real = ledgerOn(hostClock(kernel));
    expect(await real.claim(5)).toMatchObject({ granted: false, waitMs: SLOT - 10_000 });
  });

  it("a wall-clock step of this host moves nothing: its own records compare on the monotonic clock, the file stamps' step notwithstanding", async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const a = openState(dir, logger, clock).ledgerOf(PORTAL)!;
    await send(a, 5);
    const b = openState(dir, logger, clock).ledgerOf(PORTAL)!;
    for (const step of [-90_000, 45_000 + 90_000]) {
      clock.stepWall(step);
      expect(await b.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
    }
    clock.advance(SLOT);
    expect((await b.claim(5)).granted).toBe(true);
  });
});

describe('claims and the folder they are linked into', () => {
  it('voids a claim linked into a folder a sweep replaced since its look (a stalled claimer): it is withdrawn and decided again', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const files = () => new LedgerFiles(StateDir.open(dir, logger, 'lost'), { logger, clock: hostClockOf(clock) });
    await send(sendLedger(files().requests(PORTAL), 'first'), 8, 10);
    clock.advance(2 * 3_600_000);
    // A claimer reads the idle folder (newest 8), then stalls.
    const stalled = files().requests(PORTAL);
    const look = await stalled.look();
    expect(look.newest).toBe(8);
    // Meanwhile a process sweeps the folder away and five requests fill a new one.
    openState(dir, logger, clock);
    await send(openState(dir, logger, clock).ledgerOf(PORTAL)!, 5);
    const five = ['s000000000001', 's000000000002', 's000000000003', 's000000000004', 's000000000005'];
    expect(portalFiles().map((f) => f.slice(-13)).sort()).toEqual(five);
    // Its link of number 9 succeeds, in the new folder: void, and removed.
    expect(await stalled.put(look, 9, { flightMs: 45_000 })).toBe('void');
    expect(portalFiles().map((f) => f.slice(-13)).sort()).toEqual(five);
    // Decided again, on the new folder: the window is full.
    expect(await sendLedger(stalled, 'stalled').claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
  });

  it('voids a claim linked more than a window after its look, in the same folder', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const chain = new LedgerFiles(StateDir.open(dir, logger, 'lost'), { logger, clock: hostClockOf(clock) }).requests(PORTAL);
    const look = await chain.look();
    clock.advance(SLOT + 1);
    expect(await chain.put(look, 1, { flightMs: 45_000 })).toBe('void');
    expect(readdirSync(join(dir, 'sends', folderOf(PORTAL)))).toEqual([]);
    const fresh = await chain.look();
    clock.advance(SLOT);
    expect(await chain.put(fresh, 1, { flightMs: 45_000 })).toBe('won');
  });

  it('waits while another process closes the folder, and goes on past a closing mark a killed process left', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const a = openState(dir, logger, clock).ledgerOf(PORTAL)!;
    await send(a, 1);
    const folder = join(dir, 'sends', folderOf(PORTAL));
    const first = JSON.parse(readFileSync(join(folder, 's000000000001'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(folder, 's000000000002'), JSON.stringify({ ...first, closing: true }));
    expect(await a.claim(5)).toMatchObject({ granted: false, waitMs: 200 });
    clock.advance(10_000);
    expect((await a.claim(5)).granted).toBe(true);
    expect(readdirSync(folder)).toContain('s000000000003');
  });
});

describe('what the directory keeps', () => {
  it("files each portal apart, and prunes a busy portal's records a window after they stopped counting", async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const acme = openState(dir, logger, clock).ledgerOf(PORTAL)!;
    await send(acme, 1);
    expect(await openState(dir, logger, clock).ledgerOf('https://other.example.com/public-api/v1')!.others()).toEqual([]);
    expect(await openState(dir, logger, clock).ledgerOf(PORTAL)!.others()).toEqual([0]);
    // Half an hour of requests at the share, 5 every 61 s: a record stops counting 61 s after it arrived, and goes 61 s later.
    for (let i = 0; i < 150; i++) {
      clock.advance(SLOT / 5);
      await send(acme, 1);
    }
    // What two windows hold: 10 records, and the one just claimed.
    expect(portalFiles().length).toBeLessThanOrEqual(11);
  });

  it('creates the directory and its folders 0700 and its files 0600', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const root = join(dir, 'new', 'state');
    const { ledgerOf } = openState(root, logger, clock);
    expect((await ledgerOf(PORTAL)!.claim(5)).granted).toBe(true);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(statSync(join(root, 'sends')).mode & 0o777).toBe(0o700);
    const [file] = portalFiles(root);
    expect(statSync(join(file!, '..')).mode & 0o777).toBe(0o700);
    expect(statSync(file!).mode & 0o777).toBe(0o600);
  });

  it('removes a portal folder whose records all stopped counting an hour ago when any run opens the directory', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    for (let i = 0; i < 6; i++) await send(openState(dir, logger, clock).ledgerOf(`https://p${i}.example.com/public-api/v1`)!, 1);
    expect(readdirSync(join(dir, 'sends'))).toHaveLength(6);
    // They arrived at T0 and counted until T0 + 61 s: an hour after that, exactly, they are still there.
    clock.set(T0 + SLOT + 3_600_000);
    openState(dir, logger, clock);
    expect(readdirSync(join(dir, 'sends'))).toHaveLength(6);
    clock.advance(1);
    const { ledgerOf } = openState(dir, logger, clock);
    expect(readdirSync(join(dir, 'sends'))).toEqual([]);
    expect((await ledgerOf(PORTAL)!.claim(5)).granted).toBe(true);
    expect(readdirSync(join(dir, 'sends'))).toEqual([folderOf(PORTAL)]);
    expect(logger.records().filter((r) => r.level === 'warn')).toEqual([]);
  });
});

describe('the files a state directory holds after idle hours', () => {
  /** Every file below `root`: what the directory holds. */
  const filesIn = (root: string): string[] => readdirSync(root, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesIn(join(root, e.name)) : [join(root, e.name)]));
  const IDLE_MS = 2 * 3_600_000;
  /** The slow jobs' default intervals (README, issue 47): the resolved-alerts pass and the access settings hourly, the directory daily. */
  const INTERVAL_MS = { resolved: 3_600_000, access: 3_600_000, directory: 86_400_000 };
  /** The slow job whose pass folder this is, by its name: the entry's folder for the resolved-alerts pass, the entry and the job's name after it for the others. */
  const jobOfFolder = (folder: string) => /_(access|directory)-[0-9a-f]{12}$/.exec(folder)?.[1] ?? 'resolved';

  it('after runs against six portals, two idle hours later one more run leaves one run\'s files and, of every portal, only the records of the slow jobs whose interval outlasts the idle hours', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sims = await Promise.all(Array.from({ length: 6 }, () => startSimulator({ clock, keys: [{ key: KEY }], moving: false }).then(closing)));
    const once = async (baseUrl: string, stateDir: string) => {
      const r = await runMain(['once'], { env: { POSTURE_BASE_URL: baseUrl, POSTURE_API_KEY: KEY, POSTURE_STATE_DIR: stateDir }, clock });
      expect(r.code, r.stderr).toBe(0);
    };
    // What one run leaves, counted in a directory of its own.
    await once(sims[0]!.baseUrl, join(dir, 'single'));
    const single = filesIn(join(dir, 'single')).map((f) => f.slice(join(dir, 'single').length + 1));
    // Of them, the records of a slow job that outlasts the idle hours (one file a job: a first run claims each once).
    const lasting = single.filter((f) => f.startsWith('passes/') && INTERVAL_MS[jobOfFolder(f.split('/')[1]!) as keyof typeof INTERVAL_MS] > IDLE_MS);
    expect(lasting.map((f) => jobOfFolder(f.split('/')[1]!))).toEqual(['directory']);
    // Requests and slow jobs' records of six portals.
    for (const sim of sims) await once(sim.baseUrl, join(dir, 'six'));
    expect(filesIn(join(dir, 'six'))).toHaveLength(6 * single.length);
    clock.set(clock.now() + IDLE_MS);
    await once(sims[0]!.baseUrl, join(dir, 'six'));
    // One run's files, and each portal's record of its claim of the directory in its first run, the run's own portal's too (its
    // new record is the next of the chain). At the default share of 5 a first run's window has no room for the directory, and
    // the claim is given back; its record stays for the directory's interval all the same.
    const six = filesIn(join(dir, 'six')).map((f) => f.slice(join(dir, 'six').length + 1));
    expect(six).toHaveLength(single.length + 6 * lasting.length);
    // The files themselves: the single run's names, the directory's chain one longer; the other five portals' directory records, and none of their requests or hourly records.
    const directoryOf = (sim: Simulator) => `passes/${folderOf(`${portalIdentity(sim.baseUrl)}#127.0.0.1\u0000directory`)}`;
    const [own, ...rest] = sims.map(directoryOf);
    expect(single).toContain(`${own}/p000000000001`);
    expect(six.sort()).toEqual([...single.filter((f) => !f.startsWith(`${own}/`)), `${own}/p000000000001`, `${own}/p000000000002`, ...rest.map((d) => `${d}/p000000000001`)].sort());
    for (const sim of sims) {
      const first = JSON.parse(readFileSync(join(dir, 'six', directoryOf(sim), 'p000000000001'), 'utf8')) as unknown;
      expect(first).toMatchObject({ portal: portalIdentity(sim.baseUrl), entry: '127.0.0.1\u0000directory', intervalMs: INTERVAL_MS.directory });
    }
  });
});

describe('a state directory that is not usable', () => {
  it('a directory that cannot be created: one warning naming the setting and what is lost, then the share from memory', async () => {
    writeFileSync(join(dir, 'file'), '');
    const logger = memoryLogger();
    const clock = new FakeClock(T0, { autoAdvance: true });
    const { ledgerOf } = openState(join(dir, 'file', 'state'), logger, clock);
    expect(ledgerOf(PORTAL)).toBeUndefined();
    const sched = new PortalScheduler({ share: 2, clock, ledger: ledgerOf(PORTAL) });
    expect(await spendSlots(sched, 5)).toEqual([T0, T0, T0 + SLOT, T0 + SLOT, T0 + 2 * SLOT]);
    const warnings = logger.records().filter((r) => r.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ setting: 'POSTURE_STATE_DIR', stateDir: join(dir, 'file', 'state'), error: 'ENOTDIR' });
    expect(warnings[0]!.msg).toBe(
      `POSTURE_STATE_DIR (--state-dir) ${join(dir, 'file', 'state')} cannot be written (ENOTDIR): the requests this process sends to each portal are not recorded, so a restart or another process does not count them against the share of the last 60 s; the process goes on from memory. Give a writable directory to keep them.`,
    );
  });

  it('a directory that stops working later (removed, a file in its place) fails the requests closed: nothing is sent on a share it cannot see', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0, { autoAdvance: true });
    const stateDir = join(dir, 'state');
    const { ledgerOf } = openState(stateDir, logger, clock);
    const sched = new PortalScheduler({ share: 5, clock, ledger: ledgerOf(PORTAL) });
    await spendSlots(sched, 1);
    rmSync(stateDir, { recursive: true });
    writeFileSync(stateDir, '');
    await expect(spendSlots(sched, 1)).rejects.toBeInstanceOf(LedgerError);
    expect(sched.window.countAt(T0)).toBe(1);
  });

  it.each([
    ['0777', 0o777, 'is writable by its group (mode 0777)'],
    ['0702', 0o702, 'is writable by others (mode 0702)'],
  ])('refuses a directory of mode %s before anything, naming the setting and the fix', (_mode, mode, problem) => {
    const root = join(dir, 'open');
    mkdirSync(root);
    chmodSync(root, mode);
    let thrown: unknown;
    try {
      openState(root, memoryLogger(), new FakeClock(T0));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).setting).toBe('POSTURE_STATE_DIR');
    expect((thrown as ConfigError).message).toBe(
      `POSTURE_STATE_DIR (--state-dir) ${root} ${problem}: whoever can write it could change what the exporter counts and deletes. Give a directory of this user's own that only it can write (chmod 700), or a path where the exporter creates one.`,
    );
    expect(readdirSync(root)).toEqual([]);
  });

  it('follows no symlink planted in place of its folders: nothing is written or deleted outside', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const root = join(dir, 'state');
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, '.bashrc'), 'keep me');
    utimesSync(join(outside, '.bashrc'), new Date(T0 - 86_400_000), new Date(T0 - 86_400_000));
    // The portal's folder is a symlink to another directory.
    const { ledgerOf } = openState(root, logger, clock);
    symlinkSync(outside, join(root, 'sends', folderOf(PORTAL)));
    await expect(ledgerOf(PORTAL)!.claim(5)).rejects.toThrow(new LedgerError(join(root, 'sends', folderOf(PORTAL)), `${join(root, 'sends', folderOf(PORTAL))} in the state directory is a symlink: it is not followed; remove it`));
    // The sends folder itself a symlink.
    const root2 = join(dir, 'state2');
    mkdirSync(root2, { mode: 0o700 });
    symlinkSync(outside, join(root2, 'sends'));
    const second = openState(root2, logger, clock);
    await expect(second.ledgerOf(PORTAL)!.claim(5)).rejects.toBeInstanceOf(LedgerError);
    expect(readdirSync(outside)).toEqual(['.bashrc']);
    expect(readFileSync(join(outside, '.bashrc'), 'utf8')).toBe('keep me');
  });

  it('once on a state directory that cannot be written: one JSON warning line naming the setting, and the run succeeds', async () => {
    writeFileSync(join(dir, 'file'), '');
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = closing(await startSimulator({ clock, keys: [{ key: KEY }], moving: false }));
    const r = await runMain(['once'], { env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_STATE_DIR: join(dir, 'file', 'state') }, clock });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const about = lines.filter((l) => String(l.msg).includes('POSTURE_STATE_DIR'));
    expect(about).toHaveLength(1);
    expect(about[0]).toMatchObject({ level: 'warn', setting: 'POSTURE_STATE_DIR', error: 'ENOTDIR' });
    // Vitals, the two device totals, /alerts, and the resolved-alerts pass (no directory to remember it: every run).
    expect(sim.requests).toHaveLength(5);
  });

  it('check-config names the state directory in effect', async () => {
    const r = await runMain(['check-config'], { env: { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: KEY, POSTURE_STATE_DIR: join(dir, 'state') } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')).toContain(`state directory: ${join(dir, 'state')}`);
  });
});
