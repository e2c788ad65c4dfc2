/**
 * A state directory that is not usable: one that cannot be created (a warning, then the share from
 * memory), one that stops working later (requests fail closed), one others can write (refused), a
 * symlink planted in place of its folders (never followed); and what `once` and `check-config` say.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { ConfigError, LedgerError } from '../../src/errors.js';
import { PortalScheduler } from '../../src/schedule/scheduler.js';
import { startSimulator } from '../../src/simulator/index.js';
import { openState } from '../../src/state/index.js';
import { folderOf } from '../../src/state/portal-folder.js';
import { T0 } from '../integration/support.js';
import { runMain } from '../support/cli.js';
import { closeAfterEach } from '../support/closing.js';
import { spendSlots } from '../support/slots.js';
import { tempDirPerTest } from '../support/temp-dir.js';
import { KEY, PORTAL, SLOT } from './support.js';

const dir = tempDirPerTest('posture-state-');
const closing = closeAfterEach();

describe('a state directory that is not usable', () => {
  it('a directory that cannot be created: one warning naming the setting and what is lost, then the share from memory', async () => {
    writeFileSync(join(dir(), 'file'), '');
    const logger = memoryLogger();
    const clock = new FakeClock(T0, { autoAdvance: true });
    const { ledgerOf } = openState(join(dir(), 'file', 'state'), logger, clock);
    expect(ledgerOf(PORTAL)).toBeUndefined();
    const sched = new PortalScheduler({ share: 2, clock, ledger: ledgerOf(PORTAL) });
    expect(await spendSlots(sched, 5)).toEqual([T0, T0, T0 + SLOT, T0 + SLOT, T0 + 2 * SLOT]);
    const warnings = logger.records().filter((r) => r.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ setting: 'POSTURE_STATE_DIR', stateDir: join(dir(), 'file', 'state'), error: 'ENOTDIR' });
    expect(warnings[0]!.msg).toBe(
      `POSTURE_STATE_DIR (--state-dir) ${join(dir(), 'file', 'state')} cannot be written (ENOTDIR): the requests this process sends to each portal are not recorded, so a restart or another process does not count them against the share of the last 60 s; the process goes on from memory. Give a writable directory to keep them.`,
    );
  });

  it('a directory that stops working later (removed, a file in its place) fails the requests closed: nothing is sent on a share it cannot see', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0, { autoAdvance: true });
    const stateDir = join(dir(), 'state');
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
    const root = join(dir(), 'open');
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
    const root = join(dir(), 'state');
    const outside = join(dir(), 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, '.bashrc'), 'keep me');
    utimesSync(join(outside, '.bashrc'), new Date(T0 - 86_400_000), new Date(T0 - 86_400_000));
    // The portal's folder is a symlink to another directory.
    const { ledgerOf } = openState(root, logger, clock);
    symlinkSync(outside, join(root, 'sends', folderOf(PORTAL)));
    await expect(ledgerOf(PORTAL)!.claim(5)).rejects.toThrow(new LedgerError(join(root, 'sends', folderOf(PORTAL)), `${join(root, 'sends', folderOf(PORTAL))} in the state directory is a symlink: it is not followed; remove it`));
    // The sends folder itself a symlink.
    const root2 = join(dir(), 'state2');
    mkdirSync(root2, { mode: 0o700 });
    symlinkSync(outside, join(root2, 'sends'));
    const second = openState(root2, logger, clock);
    await expect(second.ledgerOf(PORTAL)!.claim(5)).rejects.toBeInstanceOf(LedgerError);
    expect(readdirSync(outside)).toEqual(['.bashrc']);
    expect(readFileSync(join(outside, '.bashrc'), 'utf8')).toBe('keep me');
  });

  it('once on a state directory that cannot be written: one JSON warning line naming the setting, and the run succeeds', async () => {
    writeFileSync(join(dir(), 'file'), '');
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = closing(await startSimulator({ clock, keys: [{ key: KEY }], moving: false }));
    const r = await runMain(['once'], { env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_STATE_DIR: join(dir(), 'file', 'state') }, clock });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const about = lines.filter((l) => String(l.msg).includes('POSTURE_STATE_DIR'));
    expect(about).toHaveLength(1);
    expect(about[0]).toMatchObject({ level: 'warn', setting: 'POSTURE_STATE_DIR', error: 'ENOTDIR' });
    // Vitals, the two device totals, /alerts, and the resolved-alerts pass (no directory to remember it: every run).
    expect(sim.requests).toHaveLength(5);
  });

  it('check-config names the state directory in effect', async () => {
    const r = await runMain(['check-config'], { env: { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: KEY, POSTURE_STATE_DIR: join(dir(), 'state') } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split('\n')).toContain(`state directory: ${join(dir(), 'state')}`);
  });
});
