import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
function portalFiles(): string[] {
  const folders = readdirSync(join(dir, 'sends'));
  expect(folders).toHaveLength(1);
  return readdirSync(join(dir, 'sends', folders[0]!)).map((f) => join(dir, 'sends', folders[0]!, f));
}

describe('the share across processes, through the state directory', () => {
  it('a second exporter on the same state directory counts the first one\'s requests: never more than the share in any 60 s at the portal', async () => {
    const { clock, sim, logger, config } = await portalWithConfig(closing, [KEY], { moving: false }, { POSTURE_REQUESTS_PER_MINUTE: '5', POSTURE_STATE_DIR: dir });
    const first = new Exporter(config, { clock, logger, runtime: 'once', ledgerOf: openState(config.stateDir, logger).ledgerOf });
    await first.collect();
    // vitals 1 + devices 2 + alerts 1, at once (the window was empty).
    expect(sim.requests.map((q) => q.time)).toEqual([T0, T0, T0, T0]);
    // A restart: a new process (its own writer) on the same directory, at once.
    const second = new Exporter(config, { clock, logger, runtime: 'once', ledgerOf: openState(config.stateDir, logger).ledgerOf });
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
    await new Exporter(config, { clock, logger: firstLog, runtime: 'once', ledgerOf: openState(config.stateDir, firstLog).ledgerOf }).collect();
    // vitals 1 + devices 2 + alerts 1 at T0 spend the share of 4; the first run waited for nothing.
    expect(sim.requests.map((q) => q.time)).toEqual([T0, T0, T0, T0]);
    const waits = (log: ReturnType<typeof memoryLogger>) => log.records().filter((l) => String(l.msg).includes('the first request waits'));
    expect(waits(firstLog)).toEqual([]);
    clock.advance(15_000);
    const secondLog = memoryLogger();
    const [r] = await new Exporter(config, { clock, logger: secondLog, runtime: 'once', ledgerOf: openState(config.stateDir, secondLog).ledgerOf }).collect();
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
    const a = new Exporter(config, { clock, logger, runtime: 'once', ledgerOf: openState(config.stateDir, logger).ledgerOf });
    const b = new Exporter(config, { clock, logger, runtime: 'once', ledgerOf: openState(config.stateDir, logger).ledgerOf });
    const results = await Promise.all([a.collect(), b.collect()]);
    for (const [r] of results) expect([r!.vitals.ok, r!.devices.ok, r!.alerts.ok]).toEqual([true, true, true]);
    const times = sim.requests.map((q) => q.time);
    // 3 Vitals + 2 device totals + 1 /alerts each: 12 requests, 5 a window at most.
    expect(times).toHaveLength(12);
    expect(maxInAnyWindow(times)).toBe(5);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
  });

  it('honours the requests of a process that is gone, mapping their wall times onto its own monotonic clock', async () => {
    const logger = memoryLogger();
    // The clocks of a new process: the monotonic one starts far from the wall clock.
    const clock = new FakeClock(5_000);
    clock.stepWall(T0 - 5_000);
    const gone = new SendFiles(StateDir.open(dir, logger, 'lost'), { logger, pid: 4242, isRunning: () => false }).ledger(PORTAL);
    // Five requests 20 s ago: the window is full for 41 s more.
    for (let i = 0; i < 5; i++) gone.record(T0 - 20_000);
    const sched = new PortalScheduler({ share: 5, clock, ledger: new SendFiles(StateDir.open(dir, logger, 'lost'), { logger }).ledger(PORTAL) });
    const first = sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    await new Promise((r) => setImmediate(r));
    expect(clock.pending).toBe(1);
    expect(clock.nextWakeAt).toBe(5_000 + SLOT - 20_000);
    clock.set(clock.nextWakeAt!);
    expect((await first).startedAt).toBe(5_000 + SLOT - 20_000);
  });

  it('removes the file of a process that is gone once its requests have left the window, and keeps a running one\'s', async () => {
    const logger = memoryLogger();
    const state = StateDir.open(dir, logger, 'lost');
    new SendFiles(state, { logger, pid: 4242, isRunning: () => false }).ledger(PORTAL).record(T0);
    new SendFiles(state, { logger, pid: 4343, isRunning: (pid) => pid === 4343 }).ledger(PORTAL).record(T0);
    const reader = new SendFiles(state, { logger, isRunning: (pid) => pid === 4343 }).ledger(PORTAL);
    expect(reader.others(T0 + 1_000)).toEqual([T0, T0]);
    expect(portalFiles()).toHaveLength(2);
    // Two windows later (what a file keeps) both are out of the window; only the running process's file stays.
    expect(reader.others(T0 + 3 * SLOT)).toEqual([]);
    const left = portalFiles();
    expect(left).toHaveLength(1);
    expect(JSON.parse(readFileSync(left[0]!, 'utf8'))).toMatchObject({ pid: 4343 });
  });

  it('ignores, with one warning each, a file that is not JSON, one of another shape and one of another portal', async () => {
    const logger = memoryLogger();
    const state = StateDir.open(dir, logger, 'lost');
    const real = new SendFiles(state, { logger, pid: 4242, isRunning: () => true }).ledger(PORTAL);
    real.record(T0);
    const [folder] = portalFiles().map((f) => join(f, '..'));
    writeFileSync(join(folder!, '1-garbage.json'), '{"version":1,"sends":[');
    writeFileSync(join(folder!, '2-shape.json'), JSON.stringify({ version: 2, sends: 'many' }));
    writeFileSync(join(folder!, '3-other.json'), JSON.stringify({ version: 1, portal: 'https://other.example.com/public-api/v1', host: 'h', pid: 1, sends: [T0, T0, T0] }));
    const reader = new SendFiles(state, { logger }).ledger(PORTAL);
    expect(reader.others(T0 + 1_000)).toEqual([T0]);
    expect(reader.others(T0 + 2_000)).toEqual([T0]);
    const warnings = logger.records().filter((r) => r.level === 'warn');
    expect(warnings.map((w) => w.file)).toEqual(['1-garbage.json', '2-shape.json', '3-other.json'].map((f) => join(folder!, f)));
    expect(warnings.map((w) => w.reason)).toEqual(['not JSON', 'not a record of requests (version 1 expected)', 'a record of another portal ("https://other.example.com/public-api/v1")']);
    for (const w of warnings) expect(w.msg).toMatch(/in the state directory is .*: it is ignored; remove it$/);
  });

  it('a directory that cannot be written: one warning naming the setting and what is lost, then the share from memory', async () => {
    writeFileSync(join(dir, 'file'), '');
    const logger = memoryLogger();
    const clock = new FakeClock(T0, { autoAdvance: true });
    const { ledgerOf } = openState(join(dir, 'file', 'state'), logger);
    const sched = new PortalScheduler({ share: 2, clock, ledger: ledgerOf(PORTAL) });
    expect(await spendSlots(sched, 5)).toEqual([T0, T0, T0 + SLOT, T0 + SLOT, T0 + 2 * SLOT]);
    // A second portal's writes fail too: still the one warning.
    await spendSlots(new PortalScheduler({ share: 2, clock, ledger: ledgerOf('https://other.example.com/public-api/v1') }), 2);
    const warnings = logger.records().filter((r) => r.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ setting: 'POSTURE_STATE_DIR', stateDir: join(dir, 'file', 'state'), error: 'ENOTDIR' });
    expect(warnings[0]!.msg).toBe(
      `POSTURE_STATE_DIR (--state-dir) ${join(dir, 'file', 'state')} cannot be written (ENOTDIR): the requests this process sends to each portal are not recorded, so a restart or another process does not count them against the share of the last 60 s; the process goes on from memory. Give a writable directory to keep them.`,
    );
  });

  it('a write that fails later (the directory removed and a file in its place) warns once and goes on', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0, { autoAdvance: true });
    const stateDir = join(dir, 'state');
    const { ledgerOf } = openState(stateDir, logger);
    const sched = new PortalScheduler({ share: 5, clock, ledger: ledgerOf(PORTAL) });
    await spendSlots(sched, 1);
    rmSync(stateDir, { recursive: true });
    writeFileSync(stateDir, '');
    expect(await spendSlots(sched, 5)).toEqual([T0, T0, T0, T0, T0 + SLOT]);
    expect(logger.records().filter((r) => r.level === 'warn')).toHaveLength(1);
  });

  it('records a request before it is sent and forgets one that reached no portal', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0, { autoAdvance: true });
    const { ledgerOf } = openState(dir, logger);
    const sched = new PortalScheduler({ share: 5, clock, ledger: ledgerOf(PORTAL) });
    const reader = new SendFiles(StateDir.open(dir, logger, 'lost'), { logger }).ledger(PORTAL);
    const permit = await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    expect(reader.others(T0)).toEqual([T0]);
    permit.refund();
    permit.done();
    expect(reader.others(T0)).toEqual([]);
  });

  it('keeps each writer\'s file whole: a reader never sees a temporary file or half a record', () => {
    const logger = memoryLogger();
    const state = StateDir.open(dir, logger, 'lost');
    const writers = Array.from({ length: 4 }, (_, i) => new SendFiles(state, { logger, pid: 5000 + i, isRunning: () => true }).ledger(PORTAL));
    const reader = new SendFiles(state, { logger }).ledger(PORTAL);
    for (let i = 0; i < 20; i++) {
      writers[i % 4]!.record(T0 + i);
      expect(reader.others(T0 + i)).toHaveLength(i + 1);
    }
    expect(portalFiles().every((f) => f.endsWith('.json') && !f.includes('.tmp'))).toBe(true);
    expect(logger.records().filter((r) => r.level === 'warn')).toEqual([]);
  });

  it('files each portal apart', () => {
    const logger = memoryLogger();
    const state = StateDir.open(dir, logger, 'lost');
    new SendFiles(state, { logger, pid: 4242, isRunning: () => true }).ledger(PORTAL).record(T0);
    const files = new SendFiles(state, { logger });
    expect(files.ledger('https://other.example.com/public-api/v1').others(T0)).toEqual([]);
    expect(files.ledger(PORTAL).others(T0)).toEqual([T0]);
    mkdirSync(join(dir, 'unrelated'));
    expect(readdirSync(join(dir, 'sends'))).toHaveLength(1);
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
    expect(sim.requests).toHaveLength(4);
  });

  it('check-config names the state directory in effect', async () => {
    const r = await runMain(['check-config'], { env: { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: KEY, POSTURE_STATE_DIR: join(dir, 'state') } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')).toContain(`state directory: ${join(dir, 'state')}`);
  });
});
