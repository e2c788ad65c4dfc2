/**
 * The Lambda's state directory (serverless.yml sets POSTURE_STATE_DIR=/tmp/posture-exporter): a
 * container whose runtime restarted (a new handler on the same /tmp) counts the requests the
 * previous one sent in the last 60 s; without the setting, nothing is written.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { createHandler } from '../../src/runtime/lambda.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { startReceiver, type Receiver } from '../sinks/receiver.js';
import { maxInAnyWindow } from '../support/window.js';
import { lambdaContext, scheduledEvent } from './support.js';

const KEY = 'sim-lambda-state-key-0123456789';
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

let dir: string;
let clock: FakeClock;
let sim: Simulator;
let receiver: Receiver;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lambda-state-'));
  clock = new FakeClock(T0, { autoAdvance: true });
  sim = await startSimulator({ clock, keys: [{ key: KEY }], moving: false });
  receiver = await startReceiver();
});
afterEach(async () => {
  await sim.close();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh container (a new handler, as after a runtime restart), invoked once on the schedule. */
async function invokeFresh(env: Record<string, string>, id: string): Promise<string[]> {
  const lines: string[] = [];
  const handler = createHandler({
    env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PUSH: 'remote_write', POSTURE_REMOTE_WRITE_URL: `${receiver.url}/api/v1/write`, ...env },
    clock,
    write: (line) => lines.push(line),
  });
  await handler(scheduledEvent(clock.now()), lambdaContext(240_000, id));
  return lines;
}

describe('the Lambda and its state directory', () => {
  it('a restarted runtime on the same /tmp waits for the previous one\'s requests to leave the window', async () => {
    const env = { POSTURE_STATE_DIR: join(dir, 'posture-exporter') };
    await invokeFresh(env, 'req-1');
    const first = sim.requests.length;
    await invokeFresh(env, 'req-2');
    const asked = sim.requests.map((q) => `${q.path}?${q.query.filter ?? ''}`);
    // The first container has no record of any slow source, so all three are due. Its window of 5 leaves
    // 5 - 1 (Vitals) - 2 (devices) - 1 (/alerts) = 1 beside the live sources: the resolved-alerts pass, first due,
    // runs (1 request while its total is unknown), and the access settings (3) and the directory (1) no longer fit
    // and are given back: 4 + 1 = 5, the whole share. The restarted one finds the pass recorded in the same
    // directory, within its hour; the access settings, given back, are due and first, so they run (the first due
    // always does: 3 requests), and the directory (1) does not fit the room left (1 - 3 < 1) and is given back again:
    // 4 + 3 = 7, all of them after the first container's 5 leave the window.
    expect(asked.slice(0, first).sort()).toEqual(['/alerts?allunresolved', '/alerts?resolved', '/devices?active', '/devices?inactive', '/vitals?']);
    expect(asked.slice(first).sort()).toEqual([
      '/alerts?allunresolved',
      '/devices?active',
      '/devices?inactive',
      '/settings/usermanagement/roles?',
      '/settings/usermanagement/teams?',
      '/settings/usermanagement/users?',
      '/vitals?',
    ]);
    const times = sim.requests.map((q) => q.time);
    expect(maxInAnyWindow(times)).toBe(5);
    expect(times[first]! - times[0]!).toBeGreaterThanOrEqual(60_000);
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
    expect(readdirSync(join(dir, 'posture-exporter', 'sends'))).toHaveLength(1);
  });

  it('without POSTURE_STATE_DIR records nothing, and warns about nothing', async () => {
    const lines = await invokeFresh({ HOME: join(dir, 'home') }, 'req-1');
    // The 4 requests of its sources and 1 of the resolved-alerts pass: with nothing recorded, every container is a first run.
    expect(sim.requests).toHaveLength(5);
    expect(existsSync(join(dir, 'home'))).toBe(false);
    expect(lines.join('\n')).not.toContain('POSTURE_STATE_DIR');
  });
});
