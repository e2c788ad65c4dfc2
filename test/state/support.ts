/**
 * What the tests of the ledger in the state directory share (test/state/files*.test.ts): the portal
 * and the key they read, how long a request counts, a portal's record files, host clocks read off
 * one fake kernel clock, a process's ledger of the portal, and sends that must be granted.
 *
 * Host clocks here are read off one fake kernel clock, which also stamps the files written (their
 * mtime): a process whose clocks are faked or offset reads others, as libfaketime and a time
 * namespace do, while the kernel's stamps stay true.
 */
import { futimesSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import type { SendLedger } from '../../src/schedule/ledger.js';
import { sendLedger } from '../../src/state/claims.js';
import { StateDir } from '../../src/state/dir.js';
import { LedgerFiles } from '../../src/state/files.js';
import type { HostClock } from '../../src/state/host-clock.js';
import { T0 } from '../integration/support.js';

export const KEY = 'sim-state-key-0123456789abcdef';
export const PORTAL = 'https://acme.example.com/public-api/v1';
const MINUTE = 60_000;
/** The window and the 1 s kept beyond it (src/schedule/window.ts): how long a request counts after it arrived. */
export const SLOT = MINUTE + 1_000;
/** A host's monotonic clock: milliseconds since its boot, far from wall time. */
export const UPTIME = 4_000_000;

/** The one portal folder of the state directory `root`, and the files in it. */
export function portalFiles(root: string): string[] {
  const folders = readdirSync(join(root, 'sends'));
  expect(folders).toHaveLength(1);
  return readdirSync(join(root, 'sends', folders[0]!)).map((f) => join(root, 'sends', folders[0]!, f));
}

/**
 * A process's host clocks, read off `kernel`: by default its monotonic clock is the boot's (UPTIME
 * at T0) and its wall clock the kernel's; `mono` and `wall` fake them. Files it writes are stamped
 * by the kernel.
 */
export function hostClock(kernel: FakeClock, o: { host?: string; boot?: string; mono?: () => number; wall?: () => number } = {}): HostClock {
  return {
    host: o.host ?? 'host-a',
    boot: o.boot ?? 'boot-1',
    monotonic: o.mono ?? (() => kernel.monotonic() - T0 + UPTIME),
    wall: o.wall ?? (() => kernel.now()),
    fileNow: () => kernel.now(),
    stamp: (fd) => futimesSync(fd, kernel.now() / 1000, kernel.now() / 1000),
  };
}

/** A process's ledger of PORTAL in the state directory `root`, on `clock`. */
export function ledgerOn(root: string, clock: HostClock, logger = memoryLogger()): SendLedger {
  return sendLedger(new LedgerFiles(StateDir.open(root, logger, 'lost'), { logger, clock }).requests(PORTAL), `the state directory ${root}`);
}

/** Claims `n` slots that must be granted, each arriving at once. */
export async function send(ledger: SendLedger, n: number, share = 5): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await ledger.claim(share);
    expect(r.granted).toBe(true);
    await r.arrived!();
  }
}
