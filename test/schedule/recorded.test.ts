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

describe('the line each wait for the budget longer than 5 s logs', () => {
  /** A ledger holding `others` (monotonic ms of `clock`) as other processes' requests. */
  const ledgerOf = (clock: FakeClock, others: number[]): SendLedger => {
    const ledger = new MemoryLedger(clock);
    for (const at of others) ledger.add(at);
    return ledger.writer();
  };
  const waits = (logger: ReturnType<typeof memoryLogger>) => logger.records().filter((r) => String(r.msg).startsWith("waiting for the portal's budget until "));
  const iso = (t: number) => new Date(t).toISOString();

  it("says each wait for other processes' requests, naming the portal, the ledger, how much of the share is spent and the wall time it ends", async () => {
    // A process's clocks: its monotonic clock started far from the wall clock, which reads WALL.
    const clock = new FakeClock(7_000, { autoAdvance: true });
    clock.stepWall(WALL - 7_000);
    const logger = memoryLogger();
    // An earlier run sent 5 requests, 3 of them 20 s ago and 2 of them 10 s ago: a share of 5 is spent until the oldest leave the window.
    const ledger = ledgerOf(clock, [7_000 - 20_000, 7_000 - 20_000, 7_000 - 20_000, 7_000 - 10_000, 7_000 - 10_000]);
    const sched = new PortalScheduler({ share: 5, clock, ledger, logger: logger.child({ portal: 'acme' }) });
    const starts = await spendSlots(sched, 4);
    // The three oldest leave the window 60 s + 1 s after they arrived: 41 s from now. The fourth
    // request waits for the two others that leave 10 s later: a second wait, said too.
    expect(starts).toEqual([7_000 + 41_000, 7_000 + 41_000, 7_000 + 41_000, 7_000 + 51_000]);
    const first = WALL - 20_000 + MINUTE + 1_000;
    const second = WALL - 10_000 + MINUTE + 1_000;
    const why = 'requests other processes (or an earlier run) recorded in the memory ledger fill the share of 5 per 60 s';
    expect(waits(logger)).toEqual([
      expect.objectContaining({ level: 'info', portal: 'acme', msg: `waiting for the portal's budget until ${iso(first)}: ${why}`, reason: 'others', until: iso(first), spentInWindow: 5, share: 5, ledger: 'the memory ledger' }),
      expect.objectContaining({ level: 'info', portal: 'acme', msg: `waiting for the portal's budget until ${iso(second)}: ${why}`, reason: 'others', until: iso(second), spentInWindow: 5, share: 5 }),
    ]);
    expect(logger.lines).toHaveLength(2);
  });

  it("says each wait for this process's own requests once, however many requests wait for the same slot", async () => {
    const clock = new FakeClock(WALL, { autoAdvance: true });
    const logger = memoryLogger();
    const sched = new PortalScheduler({ share: 2, clock, ledger: ledgerOf(clock, []), logger });
    const starts = await spendSlots(sched, 5);
    expect(starts).toEqual([WALL, WALL, WALL + MINUTE + 1_000, WALL + MINUTE + 1_000, WALL + 2 * (MINUTE + 1_000)]);
    const why = "this process's own requests spent the share of 2 per 60 s";
    expect(waits(logger).map((r) => [r.msg, r.reason, r.spentInWindow])).toEqual([
      [`waiting for the portal's budget until ${iso(WALL + MINUTE + 1_000)}: ${why}`, 'share', 2],
      [`waiting for the portal's budget until ${iso(WALL + 2 * (MINUTE + 1_000))}: ${why}`, 'share', 2],
    ]);
  });

  it("says a wait for other processes' requests after the first request had a slot", async () => {
    const clock = new FakeClock(WALL, { autoAdvance: true });
    const logger = memoryLogger();
    const sched = new PortalScheduler({ share: 3, clock, ledger: ledgerOf(clock, [WALL - 5_000, WALL - 5_000]), logger });
    const starts = await spendSlots(sched, 2);
    expect(starts).toEqual([WALL, WALL - 5_000 + MINUTE + 1_000]);
    expect(waits(logger).map((r) => [r.reason, r.until, r.spentInWindow])).toEqual([['others', iso(WALL - 5_000 + MINUTE + 1_000), 3]]);
  });

  it('says a wait for the pause a 429 asked for, and no wait of 5 s or less', async () => {
    const clock = new FakeClock(WALL, { autoAdvance: true });
    const logger = memoryLogger();
    const sched = new PortalScheduler({ share: 5, clock, ledger: ledgerOf(clock, []), logger });
    sched.rateLimited(5_000, 1_000);
    expect((await spendSlots(sched, 1))[0]).toBe(WALL + 5_000);
    expect(waits(logger)).toEqual([]);
    sched.rateLimited(30_000, 1_000);
    expect((await spendSlots(sched, 1))[0]).toBe(WALL + 35_000);
    expect(waits(logger).map((r) => [r.msg, r.reason])).toEqual([[`waiting for the portal's budget until ${iso(WALL + 35_000)}: the portal answered 429, and every request to it waits for the pause it asked for`, 'pause']]);
  });

  it('says a wait of a scheduler with no ledger, naming none', async () => {
    const clock = new FakeClock(WALL, { autoAdvance: true });
    const logger = memoryLogger();
    const sched = new PortalScheduler({ share: 1, clock, logger });
    await spendSlots(sched, 2);
    expect(waits(logger)).toEqual([{ time: expect.any(String), level: 'info', msg: `waiting for the portal's budget until ${iso(WALL + MINUTE + 1_000)}: this process's own requests spent the share of 1 per 60 s`, reason: 'share', until: iso(WALL + MINUTE + 1_000), spentInWindow: 1, share: 1 }]);
  });
});
