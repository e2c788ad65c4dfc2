/**
 * The last resolved-alerts pass of each portal entry in the state directory (and in a process's
 * memory), on an injected host clock: a pass is claimed when none is recorded or its interval less
 * the early margin (a minute, or a tenth of a shorter interval) has passed; of several claims at
 * one instant only one wins; a failed pass given back counts as never made; records of another
 * boot compare by wall time; pass records are pruned by their own interval, and an entry's folder
 * removed an hour after its interval.
 */
import { futimesSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../src/core/log.js';
import { PassMemory } from '../../src/schedule/passes.js';
import { StateDir } from '../../src/state/dir.js';
import { LedgerFiles } from '../../src/state/files.js';
import type { HostClock } from '../../src/state/host-clock.js';
import { DirPasses } from '../../src/state/index.js';
import { tempDirPerTest } from '../support/temp-dir.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const PORTAL = 'https://acme.example.com/public-api/v1';
const HOUR = 3_600_000;
const MINUTE = 60_000;

const root = tempDirPerTest('posture-pass-files-');

/** A host clock the test moves: monotonic and wall time advance together unless told otherwise. */
function hostClock(boot = 'boot-1') {
  let mono = 1_000_000;
  let wall = T0;
  const clock: HostClock & { advance(ms: number): void } = {
    host: 'host-a',
    boot,
    monotonic: () => mono,
    wall: () => wall,
    fileNow: () => wall,
    stamp: (fd) => futimesSync(fd, wall / 1000, wall / 1000),
    advance(ms) {
      mono += ms;
      wall += ms;
    },
  };
  return clock;
}

/** The passes of the state directory `root()/state`, as one process opens them. */
function files(clock: HostClock, logger = memoryLogger()): DirPasses {
  return new DirPasses(new LedgerFiles(StateDir.open(join(root(), 'state'), logger, 'lost'), { logger, clock }), () => clock.monotonic());
}

/** What a process opening the state directory does first: removes the idle folders. */
function sweep(clock: HostClock): void {
  const logger = memoryLogger();
  new LedgerFiles(StateDir.open(join(root(), 'state'), logger, 'lost'), { logger, clock }).sweep();
}

/** The entry folders of the passes. */
function entries(): string[] {
  return readdirSync(join(root(), 'state', 'passes'));
}

/** The entry folders a sweep leaves at the clock's time, and those one left 1 ms later. */
function sweptThenOneMsLater(clock: ReturnType<typeof hostClock>): [number, number] {
  sweep(clock);
  const before = entries().length;
  clock.advance(1);
  sweep(clock);
  return [before, entries().length];
}

/** The claim files of the one entry folder. */
function claimsOnDisk(): string[] {
  const passes = join(root(), 'state', 'passes');
  const [entry] = readdirSync(passes);
  return readdirSync(join(passes, entry!)).filter((n) => n.startsWith('p')).sort();
}

describe('passes in the state directory', () => {
  it('claims a first pass, none within the interval less a minute, and the next one from then on', async () => {
    const clock = hostClock();
    const passes = files(clock);
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    // 3600 s less the minute of margin: 3540 s.
    clock.advance(3_540_000 - 1);
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    clock.advance(1);
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    expect(claimsOnDisk()).toEqual(['p000000000001', 'p000000000002']);
  });

  it('uses a tenth of an interval shorter than ten minutes as the margin', async () => {
    const clock = hostClock();
    const passes = files(clock);
    expect((await passes.claim(PORTAL, 'acme', 5 * MINUTE)).due).toBe(true);
    // 300 s less 30 s.
    clock.advance(270_000 - 1);
    expect((await passes.claim(PORTAL, 'acme', 5 * MINUTE)).due).toBe(false);
    clock.advance(1);
    expect((await passes.claim(PORTAL, 'acme', 5 * MINUTE)).due).toBe(true);
  });

  it('keeps each entry of a portal apart', async () => {
    const passes = files(hostClock());
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    expect((await passes.claim(PORTAL, 'acme-finance', HOUR)).due).toBe(true);
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
  });

  it('lets one of five processes claiming at one instant make the pass', async () => {
    const clock = hostClock();
    const claims = await Promise.all(Array.from({ length: 5 }, () => files(clock).claim(PORTAL, 'acme', HOUR)));
    expect(claims.filter((c) => c.due)).toHaveLength(1);
    expect(claimsOnDisk()).toEqual(['p000000000001']);
  });

  it('gives a failed pass back: the one before counts again', async () => {
    const clock = hostClock();
    const passes = files(clock);
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    // Half an hour later a pass at a 10-minute interval is due, fails and is given back.
    clock.advance(30 * MINUTE);
    const failed = await passes.claim(PORTAL, 'acme', 10 * MINUTE);
    expect(failed.due).toBe(true);
    await failed.release();
    // At the hourly interval, the pass of T0 counts again (30 min ago): not due. Had the failed one counted, nor would
    // it be at 10 minutes; it is, since the last pass that counts is 30 minutes old.
    clock.advance(1);
    expect((await files(clock).claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    expect((await files(clock).claim(PORTAL, 'acme', 10 * MINUTE)).due).toBe(true);
  });

  it('gives a failed first pass back: the next run makes it', async () => {
    const clock = hostClock();
    const first = await files(clock).claim(PORTAL, 'acme', HOUR);
    await first.release();
    clock.advance(MINUTE);
    expect((await files(clock).claim(PORTAL, 'acme', HOUR)).due).toBe(true);
  });

  it('compares a record of another boot by wall time, one from the future counting as now', async () => {
    const before = hostClock('boot-1');
    expect((await files(before).claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    // After a reboot the monotonic clock starts again near 0; 30 minutes of wall time have passed.
    const after = hostClock('boot-2');
    after.advance(30 * MINUTE);
    expect((await files(after).claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    after.advance(30 * MINUTE);
    expect((await files(after).claim(PORTAL, 'acme', HOUR)).due).toBe(true);

    // A record written by a clock an hour ahead: it counts as now, not as a pass long ago.
    const ahead = hostClock('boot-3');
    ahead.advance(3 * HOUR);
    expect((await files(ahead).claim(PORTAL, 'acme-2', HOUR)).due).toBe(true);
    const behind = hostClock('boot-4');
    behind.advance(2 * HOUR);
    expect((await files(behind).claim(PORTAL, 'acme-2', HOUR)).due).toBe(false);
  });

  it("prunes an entry's passes that no longer count: the last one, within its interval, stays, and the one before until a window past its own", async () => {
    const clock = hostClock();
    const passes = files(clock);
    for (let i = 0; i < 12; i++) {
      expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
      clock.advance(HOUR);
    }
    expect(claimsOnDisk()).toEqual(['p000000000011', 'p000000000012']);
  });

  it('removes an entry folder an hour after its last pass stopped counting, by the interval that pass recorded', async () => {
    const clock = hostClock();
    const passes = files(clock);
    expect((await passes.claim(PORTAL, 'hourly', HOUR)).due).toBe(true);
    expect((await passes.claim(PORTAL, 'daily', 24 * HOUR)).due).toBe(true);
    // The hourly pass counted until the next was due (59 minutes), and an hour has passed since, exactly: it stays.
    clock.advance(HOUR - MINUTE + HOUR);
    expect(sweptThenOneMsLater(clock)).toEqual([2, 1]);
    // The daily one is due again only at 23 h 59 min: it stays until an hour after that.
    expect((await files(clock).claim(PORTAL, 'daily', 24 * HOUR)).due).toBe(false);
    clock.advance(23 * HOUR - 1);
    expect(sweptThenOneMsLater(clock)).toEqual([1, 0]);
  });

  it("keeps an earlier version's pass record, which holds no interval, as long as a daily pass's, and an hour", async () => {
    const clock = hostClock();
    const passes = files(clock);
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    const folder = join(root(), 'state', 'passes', entries()[0]!);
    const record = join(folder, 'p000000000001');
    const { intervalMs: _dropped, writer: _none, ...earlier } = JSON.parse(readFileSync(record, 'utf8')) as Record<string, unknown>;
    writeFileSync(record, JSON.stringify(earlier));
    clock.advance(24 * HOUR - MINUTE + HOUR);
    expect(sweptThenOneMsLater(clock)).toEqual([1, 0]);
  });

  it('ignores a record that is not one (warned once), and never follows a symlink', async () => {
    const clock = hostClock();
    const logger = memoryLogger();
    const passes = files(clock, logger);
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    const entry = join(root(), 'state', 'passes', entries()[0]!);
    // A newer claim number that is not JSON, and one that is a symlink to a record elsewhere.
    writeFileSync(join(entry, 'p000000000002'), 'not json', { mode: 0o600 });
    writeFileSync(join(root(), 'elsewhere'), '{}');
    symlinkSync(join(root(), 'elsewhere'), join(entry, 'p000000000003'));
    clock.advance(MINUTE);
    // The pass of a minute ago still counts: not due.
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    const warnings = logger.records().filter((r) => r.level === 'warn');
    expect(warnings.map((w) => [w.file, w.reason])).toEqual([
      [join(entry, 'p000000000003'), 'a symlink'],
      [join(entry, 'p000000000002'), 'not JSON'],
    ]);
    expect(readFileSync(join(root(), 'elsewhere'), 'utf8')).toBe('{}');
  });

  it('remembers passes in the memory of the process when the directory cannot be written', async () => {
    const clock = hostClock();
    const logger = memoryLogger();
    // A path under a file cannot be created.
    writeFileSync(join(root(), 'file'), '');
    const dir = StateDir.open(join(root(), 'file', 'state'), logger, 'lost');
    const passes = new DirPasses(new LedgerFiles(dir, { logger, clock }), () => clock.monotonic());
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    expect((await passes.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    // Another process has nothing to go by.
    expect((await new DirPasses(new LedgerFiles(dir, { logger, clock }), () => clock.monotonic()).claim(PORTAL, 'acme', HOUR)).due).toBe(true);
  });
});

describe('passes in the memory of a process', () => {
  it('claims, refuses within the interval, and restores the pass before a failed one', async () => {
    let now = 0;
    const memory = new PassMemory(() => now);
    expect((await memory.claim(PORTAL, 'acme', HOUR)).due).toBe(true);
    now = 30 * MINUTE;
    const failed = await memory.claim(PORTAL, 'acme', 10 * MINUTE);
    expect(failed.due).toBe(true);
    await failed.release();
    expect((await memory.claim(PORTAL, 'acme', HOUR)).due).toBe(false);
    const first = await memory.claim(PORTAL, 'other', HOUR);
    await first.release();
    expect((await memory.claim(PORTAL, 'other', HOUR)).due).toBe(true);
  });
});
