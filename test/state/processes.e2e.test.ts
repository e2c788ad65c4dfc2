/**
 * The state directory's claim, with several real processes: four (and more) processes that wait on
 * one full window of one portal, over many rounds, some killed at random moments. Time runs 20
 * times faster on a clock every process derives from the host's monotonic clock (see claimer.ts),
 * so a 60 s window passes in 3 s of real time and the processes race as real ones do.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { maxInAnyWindow } from '../support/window.js';

const CLAIMER = new URL('./claimer.ts', import.meta.url).pathname;
const PORTAL = 'https://acme.example.com/public-api/v1';
const SHARE = 5;
const SPEED = 20;
const MINUTE = 60_000;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'posture-claims-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const realMs = () => Number(process.hrtime.bigint() / 1_000n) / 1000;

/** A claimer process; resolves with the starts it printed when it ends. */
function claimer(grants: number, startAt: number): { child: ChildProcess; starts: Promise<number[]> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CLAIMER, dir, PORTAL, String(SHARE), String(grants), String(SPEED), String(startAt)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const starts = new Promise<number[]>((resolve, reject) =>
    child.once('exit', (code, signal) => {
      if (code !== 0 && signal !== 'SIGKILL') reject(new Error(`claimer exited ${code}: ${err}`));
      else if (signal !== 'SIGKILL' && err) reject(new Error(`claimer warned: ${err}`));
      else resolve(out.split('\n').filter(Boolean).map(Number));
    }),
  );
  return { child, starts };
}

/** The starts the directory recorded (virtual ms), from its files: every request claimed, sent or not. */
function recorded(): number[] {
  const [folder] = readdirSync(join(dir, 'sends'));
  const path = join(dir, 'sends', folder!);
  return readdirSync(path)
    .filter((n) => /^s\d{12}$/.test(n))
    .map((n) => JSON.parse(readFileSync(join(path, n), 'utf8')) as { mono: number; released?: boolean })
    .filter((r) => !r.released)
    .map((r) => r.mono)
    .sort((a, b) => a - b);
}

describe('the share across real processes on one state directory', () => {
  it('four processes waiting on one full window, over many rounds: never more than the share in any 60 s, and every process gets its slots', async () => {
    // The window is full before they start: one process spent the share.
    const startAt = realMs() + 1_500;
    const first = claimer(SHARE, 0);
    expect(await first.starts).toHaveLength(SHARE);
    const runs = Array.from({ length: 4 }, () => claimer(6, startAt));
    const starts = (await Promise.all(runs.map((r) => r.starts))).flat().sort((a, b) => a - b);
    const all = [...(await first.starts), ...starts].sort((a, b) => a - b);
    // 5 + 24 requests: every process got all it asked for.
    expect(all).toHaveLength(SHARE + 24);
    // Where each request went (just after its claim) and what was recorded: at most the share in any window.
    expect(maxInAnyWindow(all, MINUTE)).toBe(SHARE);
    expect(maxInAnyWindow(recorded(), MINUTE + 1_000)).toBe(SHARE);
    // They did wait on each other: 29 requests at 5 per window take more than five windows.
    expect(all.at(-1)! - all[0]!).toBeGreaterThan(5 * MINUTE);
  });

  it('processes killed at random moments leave nothing that widens the window or stops the others', async () => {
    const startAt = realMs() + 1_500;
    const survivors = Array.from({ length: 4 }, () => claimer(5, startAt));
    const killed: Array<Promise<number[]>> = [];
    // Claimers started and SIGKILLed every 150–450 ms of real time, mid-claim or mid-wait, while the four run.
    const until = realMs() + 6_000;
    while (realMs() < until) {
      const victim = claimer(100, 0);
      killed.push(victim.starts);
      await new Promise((r) => setTimeout(r, 150 + Math.random() * 300));
      victim.child.kill('SIGKILL');
    }
    const starts = (await Promise.all(survivors.map((r) => r.starts))).flat();
    expect(starts).toHaveLength(20);
    const all = [...starts, ...(await Promise.all(killed)).flat()].sort((a, b) => a - b);
    expect(maxInAnyWindow(all, MINUTE)).toBeLessThanOrEqual(SHARE);
    expect(maxInAnyWindow(recorded(), MINUTE + 1_000)).toBeLessThanOrEqual(SHARE);
  });
});
