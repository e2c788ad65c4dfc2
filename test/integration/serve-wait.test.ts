/**
 * serve started on a window other processes filled: it waits for the window to clear before its
 * first cycle (the plan holds from an empty window), and /healthz and the log say until when.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Exporter } from '../../src/exporter/exporter.js';
import { startServe } from '../../src/runtime/serve.js';
import { openState } from '../../src/state/index.js';
import { serveAfterEach, T0 } from './support.js';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { startSimulator } from '../../src/simulator/index.js';

const KEY = 'sim-serve-wait-key-0123456789';
const { closing, stopping } = serveAfterEach();
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('serve behind a window another process filled', () => {
  it('says on /healthz and in the log until when it waits, then collects when the window has cleared', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'serve-wait-'));
    dirs.push(dir);
    // A clock that moves only when the test says, so the wait can be seen.
    const clock = new FakeClock(T0);
    const sim = closing(await startSimulator({ clock, keys: [{ key: KEY }], moving: false }));
    const logger = memoryLogger({ secrets: [KEY] });
    const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'test', POSTURE_REQUESTS_PER_MINUTE: '4', POSTURE_STATE_DIR: dir, POSTURE_LISTEN: '127.0.0.1:0' } });
    // A once fills the share of 4 at T0.
    await new Exporter(config, { clock, logger, runtime: 'once', ledgerOf: openState(dir, logger, clock).ledgerOf }).collect();
    expect(sim.requests.map((q) => q.time)).toEqual([T0, T0, T0, T0]);
    clock.advance(10_000);
    const serving = stopping(await startServe(config, { clock, logger, ledgerOf: openState(dir, logger, clock).ledgerOf }));
    // The window clears 61 s after T0.
    const until = new Date(T0 + 61_000).toISOString();
    expect(await (await fetch(`${serving.url}/healthz`)).text()).toBe(`ok (first collection pending: waiting for the portal's budget until ${until})\n`);
    expect(logger.records().filter((l) => typeof l.msg === 'string' && l.msg.startsWith("waiting for the portal's budget"))).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: `waiting for the portal's budget until ${until}: requests other processes (or an earlier run) recorded in the state directory ${dir} fill its window, so serve starts collecting when they have left it`,
        reason: 'others',
        until,
        ledger: `the state directory ${dir}`,
      }),
    ]);
    clock.advance(50_999);
    await new Promise((r) => setTimeout(r, 20));
    expect(sim.requests).toHaveLength(4);
    while (!serving.exporter.ready) {
      await new Promise((r) => setTimeout(r, 5));
      if (!clock.held) clock.advance(1_000);
    }
    expect(await (await fetch(`${serving.url}/healthz`)).text()).toBe('ok\n');
    // Nothing went before the window cleared, and every source ran on time after.
    expect(sim.requests.slice(4).every((q) => q.time >= T0 + 61_000)).toBe(true);
    expect(logger.records().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('collecting '))).toEqual([]);
  });
});
