import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';

describe('FakeClock.sleep', () => {
  it('removes its abort listener when the sleep ends, so a long-lived signal does not collect one per sleep', async () => {
    const clock = new FakeClock(0);
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      listeners++;
      add(...args);
    }) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      listeners--;
      remove(...args);
    }) as typeof remove;
    for (let i = 0; i < 20; i++) {
      const slept = clock.sleep(1000, controller.signal);
      clock.advance(1000);
      await slept;
    }
    expect(listeners).toBe(0);
  });

  it('still rejects with the reason when aborted', async () => {
    const clock = new FakeClock(0);
    const controller = new AbortController();
    const slept = clock.sleep(1000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(slept).rejects.toThrow('stop');
    expect(clock.pending).toBe(0);
  });
});
