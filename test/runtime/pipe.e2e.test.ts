// `once` piped into a slow reader: the built CLI (`npm run build`) must not exit before stdout drains.
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { withOwnState } from '../support/cli.js';

const CLI = new URL('../../dist/cli.js', import.meta.url).pathname;
let sim: Simulator;

beforeAll(async () => {
  // Thousands of integrations: several MB of exposition, far beyond a pipe's 64 KiB buffer.
  // A week of resolved history (88,000 alerts), not the default 35 days' 440,000: the pass is not what this test is about (20 s, not 36).
  sim = await startSimulator({ integrations: 5000, alerts: 20000, devices: 2000, rateLimit: false, moving: false, resolvedHistoryDays: 7 });
});
afterAll(async () => {
  await sim.close();
});

/** Runs `once` with stdout on a pipe whose reader takes `pauseMs` after every chunk. */
function onceThroughSlowPipe(pauseMs: number): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'once'], {
      // Each run has a state directory of its own, so it is a first run and makes the resolved-alerts pass. Pages as
      // large as the lists (20,000 open alerts, a week of resolved ones) keep it to 5 requests (Vitals, two device
      // totals, /alerts, the pass), the default share of 5: with 500-record pages the open alerts take 2 and the pass's
      // request, the 6th, waits out a 60 s window. This test is about the pipe; paging is tested elsewhere.
      env: withOwnState({ PATH: process.env.PATH ?? '', POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: sim.apiKey, POSTURE_MAX_SERIES_PER_FAMILY: '1000000', POSTURE_PAGE_SIZE: '100000' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      chunks.push(d);
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), pauseMs);
    });
    let exitCode: number | null = null;
    child.on('error', reject);
    child.on('exit', (code) => (exitCode = code));
    child.stdout.on('end', () => {
      // 'close' follows both the exit and the end of every stream.
      child.on('close', () => resolve({ code: exitCode, stdout: Buffer.concat(chunks), stderr }));
    });
  });
}

/** The series (name and labels) of an exposition, without values. */
function series(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => l.slice(0, l.lastIndexOf(' ')));
}

describe('once into a pipe', () => {
  it('writes the whole output to a slow reader before exiting, and promtool accepts it', async () => {
    const r = await onceThroughSlowPipe(15);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain(sim.apiKey);
    const text = r.stdout.toString('utf8');
    expect(r.stdout.length).toBeGreaterThan(1_000_000);
    expect(text.endsWith('\n')).toBe(true);
    // The same series as an in-process run reading without pauses.
    const fast = await onceThroughSlowPipe(0);
    expect(fast.code).toBe(0);
    expect(series(text)).toEqual(series(fast.stdout.toString('utf8')));
    const check = spawnSync('promtool', ['check', 'metrics'], { input: r.stdout, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(check.stderr).not.toMatch(/error/i);
    expect(check.status).toBe(0);
  }, 120_000);
});
