/**
 * The share held where the portal counts it, at arrival, through the built CLI on real time, each
 * case judged by the simulated portal's own arrival log: at most 5 requests in any 60 s at a share
 * of 5. A relay that holds the first connection 4 s; refused-port runs that leave 60 and more
 * released records before a real run; a run under libfaketime 90 s behind with its monotonic clock
 * faked too between two real ones, and one a day ahead before a real one; two writers on one
 * DynamoDB table (dynalite), one under libfaketime 10 s ahead with its monotonic clock real. Each
 * waits out one real window; the cases run side by side.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { portalIdentity } from '../../src/config/identity.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/log.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { openState } from '../../src/state/index.js';
import { folderOf } from '../../src/state/portal-folder.js';
import { BUILT_CLI, failedOnlyAsLate, runBuiltCli, runProcess, type Ran } from '../support/cli.js';
import { startDynalite } from '../support/dynalite.js';
import { startRelay } from '../support/relay.js';
import { maxInAnyWindow } from '../support/window.js';

const KEY = 'sim-ledger-checks-key-0123456789';
const SHARE = 5;
const HOUR = 3_600_000;

const cleanups: Array<() => Promise<unknown> | void> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A simulated portal on real time and a state directory, both for one case. */
async function portal(): Promise<{ sim: Simulator; dir: string }> {
  const sim = await startSimulator({ keys: [{ key: KEY }], moving: false });
  const dir = mkdtempSync(join(tmpdir(), 'ledger-checks-'));
  cleanups.push(() => sim.close(), () => rmSync(dir, { recursive: true, force: true }));
  return { sim, dir };
}

const envOf = (baseUrl: string, dir: string, more: Record<string, string> = {}) => ({
  POSTURE_BASE_URL: baseUrl,
  POSTURE_API_KEY: KEY,
  POSTURE_PORTAL: 'acme',
  POSTURE_REQUESTS_PER_MINUTE: String(SHARE),
  POSTURE_STATE_DIR: dir,
  POSTURE_LOG_LEVEL: 'warn',
  ...more,
});

/** `once` of the built CLI under libfaketime at `offset`; its monotonic clock faked too unless `realMonotonic`. */
function fakedOnce(offset: string, env: Record<string, string>, realMonotonic = false): Promise<Ran> {
  return runProcess('faketime', ['-f', offset, process.execPath, BUILT_CLI, 'once'], { env: { PATH: process.env.PATH, ...env, ...(realMonotonic ? { DONT_FAKE_MONOTONIC: '1' } : {}) } });
}

const arrivals = (sim: Simulator) => sim.requests.map((q) => q.time).sort((a, b) => a - b);

describe.concurrent('the share at the portal, at arrival', () => {
  it('a relay holds the first connection 4 s: two once back to back send at most 5 in any 60 s', async () => {
    const { sim, dir } = await portal();
    const relay = await startRelay(sim.baseUrl, 4_000);
    cleanups.push(() => relay.close());
    const env = envOf(relay.baseUrl, dir);
    const started = Date.now();
    const first = await runBuiltCli(['once'], env);
    expect(first.code, first.stderr).toBe(0);
    // The four sources and the resolved-alerts pass, all after the held connection.
    expect(sim.requests).toHaveLength(5);
    expect(sim.requests[0]!.time - started).toBeGreaterThanOrEqual(4_000);
    const second = await runBuiltCli(['once'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(sim.requests).toHaveLength(9);
    expect(maxInAnyWindow(arrivals(sim))).toBe(SHARE);
  }, 240_000);

  it('refused-port runs leave 60 and more released records in the window: a real run inside it still sends at most what the share leaves', async () => {
    const { sim, dir } = await portal();
    const relay = await startRelay(sim.baseUrl);
    cleanups.push(() => relay.close());
    const env = envOf(relay.baseUrl, dir);
    // The resolved-alerts pass made within the hour: every run below asks for its four sources alone.
    expect((await openState(dir, silentLogger, systemClock).passes.claim(portalIdentity(relay.baseUrl), 'acme', HOUR)).due).toBe(true);
    const first = await runBuiltCli(['once'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(sim.requests).toHaveLength(4);
    const windowOpened = sim.requests[0]!.time;
    // The port refuses: each run claims the slot left, reaches no portal and gives it back, again and again.
    await relay.refuse();
    const folder = join(dir, 'sends', folderOf(portalIdentity(relay.baseUrl)));
    const released = () => readdirSync(folder).filter((n) => /^s\d{12}$/.test(n) && (JSON.parse(readFileSync(join(folder, n), 'utf8')) as { released?: boolean }).released).length;
    // (64 or more: as many as an earlier version read back, so those it read were all given back.)
    for (let run = 0; run < 20 && released() < 64; run++) expect((await runBuiltCli(['once'], env)).code).toBe(1);
    expect(released()).toBeGreaterThanOrEqual(64);
    expect(sim.requests).toHaveLength(4);
    await relay.accept();
    const real = await runBuiltCli(['once'], env);
    expect(real.code, real.stderr).toBe(0);
    const times = arrivals(sim);
    expect(times).toHaveLength(8);
    // It started inside the first run's window, and sent one request there.
    expect(times[4]! - windowOpened).toBeLessThan(60_000);
    expect(maxInAnyWindow(times)).toBe(SHARE);
  }, 240_000);

  it('a real run, one under libfaketime 90 s behind with its monotonic clock faked too, then a real one: at most 5 in any 60 s', async () => {
    const { sim, dir } = await portal();
    const env = envOf(sim.baseUrl, dir);
    const first = await runBuiltCli(['once'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(sim.requests).toHaveLength(5);
    // It waits for the first run's requests to leave the window, then sends its four (the pass was made).
    const faked = await fakedOnce('-90s', env);
    expect(faked.code, faked.stderr).toBe(0);
    expect(sim.requests).toHaveLength(9);
    // Right after it, a real run counts its four requests: it sends the one request the share leaves, and within 20 s has no slot for the others.
    const after = await runBuiltCli(['once'], { ...env, POSTURE_CYCLE_TIMEOUT_SECONDS: '20' });
    expect(after.code).not.toBe(0);
    expect(failedOnlyAsLate(after.stderr), after.stderr.slice(-2000)).toBe(true);
    expect(sim.requests).toHaveLength(10);
    expect(maxInAnyWindow(arrivals(sim))).toBe(SHARE);
  }, 240_000);

  it('a run under libfaketime a day ahead, its monotonic clock faked too, blocks a real run a window, not a day', async () => {
    const { sim, dir } = await portal();
    const env = envOf(sim.baseUrl, dir);
    const ahead = await fakedOnce('+1d', env);
    expect(ahead.code, ahead.stderr).toBe(0);
    expect(sim.requests).toHaveLength(5);
    const started = Date.now();
    const real = await runBuiltCli(['once'], env);
    expect(real.code, real.stderr.slice(-2000)).toBe(0);
    expect(sim.requests).toHaveLength(9);
    expect(Date.now() - started).toBeLessThan(90_000);
    expect(maxInAnyWindow(arrivals(sim))).toBe(SHARE);
  }, 240_000);

  it('two writers on one DynamoDB table, the second under libfaketime 10 s ahead with its monotonic clock real: at most 5 in any 60 s', async () => {
    const { sim, dir } = await portal();
    const db = await startDynalite();
    cleanups.push(() => db.close());
    await db.createTable('posture-exporter-checks-ledger');
    const env = { ...envOf(sim.baseUrl, dir), ...db.env, POSTURE_STATE_TABLE: 'posture-exporter-checks-ledger' };
    const first = await runBuiltCli(['once'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(sim.requests).toHaveLength(5);
    const ahead = await fakedOnce('+10s', env, true);
    expect(ahead.code, ahead.stderr.slice(-2000)).toBe(0);
    expect(sim.requests).toHaveLength(9);
    expect(maxInAnyWindow(arrivals(sim))).toBe(SHARE);
  }, 240_000);
});
