/**
 * The scheduler's exact edges on a FakeClock: a slot at the deadline, the 429 pause and its cap,
 * what counts as the exporter's own 429, the hour of 429s, refunds and permits, aborts, and the
 * share growing back while a request waits. Expected times are worked by hand: a window is 60 s,
 * and a start keeps 1 s beyond it.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { LateError } from '../../src/errors.js';
import { MemoryLedger } from '../support/ledger.js';
import { PortalScheduler, PRIORITY } from '../../src/schedule/scheduler.js';
import { expectNextWaitsFor, spendSlots } from '../support/slots.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const MINUTE = 60_000;
const HOUR = 3_600_000;
/** Lets pending callbacks (a permit's `done`, a grant) run. */
const settle = async (times = 3) => {
  for (let i = 0; i < times; i++) await new Promise((r) => setImmediate(r));
};
const ask = (sched: PortalScheduler, deadline: number | (() => number) = Infinity, signal?: AbortSignal, endpoint = '/a') => sched.acquire({ endpoint, priority: PRIORITY.vitals, deadline, ...(signal && { signal }) });
const lowered = (logger: ReturnType<typeof memoryLogger>) => logger.records().filter((r) => String(r.msg).startsWith('the portal answered 429'));

describe('PortalScheduler edges', () => {
  it('grants a slot that falls exactly on the deadline, and refuses it a millisecond earlier, naming the budget', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 1, clock });
    (await ask(sched)).done();
    const err = (await ask(sched, T0 + 60_999, undefined, '/devices').catch((e: unknown) => e)) as LateError;
    expect(err).toBeInstanceOf(LateError);
    expect(err.slotAt).toBe(T0 + 61_000);
    expect(err.deadline).toBe(T0 + 60_999);
    expect(err.message).toContain('(budget now 1 request(s) per 60 s)');
    expect(clock.now()).toBe(T0);
    const p = await ask(sched, () => T0 + 61_000);
    expect(p.startedAt).toBe(T0 + 61_000);
    p.done();
  });

  it('refuses a late head and goes on to the next request in the queue', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 1, clock });
    const first = await ask(sched);
    const late = ask(sched, T0 + 30_000).catch((e: unknown) => e);
    const patient = ask(sched);
    first.done();
    expect(await late).toBeInstanceOf(LateError);
    expect((await patient).startedAt).toBe(T0 + 61_000);
  });

  it('pauses for the Retry-After, keeps the longer of two pauses, uses the fallback without one, and caps at 120 s by default', () => {
    const clock = new FakeClock(T0);
    const sched = new PortalScheduler({ share: 5, clock });
    expect(sched.maxRetryAfterMs).toBe(120_000);
    expect(sched.pausedUntilMs).toBe(0);
    expect(sched.rateLimited(30_000, 1_000)).toBe(30_000);
    expect(sched.pausedUntilMs).toBe(T0 + 30_000);
    clock.advance(10_000);
    // A shorter pause later does not end the first early.
    expect(sched.rateLimited(5_000, 1_000)).toBe(20_000);
    expect(sched.pausedUntilMs).toBe(T0 + 30_000);
    clock.advance(30_000);
    expect(sched.rateLimited(undefined, 4_000)).toBe(4_000);
    expect(sched.pausedUntilMs).toBe(T0 + 44_000);
    expect(sched.rateLimited(600_000, 4_000)).toBe(120_000);
    expect(sched.rateLimited(undefined, 600_000)).toBe(120_000);
    expect(sched.pausedUntilMs).toBe(T0 + 40_000 + 120_000);
  });

  it('counts the 429s of the last hour, to the millisecond, and all of them since the start', () => {
    const clock = new FakeClock(T0);
    const sched = new PortalScheduler({ share: 5, clock });
    expect(sched.rateLimitedTotal).toBe(0);
    expect(sched.rateLimitedInLastHour()).toBe(0);
    sched.rateLimited(1_000, 1_000);
    clock.advance(1_000);
    sched.rateLimited(1_000, 1_000);
    expect(sched.rateLimitedInLastHour()).toBe(2);
    expect(sched.rateLimitedInLastHour(T0 + HOUR - 1)).toBe(2);
    expect(sched.rateLimitedInLastHour(T0 + HOUR)).toBe(1);
    expect(sched.rateLimitedInLastHour(T0 + HOUR + 1_000)).toBe(0);
    expect(sched.rateLimitedTotal).toBe(2);
  });

  it('lowers the share on a 429 with nine of its own requests in the window, and says so once with the figures', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const logger = memoryLogger();
    const sched = new PortalScheduler({ share: 10, clock, logger });
    await spendSlots(sched, 9);
    expect(sched.rateLimited(1_000, 1_000)).toBe(1_000);
    expect(sched.share.effective).toBe(5);
    expect(lowered(logger)).toEqual([expect.objectContaining({ level: 'warn', share: 5, was: 10, configured: 10, ownInWindow: 9 })]);
  });

  it('keeps the share, and says nothing, on a 429 with ten of its own requests in the window', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const logger = memoryLogger();
    const sched = new PortalScheduler({ share: 10, clock, logger });
    await spendSlots(sched, 10);
    sched.rateLimited(1_000, 1_000);
    expect(sched.share.effective).toBe(10);
    expect(logger.lines).toEqual([]);
  });

  it('counts the requests other processes recorded as its own when judging a 429', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const logger = memoryLogger();
    const shared = new MemoryLedger(clock);
    for (let i = 0; i < 7; i++) shared.add(T0 - 10_000);
    const sched = new PortalScheduler({ share: 10, clock, logger, ledger: shared.writer() });
    await spendSlots(sched, 3);
    sched.rateLimited(1_000, 1_000);
    expect(sched.share.effective).toBe(10);
    expect(lowered(logger)).toEqual([]);
  });

  it('grows the share back after a clean window, says so, and lets a waiting request go at once', async () => {
    const clock = new FakeClock(T0);
    const logger = memoryLogger();
    const sched = new PortalScheduler({ share: 2, clock, logger });
    (await ask(sched)).done();
    await settle();
    sched.rateLimited(1, 1);
    expect(sched.share.effective).toBe(1);
    clock.advance(30_000);
    let started: number | undefined;
    const waiting = ask(sched).then((p) => ((started = p.startedAt), p));
    await settle();
    // At the share of 1 the request waits for the first start to leave the window: T0 + 61 s.
    expect(clock.nextWakeAt).toBe(T0 + 61_000);
    clock.advance(29_999);
    sched.answered();
    expect(sched.share.effective).toBe(1);
    clock.advance(1);
    sched.answered();
    expect(sched.share.effective).toBe(2);
    await settle();
    expect(started).toBe(T0 + MINUTE);
    (await waiting).done();
    expect(logger.records().filter((r) => r.msg === 'a clean window: the share grows back by one request')).toEqual([expect.objectContaining({ level: 'info', share: 2, configured: 2 })]);
  });

  it('does not say a request waits for other processes when it waits only for a 429 pause', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const logger = memoryLogger();
    const sched = new PortalScheduler({ share: 5, clock, ledger: new MemoryLedger(clock).writer(), logger });
    sched.rateLimited(5_000, 1_000);
    expect((await ask(sched)).startedAt).toBe(T0 + 5_000);
    expect(logger.records().filter((r) => r.reason === 'others')).toEqual([]);
  });

  it('takes no slot for a request whose signal is already aborted, and rejects with its reason', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 1, clock });
    const reason = new Error('stopped');
    await expect(ask(sched, Infinity, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(sched.window.countAt(T0)).toBe(0);
    expect((await ask(sched)).startedAt).toBe(T0);
  });

  it('drops a waiting request whose signal aborts, with its reason, and serves the next', async () => {
    const clock = new FakeClock(T0);
    const sched = new PortalScheduler({ share: 1, clock });
    (await ask(sched)).done();
    await settle();
    const stop = new AbortController();
    const first = ask(sched, Infinity, stop.signal).catch((e: unknown) => e);
    const second = ask(sched);
    await settle();
    stop.abort(new Error('shutting down'));
    expect(((await first) as Error).message).toBe('shutting down');
    clock.advance(61_000);
    expect((await second).startedAt).toBe(T0 + 61_000);
    // The aborted one took no slot: one start in the window.
    expect(sched.window.countAt(T0 + 61_000)).toBe(1);
  });

  it('leaves no abort listener on a long-lived signal once a request is granted or refused as late', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 1, clock });
    const signal = new AbortController().signal;
    const listening = new Set<unknown>();
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => {
      if (args[0] === 'abort') listening.add(args[1]);
      add(...args);
    }) as typeof signal.addEventListener;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      if (args[0] === 'abort') listening.delete(args[1]);
      remove(...args);
    }) as typeof signal.removeEventListener;
    const p = await ask(sched, Infinity, signal);
    p.done();
    expect(listening.size).toBe(0);
    // The next slot is 61 s on: refused at a deadline 30 s on.
    await expect(ask(sched, T0 + 30_000, signal)).rejects.toBeInstanceOf(LateError);
    expect(listening.size).toBe(0);
  });

  it('gives a refunded slot back to the window and the ledger, once, and not after the request was read', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    clock.stepWall(5_000);
    const shared = new MemoryLedger(clock);
    const sched = new PortalScheduler({ share: 1, clock, ledger: shared.writer() });
    const a = await ask(sched);
    a.refund();
    a.refund();
    a.done();
    await settle();
    expect(shared.starts()).toEqual([]);
    expect(shared.entries).toHaveLength(1);
    expect(sched.window.countAt(T0)).toBe(0);
    const b = await ask(sched);
    expect(b.startedAt).toBe(T0);
    b.done();
    b.refund();
    await settle();
    expect(shared.starts()).toEqual([T0]);
    expect(sched.window.countAt(T0)).toBe(1);
    expect((await ask(sched)).startedAt).toBe(T0 + 61_000);
  });

  it('keeps one request in flight even when a permit is released twice', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 10, clock });
    const a = await ask(sched);
    a.done();
    a.done();
    await expectNextWaitsFor(sched, await ask(sched));
  });

  it('spaces starts by its own window and cuts the share once per that window', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sched = new PortalScheduler({ share: 4, clock, windowMs: 10_000 });
    expect(await spendSlots(sched, 5)).toEqual([T0, T0, T0, T0, T0 + 11_000]);
    expect(sched.window.windowMs).toBe(10_000);
    sched.rateLimited(1, 1);
    expect(sched.share.effective).toBe(2);
    await clock.sleep(9_999);
    sched.rateLimited(1, 1);
    expect(sched.share.effective).toBe(2);
    await clock.sleep(1);
    sched.rateLimited(1, 1);
    expect(sched.share.effective).toBe(1);
  });

  it('claims once before each grant, not while a request is in flight', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const shared = new MemoryLedger(clock);
    const sched = new PortalScheduler({ share: 10, clock, ledger: shared.writer() });
    // Three requests queued at once: each waits for the one before it to be read.
    const permits = [ask(sched), ask(sched), ask(sched)];
    for (const p of permits) (await p).done();
    expect(shared.claims).toBe(3);
  });

  it('tells when the window holds no request any more, counting other processes\' requests', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const shared = new MemoryLedger(clock);
    const sched = new PortalScheduler({ share: 5, clock, ledger: shared.writer() });
    expect(await sched.refresh()).toBe(T0);
    (await ask(sched)).done();
    expect(await sched.refresh()).toBe(T0 + 61_000);
    await clock.sleep(30_000);
    shared.add(T0 + 20_000);
    expect(await sched.refresh()).toBe(T0 + 81_000);
    expect(sched.window.countAt(T0 + 30_000)).toBe(2);
  });
});
