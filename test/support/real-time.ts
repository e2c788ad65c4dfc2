import type { FakeClock } from '../../src/core/clock.js';

/**
 * Moves a fake clock along with real time (every `tickMs`) while real work is under way, for the
 * few tests whose portal answers take real time (latency, endless or dripping bodies) and whose
 * run must still be cut by a deadline on that fake clock. Returns the stop function.
 */
export function followRealTime(clock: FakeClock, tickMs = 20): () => void {
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    clock.advance(Math.round(now - last));
    last = now;
  }, tickMs);
  return () => clearInterval(timer);
}
