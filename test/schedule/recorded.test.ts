import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import type { SendLedger } from '../../src/schedule/ledger.js';
import { PortalScheduler } from '../../src/schedule/scheduler.js';
import { placeRecorded, SlidingWindow } from '../../src/schedule/window.js';

const WALL = Date.UTC(2026, 10, 22, 12, 0, 0);
const MINUTE = 60_000;

describe('placeRecorded: other processes\' requests on this process\'s monotonic clock', () => {
  it.each([
    ['20 s ago', [WALL - 20_000], [1_000_000 - 20_000]],
    ['now', [WALL], [1_000_000]],
    // The wall clock stepped back 30 s since: the request counts as starting now, never later.
    ['30 s in the future', [WALL + 30_000], [1_000_000]],
    // More than a window ahead: it cannot be placed in any window this process sees.
    ['two windows in the future', [WALL + 2 * MINUTE], []],
    ['not a number', [Number.NaN], []],
  ])('a request recorded %s', (_what, recorded, placed) => {
    expect(placeRecorded(recorded, WALL, 1_000_000, MINUTE)).toEqual(placed);
  });
});

describe('SlidingWindow with requests other processes recorded', () => {
  it('counts them with its own, in order, and forgets them once out of the window', () => {
    const w = new SlidingWindow(MINUTE, 1_000);
    w.record(10_000);
    w.observe([5_000, 30_000]);
    expect(w.countAt(31_000)).toBe(3);
    // Share 3: the next start waits a window (and the margin) after the oldest of the three.
    expect(w.nextSlot(31_000, 3)).toBe(5_000 + MINUTE + 1_000);
    expect(w.nextSlot(31_000, 2)).toBe(10_000 + MINUTE + 1_000);
    expect(w.clearAt(31_000)).toBe(30_000 + MINUTE + 1_000);
    expect(w.countAt(5_000 + MINUTE + 1_000)).toBe(2);
    expect(w.countAt(30_000 + MINUTE + 1_000)).toBe(0);
    expect(w.clearAt(100_000)).toBe(100_000);
  });
});

describe('PortalScheduler and its ledger', () => {
  it('reads the ledger before every grant, and records each grant before the request goes out', async () => {
    const clock = new FakeClock(WALL, { autoAdvance: true });
    const others: number[] = [];
    const recorded: number[] = [];
    let reads = 0;
    const ledger: SendLedger = {
      others: () => (reads++, others),
      record: (at) => recorded.push(at),
      release: () => {},
    };
    const sched = new PortalScheduler({ share: 2, clock, ledger });
    const a = await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    expect(recorded).toEqual([WALL]);
    const readsBefore = reads;
    // Another process sends meanwhile: the window is full now.
    others.push(WALL);
    a.done();
    const b = await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    expect(reads).toBeGreaterThan(readsBefore);
    expect(b.startedAt).toBe(WALL + MINUTE + 1_000);
    expect(recorded).toEqual([WALL, WALL + MINUTE + 1_000]);
    b.done();
  });
});
