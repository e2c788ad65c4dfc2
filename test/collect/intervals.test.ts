// posture_collection_interval_seconds{portal,source}: the configured interval of every source and
// of the resolved-alerts pass, in every runtime, which the shipped rules judge freshness against.
// `serve` has it from the start, before any run; `once` prints it; every Lambda invocation pushes it,
// the pass's too between passes (when the pass's own series are not pushed).
import snappy from 'snappyjs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { createHandler } from '../../src/runtime/lambda.js';
import { startServe } from '../../src/runtime/serve.js';
import { startSimulator } from '../../src/simulator/index.js';
import { closeAfterEach } from '../support/closing.js';
import { runMain } from '../support/cli.js';
import { decodeWriteRequest } from '../sinks/decode.js';
import { startReceiver } from '../sinks/receiver.js';

const KEY = 'sim-intervals-key-0123456789abcdef';
const T0 = Date.UTC(2026, 10, 22, 12);
const MINUTE = 60_000;

/** Intervals unlike every default, set the ways a user sets them: the shared one, a source's own, the pass's. */
const SETTINGS = { POSTURE_INTERVAL_SECONDS: '600', POSTURE_VITALS_INTERVAL_SECONDS: '240', POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS: '7200', POSTURE_ACCESS_INTERVAL_SECONDS: '5400' };
/** What each source's interval must read, from the settings above (devices and alerts inherit the shared one; the directory's is its default, a day). */
const EXPECTED = { vitals: 240, alerts: 600, devices: 600, resolved: 7200, access: 5400, directory: 86400 };

/** `{source: value}` of the interval series in a Prometheus text exposition. */
function intervalsIn(text: string): Record<string, number> {
  return Object.fromEntries([...text.matchAll(/^posture_collection_interval_seconds\{portal="p",source="(\w+)"\} (\S+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
}

describe('the configured interval of every source and of the pass', () => {
  const closing = closeAfterEach();

  async function portal(clock?: FakeClock) {
    const sim = closing(await startSimulator({ keys: [{ key: KEY }], rateLimit: false, ...(clock ? { clock } : {}) }));
    // The portal's whole share: a first run's 9 requests (every slow source is due) fit one window, so `once` waits for none.
    return { sim, env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'p', POSTURE_REQUESTS_PER_MINUTE: '10', ...SETTINGS } };
  }

  it('serve has them from its start, before any source has run', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const { env } = await portal(clock);
    const serving = await startServe(loadConfig({ env: { ...env, POSTURE_LISTEN: '127.0.0.1:0' } }), { clock, logger: memoryLogger({ secrets: [KEY] }) });
    try {
      const samples = serving.exporter.samples().filter((s) => s.name === 'posture_collection_interval_seconds');
      expect(Object.fromEntries(samples.map((s) => [s.labels.source, s.value]))).toEqual(EXPECTED);
      expect(samples.every((s) => s.labels.portal === 'p')).toBe(true);
      expect(serving.exporter.samples().some((s) => s.name === 'posture_collection_success')).toBe(false);
    } finally {
      await serving.stop();
    }
  });

  it('once prints them', async () => {
    const { env } = await portal();
    const once = await runMain(['once'], { env });
    expect(once.code, once.stderr).toBe(0);
    expect(intervalsIn(once.stdout)).toEqual(EXPECTED);
  });

  it('every Lambda invocation pushes them, the pass\'s between passes too', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const { env } = await portal(clock);
    const receiver = closing(await startReceiver(() => ({ status: 204 })));
    const handler = createHandler({ clock, env: { ...env, POSTURE_PUSH: 'remote_write', POSTURE_REMOTE_WRITE_URL: `${receiver.url}/api/v1/write` }, write: () => {} });
    const pushed: Array<{ intervals: Record<string, number>; pass: boolean }> = [];
    for (let i = 0; i < 2; i++) {
      receiver.requests.length = 0;
      await handler({}, { awsRequestId: `r${i}`, getRemainingTimeInMillis: () => 4 * MINUTE });
      const series = receiver.requests
        .flatMap((r) => decodeWriteRequest(snappy.uncompress(new Uint8Array(r.body))).timeseries)
        .map((ts) => ({ labels: Object.fromEntries(ts.labels), value: ts.samples[0]!.value }));
      pushed.push({
        intervals: Object.fromEntries(series.filter((x) => x.labels.__name__ === 'posture_collection_interval_seconds').map((x) => [x.labels.source!, x.value])),
        pass: series.some((x) => x.labels.__name__ === 'posture_alerts_resolved'),
      });
      clock.advance(5 * MINUTE);
    }
    // The first invocation makes the pass; five minutes later its interval has not passed.
    expect(pushed).toEqual([{ intervals: EXPECTED, pass: true }, { intervals: EXPECTED, pass: false }]);
  });
});
