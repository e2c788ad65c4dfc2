import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import type { PortalConfig } from '../../src/config/load.js';
import { defaultStatePath, loadState } from '../../src/backfill/state.js';
import { runBackfill, schedulerFetchDay, type FetchDay } from '../../src/backfill/backfill.js';
import { Exporter } from '../../src/exporter/exporter.js';
import { loadConfig } from '../../src/config/load.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runMain } from '../support/cli.js';
import { closeAfterEach } from '../support/closing.js';
import { archive, busiestMinute, daysBefore, expectedSeries, readOpenMetrics } from './support.js';

const T0 = Date.UTC(2026, 10, 22, 9, 30, 0);
const SEED = 7;
const DEVICES = 200;
const TAGS = ['laptops', 'servers'];

let dir: string;
let twin: Simulator;
beforeAll(async () => {
  // The same portal without a rate limit: where the tests read the archive they expect.
  twin = await startSimulator({ clock: new FakeClock(T0), rateLimit: false, seed: SEED, devices: DEVICES });
});
afterAll(() => twin.close());
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'backfill-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The state directory of the test's runs (a resumed run finds the first one's progress there). */
const stateDir = () => join(dir, 'state');

const closing = closeAfterEach();
/** The rate-limited simulated portal on its own auto-advancing clock, closed after the test. */
async function portalSim(): Promise<{ clock: FakeClock; sim: Simulator }> {
  const clock = new FakeClock(T0, { autoAdvance: true });
  return { clock, sim: closing(await startSimulator({ clock, seed: SEED, devices: DEVICES })) };
}

async function cli(sim: Simulator, clock: FakeClock, argv: string[], env: Record<string, string> = {}, opts: { stopAfterDays?: number; tty?: boolean } = {}) {
  let stop: () => void = () => {};
  const stopSignal = new Promise<void>((r) => (stop = r));
  return runMain(['backfill', ...argv], {
    env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: sim.apiKey, POSTURE_PORTAL: 'acme', POSTURE_REQUESTS_PER_MINUTE: '3', POSTURE_STATE_DIR: stateDir(), ...env },
    onStderr: (stderr) => {
      if (opts.stopAfterDays !== undefined && (stderr.match(/"msg":"backfill progress"/g) ?? []).length >= opts.stopAfterDays) stop();
    },
    clock,
    stopSignal,
    stderrIsTTY: opts.tty,
  });
}

/** Every series the portal's archive gives for `days`, whole and per tag. */
async function expectedFor(days: readonly string[], tags: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const day of days) {
    for (const tag of [undefined, ...tags]) for (const [k, v] of expectedSeries('acme', day, tag, await archive(twin, day, tag))) out.set(k, v);
  }
  return out;
}

describe('backfill on the simulated portal', () => {
  it('writes every Vitals family of each day and tag with exact values at 23:59:59 UTC, asking day by day within the share', async () => {
    const { clock, sim } = await portalSim();
    const out = join(dir, 'vitals.om');
    const r = await cli(sim, clock, ['--days', '4', '--output', out], { POSTURE_VITALS_TAGS: TAGS.join(',') });
    expect(r.stderr).toContain('4 day(s) written');
    expect(r.code).toBe(0);

    const days = [1, 2, 3, 4].map((n) => daysBefore(T0, n));
    expect(days).toEqual(['20261121', '20261120', '20261119', '20261118']);
    const text = readFileSync(out, 'utf8');
    expect(text.endsWith('\n# EOF\n')).toBe(true);
    const want = await expectedFor(days, TAGS);
    expect(want.size).toBeGreaterThan(4 * 3 * 8);
    expect(readOpenMetrics(text)).toEqual(want);

    // Requests: yesterday first, whole portal then each tag, one each; no 429; never over 3 in 60 s.
    expect(sim.requests.map((q) => `${q.query.archiveDate}/${q.query.tag ?? ''}`)).toEqual(days.flatMap((d) => [`${d}/`, `${d}/laptops`, `${d}/servers`]));
    expect(sim.requests.every((q) => q.status === 200)).toBe(true);
    expect(busiestMinute(sim.requests)).toBe(3);
    expect(clock.now() - T0).toBeGreaterThanOrEqual(3 * 60_000);
  });

  it('resumes an interrupted run where it stopped and ends with the same file as an uninterrupted one', async () => {
    const { clock, sim } = await portalSim();
    const out = join(dir, 'vitals.om');
    const first = await cli(sim, clock, ['--days', '12', '--output', out], {}, { stopAfterDays: 5 });
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/interrupted with \d+ day\(s\) to go: run the same command with --resume/);
    const firstRequests = sim.requests.length;
    const saved = Object.keys(loadState(defaultStatePath(out, stateDir())).portals.acme!.days).filter((d) => loadState(defaultStatePath(out, stateDir())).portals.acme!.days[d]!.lists);
    expect(saved.length).toBeGreaterThanOrEqual(5);
    expect(saved.length).toBeLessThan(12);
    // The partial file is already loadable: the days done so far.
    expect(readOpenMetrics(readFileSync(out, 'utf8'))).toEqual(await expectedFor(saved, []));

    // Without --resume the state is not overwritten.
    const refused = await cli(sim, clock, ['--days', '12', '--output', out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('add --resume to continue it');
    expect(sim.requests.length).toBe(firstRequests);

    const second = await cli(sim, clock, ['--days', '12', '--output', out, '--resume']);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain(`${12 - saved.length} day(s) written, ${saved.length} already written earlier`);
    // Only the days not saved were asked for, once each.
    const asked = sim.requests.slice(firstRequests).map((q) => q.query.archiveDate!);
    expect(asked).toHaveLength(12 - saved.length);
    expect(asked.filter((d) => saved.includes(d))).toEqual([]);
    expect(busiestMinute(sim.requests)).toBeLessThanOrEqual(3);

    const days = Array.from({ length: 12 }, (_, i) => daysBefore(T0, i + 1));
    expect(readOpenMetrics(readFileSync(out, 'utf8'))).toEqual(await expectedFor(days, []));
  });

  it('reports and skips a day the portal cannot serve (404, empty), writes no zeros for it, and retries it on the next run', async () => {
    const { clock, sim } = await portalSim();
    const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: sim.apiKey, POSTURE_PORTAL: 'acme', POSTURE_REQUESTS_PER_MINUTE: '2', POSTURE_VITALS_TAGS: 'laptops' } });
    const portal: PortalConfig = config.portals[0]!;
    const days = [1, 2, 3, 4].map((n) => daysBefore(T0, n));
    const [, missing, empty] = days as [string, string, string, string];
    const logger = memoryLogger();
    const base = schedulerFetchDay(new Exporter(config, { clock, logger, runtime: 'once' }));
    let broken = true;
    // The real client against the real portal; only the portal's answer for two days is changed.
    const fetchDay: FetchDay = async (p, day, tag, signal) => {
      if (broken && day === missing && tag === undefined) sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 404, body: '{"success":false,"statusCode":404,"message":"No archive."}' } });
      if (broken && day === empty) sim.setFixture({ vitals: [] });
      try {
        return await base(p, day, tag, signal);
      } finally {
        sim.setFixture(null);
      }
    };
    const out = join(dir, 'vitals.om');
    mkdirSync(stateDir());
    const statePath = defaultStatePath(out, stateDir());
    const lines: string[] = [];
    const run = () => runBackfill({ portals: [portal], days, output: out, statePath, state: loadState(statePath) }, { fetchDay, clock, logger, progress: (t) => lines.push(t), isTTY: false });
    const r1 = await run();
    expect(r1.failed.map((f) => [f.day, f.reason])).toEqual([
      [missing, 'the portal has no archive of this day (404)'],
      [empty, "the portal's archive of this day is empty"],
    ]);
    expect(r1.written).toEqual([`acme/${days[0]}`, `acme/${days[3]}`]);
    // The 404 day did not spend a request on its tag.
    expect(sim.requests.filter((q) => q.query.archiveDate === missing)).toHaveLength(1);
    const text = readOpenMetrics(readFileSync(out, 'utf8'));
    expect(text).toEqual(await expectedFor([days[0]!, days[3]!], ['laptops']));
    expect([...text.keys()].some((k) => k.endsWith(` ${Date.UTC(2026, 10, 20, 23, 59, 59) / 1000}`))).toBe(false);
    const progress = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(progress.map((p) => [p.day, p.status])).toEqual([[days[0], 'written'], [missing, 'failed'], [empty, 'failed'], [days[3], 'written']]);
    expect(progress.at(-1)).toMatchObject({ msg: 'backfill progress', daysDone: 4, daysTotal: 4, failed: 2, etaSeconds: 0 });
    expect(logger.records().filter((l) => l.msg === 'backfill: day skipped; it is tried again on the next run').map((l) => l.day)).toEqual([missing, empty]);

    broken = false;
    const before = sim.requests.length;
    const r2 = await run();
    expect(r2.failed).toEqual([]);
    expect(r2.written).toEqual([`acme/${missing}`, `acme/${empty}`]);
    expect(r2.alreadyWritten).toBe(2);
    expect(sim.requests.slice(before).map((q) => `${q.query.archiveDate}/${q.query.tag ?? ''}`)).toEqual([`${missing}/`, `${missing}/laptops`, `${empty}/`, `${empty}/laptops`]);
    expect(readOpenMetrics(readFileSync(out, 'utf8'))).toEqual(await expectedFor(days, ['laptops']));
    expect(busiestMinute(sim.requests)).toBeLessThanOrEqual(2);
  });

  it('stops asking after the key is rejected, naming every day not written', async () => {
    const { clock, sim } = await portalSim();
    const out = join(dir, 'vitals.om');
    const r = await cli(sim, clock, ['--days', '3', '--output', out], { POSTURE_API_KEY: 'sim-wrong-key-000000000000' });
    expect(r.code).toBe(1);
    expect(sim.requests).toHaveLength(1);
    for (const n of [1, 2, 3]) expect(r.stderr).toContain(`not written: acme ${daysBefore(T0, n)}:`);
    expect(r.stderr).not.toContain('sim-wrong-key-000000000000');
    expect(readFileSync(out, 'utf8')).toBe('# EOF\n');
  });

  it('draws one progress line on a terminal: days, requests and time left at the share', async () => {
    const { clock, sim } = await portalSim();
    const r = await cli(sim, clock, ['--days', '3', '--output', join(dir, 'v.om')], { POSTURE_REQUESTS_PER_MINUTE: '1' }, { tty: true });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('backfill [------------------------] 0/3 days · 0 requests · ~3 min left');
    expect(r.stderr).toContain('\r\x1b[Kbackfill [################--------] 2/3 days · 2 requests · ~1 min left');
    expect(r.stderr).toContain('\r\x1b[Kbackfill [########################] 3/3 days · 3 requests · ~0 s left\n');
    expect(r.stderr).not.toContain('"msg":"backfill progress"');
  });
});

describe('backfill flags', () => {
  it.each([
    [['--output', 'x.om'], '--days N'],
    [['--days', '0', '--output', 'x.om'], '--days="0" is not valid'],
    [['--days', 'ten', '--output', 'x.om'], '--days="ten" is not valid'],
    [['--days', '3', '--from', '20261101', '--to', '20261102', '--output', 'x.om'], '--days cannot be combined with --from/--to'],
    [['--from', '20261101', '--output', 'x.om'], '--from needs --to'],
    [['--from', '20261131', '--to', '20261102', '--output', 'x.om'], '--from="20261131" is not a date'],
    [['--from', '20261105', '--to', '20261102', '--output', 'x.om'], '--from=20261105 is after --to=20261102'],
    [['--from', '20261101', '--to', '20261122', '--output', 'x.om'], '--to=20261122 is today or later'],
    [['--days', '3'], 'backfill needs somewhere to write'],
    [['--days', '3', '--push', 'otlp'], 'backfill --push takes only remote_write'],
    [['--days', '3', '--push', 'remote_write'], 'POSTURE_REMOTE_WRITE_URL'],
  ])('exits 2 with one line naming the flag: %j', async (argv, message) => {
    const { code, stderr } = await runMain(['backfill', ...argv], { env: { POSTURE_BASE_URL: 'http://127.0.0.1:9/public-api/v1', POSTURE_API_KEY: 'k-unused-1234' }, clock: new FakeClock(T0) });
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain(message);
    expect(existsSync('x.om')).toBe(false);
  });
});
