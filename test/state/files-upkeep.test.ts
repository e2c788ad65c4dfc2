/**
 * What the state directory removes and keeps (src/state/files.ts), and the records of earlier
 * versions and of failed writes, on a fake clock whose wall time stamps the files: temporary files
 * left by a killed process (removed 10 minutes after they were written) and the first layout's
 * files (an hour); folders a sweep removes or leaves; a request record with no flight (45 s, the
 * reader's default timeouts and 5 s); what a release or an arrival rewrites; a write that fails,
 * for a full disk and otherwise.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { LedgerError } from '../../src/errors.js';
import { sendLedger } from '../../src/state/claims.js';
import { StateDir } from '../../src/state/dir.js';
import { LedgerFiles } from '../../src/state/files.js';
import { hostClockOf, type HostClock } from '../../src/state/host-clock.js';
import { folderOf } from '../../src/state/portal-folder.js';

/** Whole seconds: file times set from it are exact. */
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const PORTAL = 'https://acme.example.com/public-api/v1';
const MINUTE = 60_000;
const HOUR = 3_600_000;

let dir: string;
let clock: FakeClock;
let logger: ReturnType<typeof memoryLogger>;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'posture-upkeep-'));
  clock = new FakeClock(T0);
  logger = memoryLogger();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const folder = (identity = PORTAL) => join(dir, 'sends', folderOf(identity));
const files = (host: HostClock = hostClockOf(clock)) => new LedgerFiles(StateDir.open(dir, logger, 'lost'), { logger, clock: host });

/** Writes `name` in `at`, last written `ageMs` before now. */
function leftover(at: string, name: string, ageMs: number): void {
  writeFileSync(join(at, name), 'x');
  utimesSync(join(at, name), (clock.now() - ageMs) / 1000, (clock.now() - ageMs) / 1000);
}

/** A record of PORTAL's requests as an exporter of version 2 writes it, claimed at `at` (this clock's boot). */
const record = (at: number, more: Record<string, unknown> = {}) => JSON.stringify({ version: 2, portal: PORTAL, host: hostClockOf(clock).host, boot: 'injected-clock', mono: at, wall: at, writer: 'earlier/1/abc', ...more });

describe('what a killed process left', () => {
  it('removes a temporary file 10 minutes after it was written, and the first layout\'s files an hour after, at the next look; never a folder or a file of another name', async () => {
    const ledger = sendLedger(files().requests(PORTAL), 'here');
    expect((await ledger.claim(5)).granted).toBe(true);
    const f = folder();
    leftover(f, '.t-123-0a1b2c', 10 * MINUTE);
    leftover(f, '.t-124-0a1b2c', 10 * MINUTE + 1_000);
    leftover(f, '12345-0123456789ab.json', HOUR);
    leftover(f, '12346-0123456789ab.json', HOUR + 1_000);
    leftover(f, '.12347-0123456789ab.json.tmp', HOUR + 1_000);
    leftover(f, 'notes.txt', 10 * HOUR);
    leftover(f, '.t-125-XYZ', 10 * HOUR);
    mkdirSync(join(f, '.t-126-abcdef'));
    utimesSync(join(f, '.t-126-abcdef'), (T0 - HOUR) / 1000, (T0 - HOUR) / 1000);
    await ledger.others();
    expect(readdirSync(f).sort()).toEqual(['.t-123-0a1b2c', '.t-125-XYZ', '.t-126-abcdef', '12345-0123456789ab.json', 'notes.txt', 's000000000001']);
  });

  it('keeps a temporary file when the file clock cannot be read: its age is unknown', async () => {
    const host = { ...hostClockOf(clock), fileNow: () => undefined };
    const ledger = sendLedger(files(host).requests(PORTAL), 'here');
    expect((await ledger.claim(5)).granted).toBe(true);
    leftover(folder(), '.t-123-0a1b2c', 10 * HOUR);
    await ledger.others();
    expect(readdirSync(folder()).sort()).toEqual(['.t-123-0a1b2c', 's000000000001']);
  });
});

describe('a sweep', () => {
  it('removes a folder holding nothing but what a killed process left, and keeps one with a file of the user\'s, a file in place of a folder, and a young temporary file', () => {
    const root = join(dir, 'sends');
    for (const name of ['only-temp', 'with-notes', 'young-temp']) mkdirSync(join(root, name), { recursive: true, mode: 0o700 });
    leftover(join(root, 'only-temp'), '.t-1-00ff', HOUR);
    leftover(join(root, 'only-temp'), '1-0123456789ab.json', 2 * HOUR);
    leftover(join(root, 'with-notes'), 'notes.txt', HOUR);
    leftover(join(root, 'young-temp'), '.t-1-00ff', MINUTE);
    writeFileSync(join(root, 'a-file'), '');
    files().sweep();
    expect(readdirSync(root).sort()).toEqual(['a-file', 'with-notes', 'young-temp']);
    expect(readdirSync(join(root, 'with-notes'))).toEqual(['notes.txt']);
  });

  it('leaves an idle folder whose newest file is not a record of its portal, warning once, and deletes nothing in it', async () => {
    const ledger = sendLedger(files().requests(PORTAL), 'here');
    const r = await ledger.claim(5);
    await r.arrived!();
    // Another portal's record, numbered 2.
    writeFileSync(join(folder(), 's000000000002'), record(T0, { portal: 'https://other.example.com/public-api/v1' }));
    clock.advance(3 * HOUR);
    const sweeper = files();
    sweeper.sweep();
    sweeper.sweep();
    expect(readdirSync(folder())).toEqual(['s000000000001', 's000000000002']);
    expect(logger.records().filter((l) => l.level === 'warn').map((l) => [l.file, l.reason])).toEqual([[join(folder(), 's000000000002'), 'not a record of requests to this portal']]);
  });

  it("removes an idle folder's records, the closing mark it claims past them and the folder, in one pass", async () => {
    const ledger = sendLedger(files().requests(PORTAL), 'here');
    for (let i = 0; i < 3; i++) await (await ledger.claim(5)).arrived!();
    clock.advance(3 * HOUR);
    files().sweep();
    expect(readdirSync(join(dir, 'sends'))).toEqual([]);
    expect(logger.records().filter((l) => l.level === 'warn')).toEqual([]);
  });

  it('does nothing in a directory that cannot be written', () => {
    writeFileSync(join(dir, 'file'), '');
    const broken = new LedgerFiles(StateDir.open(join(dir, 'file', 'state'), logger, 'lost'), { logger, clock: hostClockOf(clock) });
    broken.sweep();
    expect(readdirSync(dir)).toEqual(['file']);
  });
});

describe("an earlier version's request record", () => {
  it('with no flight counts as in flight for 45 s after its claim, then a window and the margin', async () => {
    const ledger = sendLedger(files().requests(PORTAL), 'here');
    // Record 1 arrived at T0: it counts until T0 + 61 s.
    await ledger.claim(5).then((r) => r.arrived!());
    // Record 2 by an earlier version, claimed now, with no flight: in flight until T0 + 45 s, counted until T0 + 106 s.
    writeFileSync(join(folder(), 's000000000002'), record(T0));
    clock.set(T0 + 44_999);
    expect(await ledger.claim(2)).toMatchObject({ granted: false, waitMs: 1_000 });
    clock.set(T0 + 45_000);
    expect(await ledger.claim(2)).toMatchObject({ granted: false, waitMs: 16_000 });
    expect(await ledger.claim(1)).toMatchObject({ granted: false, waitMs: 61_000 });
  });
});

describe('what a release or an arrival rewrites', () => {
  it('keeps the arrival in a record given back later, leaves a record given back as it is, and marks nothing not its own', async () => {
    const chain = files().requests(PORTAL);
    const ledger = sendLedger(chain, 'here');
    const first = await ledger.claim(5);
    clock.advance(2_000);
    await first.arrived!();
    await first.release!();
    const second = await ledger.claim(5);
    await second.release!();
    clock.advance(2_000);
    await second.arrived!();
    await chain.mark(9, 'arrived');
    const read = (n: number) => JSON.parse(readFileSync(join(folder(), `s00000000000${n}`), 'utf8')) as Record<string, unknown>;
    expect(read(1)).toMatchObject({ released: true, arrived: { mono: T0 + 2_000, wall: T0 + 2_000 } });
    expect(read(2)).toMatchObject({ released: true });
    expect(read(2).arrived).toBeUndefined();
    expect(readdirSync(folder()).sort()).toEqual(['s000000000001', 's000000000002']);
  });

  it('never throws when the record cannot be rewritten: it stays as it was', async () => {
    const ledger = sendLedger(files().requests(PORTAL), 'here');
    const r = await ledger.claim(5);
    rmSync(join(dir, 'sends'), { recursive: true });
    await expect(r.arrived!()).resolves.toBeUndefined();
    await expect(r.release!()).resolves.toBeUndefined();
  });
});

describe('a claim that cannot be written', () => {
  const failing = (code: string): HostClock => ({
    ...hostClockOf(clock),
    stamp: () => {
      throw Object.assign(new Error(code), { code });
    },
  });

  it('on a full disk says so, with the fix, and leaves no file', async () => {
    const err = await sendLedger(files(failing('ENOSPC')).requests(PORTAL), 'here').claim(5).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerError);
    expect((err as LedgerError).message).toBe(
      `${folder()} in the state directory cannot record a claim: its disk is full (ENOSPC); no request goes to the portal until one can be recorded: free space on that file system, or give POSTURE_STATE_DIR a directory on another`,
    );
    expect(readdirSync(folder())).toEqual([]);
  });

  it('otherwise names the error', async () => {
    const err = await sendLedger(files(failing('EIO')).requests(PORTAL), 'here').claim(5).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LedgerError);
    expect([(err as LedgerError).ledger, (err as LedgerError).message]).toEqual([folder(), `${folder()} in the state directory cannot be written (EIO)`]);
  });
});
