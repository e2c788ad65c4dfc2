/**
 * Where a record of the state directory is placed on the reader's monotonic clock
 * (src/state/host-clock.ts), case by case, the expected places worked by hand: this boot's clock
 * when its offset from wall time is the reader's; the later of monotonic and wall time when not; the
 * wall time for another host or boot; and when its file was written for one dated in the future.
 */
import { describe, expect, it } from 'vitest';
import { place, TRUST_MS, type HostClock, type Reading } from '../../src/state/host-clock.js';

/** The reader: monotonic 5,000,000 ms (since its boot) at wall time W. */
const W = Date.UTC(2026, 10, 22, 12, 0, 0);
const MONO = 5_000_000;
const reader: HostClock = { host: 'h', boot: 'b', monotonic: () => MONO, wall: () => W, fileNow: () => W, stamp: () => undefined };

/** The reader's clocks now, the file clock reading `filesNow` (null: it cannot be read). */
function now(filesNow: number | null = W): Reading {
  return { clock: reader, mono: MONO, wall: W, writtenAt: (mtime) => (filesNow === null ? undefined : MONO - (filesNow - mtime)) };
}
const here = { host: 'h', boot: 'b' };

describe('place', () => {
  it("trusts this boot's monotonic time when the writer's offset from wall time is the reader's, within TRUST_MS", () => {
    expect(TRUST_MS).toBe(1_000);
    // Written 10 s ago with the same offset: 10 s ago, whatever the wall time said.
    expect(place(here, { mono: MONO - 10_000, wall: W - 10_000 }, W, now())).toBe(MONO - 10_000);
    // An offset 1 s off (NTP slewed the wall clock): still the monotonic time.
    expect(place(here, { mono: MONO - 10_000, wall: W - 9_000 }, W, now())).toBe(MONO - 10_000);
  });

  it('places a record whose offset differs by more at the later of what its monotonic and its wall time say', () => {
    // Wall time 30 s behind (a faked wall, a stepped one): the monotonic time, 10 s ago.
    expect(place(here, { mono: MONO - 10_000, wall: W - 40_000 }, W, now())).toBe(MONO - 10_000);
    // Monotonic time 30 s behind (a time namespace): the wall time, 10 s ago.
    expect(place(here, { mono: MONO - 40_000, wall: W - 10_000 }, W, now())).toBe(MONO - 10_000);
  });

  it("places another host's or boot's record by its wall time", () => {
    expect(place({ host: 'other', boot: 'b' }, { mono: MONO - 1, wall: W - 25_000 }, W, now())).toBe(MONO - 25_000);
    expect(place({ host: 'h', boot: 'earlier' }, { mono: MONO - 1, wall: W - 25_000 }, W, now())).toBe(MONO - 25_000);
  });

  it('places a record dated in the future when its file was written', () => {
    // Another host 90 s ahead; its file written 3 s ago.
    expect(place({ host: 'other', boot: 'b' }, { mono: 1, wall: W + 90_000 }, W - 3_000, now())).toBe(MONO - 3_000);
    // This boot, its monotonic clock faked a day ahead.
    expect(place(here, { mono: MONO + 86_400_000, wall: W + 86_400_000 }, W - 3_000, now())).toBe(MONO - 3_000);
  });

  it('places it by this boot\'s monotonic time when its file is dated in the future too (the wall clock stepped back), else now', () => {
    // Written 10 s ago by the monotonic clock; the wall clock stepped back 60 s since.
    expect(place(here, { mono: MONO - 10_000, wall: W + 50_000 }, W + 50_000, now())).toBe(MONO - 10_000);
    // No file clock to read: the monotonic time too.
    expect(place(here, { mono: MONO - 10_000, wall: W + 50_000 }, W, now(null))).toBe(MONO - 10_000);
    // Another host: now.
    expect(place({ host: 'other', boot: 'b' }, { mono: 1, wall: W + 50_000 }, W + 50_000, now())).toBe(MONO);
  });
});
