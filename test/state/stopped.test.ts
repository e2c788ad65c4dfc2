/**
 * serve whose ledger stops taking claims (a full disk, as src/state/files.ts says it): nothing is
 * sent, /metrics keeps the last values while they are fresh, /healthz answers and says why
 * collection stopped, and once claims go through again all of it clears. On a fake clock, with a
 * ledger in memory that the test makes refuse claims as the state directory does on a full disk;
 * test/state/full-disk.e2e.test.ts does it on a real full file system.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { LedgerError } from '../../src/errors.js';
import type { SendLedger } from '../../src/schedule/ledger.js';
import { startServe } from '../../src/runtime/serve.js';
import { startSimulator } from '../../src/simulator/index.js';
import { serveAfterEach, T0 } from '../integration/support.js';
import { MemoryLedger } from '../support/ledger.js';

const KEY = 'sim-stopped-key-0123456789abcd';
const { closing, stopping } = serveAfterEach();
const FULL = '/state/sends/acme in the state directory cannot record a claim: its disk is full (ENOSPC); no request goes to the portal until one can be recorded: free space on that file system, or give POSTURE_STATE_DIR a directory on another';

describe('serve while the ledger cannot record a claim', () => {
  it('sends nothing, keeps serving its last values while fresh, and says on /healthz why collection stopped until a claim goes through again', async () => {
    const clock = new FakeClock(T0);
    const sim = closing(await startSimulator({ clock, keys: [{ key: KEY }], moving: false }));
    const logger = memoryLogger({ secrets: [KEY] });
    const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'acme', POSTURE_INTERVAL_SECONDS: '60', POSTURE_MAX_STALENESS_SECONDS: '600', POSTURE_LISTEN: '127.0.0.1:0' } });
    const memory = new MemoryLedger(clock).writer();
    let full = false;
    const ledger: SendLedger = {
      where: 'the state directory /state',
      others: () => memory.others(),
      claim: (share, flightMs) => (full ? Promise.reject(new LedgerError('/state/sends/acme', FULL)) : memory.claim(share, flightMs)),
    };
    const serving = stopping(await startServe(config, { clock, logger, ledgerOf: () => ledger }));
    const healthz = async () => (await fetch(`${serving.url}/healthz`)).text();
    const metrics = async () => (await fetch(`${serving.url}/metrics`)).text();
    /** Runs the clock until `n` more runs have finished. */
    const runs = async (n: number) => {
      let done = 0;
      const counting = (async () => {
        while (done < n) {
          await serving.nextCycle();
          done++;
        }
      })();
      while (done < n) {
        await new Promise((r) => setTimeout(r, 5));
        if (!clock.held) clock.advance(1_000);
      }
      await counting;
    };
    /** Runs the clock a run at a time until /metrics matches `pattern` (at most 12 runs: the live sources run every minute). */
    const until = async (pattern: RegExp) => {
      for (let i = 0; i < 12 && !pattern.test(await metrics()); i++) await runs(1);
      expect(await metrics()).toMatch(pattern);
    };
    // The first runs of the six: vitals, devices, alerts, the resolved-alerts pass, the access settings and the directory.
    await runs(6);
    expect(await healthz()).toBe('ok\n');
    expect(await metrics()).toMatch(/^posture_devices\{/m);
    const sent = sim.requests.length;

    full = true;
    // Until a run of devices has failed on the full disk (the slow sources' runs may finish in between).
    await until(/^posture_collection_success\{portal="acme",source="devices"\} 0$/m);
    expect(sim.requests).toHaveLength(sent);
    expect(await healthz()).toBe(`ok (collection stopped: ${FULL})\n`);
    const served = await metrics();
    expect(served).toMatch(/^posture_devices\{/m);
    expect(served).toMatch(/^posture_collection_success\{portal="acme",source="devices"\} 0$/m);

    full = false;
    await until(/^posture_collection_success\{portal="acme",source="devices"\} 1$/m);
    expect(sim.requests.length).toBeGreaterThan(sent);
    expect(await healthz()).toBe('ok\n');
  });
});
