/**
 * What `serve` does with a certificate it does not trust (docs/networks.md): refused at a portal's
 * first contact (`refused` resolves, and the CLI stops with exit 2: proxy.e2e.test.ts), but met after
 * the portal was read (a certificate replaced while serving) it fails that portal's runs only, each
 * with its line, never retried, and serving goes on; a later run tries again.
 */
import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { UntrustedCertificateError } from '../../src/errors.js';
import { HttpTransport } from '../../src/net/transport.js';
import { startServe } from '../../src/runtime/serve.js';
import { startSimulator } from '../../src/simulator/index.js';
import { serveAfterEach, T0 } from '../integration/support.js';

const KEY = 'sim-serve-untrusted-key-0123456789';
const { closing, stopping } = serveAfterEach();

/** A dispatcher to the simulated portal that fails every request's handshake while `broken` says so, counting those it failed. */
function breakable() {
  const real = new HttpTransport({ connectMs: 2_000, headersMs: 10_000, bodyMs: 10_000, idleMs: 1_000 });
  const state = { broken: false, refused: 0, paths: [] as string[] };
  const dispatcher = {
    dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
      if (!state.broken) return real.dispatch(options, handler);
      state.refused++;
      state.paths.push(options.path);
      const controller = { aborted: false, paused: false, reason: null, abort() {}, pause() {}, resume() {} };
      setImmediate(() => {
        handler.onRequestStart?.(controller, {});
        handler.onResponseError?.(controller, Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' }));
      });
      return true;
    },
  } as unknown as Dispatcher;
  return { state, dispatcher };
}

async function setup() {
  const clock = new FakeClock(T0);
  const sim = closing(await startSimulator({ clock, keys: [{ key: KEY }], alerts: 40, moving: false, rateLimit: false }));
  const logger = memoryLogger({ secrets: [KEY] });
  const config = loadConfig({ env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'test', POSTURE_LISTEN: '127.0.0.1:0', POSTURE_INTERVAL_SECONDS: '300' } });
  return { clock, sim, logger, config };
}

/** Whether `p` has settled once the callbacks already queued have run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
}

describe('serve and a certificate it does not trust', () => {
  it('refuses at the portal\'s first contact: `refused` resolves with the error', async () => {
    const { clock, logger, config } = await setup();
    const { state, dispatcher } = breakable();
    state.broken = true;
    const serving = stopping(await startServe(config, { clock, logger, dispatcher }));
    const err = await serving.refused;
    expect(err).toBeInstanceOf(UntrustedCertificateError);
    expect(err.message).toContain('CERT_HAS_EXPIRED');
    expect(state.refused).toBeGreaterThanOrEqual(1);
  });

  it('after the portal was read, fails its runs with the line and goes on serving; a later run tries again', async () => {
    const { clock, sim, logger, config } = await setup();
    const { state, dispatcher } = breakable();
    const serving = stopping(await startServe(config, { clock, logger, dispatcher }));
    while (!serving.exporter.ready) await serving.nextCycle();
    const answered = sim.requests.length;
    state.broken = true;
    // The next runs, one interval later: each source meets the certificate once.
    clock.advance(300_000);
    const portal = serving.exporter.portals[0]!;
    const failedAll = () => ['vitals', 'alerts', 'devices'].every((s) => portal.state.view(clock.now(), 600_000)[s as 'vitals'].success === false);
    while (!failedAll()) await serving.nextCycle();
    expect(await settled(serving.refused)).toBe(false);
    expect(sim.requests.length).toBe(answered);
    // Each request the runs started met it once: none was sent again.
    expect(state.refused).toBeGreaterThanOrEqual(3);
    expect(new Set(state.paths).size).toBe(state.paths.length);
    const lines = logger.records().filter((l) => l.reason === 'untrusted-certificate');
    expect(lines.length).toBeGreaterThanOrEqual(1);
    for (const l of lines) expect(l.msg).toContain('NODE_EXTRA_CA_CERTS');
    // The certificate is renewed: the next runs read the portal again.
    state.broken = false;
    clock.advance(300_000);
    const okAll = () => ['vitals', 'alerts', 'devices'].every((s) => portal.state.view(clock.now(), 600_000)[s as 'vitals'].success === true);
    while (!okAll()) await serving.nextCycle();
    expect(sim.requests.length).toBeGreaterThan(answered);
  });
});
