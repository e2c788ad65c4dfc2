/**
 * A certificate this process does not trust, met by the collection service: a configuration error,
 * not an outage. The source that meets it is not sent again, every other source of the portal stops
 * with the same cause (each its own line), and `untrustedIn` hands it to the entry points, which end
 * the run with exit 2 (test/upstream/https.e2e.test.ts, test/net/proxy.e2e.test.ts).
 */
import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { UntrustedCertificateError } from '../../src/errors.js';
import { SOURCES } from '../../src/domain.js';
import { Exporter, untrustedIn } from '../../src/exporter/exporter.js';
import { failureLine } from '../../src/exporter/failures.js';
import { resolveSecret } from '../../src/config/secrets.js';
import { deliver } from '../../src/sinks/http.js';
import { SinkError } from '../../src/sinks/errors.js';

const KEY = 'untrusted-key-0123456789abcdef';
const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

/** A dispatcher whose every request fails its TLS handshake with `code`, counting the requests. */
function refusing(code: string) {
  const seen: string[] = [];
  const dispatcher = {
    dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
      seen.push(options.path);
      const controller = { aborted: false, paused: false, reason: null, abort() {}, pause() {}, resume() {} };
      setImmediate(() => {
        handler.onRequestStart?.(controller, {});
        handler.onResponseError?.(controller, Object.assign(new Error('unable to verify the first certificate'), { code }));
      });
      return true;
    },
  } as unknown as Dispatcher;
  return { seen, dispatcher };
}

describe('a portal whose certificate is not trusted', () => {
  it('fails every source at once with the same cause, one line each, nothing sent again', async () => {
    const { seen, dispatcher } = refusing('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    const logger = memoryLogger({ level: 'info' });
    const config = loadConfig({ env: { POSTURE_PORTAL: 'corp', POSTURE_BASE_URL: 'https://portal.corp.example:8443/public-api/v1', POSTURE_API_KEY: KEY } });
    const exporter = new Exporter(config, { clock: new FakeClock(T0, { autoAdvance: true }), logger, runtime: 'once', random: () => 0.5, dispatcher });
    const results = await exporter.collect();
    for (const s of SOURCES) {
      const r = results[0]![s];
      expect(r.ok).toBe(false);
      expect(!r.ok && r.error).toBeInstanceOf(UntrustedCertificateError);
    }
    // Each source sent at most its first request; none was sent again.
    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen.length).toBeLessThanOrEqual(SOURCES.length + 1);
    expect(new Set(seen).size).toBe(seen.length);
    const untrusted = untrustedIn(results)!;
    expect(untrusted).toBeInstanceOf(UntrustedCertificateError);
    expect(untrusted.host).toBe('portal.corp.example:8443');
    expect(untrusted.message).toContain('portal.corp.example:8443');
    expect(untrusted.message).toContain('NODE_EXTRA_CA_CERTS');
    const lines = logger.records().filter((l) => l.level === 'error' && typeof l.msg === 'string' && l.msg.startsWith('collecting '));
    expect(lines.length).toBe(SOURCES.length);
    for (const l of lines) expect(l).toMatchObject({ reason: 'untrusted-certificate', error: 'UntrustedCertificateError' });
    expect(JSON.stringify(logger.records())).not.toContain(KEY);
  });

  it('says another source stopped after the same failure', () => {
    const err = new UntrustedCertificateError('portal.corp.example:443', 'CERT_HAS_EXPIRED', 'expired', { endpoint: '/vitals' });
    expect(failureLine('devices', err)).toEqual({ level: 'error', msg: 'collecting devices failed, stopped after the same failure on /vitals: expired', reason: 'untrusted-certificate' });
    expect(failureLine('vitals', err)).toEqual({ level: 'error', msg: 'collecting vitals failed: expired', reason: 'untrusted-certificate' });
  });

  it('finds none in a run whose failures were other', async () => {
    expect(untrustedIn([])).toBeUndefined();
  });
});

describe('a key store behind a certificate this process does not trust', () => {
  it('fails the key read as an UntrustedCertificateError naming the parameter and NODE_EXTRA_CA_CERTS, not sent again', async () => {
    let sent = 0;
    // The SDK's request handler, failing as Node does when a TLS-inspecting proxy's CA is not trusted.
    const requestHandler = {
      handle: () => {
        sent++;
        return Promise.reject(Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' }));
      },
    };
    const clientConfig = { region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' }, requestHandler };
    const err = await resolveSecret({ kind: 'ssm', name: '/posture/untrusted-key' }, { clientConfig }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UntrustedCertificateError);
    expect((err as Error).message).toBe(
      'cannot read the API key from SSM parameter /posture/untrusted-key (the TLS connection to AWS failed: its certificate is signed by a CA this process does not trust (SELF_SIGNED_CERT_IN_CHAIN): give that CA in NODE_EXTRA_CA_CERTS=/path/to/ca.pem (the CA that signed it, PEM; read when the process starts)).',
    );
    expect(sent).toBe(1);
  });
});

describe('a push receiver whose certificate is not trusted', () => {
  it('fails the push at once, not sent again, its cause an UntrustedCertificateError naming the receiver', async () => {
    const { seen, dispatcher } = refusing('CERT_HAS_EXPIRED');
    const clock = new FakeClock(T0, { autoAdvance: true });
    const err = await deliver({
      sink: 'pushgateway',
      ctx: { clock, logger: memoryLogger(), deadline: clock.monotonic() + 60_000, dispatcher },
      method: 'PUT',
      url: 'https://pushgateway.corp.example:9091/metrics/job/posture-exporter',
      body: 'x 1\n',
      headers: () => ({}),
      timeoutMs: 5_000,
      maxRetries: 3,
      secrets: [],
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SinkError);
    expect((err as SinkError).cause).toBeInstanceOf(UntrustedCertificateError);
    expect((err as SinkError).message).toBe(
      'the TLS connection to pushgateway.corp.example:9091 (pushgateway) failed: its certificate is expired (CERT_HAS_EXPIRED): the server (or a TLS-inspecting proxy) must renew it, or this machine\'s clock is wrong; NODE_EXTRA_CA_CERTS cannot fix a date; not sent again',
    );
    expect(seen).toHaveLength(1);
  });
});
