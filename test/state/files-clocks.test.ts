/**
 * The ledger in the state directory when clocks cannot be trusted, on one fake kernel clock (see
 * ./support.ts): another host, libfaketime with or without the monotonic clock, a time namespace,
 * a wall-clock step of this host.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { openState } from '../../src/state/index.js';
import { T0 } from '../integration/support.js';
import { tempDirPerTest } from '../support/temp-dir.js';
import { hostClock, ledgerOn, PORTAL, send, SLOT, UPTIME } from './support.js';

const dir = tempDirPerTest('posture-state-');

describe('clocks a record is placed by', () => {
  it("another host's record is placed by its wall time; one from a clock 90 s ahead counts from when its file was written, a window and the margin, not 90 s more", async () => {
    const kernel = new FakeClock(T0);
    const there = ledgerOn(dir(), hostClock(kernel, { host: 'there', boot: 'b2', mono: () => 1, wall: () => kernel.now() + 90_000 }));
    await send(there, 5);
    const mine = ledgerOn(dir(), hostClock(kernel));
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
    await send(ledgerOn(dir(), hostClock(kernel)), 5);
    expect(await ledgerOn(dir(), faked).claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
    kernel.advance(SLOT);
    await send(ledgerOn(dir(), faked), 5);
    // The real process's next run counts the faked one's requests from when they were written.
    const real = ledgerOn(dir(), hostClock(kernel));
    expect(await real.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
    kernel.advance(SLOT);
    expect((await real.claim(5)).granted).toBe(true);
  });

  it('a run under libfaketime a day ahead blocks a real run a window and the margin after its requests, not a day', async () => {
    const kernel = new FakeClock(T0);
    const dayAhead = hostClock(kernel, { mono: () => kernel.now() + 86_400_000, wall: () => kernel.now() + 86_400_000 });
    await send(ledgerOn(dir(), dayAhead), 5);
    const real = ledgerOn(dir(), hostClock(kernel));
    expect(await real.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
    kernel.advance(SLOT);
    expect((await real.claim(5)).granted).toBe(true);
  });

  it.each([
    ['90 s behind', -90_000],
    ['45 s ahead', 45_000],
  ])('a wall clock %s with the monotonic clock left alone (DONT_FAKE_MONOTONIC) leaves the records counted a window and the margin after they arrived', async (_what, offset) => {
    const kernel = new FakeClock(T0);
    await send(ledgerOn(dir(), hostClock(kernel)), 5);
    kernel.advance(10_000);
    const stepped = ledgerOn(dir(), hostClock(kernel, { wall: () => kernel.now() + offset }));
    expect(await stepped.claim(5)).toMatchObject({ granted: false, waitMs: SLOT - 10_000 });
    kernel.set(T0 + SLOT);
    await send(stepped, 5);
    const real = ledgerOn(dir(), hostClock(kernel));
    expect(await real.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
  });

  it.each([
    ['ahead', 1_000_000],
    ['behind', -1_000_000],
  ])("a writer in a time namespace whose monotonic clock runs 1000 s %s is counted from its wall time or when its file was written, never earlier", async (_what, offset) => {
    const kernel = new FakeClock(T0);
    await send(ledgerOn(dir(), hostClock(kernel, { mono: () => kernel.monotonic() - T0 + UPTIME + offset })), 5);
    kernel.advance(10_000);
    const real = ledgerOn(dir(), hostClock(kernel));
    expect(await real.claim(5)).toMatchObject({ granted: false, waitMs: SLOT - 10_000 });
  });

  it("a wall-clock step of this host moves nothing: its own records compare on the monotonic clock, the file stamps' step notwithstanding", async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const a = openState(dir(), logger, clock).ledgerOf(PORTAL)!;
    await send(a, 5);
    const b = openState(dir(), logger, clock).ledgerOf(PORTAL)!;
    for (const step of [-90_000, 45_000 + 90_000]) {
      clock.stepWall(step);
      expect(await b.claim(5)).toMatchObject({ granted: false, waitMs: SLOT });
    }
    clock.advance(SLOT);
    expect((await b.claim(5)).granted).toBe(true);
  });
});
