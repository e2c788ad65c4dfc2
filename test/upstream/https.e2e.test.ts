/**
 * The built CLI reads a portal over HTTPS, as every real portal is served, through its one HTTP
 * client (src/net/transport.ts): an HTTPS front on a loopback port whose certificate a private CA
 * made here by openssl signed, passing each request to the simulated portal. With the CA trusted
 * (NODE_EXTRA_CA_CERTS, as an operator trusts a corporate CA) `once` reads every list over TLS and
 * its counts are the portal's own; without it, the run ends as a configuration error at once (exit 2,
 * one refused handshake, nothing sent), its line naming the host, the reason and NODE_EXTRA_CA_CERTS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runBuiltCli } from '../support/cli.js';
import { portalOverHttps, type PortalOverHttps } from '../support/https-front.js';
import { valueIn, type ReadSample } from '../lambda/support.js';

const KEY = 'sim-https-key-0a1b2c3d4e5f6a7b8c9d';

let sim: Simulator;
let tls: PortalOverHttps;

beforeAll(async () => {
  sim = await startSimulator({ keys: [{ key: KEY }], rateLimit: false, moving: false, seed: 5, alerts: 1_500, devices: 400 });
  tls = await portalOverHttps(sim.baseUrl);
});

afterAll(async () => {
  await tls?.close();
  await sim?.close();
});

/** A series' value (labels without `portal`) from the output of `once --format json`. */
const value = (stdout: string, name: string, labels: Record<string, string>) => valueIn((JSON.parse(stdout) as { samples: ReadSample[] }).samples, name, labels);

describe('once against a portal served over HTTPS', () => {
  it('reads every list over TLS with the certificate trusted, and counts what the portal holds', async () => {
    tls.front.paths = [];
    tls.front.connections = 0;
    const r = await runBuiltCli(['once', '--format', 'json', '--log-level', 'warn'], { POSTURE_BASE_URL: tls.base, POSTURE_API_KEY: KEY, NODE_EXTRA_CA_CERTS: tls.ca.caFile });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    // Every source's list came through the front.
    expect(tls.front.paths.filter((p) => p.includes('/vitals')).length).toBeGreaterThanOrEqual(1);
    expect(tls.front.paths.filter((p) => p.includes('/devices')).length).toBeGreaterThanOrEqual(2);
    expect(tls.front.paths.filter((p) => p.includes('filter=allunresolved')).length).toBeGreaterThanOrEqual(1);
    // Kept connections: fewer TLS handshakes than requests.
    expect(tls.front.connections).toBeGreaterThanOrEqual(1);
    expect(tls.front.connections).toBeLessThan(tls.front.paths.length);
    const open = (sev: string) => [...sim.data().alerts()].filter((a) => !a.resolved && a.state.toLowerCase() === sev).length;
    for (const severity of ['red', 'amber', 'green']) expect(value(r.stdout, 'posture_alerts_open', { severity }), severity).toBe(open(severity));
    expect(open('red') + open('amber') + open('green')).toBeGreaterThan(500);
    // The portal's own total of active devices, asked directly.
    const direct = await fetch(`${sim.baseUrl}/devices?filter=active&limit=1`, { headers: { 'X-Service-ApiKey': KEY } });
    const active = ((await direct.json()) as { total: number }).total;
    expect(active).toBeGreaterThan(0);
    expect(value(r.stdout, 'posture_devices', { activity: 'active' })).toBe(active);
    expect(r.stderr).not.toContain(KEY);
  });

  it('waits for a slow answer after the handshake as for headers, not as for the connection', async () => {
    // Each answer comes 1.2 s after its request, past the connect timeout of 1 s and well within
    // the request timeout: the connect timeout ends with the TLS handshake.
    tls.front.delayMs = 1_200;
    try {
      const r = await runBuiltCli(['once', '--format', 'json', '--log-level', 'warn', '--connect-timeout-seconds', '1', '--request-timeout-seconds', '20'], { POSTURE_BASE_URL: tls.base, POSTURE_API_KEY: KEY, NODE_EXTRA_CA_CERTS: tls.ca.caFile });
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(value(r.stdout, 'posture_collection_success', { source: 'vitals' })).toBe(1);
    } finally {
      tls.front.delayMs = 0;
    }
  });

  it('ends at once with exit 2 when the CA is not trusted: one refused handshake, nothing sent, one line naming the host, the reason and NODE_EXTRA_CA_CERTS', async () => {
    tls.front.paths = [];
    tls.front.connections = 0;
    tls.front.refused = 0;
    const started = Date.now();
    const r = await runBuiltCli(['once', '--format', 'json', '--log-level', 'warn'], { POSTURE_BASE_URL: tls.base, POSTURE_API_KEY: KEY });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r.code, r.stderr.slice(-2000)).toBe(2);
    const host = new URL(tls.front.origin).host;
    const line = r.stderr.split('\n').filter((l) => l.startsWith('config error: '));
    expect(line).toHaveLength(1);
    expect(line[0]).toContain(host);
    expect(line[0]).toContain('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(line[0]).toContain('NODE_EXTRA_CA_CERTS');
    // The sources that start together wait for the first connection and share its failure: one handshake, no request.
    expect(tls.front.refused).toBe(1);
    expect(tls.front.connections).toBe(0);
    expect(tls.front.paths).toEqual([]);
    expect(r.stderr + r.stdout).not.toContain(KEY);
  });

  it('names the certificate, not the CA, when it is for another host', async () => {
    // The front's certificate names 127.0.0.1 only; reached as localhost, the CA is trusted but the name is not.
    tls.front.refused = 0;
    const r = await runBuiltCli(['once', '--format', 'json', '--log-level', 'warn'], { POSTURE_BASE_URL: tls.base.replace('127.0.0.1', 'localhost'), POSTURE_API_KEY: KEY, NODE_EXTRA_CA_CERTS: tls.ca.caFile });
    expect(r.code, r.stderr.slice(-2000)).toBe(2);
    expect(r.stderr).toMatch(/config error: .*localhost:\d+.*does not name this host \(ERR_TLS_CERT_ALTNAME_INVALID\)/);
    expect(tls.front.refused).toBeLessThanOrEqual(1);
  });
});
