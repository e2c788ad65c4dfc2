/**
 * The state directory's claim, with several real processes: four (and more) processes that wait on
 * one full window of one portal, over many rounds, their requests a while in flight, some killed at
 * random moments. Time runs 20 times faster on a clock every process derives from the real clock
 * (test/support/claimer.ts), so a 60 s window passes in 3 s of real time and the processes race as
 * real ones do. Each says when the portal saw each of its requests (a moment within its flight):
 * at most the share in any 60 s.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClaimerOptions } from '../support/claimer.js';
import { claimer } from '../support/processes.js';
import { tempDirPerTest } from '../support/temp-dir.js';
import { maxInAnyWindow } from '../support/window.js';

const PORTAL = 'https://acme.example.com/public-api/v1';
const SHARE = 5;
const SPEED = 20;
const MINUTE = 60_000;

const dir = tempDirPerTest('posture-claims-');

/** A claimer of `grants` slots on the directory, starting at the real instant `start`, each request up to 3 s in flight. */
const slots = (grants: number, start: number, more: Partial<ClaimerOptions> = {}) => claimer({ store: 'dir', where: dir(), portal: PORTAL, speed: SPEED, start, kind: 'requests', share: SHARE, grants, flightMs: 3_000, ...more });

/** When the directory's records say each request could last have reached the portal (virtual ms): every request claimed and not given back. */
function recorded(): number[] {
  const [folder] = readdirSync(join(dir(), 'sends'));
  const path = join(dir(), 'sends', folder!);
  return readdirSync(path)
    .filter((n) => /^s\d{12}$/.test(n))
    .map((n) => JSON.parse(readFileSync(join(path, n), 'utf8')) as { mono: number; flightMs: number; arrived?: { mono: number }; released?: boolean })
    .filter((r) => !r.released)
    .map((r) => r.arrived?.mono ?? r.mono + r.flightMs)
    .sort((a, b) => a - b);
}

describe('the share across real processes on one state directory', () => {
  it('four processes waiting on one full window, over many rounds: never more than the share in any 60 s, and every process gets its slots', async () => {
    const first = await slots(SHARE, Date.now()).done;
    expect(first.arrivals).toHaveLength(SHARE);
    // The window is full before they start: the first process spent the share.
    const start = Date.now() + 1_500;
    const runs = await Promise.all(Array.from({ length: 4 }, () => slots(6, start).done));
    for (const r of runs) expect([r.code, r.stderr]).toEqual([0, '']);
    const all = [...first.arrivals, ...runs.flatMap((r) => r.arrivals)].sort((a, b) => a - b);
    // 5 + 24 requests: every process got all it asked for.
    expect(all).toHaveLength(SHARE + 24);
    // Where each request reached the portal, and what was recorded: at most the share in any window.
    expect(maxInAnyWindow(all, MINUTE)).toBe(SHARE);
    expect(maxInAnyWindow(recorded(), MINUTE + 1_000)).toBe(SHARE);
    // They did wait on each other: 29 requests at 5 per window take more than five windows.
    expect(all.at(-1)! - all[0]!).toBeGreaterThan(5 * MINUTE);
  });

  it('processes killed at random moments, mid-claim, mid-flight or mid-wait, leave nothing that widens the window or stops the others', async () => {
    const start = Date.now() + 1_500;
    const survivors = Array.from({ length: 4 }, () => slots(5, start, { releaseOneIn: 6 }));
    const killed: Array<Promise<{ arrivals: number[] }>> = [];
    // Claimers on the same timeline, started and SIGKILLed every 150–450 ms of real time while the four
    // run (before the start, some are killed mid-wait).
    const until = Date.now() + 6_000;
    while (Date.now() < until) {
      const victim = slots(100, start);
      killed.push(victim.done);
      await new Promise((r) => setTimeout(r, 150 + Math.random() * 300));
      victim.child.kill('SIGKILL');
    }
    const runs = await Promise.all(survivors.map((r) => r.done));
    for (const r of runs) expect([r.code, r.stderr]).toEqual([0, '']);
    expect(runs.map((r) => r.result!.granted)).toEqual([5, 5, 5, 5]);
    const all = [...runs.flatMap((r) => r.arrivals), ...(await Promise.all(killed)).flatMap((r) => r.arrivals)].sort((a, b) => a - b);
    expect(maxInAnyWindow(all, MINUTE)).toBeLessThanOrEqual(SHARE);
    expect(maxInAnyWindow(recorded(), MINUTE + 1_000)).toBeLessThanOrEqual(SHARE);
  });
});
