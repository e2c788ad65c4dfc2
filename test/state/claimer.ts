/**
 * One process claiming slots of one portal in a state directory, as fast as the share allows, for
 * test/state/processes.e2e.test.ts. Time runs SPEED times faster than real time on a clock every
 * process derives from the host's monotonic clock, so all of them agree on it and a 60 s window
 * passes in 60 s / SPEED. Prints each granted slot's start (virtual ms) on a line of its own.
 *
 * Usage: node --import tsx test/state/claimer.ts DIR PORTAL SHARE GRANTS SPEED START_AT_REAL_MS
 */
import { hostname } from 'node:os';
import { memoryLogger } from '../../src/core/log.js';
import { StateDir } from '../../src/state/dir.js';
import type { HostClock } from '../../src/state/host-clock.js';
import { SendFiles } from '../../src/state/sends.js';

const [dir, portal, shareArg, grantsArg, speedArg, startArg] = process.argv.slice(2);
const share = Number(shareArg);
const grants = Number(grantsArg);
const speed = Number(speedArg);
const realMs = () => Number(process.hrtime.bigint() / 1_000n) / 1000;
const clock: HostClock = { host: hostname(), boot: 'fast', monotonic: () => realMs() * speed, wall: () => realMs() * speed };
const logger = memoryLogger();
const ledger = new SendFiles(StateDir.open(dir!, logger, 'lost'), { logger, clock }).ledger(portal!);

// Every process starts at the same real instant, so all wait on one full window together.
while (realMs() < Number(startArg)) await new Promise((r) => setTimeout(r, 1));
let granted = 0;
while (granted < grants) {
  const r = await ledger.claim(share);
  if (r.granted) {
    granted++;
    // When the request would go: just after the claim (the portal's view of it).
    process.stdout.write(`${clock.monotonic()}\n`);
  } else {
    await new Promise((res) => setTimeout(res, Math.max(0, r.waitMs / speed)));
  }
}
const warnings = logger.records().filter((l) => l.level === 'warn');
if (warnings.length) process.stderr.write(JSON.stringify(warnings) + '\n');
