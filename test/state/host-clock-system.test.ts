/**
 * The host clocks a process reads (src/state/host-clock.ts, hostClockOf): the machine's for the
 * system clock (this host's name, this boot's id from the kernel, a monotonic clock in ms, the wall
 * clock, the kernel's file stamps read by writing a file), one of its own for an injected clock
 * (its files stamped with its wall time); and the edges of where a record dated now or in the future
 * is placed.
 */
import { readdirSync, readFileSync, statSync, writeFileSync, openSync, closeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeClock, systemClock } from '../../src/core/clock.js';
import { hostClockOf, place, type HostClock, type Reading } from '../../src/state/host-clock.js';
import { tempDirPerTest } from '../support/temp-dir.js';

const dir = tempDirPerTest('posture-host-clock-');

describe("the system's host clock", () => {
  it("is this host's, of this boot (the kernel's boot id), the same one each time", () => {
    const clock = hostClockOf(systemClock);
    expect(clock.host).toBe(hostname());
    expect(clock.boot).toBe(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    expect(hostClockOf(systemClock)).toBe(clock);
  });

  it('reads a monotonic clock in milliseconds, and the wall clock', async () => {
    const clock = hostClockOf(systemClock);
    const [mono, wall, perf] = [clock.monotonic(), clock.wall(), performance.now()];
    expect(Math.abs(wall - Date.now())).toBeLessThan(1_000);
    await new Promise((r) => setTimeout(r, 50));
    const [mono2, perf2] = [clock.monotonic(), performance.now()];
    // The same span as performance.now() measures, to a few ms either way.
    expect(Math.abs(mono2 - mono - (perf2 - perf))).toBeLessThan(5);
    expect(mono2 - mono).toBeGreaterThanOrEqual(49);
    // Finer than a millisecond (microseconds).
    const reads = Array.from({ length: 50 }, () => clock.monotonic());
    expect(reads.some((t) => !Number.isInteger(t))).toBe(true);
  });

  it("reads the kernel's file clock by writing a file in the folder, which it removes; none where it cannot write", () => {
    const clock = hostClockOf(systemClock);
    writeFileSync(join(dir(), 'before'), '');
    const stamped = statSync(join(dir(), 'before')).mtimeMs;
    const now = clock.fileNow(dir())!;
    expect(now).toBeGreaterThanOrEqual(stamped);
    expect(now - stamped).toBeLessThan(1_000);
    expect(readdirSync(dir())).toEqual(['before']);
    expect(clock.fileNow(join(dir(), 'missing'))).toBeUndefined();
    // The kernel stamps the files it writes: nothing to stamp.
    const fd = openSync(join(dir(), 'before'), 'r+');
    try {
      clock.stamp(fd);
    } finally {
      closeSync(fd);
    }
    expect(statSync(join(dir(), 'before')).mtimeMs).toBe(stamped);
  });
});

describe("an injected clock's host clock", () => {
  it("is this host's, a boot of its own, on the clock's monotonic and wall time, and stamps files with its wall time", () => {
    const fake = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0));
    fake.advance(1_234);
    const clock = hostClockOf(fake);
    expect([clock.host, clock.boot]).toEqual([hostname(), 'injected-clock']);
    expect([clock.monotonic(), clock.wall(), clock.fileNow(dir())]).toEqual([fake.monotonic(), fake.now(), fake.now()]);
    writeFileSync(join(dir(), 'f'), '');
    const fd = openSync(join(dir(), 'f'), 'r+');
    try {
      clock.stamp(fd);
    } finally {
      closeSync(fd);
    }
    expect(Math.round(statSync(join(dir(), 'f')).mtimeMs)).toBe(Date.UTC(2026, 10, 22, 12, 0, 1, 234));
  });
});

describe('place, at its edges', () => {
  const W = Date.UTC(2026, 10, 22, 12, 0, 0);
  const MONO = 5_000_000;
  const reader: HostClock = { host: 'h', boot: 'b', monotonic: () => MONO, wall: () => W, fileNow: () => W, stamp: () => undefined };
  const now: Reading = { clock: reader, mono: MONO, wall: W, writtenAt: (mtime) => MONO - (W - mtime) };

  it('places a record dated exactly now at now, whenever its file was written', () => {
    expect(place({ host: 'other', boot: 'b' }, { mono: 1, wall: W }, W - 3_000, now)).toBe(MONO);
  });

  it('places a record dated in the future whose file was written exactly now at now, not at its own monotonic time', () => {
    // This boot, its wall time 50 s ahead and so not trusted: by its wall time, 50 s in the future.
    expect(place({ host: 'h', boot: 'b' }, { mono: MONO - 10_000, wall: W + 50_000 }, W, now)).toBe(MONO);
  });
});
