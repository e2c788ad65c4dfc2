/**
 * What an operator reads when a source fails: exactly one line per failed source at the default
 * level (`error`, `warn` when late), naming portal, source and cause, never the key; and a portal
 * that cannot be reached fails at once, spending none of its budget, never reported late.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger, type LogFields } from '../../src/core/log.js';
import { PortalUnreachableError, RateLimitedError } from '../../src/errors.js';
import { SOURCES, type Source } from '../../src/domain.js';
import { Exporter } from '../../src/exporter/exporter.js';
import { startServe, type ServeHandle } from '../../src/runtime/serve.js';
import { startSimulator, type SimulatorKey, type SimulatorOptions } from '../../src/simulator/index.js';
import { closeAfterEach } from '../support/closing.js';
// A port that was free a moment ago: nothing listens on it, so connecting is refused.
import { freePort as closedPort } from '../support/peers.js';
import { T0 } from './support.js';

const KEY = 'sim-failures-key-0123456789abcdef';
const WRONG = 'wrong-failures-key-fedcba9876543210';
const closing = closeAfterEach();

const REJECTED =
  "The portal rejected the API key (401) on /vitals: check the key in POSTURE_API_KEY / POSTURE_API_KEY_FILE / POSTURE_API_KEY_SSM_PARAMETER / POSTURE_API_KEY_SECRET_ID and the key header (POSTURE_API_KEY_HEADER, now 'X-Service-ApiKey'); the key must belong to this portal's Cloud ID.";

/**
 * An exporter on an auto-advancing FakeClock whose logger keeps what the default level (info)
 * shows and redacts nothing, so a leaked key would be seen.
 */
function exporterFor(env: Record<string, string>, runtime: 'once' | 'serve' = 'once') {
  const clock = new FakeClock(T0, { autoAdvance: true });
  const logger = memoryLogger({ level: 'info' });
  const config = loadConfig({ env: { POSTURE_PORTAL: 'test', POSTURE_API_KEY: KEY, ...env } });
  const exporter = new Exporter(config, { clock, logger, runtime, random: () => 0.5 });
  return { clock, logger, config, exporter };
}

async function portal(keys: SimulatorKey[] = [{ key: KEY }], opts: SimulatorOptions = {}) {
  return closing(await startSimulator({ clock: new FakeClock(T0), keys, moving: false, rateLimit: false, ...opts }));
}

/** The failure lines (warn or error) of each source, and every warn/error line. */
function failureLines(records: LogFields[]) {
  const bySource = new Map<Source, LogFields[]>();
  for (const r of records) {
    if ((r.level === 'error' || r.level === 'warn') && typeof r.source === 'string' && typeof r.msg === 'string' && r.msg.startsWith(`collecting ${r.source} failed`)) {
      bySource.set(r.source as Source, [...(bySource.get(r.source as Source) ?? []), r]);
    }
  }
  return bySource;
}

/** Only `source` failed: its one failure line is at error and has `fields`, and no other line is at error. */
function expectOnlyFailure(records: LogFields[], source: Source, fields: LogFields) {
  const lines = failureLines(records);
  expect([...lines.keys()]).toEqual([source]);
  expect(lines.get(source)).toEqual([expect.objectContaining({ level: 'error', ...fields })]);
  expect(records.filter((l) => l.level === 'error')).toHaveLength(1);
}

describe('a failed source gets one line naming the portal, the source and the cause', () => {
  it('401: every source says the key was rejected, at error, without the key; the other sources stop after the first 401', async () => {
    const sim = await portal();
    const { exporter, logger } = exporterFor({ POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: WRONG });
    const [r] = await exporter.collect();
    for (const s of SOURCES) expect(r![s].ok).toBe(false);
    const lines = failureLines(logger.records());
    expect(lines.get('vitals')).toEqual([expect.objectContaining({ level: 'error', portal: 'test', source: 'vitals', reason: 'rejected-key', error: 'AuthenticationError', msg: `collecting vitals failed: ${REJECTED}` })]);
    for (const s of ['alerts', 'devices'] as const) {
      expect(lines.get(s)).toEqual([expect.objectContaining({ level: 'error', portal: 'test', source: s, reason: 'rejected-key', requests: 0, msg: `collecting ${s} failed, stopped after the same failure on /vitals: ${REJECTED}` })]);
    }
    // Nothing else at error: one line per failed source.
    expect(logger.records().filter((l) => l.level === 'error')).toHaveLength(3);
    expect(sim.requests).toHaveLength(1);
    expect(logger.lines.join('\n')).not.toContain(WRONG);
  });

  it('403: only the source the key may not read fails, with the permission to give', async () => {
    const sim = await portal([{ key: KEY, permissions: { deny: ['/alerts'] } }]);
    const { exporter, logger } = exporterFor({ POSTURE_BASE_URL: sim.baseUrl });
    const [r] = await exporter.collect();
    expect([r!.vitals.ok, r!.devices.ok, r!.alerts.ok]).toEqual([true, true, false]);
    expectOnlyFailure(logger.records(), 'alerts', {
      portal: 'test',
      reason: 'missing-permission',
      msg: expect.stringMatching(/^collecting alerts failed: The API key is valid but its role may not read \/alerts \(403\): give the key's role the needed visibility \(deviceVisibility All or Team, userVisibility for user alerts\), or disable this source\./),
    });
  });

  it('404: a base URL the portal does not serve (the settings refuse one without /public-api/v1) fails each source with the path to fix', async () => {
    const sim = await portal();
    const { exporter, logger } = exporterFor({ POSTURE_BASE_URL: sim.baseUrl.replace('/public-api/v1', '/proxy/public-api/v1') });
    await exporter.collect();
    const lines = failureLines(logger.records());
    for (const s of SOURCES) {
      expect(lines.get(s)).toEqual([
        expect.objectContaining({ level: 'error', portal: 'test', reason: 'wrong-path', msg: expect.stringMatching(new RegExp(`^collecting ${s} failed: The portal has no /${s} \\(404\\): check POSTURE_BASE_URL ends with /public-api/v1`)) }),
      ]);
    }
    expect(logger.records().filter((l) => l.level === 'error')).toHaveLength(3);
  });

  it('429 past the retries: the source fails at error saying the rate limit was hit; the others succeed', async () => {
    const sim = await portal();
    sim.addFault({ path: '/devices', times: Infinity, fault: { kind: 'status', status: 429, retryAfter: '2' } });
    const { exporter, logger } = exporterFor({ POSTURE_BASE_URL: sim.baseUrl, POSTURE_MAX_RETRIES: '2' });
    const [r] = await exporter.collect();
    expect([r!.vitals.ok, r!.alerts.ok, r!.devices.ok]).toEqual([true, true, false]);
    expect(!r!.devices.ok && r!.devices.error).toBeInstanceOf(RateLimitedError);
    expectOnlyFailure(logger.records(), 'devices', {
      reason: 'rate-limited',
      requests: 3,
      msg: "collecting devices failed: The portal's rate limit was hit on /devices (429; it asked to wait 2 s): the budget (about 10 requests per minute) is shared by every client of this portal — lower the request rate or lengthen the polling interval.",
    });
  });

  it('a key that cannot be read: every source says so, once each', async () => {
    const { exporter, logger } = exporterFor({ POSTURE_BASE_URL: 'http://127.0.0.1:9/public-api/v1', POSTURE_API_KEY: '', POSTURE_API_KEY_FILE: '/nonexistent/posture-key' });
    await exporter.collect();
    const lines = failureLines(logger.records());
    for (const s of SOURCES) expect(lines.get(s)).toEqual([expect.objectContaining({ level: 'error', reason: 'key-unavailable', msg: expect.stringContaining('POSTURE_API_KEY_FILE (/nonexistent/posture-key)') })]);
    expect(logger.records().filter((l) => l.level === 'error')).toHaveLength(3);
  });
});

describe('a portal that cannot be reached', () => {
  it('refused: once fails within seconds, names HOST:PORT and what to check, spends no budget, never says late', async () => {
    const port = await closedPort();
    const { exporter, logger, clock } = exporterFor({ POSTURE_BASE_URL: `http://127.0.0.1:${port}/public-api/v1`, POSTURE_REQUESTS_PER_MINUTE: '2' });
    const [r] = await exporter.collect();
    // A few quick retries (500 ms, 1 s, 2 s windows at half), not minutes of budget windows.
    expect(clock.now() - T0).toBeLessThan(5_000);
    for (const s of SOURCES) {
      expect(r![s].ok).toBe(false);
      expect(!r![s].ok && r![s].error).toBeInstanceOf(PortalUnreachableError);
    }
    const lines = failureLines(logger.records());
    const own = `connection refused by 127.0.0.1:${port} (/vitals): nothing accepts connections there — check the host and port in POSTURE_BASE_URL and that the portal, or the proxy in front of it, is up and reachable from this network.`;
    // /vitals goes first (its priority): its retries run out first, and stop the others.
    expect(lines.get('vitals')).toEqual([expect.objectContaining({ level: 'error', portal: 'test', reason: 'refused', error: 'PortalUnreachableError', msg: `collecting vitals failed: ${own}`, cause: expect.objectContaining({ code: 'ECONNREFUSED' }) })]);
    for (const s of ['alerts', 'devices'] as const) {
      expect(lines.get(s)).toEqual([expect.objectContaining({ level: 'error', reason: 'refused', msg: `collecting ${s} failed, stopped after the same failure on /vitals: ${own}` })]);
    }
    expect(logger.records().filter((l) => l.level === 'error')).toHaveLength(3);
    expect(logger.lines.join('\n')).not.toMatch(/late/);
    // Refused attempts gave their slots back: the window is as empty as before the run.
    expect(exporter.portals[0]!.scheduler.window.countAt(clock.now())).toBe(0);
  });

  it('unresolvable host: once fails within seconds saying it cannot resolve it', async () => {
    const { exporter, logger, clock } = exporterFor({ POSTURE_BASE_URL: 'https://nonexistent.invalid/public-api/v1' });
    const [r] = await exporter.collect();
    expect(clock.now() - T0).toBeLessThan(5_000);
    const lines = failureLines(logger.records());
    for (const s of SOURCES) {
      expect(!r![s].ok && r![s].error).toBeInstanceOf(PortalUnreachableError);
      expect(lines.get(s)).toEqual([
        expect.objectContaining({
          level: 'error',
          reason: 'unresolvable',
          msg: expect.stringMatching(new RegExp(`^collecting ${s} failed(, stopped after the same failure on /\\w+)?: cannot resolve nonexistent\\.invalid \\((ENOTFOUND|EAI_AGAIN)[^)]*\\): check the host name in POSTURE_BASE_URL`)),
        }),
      ]);
    }
    expect(logger.records().filter((l) => l.level === 'error')).toHaveLength(3);
    expect(exporter.portals[0]!.scheduler.window.countAt(clock.now())).toBe(0);
  });

  describe('in serve', () => {
    let serving: ServeHandle | undefined;
    afterEach(async () => {
      await serving?.stop();
      serving = undefined;
    });

    it('refused: each run fails within seconds as refused, never late, every interval', async () => {
      const port = await closedPort();
      const clock = new FakeClock(T0, { autoAdvance: true });
      const logger = memoryLogger({ level: 'info' });
      const config = loadConfig({ env: { POSTURE_PORTAL: 'test', POSTURE_API_KEY: KEY, POSTURE_BASE_URL: `http://127.0.0.1:${port}/public-api/v1`, POSTURE_INTERVAL_SECONDS: '60', POSTURE_REQUESTS_PER_MINUTE: '3', POSTURE_LISTEN: '127.0.0.1:0' } });
      serving = await startServe(config, { clock, logger });
      const runs = () => logger.records().filter((l) => l.msg === 'run finished');
      // Two rounds of the three sources, and the first of each slow source (the resolved-alerts pass, the access settings, the directory).
      while (runs().length < 9) await serving.nextCycle();
      const done = runs();
      expect(done.every((l) => l.ok === false)).toBe(true);
      // The live sources' runs fail within seconds; a slow source's request first waits for a gap that makes no live run late.
      expect(done.filter((l) => SOURCES.includes(l.source as Source)).every((l) => (l.durationMs as number) < 5_000)).toBe(true);
      // Both rounds of every source: one refused line each, at error.
      const lines = failureLines(logger.records());
      for (const s of SOURCES) {
        const mine = lines.get(s) ?? [];
        expect(mine.length).toBeGreaterThanOrEqual(2);
        for (const l of mine) expect(l).toMatchObject({ level: 'error', reason: 'refused', msg: `collecting ${s} failed: connection refused by 127.0.0.1:${port} (/${s}): nothing accepts connections there — check the host and port in POSTURE_BASE_URL and that the portal, or the proxy in front of it, is up and reachable from this network.` });
      }
      expect(logger.lines.join('\n')).not.toMatch(/late/);
    });
  });
});
