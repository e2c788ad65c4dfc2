/**
 * What the state directory keeps, on fake clocks: each portal's records apart, a busy portal's
 * pruned a window after they stopped counting, its folders 0700 and files 0600, an idle portal's
 * folder swept, and the files it holds after idle hours (a slow job's record for its interval).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { portalIdentity } from '../../src/config/identity.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { openState } from '../../src/state/index.js';
import { folderOf } from '../../src/state/portal-folder.js';
import { T0 } from '../integration/support.js';
import { runMain } from '../support/cli.js';
import { closeAfterEach } from '../support/closing.js';
import { tempDirPerTest } from '../support/temp-dir.js';
import { KEY, PORTAL, portalFiles, send, SLOT } from './support.js';

const dir = tempDirPerTest('posture-state-');
const closing = closeAfterEach();

describe('what the directory keeps', () => {
  it("files each portal apart, and prunes a busy portal's records a window after they stopped counting", async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const acme = openState(dir(), logger, clock).ledgerOf(PORTAL)!;
    await send(acme, 1);
    expect(await openState(dir(), logger, clock).ledgerOf('https://other.example.com/public-api/v1')!.others()).toEqual([]);
    expect(await openState(dir(), logger, clock).ledgerOf(PORTAL)!.others()).toEqual([0]);
    // Half an hour of requests at the share, 5 every 61 s: a record stops counting 61 s after it arrived, and goes 61 s later.
    for (let i = 0; i < 150; i++) {
      clock.advance(SLOT / 5);
      await send(acme, 1);
    }
    // What two windows hold: 10 records, and the one just claimed.
    expect(portalFiles(dir()).length).toBeLessThanOrEqual(11);
  });

  it('creates the directory and its folders 0700 and its files 0600', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    const root = join(dir(), 'new', 'state');
    const { ledgerOf } = openState(root, logger, clock);
    expect((await ledgerOf(PORTAL)!.claim(5)).granted).toBe(true);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(statSync(join(root, 'sends')).mode & 0o777).toBe(0o700);
    const [file] = portalFiles(root);
    expect(statSync(join(file!, '..')).mode & 0o777).toBe(0o700);
    expect(statSync(file!).mode & 0o777).toBe(0o600);
  });

  it('removes a portal folder whose records all stopped counting an hour ago when any run opens the directory', async () => {
    const logger = memoryLogger();
    const clock = new FakeClock(T0);
    for (let i = 0; i < 6; i++) await send(openState(dir(), logger, clock).ledgerOf(`https://p${i}.example.com/public-api/v1`)!, 1);
    expect(readdirSync(join(dir(), 'sends'))).toHaveLength(6);
    // They arrived at T0 and counted until T0 + 61 s: an hour after that, exactly, they are still there.
    clock.set(T0 + SLOT + 3_600_000);
    openState(dir(), logger, clock);
    expect(readdirSync(join(dir(), 'sends'))).toHaveLength(6);
    clock.advance(1);
    const { ledgerOf } = openState(dir(), logger, clock);
    expect(readdirSync(join(dir(), 'sends'))).toEqual([]);
    expect((await ledgerOf(PORTAL)!.claim(5)).granted).toBe(true);
    expect(readdirSync(join(dir(), 'sends'))).toEqual([folderOf(PORTAL)]);
    expect(logger.records().filter((r) => r.level === 'warn')).toEqual([]);
  });
});

describe('the files a state directory holds after idle hours', () => {
  /** Every file below `root`: what the directory holds. */
  const filesIn = (root: string): string[] => readdirSync(root, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesIn(join(root, e.name)) : [join(root, e.name)]));
  const IDLE_MS = 2 * 3_600_000;
  /** The slow jobs' default intervals (README, issue 47): the resolved-alerts pass and the access settings hourly, the directory daily. */
  const INTERVAL_MS = { resolved: 3_600_000, access: 3_600_000, directory: 86_400_000 };
  /** The slow job whose pass folder this is, by its name: the entry's folder for the resolved-alerts pass, the entry and the job's name after it for the others. */
  const jobOfFolder = (folder: string) => /_(access|directory)-[0-9a-f]{12}$/.exec(folder)?.[1] ?? 'resolved';

  it('after runs against six portals, two idle hours later one more run leaves one run\'s files and, of every portal, only the records of the slow jobs whose interval outlasts the idle hours', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sims = await Promise.all(Array.from({ length: 6 }, () => startSimulator({ clock, keys: [{ key: KEY }], moving: false }).then(closing)));
    const once = async (baseUrl: string, stateDir: string) => {
      const r = await runMain(['once'], { env: { POSTURE_BASE_URL: baseUrl, POSTURE_API_KEY: KEY, POSTURE_STATE_DIR: stateDir }, clock });
      expect(r.code, r.stderr).toBe(0);
    };
    // What one run leaves, counted in a directory of its own.
    await once(sims[0]!.baseUrl, join(dir(), 'single'));
    const single = filesIn(join(dir(), 'single')).map((f) => f.slice(join(dir(), 'single').length + 1));
    // Of them, the records of a slow job that outlasts the idle hours (one file a job: a first run claims each once).
    const lasting = single.filter((f) => f.startsWith('passes/') && INTERVAL_MS[jobOfFolder(f.split('/')[1]!) as keyof typeof INTERVAL_MS] > IDLE_MS);
    expect(lasting.map((f) => jobOfFolder(f.split('/')[1]!))).toEqual(['directory']);
    // Requests and slow jobs' records of six portals.
    for (const sim of sims) await once(sim.baseUrl, join(dir(), 'six'));
    expect(filesIn(join(dir(), 'six'))).toHaveLength(6 * single.length);
    clock.set(clock.now() + IDLE_MS);
    await once(sims[0]!.baseUrl, join(dir(), 'six'));
    // One run's files, and each portal's record of its claim of the directory in its first run, the run's own portal's too (its
    // new record is the next of the chain). At the default share of 5 a first run's window has no room for the directory, and
    // the claim is given back; its record stays for the directory's interval all the same.
    const six = filesIn(join(dir(), 'six')).map((f) => f.slice(join(dir(), 'six').length + 1));
    expect(six).toHaveLength(single.length + 6 * lasting.length);
    // The files themselves: the single run's names, the directory's chain one longer; the other five portals' directory records, and none of their requests or hourly records.
    const directoryOf = (sim: Simulator) => `passes/${folderOf(`${portalIdentity(sim.baseUrl)}#127.0.0.1\u0000directory`)}`;
    const [own, ...rest] = sims.map(directoryOf);
    expect(single).toContain(`${own}/p000000000001`);
    expect(six.sort()).toEqual([...single.filter((f) => !f.startsWith(`${own}/`)), `${own}/p000000000001`, `${own}/p000000000002`, ...rest.map((d) => `${d}/p000000000001`)].sort());
    for (const sim of sims) {
      const first = JSON.parse(readFileSync(join(dir(), 'six', directoryOf(sim), 'p000000000001'), 'utf8')) as unknown;
      expect(first).toMatchObject({ portal: portalIdentity(sim.baseUrl), entry: '127.0.0.1\u0000directory', intervalMs: INTERVAL_MS.directory });
    }
  });
});
