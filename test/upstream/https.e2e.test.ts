/**
 * The built CLI reads a portal over HTTPS, as every real portal is served, through its default
 * transport (src/upstream/transport.ts): an HTTPS front on a loopback port with a certificate made
 * here by openssl, passing each request to the simulated portal. With the certificate trusted
 * (NODE_EXTRA_CA_CERTS, as an operator trusts a private CA) `once` reads every list over TLS and its
 * counts are the portal's own; without it, the certificate is refused by name and nothing is read.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runBuiltCli } from '../support/cli.js';
import { valueIn, type ReadSample } from '../lambda/support.js';

const KEY = 'sim-https-key-0a1b2c3d4e5f6a7b8c9d';

let sim: Simulator;
let dir: string;
let front: Server;
let base = '';
/** The paths that reached the portal through the front, and the TLS connections it accepted. */
let paths: string[] = [];
let connections = 0;
/** How long the front holds each request before passing it on. */
let delayMs = 0;

beforeAll(async () => {
  sim = await startSimulator({ keys: [{ key: KEY }], rateLimit: false, moving: false, seed: 5, alerts: 1_500, devices: 400 });
  dir = mkdtempSync(join(tmpdir(), 'https-portal-'));
  const key = join(dir, 'portal.key');
  const cert = join(dir, 'portal.crt');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert], { stdio: 'ignore' });
  const target = new URL(sim.baseUrl);
  front = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    paths.push(req.url ?? '');
    setTimeout(() => pass(req, res), delayMs);
  });
  const pass = (req: IncomingMessage, res: ServerResponse) => {
    const upstream = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  front.on('secureConnection', () => connections++);
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(front.address() as AddressInfo).port}${target.pathname}`;
});

afterAll(async () => {
  front?.closeAllConnections();
  await new Promise((resolve) => front?.close(resolve));
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A series' value (labels without `portal`) from the output of `once --format json`. */
const value = (stdout: string, name: string, labels: Record<string, string>) => valueIn((JSON.parse(stdout) as { samples: ReadSample[] }).samples, name, labels);

describe('once against a portal served over HTTPS', () => {
  it('reads every list over TLS with the certificate trusted, and counts what the portal holds', async () => {
    paths = [];
    connections = 0;
    const r = await runBuiltCli(['once', '--format', 'json', '--log-level', 'warn'], { POSTURE_BASE_URL: base, POSTURE_API_KEY: KEY, NODE_EXTRA_CA_CERTS: join(dir, 'portal.crt') });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    // Every source's list came through the front.
    expect(paths.filter((p) => p.includes('/vitals')).length).toBeGreaterThanOrEqual(1);
    expect(paths.filter((p) => p.includes('/devices')).length).toBeGreaterThanOrEqual(2);
    expect(paths.filter((p) => p.includes('filter=allunresolved')).length).toBeGreaterThanOrEqual(1);
    // Kept connections: fewer TLS handshakes than requests.
    expect(connections).toBeGreaterThanOrEqual(1);
    expect(connections).toBeLessThan(paths.length);
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
    delayMs = 1_200;
    try {
      const r = await runBuiltCli(['once', '--format', 'json', '--log-level', 'warn', '--connect-timeout-seconds', '1', '--request-timeout-seconds', '20'], { POSTURE_BASE_URL: base, POSTURE_API_KEY: KEY, NODE_EXTRA_CA_CERTS: join(dir, 'portal.crt') });
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(value(r.stdout, 'posture_collection_success', { source: 'vitals' })).toBe(1);
    } finally {
      delayMs = 0;
    }
  });

  it('refuses a certificate it does not trust, naming the reason, and reads nothing', async () => {
    paths = [];
    // A certificate refused is a network error, tried again in the next budget window: the run's
    // cap ends it before then.
    const r = await runBuiltCli(['once', '--format', 'json', '--log-level', 'warn', '--cycle-timeout-seconds', '3'], { POSTURE_BASE_URL: base, POSTURE_API_KEY: KEY });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('collection failed for: vitals, alerts, devices');
    expect(r.stderr).toMatch(/Could not get a response from the portal for \/\w+ \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)/);
    expect(paths).toEqual([]);
    expect(r.stderr + r.stdout).not.toContain(KEY);
  });
});
