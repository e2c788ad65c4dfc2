/**
 * Most of `starts` (ascending, in ms) inside any window of `windowMs`; a start exactly `windowMs`
 * after another is outside that one's window, as in the portal's sliding 60 s budget.
 */
export function maxInAnyWindow(starts: readonly number[], windowMs = 60_000): number {
  let most = 0;
  for (let i = 0; i < starts.length; i++) {
    let n = 0;
    for (let j = i; j < starts.length && starts[j]! - starts[i]! < windowMs; j++) n++;
    most = Math.max(most, n);
  }
  return most;
}
