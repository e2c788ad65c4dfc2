/**
 * The share held where the portal counts it, at arrival, through the built CLI on real time, each
 * case judged by the simulated portal's own arrival log: at most 5 requests in any 60 s at a share
 * of 5. A relay that holds the first connection 4 s; refused-port runs that leave 60 and more
 * released records before a real run; a run under libfaketime 90 s behind with its monotonic clock
 * faked too between two real ones, and one a day ahead before a real one; two writers on one
 * DynamoDB table (dynalite), one under libfaketime 10 s ahead with its monotonic clock real. Each
 * waits out one real window; the cases run side by side. In each the access settings and the
 * directory are recorded as run a moment ago (before the runs on the real clock), so that its runs
 * send the live sources' 4 requests and at most the resolved-alerts pass's 1: the slow sources' turns (a run gives back what does not fit
 * beside the live sources) are tested in test/e2e/restarts.test.ts and the integration tier.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { portalIdentity } from '../../src/config/identity.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/log.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import type { PassLedger } from '../../src/schedule/passes.js';
import { openState } from '../../src/state/index.js';
import { folderOf } from '../../src/state/portal-folder.js';
import { openTable } from '../../src/state/table.js';
import { BUILT_CLI, failedOnlyAsLate, runBuiltCli, runProcess, type Ran } from '../support/cli.js';
import { startDynalite, type Dynalite } from '../support/dynalite.js';
import { startRelay } from '../support/relay.js';
import { maxInAnyWindow } from '../support/window.js';

const KEY = 'sim-ledger-checks-key-0123456789';
const SHARE = 5;
const ENTRY = 'acme';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

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
  POSTURE_PORTAL: ENTRY,
  POSTURE_REQUESTS_PER_MINUTE: String(SHARE),
  POSTURE_STATE_DIR: dir,
  POSTURE_LOG_LEVEL: 'warn',
  ...more,
});

/** `once` of the built CLI under libfaketime at `offset`; its monotonic clock faked too unless `realMonotonic`. */
function fakedOnce(offset: string, env: Record<string, string>, realMonotonic = false): Promise<Ran> {
  return runProcess('faketime', ['-f', offset, process.execPath, BUILT_CLI, 'once'], { env: { PATH: process.env.PATH, ...env, ...(realMonotonic ? { DONT_FAKE_MONOTONIC: '1' } : {}) } });
}

/**
 * Records through `passes`, as a run of entry ENTRY claims them, that the access settings (hourly)
 * and the directory (daily), at their default intervals, ran a moment ago: the runs of a case then
 * owe neither (a first once at a share of 5 would run the pass, give both back, and the next once
 * would send the access settings' 3 requests beside the live 4, two windows where the case needs one).
 */
async function accessAndDirectoryJustRan(passes: PassLedger, baseUrl: string): Promise<void> {
  // An entry's slow job other than the pass is remembered as the entry's name and the job's, NUL between.
  for (const [job, intervalMs] of [['access', HOUR], ['directory', DAY]] as const) {
    expect((await passes.claim(portalIdentity(baseUrl), `${ENTRY}\u0000${job}`, intervalMs)).due).toBe(true);
  }
}

/** The state directory `dir`'s pass ledger, as a process on the real clock opens it. */
const dirPasses = (dir: string): PassLedger => openState(dir, silentLogger, systemClock).passes;

/** accessAndDirectoryJustRan in table `table` of `db`, its pass ledger opened in this process with the environment the SDK reads to reach `db`. */
async function accessAndDirectoryJustRanInTable(db: Dynalite, table: string, baseUrl: string): Promise<void> {
  const saved = Object.fromEntries(Object.keys(db.env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, db.env);
  const ledgers = openTable(table, silentLogger, systemClock);
  try {
    await accessAndDirectoryJustRan(ledgers.passes, baseUrl);
  } finally {
    ledgers.destroy();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

const arrivals = (sim: Simulator) => sim.requests.map((q) => q.time).sort((a, b) => a - b);

describe.concurrent('the share at the portal, at arrival', () => {
  it('a relay holds the first connection 4 s: two once back to back send at most 5 in any 60 s', async () => {
    const { sim, dir } = await portal();
    const relay = await startRelay(sim.baseUrl, 4_000);
    cleanups.push(() => relay.close());
    const env = envOf(relay.baseUrl, dir);
    await accessAndDirectoryJustRan(dirPasses(dir), relay.baseUrl);
    const started = Date.now();
    const first = await runBuiltCli(['once'], env);
    expect(first.code, first.stderr).toBe(0);
    // The four sources (Vitals 1, devices 2, /alerts 1) and the resolved-alerts pass (1, due: never run), all after the held connection.
    expect(sim.requests).toHaveLength(4 + 1);
    expect(sim.requests[0]!.time - started).toBeGreaterThanOrEqual(4_000);
    const second = await runBuiltCli(['once'], env);
    expect(second.code, second.stderr).toBe(0);
    // The four sources again, no slow source due: 5 + 4.
    expect(sim.requests).toHaveLength(5 + 4);
    expect(maxInAnyWindow(arrivals(sim))).toBe(SHARE);
  }, 240_000);

  it('refused-port runs leave 60 and more released records in the window: a real run inside it still sends at most what the share leaves', async () => {
    const { sim, dir } = await portal();
    const relay = await startRelay(sim.baseUrl);
    cleanups.push(() => relay.close());
    const env = envOf(relay.baseUrl, dir);
    // The resolved-alerts pass (remembered under the entry's name), the access settings and the directory
    // made within their intervals: every run below asks for its four sources alone.
    const passes = dirPasses(dir);
    expect((await passes.claim(portalIdentity(relay.baseUrl), ENTRY, HOUR)).due).toBe(true);
    await accessAndDirectoryJustRan(passes, relay.baseUrl);
    const first = await runBuiltCli(['once'], env);
    expect(first.code, first.stderr).toBe(0);
    // Vitals 1, devices 2, /alerts 1: the share of 5 leaves one request in this window.
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
    // Its four sources: 4 + 4.
    expect(times).toHaveLength(4 + 4);
    // It started inside the first run's window, and sent one request there.
    expect(times[4]! - windowOpened).toBeLessThan(60_000);
    expect(maxInAnyWindow(times)).toBe(SHARE);
  }, 240_000);

  it('a real run, one under libfaketime 90 s behind with its monotonic clock faked too, then a real one: at most 5 in any 60 s', async () => {
    const { sim, dir } = await portal();
    const env = envOf(sim.baseUrl, dir);
    await accessAndDirectoryJustRan(dirPasses(dir), sim.baseUrl);
    const first = await runBuiltCli(['once'], env);
    expect(first.code, first.stderr).toBe(0);
    // The four sources and the resolved-alerts pass.
    expect(sim.requests).toHaveLength(4 + 1);
    // It waits for the first run's requests to leave the window, then sends its four (the pass was made): 5 + 4.
    const faked = await fakedOnce('-90s', env);
    expect(faked.code, faked.stderr).toBe(0);
    expect(sim.requests).toHaveLength(5 + 4);
    // Right after it, a real run counts its four requests: it sends the one request the share leaves, and within 20 s has no slot for the others.
    const after = await runBuiltCli(['once'], { ...env, POSTURE_CYCLE_TIMEOUT_SECONDS: '20' });
    expect(after.code).not.toBe(0);
    expect(failedOnlyAsLate(after.stderr), after.stderr.slice(-2000)).toBe(true);
    expect(sim.requests).toHaveLength(9 + 1);
    expect(maxInAnyWindow(arrivals(sim))).toBe(SHARE);
  }, 240_000);

  it('a run under libfaketime a day ahead, its monotonic clock faked too, blocks a real run a window, not a day', async () => {
    const { sim, dir } = await portal();
    const env = envOf(sim.baseUrl, dir);
    // The four sources and the resolved-alerts pass (never run, so due, and the first slow job of a
    // run); the access settings and the directory do not fit beside them (5 - 4 - 1 = 0): given back.
    const ahead = await fakedOnce('+1d', env);
    expect(ahead.code, ahead.stderr).toBe(0);
    expect(sim.requests).toHaveLength(4 + 1);
    // Recorded after the run a day ahead, which reads records of the real clock as a day old (and removes them).
    await accessAndDirectoryJustRan(dirPasses(dir), sim.baseUrl);
    const started = Date.now();
    // The four sources: the pass was made (a day ahead), and the access settings and the directory given back ran a moment ago: 5 + 4.
    const real = await runBuiltCli(['once'], env);
    expect(real.code, real.stderr.slice(-2000)).toBe(0);
    expect(sim.requests).toHaveLength(5 + 4);
    expect(Date.now() - started).toBeLessThan(90_000);
    expect(maxInAnyWindow(arrivals(sim))).toBe(SHARE);
  }, 240_000);

  it('two writers on one DynamoDB table, the second under libfaketime 10 s ahead with its monotonic clock real: at most 5 in any 60 s', async () => {
    const { sim, dir } = await portal();
    const db = await startDynalite();
    cleanups.push(() => db.close());
    await db.createTable('posture-exporter-checks-ledger');
    const env = { ...envOf(sim.baseUrl, dir), ...db.env, POSTURE_STATE_TABLE: 'posture-exporter-checks-ledger' };
    await accessAndDirectoryJustRanInTable(db, 'posture-exporter-checks-ledger', sim.baseUrl);
    const first = await runBuiltCli(['once'], env);
    expect(first.code, first.stderr).toBe(0);
    // The four sources and the resolved-alerts pass.
    expect(sim.requests).toHaveLength(4 + 1);
    // The four sources: the pass was made 10 s before its clock, the access settings and the directory a moment before: 5 + 4.
    const ahead = await fakedOnce('+10s', env, true);
    expect(ahead.code, ahead.stderr.slice(-2000)).toBe(0);
    expect(sim.requests).toHaveLength(5 + 4);
    expect(maxInAnyWindow(arrivals(sim))).toBe(SHARE);
  }, 240_000);
});
