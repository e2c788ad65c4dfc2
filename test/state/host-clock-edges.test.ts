/**
 * The host clocks of src/state/host-clock.ts at their edges: the system's clocks are the machine's;
 * a reading writes its probe file (the file clock) at most once, and only when a record needs it;
 * a record dated in the future whose file is dated in the future too, written on this boot but with
 * its monotonic clock ahead, is placed now.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { hostClockOf, place, readingOf, type HostClock } from '../../src/state/host-clock.js';

const W = Date.UTC(2026, 10, 22, 12, 0, 0);
const MONO = 5_000_000;

/** A host clock at MONO and W whose file clock reads `fileNow` (counting its reads). */
function counted(fileNow: number | undefined): { clock: HostClock; reads: () => number } {
  let reads = 0;
  const clock: HostClock = {
    host: 'h',
    boot: 'b',
    monotonic: () => MONO,
    wall: () => W,
    fileNow: () => {
      reads++;
      return fileNow;
    },
    stamp: () => undefined,
  };
  return { clock, reads: () => reads };
}

describe("the system's host clock", () => {
  it("reads the machine's monotonic clock in ms and its wall clock", () => {
    const clock = hostClockOf(systemClock);
    const before = { mono: Number(process.hrtime.bigint()) / 1e6, wall: Date.now() };
    const read = { mono: clock.monotonic(), wall: clock.wall() };
    const after = { mono: Number(process.hrtime.bigint()) / 1e6, wall: Date.now() };
    // The monotonic clock in whole microseconds: at most 1 µs below the first read.
    expect(read.mono).toBeGreaterThanOrEqual(before.mono - 0.001);
    expect(read.mono).toBeLessThanOrEqual(after.mono);
    expect(read.wall).toBeGreaterThanOrEqual(before.wall);
    expect(read.wall).toBeLessThanOrEqual(after.wall);
  });
});

describe('a reading', () => {
  it('reads the file clock once, at the first record that needs it, and places files by it', () => {
    const { clock, reads } = counted(W + 2_000);
    const now = readingOf(clock, '/nowhere');
    expect(reads()).toBe(0);
    // The file clock is 2 s ahead of the wall clock: a file stamped at it was written now.
    expect(now.writtenAt(W + 2_000)).toBe(MONO);
    expect(now.writtenAt(W - 1_000)).toBe(MONO - 3_000);
    expect(reads()).toBe(1);
  });

  it('knows no time a file was written when the file clock cannot be read', () => {
    const { clock } = counted(undefined);
    expect(readingOf(clock, '/nowhere').writtenAt(W)).toBeUndefined();
  });
});

describe('place', () => {
  it("places now a record of this boot whose monotonic time and file are both ahead: nothing says when it was written", () => {
    const { clock } = counted(W);
    // Its monotonic clock a day ahead, its wall time with it (the same offset: trusted); its file 50 s ahead.
    expect(place({ host: 'h', boot: 'b' }, { mono: MONO + 86_400_000, wall: W + 86_400_000 }, W + 50_000, readingOf(clock, '/nowhere'))).toBe(MONO);
  });
});
