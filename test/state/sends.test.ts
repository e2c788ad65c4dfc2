import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spendSlots } from '../support/slots.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { Exporter } from '../../src/exporter/exporter.js';
import { PortalScheduler } from '../../src/schedule/scheduler.js';
import { StateDir } from '../../src/state/dir.js';
import { openState } from '../../src/state/index.js';
import { SendFiles } from '../../src/state/sends.js';
import { hostClockOf, type HostClock } from '../../src/state/host-clock.js';
import { folderOf } from '../../src/state/portal-folder.js';
import { ConfigError, LedgerError } from '../../src/errors.js';
import { maxInAnyWindow } from '../support/window.js';
import { portalWithConfig, T0 } from '../integration/support.js';
import { closeAfterEach } from '../support/closing.js';
import { runMain } from '../support/cli.js';
import { startSimulator } from '../../src/simulator/index.js';

const KEY = 'sim-state-key-0123456789abcdef';
const PORTAL = 'https://acme.example.com/public-api/v1';
const MINUTE = 60_000;
/** The window and the 1 s a start keeps beyond it (src/schedule/window.ts). */
const SLOT = MINUTE + 1_000;

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

describe('the share across processes, through the state directory', () => {
  it('a second exporter on the same state directory counts the first one\'s requests: never more than the share in any 60 s at the portal', async () => {
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

  it('a once started right after another says, in one line, that its first request waits for the window and when it goes', async () => {
    const { clock, sim, config } = await portalWithConfig(closing, [KEY], { moving: false }, { POSTURE_REQUESTS_PER_MINUTE: '4', POSTURE_STATE_DIR: dir });
    // Loggers that redact nothing: the key must not reach them at all.
    const firstLog = memoryLogger();
    await new Exporter(config, { clock, logger: firstLog, runtime: 'once', ledgerOf: openState(config.stateDir, firstLog, clock).ledgerOf }).collect();
    // vitals 1 + devices 2 + alerts 1 at T0 spend the share of 4; the first run waited for nothing.
    expect(sim.requests.map((q) => q.time)).toEqual([T0, T0, T0, T0]);
    const waits = (log: ReturnType<typeof memoryLogger>) => log.records().filter((l) => String(l.msg).includes('the first request waits'));
    expect(waits(firstLog)).toEqual([]);
    clock.advance(15_000);
    const secondLog = memoryLogger();
    const [r] = await new Exporter(config, { clock, logger: secondLog, runtime: 'once', ledgerOf: openState(config.stateDir, secondLog, clock).ledgerOf }).collect();
    expect([r!.vitals.ok, r!.devices.ok, r!.alerts.ok]).toEqual([true, true, true]);
    expect(sim.requests.map((q) => q.time).slice(4)).toEqual([T0 + SLOT, T0 + SLOT, T0 + SLOT, T0 + SLOT]);
    expect(waits(secondLog)).toEqual([expect.objectContaining({ level: 'info', portal: 'test', spentInWindow: 4, share: 4, firstRequestAt: new Date(T0 + SLOT).toISOString() })]);
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

  it('honours the requests of a process that is gone, on the clock they share', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const gone = new SendFiles(StateDir.open(dir, logger, 'lost'), { logger, clock: hostClockOf(clock) }).ledger(PORTAL);
    // Five requests at T0: the window is full until T0 + 61 s.
    for (let i = 0; i < 5; i++) expect((await gone.claim(5)).granted).toBe(true);
    clock.advance(20_000);
    const sched = new PortalScheduler({ share: 5, clock, ledger: new SendFiles(StateDir.open(dir, logger, 'lost'), { logger, clock: hostClockOf(clock) }).ledger(PORTAL) });
    const first = sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect(clock.pending).toBe(1);
    expect(clock.nextWakeAt).toBe(T0 + SLOT);
    clock.set(clock.nextWakeAt!);
    expect((await first).startedAt).toBe(T0 + SLOT);
  });

  it('compares the requests of another boot or host on wall time, a record in the future counting as now until it leaves the window', async () => {
    const logger = memoryLogger();
    const state = StateDir.open(dir, logger, 'lost');
    const clock = new FakeClock(T0);
    const here = (): HostClock => ({ host: 'here', boot: 'b1', monotonic: () => clock.monotonic(), wall: () => clock.now() });
    // Another host whose wall clock runs 90 s ahead wrote 5 requests now: 90 s "in the future".
    const ahead: HostClock = { host: 'there', boot: 'b2', monotonic: () => 1, wall: () => clock.now() + 90_000 };
    const there = new SendFiles(state, { logger, clock: ahead }).ledger(PORTAL);
    for (let i = 0; i < 5; i++) expect((await there.claim(5)).granted).toBe(true);
    const mine = new SendFiles(state, { logger, clock: here() }).ledger(PORTAL);
    // They count as now: never dropped, and they hold the window until 61 s after their wall time passes.
    expect(await mine.others()).toEqual([0, 0, 0, 0, 0]);
    const refused = await mine.claim(5);
    expect(refused).toMatchObject({ granted: false, waitMs: SLOT });
    clock.advance(90_000);
    expect((await mine.claim(5)).granted).toBe(false);
    clock.advance(SLOT - 1);
    expect((await mine.claim(5)).granted).toBe(false);
    clock.advance(1);
    expect((await mine.claim(5)).granted).toBe(true);
  });

  it('a wall-clock step of this host moves nothing: its own records compare on the monotonic clock', async () => {
    const logger = memoryLogger();
    const state = StateDir.open(dir, logger, 'lost');
    const clock = new FakeClock(T0);
    const a = new SendFiles(state, { logger, clock: hostClockOf(clock) }).ledger(PORTAL);
    for (let i = 0; i < 5; i++) expect((await a.claim(5)).granted).toBe(true);
    const b = new SendFiles(state, { logger, clock: hostClockOf(clock) }).ledger(PORTAL);
    for (const step of [-90_000, 45_000 + 90_000]) {
      clock.stepWall(step);
      expect(await b.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
    }
    clock.advance(SLOT);
    expect((await b.claim(5)).granted).toBe(true);
  });

  it('a record of this boot from a monotonic time not reached yet (a faked clock wrote it) falls back to its wall time: it expires', async () => {
    const logger = memoryLogger();
    const state = StateDir.open(dir, logger, 'lost');
    const clock = new FakeClock(T0);
    const here: HostClock = { host: 'h', boot: 'b', monotonic: () => clock.monotonic(), wall: () => clock.now() };
    // Same host and boot, its monotonic clock a day ahead, its wall clock 10 s ahead.
    const faked: HostClock = { host: 'h', boot: 'b', monotonic: () => clock.monotonic() + 86_400_000, wall: () => clock.now() + 10_000 };
    const other = new SendFiles(state, { logger, clock: faked }).ledger(PORTAL);
    for (let i = 0; i < 5; i++) expect((await other.claim(5)).granted).toBe(true);
    const mine = new SendFiles(state, { logger, clock: here }).ledger(PORTAL);
    expect(await mine.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
    clock.advance(10_000 + SLOT);
    expect((await mine.claim(5)).granted).toBe(true);
  });

  it('ignores, with one warning each, a file that is not JSON, one of another shape, one of another portal and a symlink, and deletes none of them', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const state = StateDir.open(dir, logger, 'lost');
    const real = new SendFiles(state, { logger, clock: hostClockOf(clock) }).ledger(PORTAL);
    expect((await real.claim(5)).granted).toBe(true);
    const folder = join(portalFiles()[0]!, '..');
    const outside = join(dir, 'outside');
    writeFileSync(outside, 'not the exporter\'s');
    writeFileSync(join(folder, 's000000000002'), '{"version":2,');
    writeFileSync(join(folder, 's000000000003'), JSON.stringify({ version: 2, sends: 'many' }));
    writeFileSync(join(folder, 's000000000004'), JSON.stringify({ version: 2, portal: 'https://other.example.com/public-api/v1', host: 'h', boot: 'b', mono: T0, wall: T0, writer: 'w' }));
    symlinkSync(outside, join(folder, 's000000000005'));
    writeFileSync(join(folder, 'notes.txt'), 'a user\'s file');
    const reader = new SendFiles(state, { logger, clock: hostClockOf(clock) }).ledger(PORTAL);
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
    expect(readFileSync(outside, 'utf8')).toBe('not the exporter\'s');
  });

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

  it('records a request before it is sent and forgets one that reached no portal', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0, { autoAdvance: true });
    const { ledgerOf } = openState(dir, logger, clock);
    const sched = new PortalScheduler({ share: 5, clock, ledger: ledgerOf(PORTAL) });
    const reader = new SendFiles(StateDir.open(dir, logger, 'lost'), { logger, clock: hostClockOf(clock) }).ledger(PORTAL);
    const permit = await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    expect(await reader.others()).toEqual([0]);
    permit.refund();
    permit.done();
    await new Promise((r) => setImmediate(r));
    expect(await reader.others()).toEqual([]);
  });

  it('files each portal apart, and keeps a busy portal\'s folder small', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const state = StateDir.open(dir, logger, 'lost');
    const files = new SendFiles(state, { logger, clock: hostClockOf(clock) });
    const acme = files.ledger(PORTAL);
    expect((await acme.claim(5)).granted).toBe(true);
    const other = new SendFiles(state, { logger, clock: hostClockOf(clock) });
    expect(await other.ledger('https://other.example.com/public-api/v1').others()).toEqual([]);
    expect(await other.ledger(PORTAL).others()).toEqual([0]);
    // A day of requests at the share: the folder keeps about 64 of them, not all.
    for (let i = 0; i < 500; i++) {
      clock.advance(SLOT / 5);
      expect((await acme.claim(5)).granted).toBe(true);
    }
    expect(portalFiles().length).toBeLessThanOrEqual(70);
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

  it('removes the portals idle for more than an hour when any run opens the directory', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    for (let i = 0; i < 6; i++) expect((await openState(dir, logger, clock).ledgerOf(`https://p${i}.example.com/public-api/v1`)!.claim(5)).granted).toBe(true);
    expect(readdirSync(join(dir, 'sends'))).toHaveLength(6);
    clock.advance(3_600_000);
    // Exactly an hour: still there.
    openState(dir, logger, clock);
    expect(readdirSync(join(dir, 'sends'))).toHaveLength(6);
    clock.advance(3_600_000);
    const { ledgerOf } = openState(dir, logger, clock);
    expect(readdirSync(join(dir, 'sends'))).toEqual([]);
    expect((await ledgerOf(PORTAL)!.claim(5)).granted).toBe(true);
    expect(readdirSync(join(dir, 'sends'))).toEqual([folderOf(PORTAL)]);
    expect(logger.records().filter((r) => r.level === 'warn')).toEqual([]);
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
