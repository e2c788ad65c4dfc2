/**
 * One process claiming from the ledger, for the tests that run several at once
 * (test/state/*processes*.e2e.test.ts; started by `claimer()` in test/support/processes.ts): a
 * portal's request slots or an entry's pass, in a state directory or a DynamoDB table.
 *
 * Time runs `speed` times faster than real time from the real instant `start` (epoch ms), on a
 * clock every process derives from the real clock, so all of them agree on it and a 60 s window
 * passes in 60 s / speed; each starts claiming at `start`. For a request it is granted, it picks the
 * moment the portal would see it (at random within the request's time in flight), prints it as a
 * line `{"arrival":<virtual ms>}`, and records the arrival at the end of that flight. Its last line
 * is what it got: `{"granted":…,"released":…,"claims":…}`, or `{"due":…}` for a pass.
 *
 * Usage: node --import tsx test/support/claimer.ts '<ClaimerOptions as JSON>'
 */
import { futimesSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Clock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { claimPass, sendLedger } from '../../src/state/claims.js';
import { StateDir } from '../../src/state/dir.js';
import { LedgerFiles } from '../../src/state/files.js';
import type { HostClock } from '../../src/state/host-clock.js';
import { openTable } from '../../src/state/table.js';

/** What one claimer does. */
export interface ClaimerOptions {
  store: 'dir' | 'table';
  /** The state directory, or the table's name. */
  where: string;
  portal: string;
  /** Virtual ms per real ms. */
  speed: number;
  /** The real instant (epoch ms) every claimer starts at: virtual time `start` too. */
  start: number;
  /** Claim request slots at `share`, until `grants` were granted or the real time `until`; or claim the pass of `entry`. */
  kind: 'requests' | 'pass';
  share?: number;
  grants?: number;
  until?: number;
  /** Gives back about one grant in this many (it reached no portal). */
  releaseOneIn?: number;
  /** Each request's time in flight, up to this many virtual ms. */
  flightMs?: number;
  entry?: string;
  intervalMs?: number;
}

const o = JSON.parse(process.argv[2]!) as ClaimerOptions;
const virtual = () => o.start + (Date.now() - o.start) * o.speed;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms) / o.speed));
const clock: Clock = { now: virtual, monotonic: virtual, sleep };
const host: HostClock = { host: hostname(), boot: 'claimers', monotonic: virtual, wall: virtual, fileNow: virtual, stamp: (fd) => futimesSync(fd, virtual() / 1000, virtual() / 1000) };
const logger = memoryLogger();
const files = o.store === 'dir' ? new LedgerFiles(StateDir.open(o.where, logger, 'lost'), { logger, clock: host }) : undefined;
const table = o.store === 'table' ? openTable(o.where, logger, clock) : undefined;

while (Date.now() < o.start) await new Promise((r) => setTimeout(r, 1));
if (o.kind === 'pass') {
  const claim = files ? await claimPass(files.passes(o.portal, o.entry!, files.writer()), o.intervalMs!) : await table!.passes.claim(o.portal, o.entry!, o.intervalMs!);
  process.stdout.write(`${JSON.stringify({ due: claim.due })}\n`);
} else {
  const ledger = files ? sendLedger(files.requests(o.portal), o.where) : table!.ledgerOf(o.portal);
  let granted = 0;
  let released = 0;
  let claims = 0;
  while (granted < (o.grants ?? Infinity) && Date.now() < (o.until ?? Infinity)) {
    claims++;
    const r = await ledger.claim(o.share!);
    if (!r.granted) {
      await sleep(r.waitMs);
      continue;
    }
    if (o.releaseOneIn !== undefined && Math.random() * o.releaseOneIn < 1) {
      await r.release!();
      released++;
      continue;
    }
    const flight = Math.random() * (o.flightMs ?? 0);
    const reached = Math.random() * flight;
    await sleep(reached);
    process.stdout.write(`${JSON.stringify({ arrival: virtual() })}\n`);
    await sleep(flight - reached);
    await r.arrived!();
    granted++;
  }
  process.stdout.write(`${JSON.stringify({ granted, released, claims })}\n`);
}
const warnings = logger.records().filter((l) => l.level === 'warn');
if (warnings.length) process.stderr.write(`${JSON.stringify(warnings)}\n`);
table?.destroy();
