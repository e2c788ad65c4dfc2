/**
 * Which files of a portal's folder are records of its requests (src/state/files.ts): a file that
 * is valid JSON but wrong in any one field, or of another kind than an object, is not a record. It
 * is ignored with one warning, deleted by nobody, and the chain and its share go on past it: read
 * by a claim, and by a sweep, which reads a folder without knowing its portal. A look at a portal
 * never claimed creates nothing, and a closing mark a killed sweep left is no record either.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { sendLedger } from '../../src/state/claims.js';
import { StateDir } from '../../src/state/dir.js';
import { LedgerFiles } from '../../src/state/files.js';
import { hostClockOf } from '../../src/state/host-clock.js';
import { folderOf } from '../../src/state/portal-folder.js';
import { tempDirPerTest } from '../support/temp-dir.js';

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const PORTAL = 'https://acme.example.com/public-api/v1';
const HOUR = 3_600_000;
const NOT_A_RECORD = 'not a record of requests to this portal';

const dir = tempDirPerTest('posture-records-');
let clock: FakeClock;
let logger: ReturnType<typeof memoryLogger>;
beforeEach(() => {
  clock = new FakeClock(T0);
  logger = memoryLogger();
});

const folder = () => join(dir(), 'sends', folderOf(PORTAL));
const files = () => new LedgerFiles(StateDir.open(dir(), logger, 'lost'), { logger, clock: hostClockOf(clock) });
const warnings = () => logger.records().filter((l) => l.level === 'warn').map((l) => [l.file, l.reason]);

/** A record of PORTAL's requests as this version writes it, claimed now on this clock, with `more` changed. */
function record(more: Record<string, unknown>): Record<string, unknown> {
  const host = hostClockOf(clock);
  return { version: 2, portal: PORTAL, host: host.host, boot: host.boot, mono: host.monotonic(), wall: host.wall(), writer: 'other/1/abc', flightMs: 1_000, ...more };
}

/** Each a JSON text (written when a test runs, on its clock) that is not a record of PORTAL's requests, by one thing wrong. */
const NOT_RECORDS: Array<[string, () => string]> = [
  ['null', () => 'null'],
  ['a number', () => '5'],
  ['a string', () => '"s000000000001"'],
  ['a list', () => '[2]'],
  ['version 1', () => JSON.stringify(record({ version: 1 }))],
  ['another portal', () => JSON.stringify(record({ portal: 'https://other.example.com/public-api/v1' }))],
  ['a pass (it names an entry)', () => JSON.stringify(record({ entry: 'main' }))],
  ['a host that is not a string', () => JSON.stringify(record({ host: 7 }))],
  ['a boot that is not a string', () => JSON.stringify(record({ boot: 7 }))],
  ['a monotonic time that is a string', () => JSON.stringify(record({ mono: '1' }))],
  ['a monotonic time past any number (1e999)', () => JSON.stringify(record({ mono: 0 })).replace('"mono":0', '"mono":1e999')],
  ['no wall time', () => JSON.stringify(record({ wall: undefined }))],
  ['a wall time that is null', () => JSON.stringify(record({ wall: null }))],
  ['a writer that is not a string', () => JSON.stringify(record({ writer: 42 }))],
  ['an arrival that is null', () => JSON.stringify(record({ arrived: null }))],
  ['an arrival without its wall time', () => JSON.stringify(record({ arrived: { mono: 1 } }))],
  ['an arrival without its monotonic time', () => JSON.stringify(record({ arrived: { wall: T0 } }))],
  ['a flight that is a string', () => JSON.stringify(record({ flightMs: '1000' }))],
  ['an interval that is a string', () => JSON.stringify(record({ intervalMs: '60000' }))],
];

describe('a file that is not a record, read by a claim', () => {
  it.each(NOT_RECORDS)('is ignored with one warning when it is %s, and the chain goes on past it', async (_what, textOf) => {
    const text = textOf();
    const writer = sendLedger(files().requests(PORTAL), 'here');
    await (await writer.claim(5)).arrived!();
    writeFileSync(join(folder(), 's000000000002'), text);
    const reader = sendLedger(files().requests(PORTAL), 'here');
    // The writer's one request counts, read at once; the file counts for nothing.
    expect(await reader.others()).toEqual([0]);
    expect(await reader.others()).toEqual([0]);
    expect(warnings()).toEqual([[join(folder(), 's000000000002'), NOT_A_RECORD]]);
    expect(logger.records().filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([`${join(folder(), 's000000000002')} in the state directory is ${NOT_A_RECORD}: it is ignored; remove it`]);
    const next = await reader.claim(2);
    expect(next.granted).toBe(true);
    expect(readdirSync(folder()).sort()).toEqual(['s000000000001', 's000000000002', 's000000000003']);
  });

  it('counts a record with every field this version writes, an arrival among them, and warns about none', async () => {
    const writer = sendLedger(files().requests(PORTAL), 'here');
    await (await writer.claim(5)).arrived!();
    const host = hostClockOf(clock);
    writeFileSync(join(folder(), 's000000000002'), JSON.stringify(record({ arrived: { mono: host.monotonic(), wall: host.wall() }, intervalMs: 60_000 })));
    expect(await sendLedger(files().requests(PORTAL), 'here').others()).toEqual([0, 0]);
    expect(warnings()).toEqual([]);
  });
});

describe('a file that is not a record, read by a sweep', () => {
  it.each(NOT_RECORDS.filter(([what]) => what !== 'another portal'))('keeps an idle folder whose newest file is %s, warns once, and deletes nothing', async (_what, textOf) => {
    const text = textOf();
    const writer = sendLedger(files().requests(PORTAL), 'here');
    await (await writer.claim(5)).arrived!();
    writeFileSync(join(folder(), 's000000000002'), text);
    clock.advance(3 * HOUR);
    const sweeper = files();
    sweeper.sweep();
    sweeper.sweep();
    expect(readdirSync(folder())).toEqual(['s000000000001', 's000000000002']);
    expect(warnings()).toEqual([[join(folder(), 's000000000002'), NOT_A_RECORD]]);
  });

  it('removes nothing in a directory that could not be written at the start: the process writes nothing more there', async () => {
    const writer = sendLedger(files().requests(PORTAL), 'here');
    await (await writer.claim(5)).arrived!();
    clock.advance(3 * HOUR);
    const state = StateDir.open(dir(), logger, 'lost');
    state.failed(new Error('EROFS'));
    new LedgerFiles(state, { logger, clock: hostClockOf(clock) }).sweep();
    expect(readdirSync(folder())).toEqual(['s000000000001']);
  });

  it('removes an idle folder whose records are all of its portal, whatever their fields', async () => {
    const writer = sendLedger(files().requests(PORTAL), 'here');
    await (await writer.claim(5)).arrived!();
    writeFileSync(join(folder(), 's000000000002'), JSON.stringify(record({ writer: undefined, flightMs: undefined })));
    clock.advance(3 * HOUR);
    files().sweep();
    expect(readdirSync(join(dir(), 'sends'))).toEqual([]);
    expect(warnings()).toEqual([]);
  });
});

describe('a look', () => {
  it('at a portal never claimed finds nothing and creates no folder for it', async () => {
    expect(await sendLedger(files().requests(PORTAL), 'here').others()).toEqual([]);
    expect(readdirSync(join(dir(), 'sends'))).toEqual([]);
  });

  it('counts no closing mark a killed sweep left (20 s ago, past the 10 s a sweep takes), and the chain goes on past it', async () => {
    const writer = sendLedger(files().requests(PORTAL), 'here');
    await (await writer.claim(1)).arrived!();
    clock.advance(2 * HOUR);
    const host = hostClockOf(clock);
    writeFileSync(join(folder(), 's000000000002'), JSON.stringify(record({ mono: host.monotonic() - 20_000, wall: host.wall() - 20_000, writer: `${host.host}/1/sweep`, closing: true })));
    const r = await sendLedger(files().requests(PORTAL), 'here').claim(1);
    expect(r.granted).toBe(true);
    // Number 3; the claim pruned 1, which stopped counting long ago, and left the mark, which is no record.
    expect(readdirSync(folder()).sort()).toEqual(['s000000000002', 's000000000003']);
  });
});
