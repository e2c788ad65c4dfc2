import { describe, expect, it } from 'vitest';
import { untilDeadline } from '../../src/core/abort.js';
import { FakeClock } from '../../src/core/clock.js';

const never = new Promise<string>(() => undefined);

describe('untilDeadline', () => {
  it('settles with the promise when it finishes first', async () => {
    const clock = new FakeClock(0);
    await expect(untilDeadline(Promise.resolve('value'), { deadline: 10_000, clock })).resolves.toBe('value');
    const failure = new Error('store refused');
    await expect(untilDeadline(Promise.reject(failure), { deadline: 10_000, clock })).rejects.toBe(failure);
  });

  it('rejects with onDeadline once the time left on the clock has passed in real time', async () => {
    const clock = new FakeClock(1_000);
    const started = Date.now();
    const err = await untilDeadline(never, { deadline: 1_050, clock, onDeadline: () => new Error('too late') }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('too late');
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
  });

  it('rejects at once when the deadline has already passed', async () => {
    const clock = new FakeClock(5_000);
    await expect(untilDeadline(never, { deadline: 4_000, clock })).rejects.toThrow('the deadline passed');
  });

  it('rejects with onAbort on a cancel, with the signal reason by default, and when already aborted', async () => {
    const controller = new AbortController();
    const waiting = untilDeadline(never, { signal: controller.signal, onAbort: (reason) => new Error(`cancelled: ${String((reason as Error).message)}`) });
    controller.abort(new Error('shutdown'));
    await expect(waiting).rejects.toThrow('cancelled: shutdown');

    const reason = new Error('gone');
    await expect(untilDeadline(never, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it('ignores a late rejection of the promise it stopped waiting for', async () => {
    const controller = new AbortController();
    let rejectLater!: (err: Error) => void;
    const late = new Promise<string>((_resolve, reject) => (rejectLater = reject));
    const waiting = untilDeadline(late, { signal: controller.signal });
    controller.abort(new Error('first'));
    rejectLater(new Error('second'));
    await expect(waiting).rejects.toThrow('first');
  });
});
