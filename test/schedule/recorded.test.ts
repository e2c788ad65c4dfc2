import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import type { SendLedger } from '../../src/schedule/ledger.js';
import { PortalScheduler } from '../../src/schedule/scheduler.js';
import { SlidingWindow } from '../../src/schedule/window.js';
import { LedgerError } from '../../src/errors.js';
import { MemoryLedger } from '../support/ledger.js';
import { spendSlots } from '../support/slots.js';

const WALL = Date.UTC(2026, 10, 22, 12, 0, 0);
const MINUTE = 60_000;

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
  it('claims every grant in the ledger before the request goes out, and waits when another process took the slot', async () => {
    const clock = new FakeClock(WALL, { autoAdvance: true });
    const ledger = new MemoryLedger(clock);
    const sched = new PortalScheduler({ share: 2, clock, ledger: ledger.writer() });
    const a = await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    expect(ledger.starts('this process')).toEqual([WALL]);
    // Another process sends meanwhile: the window is full now.
    ledger.add(WALL);
    a.done();
    const b = await sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity });
    expect(b.startedAt).toBe(WALL + MINUTE + 1_000);
    expect(ledger.starts('this process')).toEqual([WALL, WALL + MINUTE + 1_000]);
    expect(ledger.claims).toBe(3);
    b.done();
  });

  it('fails the request, sending nothing, when the ledger cannot be read', async () => {
    const clock = new FakeClock(WALL, { autoAdvance: true });
    const broken = new LedgerError('/state/sends/acme', 'cannot be read (EIO)');
    const sched = new PortalScheduler({ share: 2, clock, ledger: { where: 'a broken ledger', claim: () => Promise.reject(broken), others: () => Promise.reject(broken) } });
    await expect(sched.acquire({ endpoint: '/a', priority: 1, deadline: Infinity })).rejects.toBe(broken);
    expect(sched.window.countAt(WALL)).toBe(0);
  });
});

describe('the line a first request that waits for other processes\' requests logs', () => {
  /** A ledger holding `others` (monotonic ms of `clock`) as other processes' requests. */
  const ledgerOf = (clock: FakeClock, others: number[]): SendLedger => {
    const ledger = new MemoryLedger(clock);
    for (const at of others) ledger.add(at);
    return ledger.writer();
  };
  const WAITS = 'the share of this window was already spent by requests other processes (or an earlier run) recorded in the state directory: the first request waits for its slot';

  it('says once, naming the portal, how much of the share is spent and the wall time the first request goes', async () => {
    // A process's clocks: its monotonic clock started far from the wall clock, which reads WALL.
    const clock = new FakeClock(7_000, { autoAdvance: true });
    clock.stepWall(WALL - 7_000);
    const logger = memoryLogger();
    // An earlier run sent 5 requests, 3 of them 20 s ago and 2 of them 10 s ago: a share of 5 is spent until the oldest leaves the window.
    const ledger = ledgerOf(clock, [7_000 - 20_000, 7_000 - 20_000, 7_000 - 20_000, 7_000 - 10_000, 7_000 - 10_000]);
    const sched = new PortalScheduler({ share: 5, clock, ledger, logger: logger.child({ portal: 'acme' }) });
    const starts = await spendSlots(sched, 4);
    // The three oldest leave the window 60 s + 1 s after they started: 41 s from now. The fourth
    // request waits for the two others that leave 10 s later.
    expect(starts).toEqual([7_000 + 41_000, 7_000 + 41_000, 7_000 + 41_000, 7_000 + 51_000]);
    const goes = WALL - 20_000 + MINUTE + 1_000;
    const lines = logger.records().filter((r) => r.msg === WAITS);
    expect(lines).toEqual([expect.objectContaining({ level: 'info', portal: 'acme', spentInWindow: 5, share: 5, firstRequestAt: new Date(goes).toISOString() })]);
    // The fourth waited for the others' requests too: no more lines.
    expect(logger.lines).toHaveLength(1);
  });

  it('says nothing when the waits are only this process\'s own spacing', async () => {
    const clock = new FakeClock(WALL, { autoAdvance: true });
    const logger = memoryLogger();
    const sched = new PortalScheduler({ share: 2, clock, ledger: ledgerOf(clock, []), logger });
    const starts = await spendSlots(sched, 5);
    expect(starts).toEqual([WALL, WALL, WALL + MINUTE + 1_000, WALL + MINUTE + 1_000, WALL + 2 * (MINUTE + 1_000)]);
    expect(logger.lines).toEqual([]);
  });

  it('says nothing when the others left the first request a slot, though later ones wait for their requests', async () => {
    const clock = new FakeClock(WALL, { autoAdvance: true });
    const logger = memoryLogger();
    const sched = new PortalScheduler({ share: 3, clock, ledger: ledgerOf(clock, [WALL - 5_000, WALL - 5_000]), logger });
    const starts = await spendSlots(sched, 2);
    expect(starts).toEqual([WALL, WALL - 5_000 + MINUTE + 1_000]);
    expect(logger.lines).toEqual([]);
  });
});
