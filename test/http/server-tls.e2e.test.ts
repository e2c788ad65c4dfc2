/**
 * /metrics behind a web config file, with real TLS: self-signed certificates made here with
 * openssl, curl as the client (as an operator would test it), bcrypt hashes from bcryptjs.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/log.js';
import { ConfigError } from '../../src/errors.js';
import { main } from '../../src/runtime/cli.js';
import { withOwnState } from '../support/cli.js';
import { startMetricsServer, type MetricsSource } from '../../src/http/server.js';
import { startSimulator } from '../../src/simulator/index.js';

const dir = mkdtempSync(join(tmpdir(), 'posture-tls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PASSWORD = 'scrape-password-42';
const HASH = bcrypt.hashSync(PASSWORD, 4);
const file = (name: string) => join(dir, name);

/** A self-signed certificate for 127.0.0.1 (also its own CA for the client). */
function selfSigned(name: string, cn: string): { cert: string; key: string } {
  const cert = file(`${name}.crt`);
  const key = file(`${name}.key`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${cn}`, '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert], { stdio: 'ignore' });
  return { cert, key };
}

/** A client certificate signed by `ca`. */
function clientCert(name: string, ca: { cert: string; key: string }): { cert: string; key: string } {
  const cert = file(`${name}.crt`);
  const key = file(`${name}.key`);
  const csr = file(`${name}.csr`);
  execFileSync('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${name}`, '-keyout', key, '-out', csr], { stdio: 'ignore' });
  execFileSync('openssl', ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-days', '2', '-out', cert], { stdio: 'ignore' });
  return { cert, key };
}

const SOURCE: MetricsSource = {
  samples: () => [{ name: 'posture_collection_success', labels: { portal: 'acme', source: 'alerts' }, value: 1 }],
  ready: true,
  describe: () => ({ portals: ['acme'], intervalSeconds: 300 }),
};

interface CurlResult {
  /** curl's exit code (0: an HTTP answer came back). */
  exit: number;
  status: number;
  headers: string;
  body: string;
}

/** One request with curl; `args` adds credentials, certificates and so on. */
function curl(url: string, args: string[] = []): Promise<CurlResult> {
  const headers = file(`headers-${Math.random().toString(36).slice(2)}`);
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '--max-time', '10', '-D', headers, '-o', '-', '-w', '\n%{http_code}', ...args, url], { encoding: 'utf8' }, (err, stdout) => {
      const exit = err ? Number((err as { code?: number }).code ?? 1) : 0;
      const i = stdout.lastIndexOf('\n');
      let headerText = '';
      try {
        headerText = execFileSync('cat', [headers], { encoding: 'utf8' });
      } catch {
        // curl wrote no headers: no HTTP answer.
      }
      resolve({ exit, status: Number(stdout.slice(i + 1)), headers: headerText.toLowerCase(), body: stdout.slice(0, i) });
    });
  });
}

/** The SHA-256 fingerprint of the certificate a server presents. */
function presented(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.on('error', reject);
  });
}

const fingerprint = (certFile: string) => execFileSync('openssl', ['x509', '-in', certFile, '-noout', '-fingerprint', '-sha256'], { encoding: 'utf8' }).trim().split('=')[1]!;

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(webConfig: string, logs: string[] = []) {
  const path = file(`web-${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(path, webConfig);
  const logger = createLogger({ level: 'debug', write: (l) => logs.push(l) });
  const server = await startMetricsServer(SOURCE, { host: '127.0.0.1', port: 0, logger, webConfigFile: path, webConfigRecheckMs: 0 });
  servers.push(server);
  return { ...server, path, port: Number(new URL(server.url).port) };
}

describe('web config: TLS and basic auth', () => {
  const server1 = selfSigned('server1', 'posture-one');
  const webConfig = (cert = server1, users = `  prometheus: '${HASH}'\n`) =>
    `tls_server_config:\n  cert_file: ${cert.cert}\n  key_file: ${cert.key}\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n    Strict-Transport-Security: max-age=31536000\nbasic_auth_users:\n${users}`;

  it('answers 401 with WWW-Authenticate without or with wrong credentials, 200 with the right ones', async () => {
    const s = await serve(webConfig());
    expect(s.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = ['--cacert', server1.cert];

    const none = await curl(`${s.url}/metrics`, ca);
    expect(none.status).toBe(401);
    expect(none.headers).toContain('www-authenticate: basic');
    expect(none.body).not.toContain('posture_');

    const wrong = await curl(`${s.url}/metrics`, [...ca, '-u', 'prometheus:not-the-password']);
    expect(wrong.status).toBe(401);
    expect(wrong.headers).toContain('www-authenticate: basic');

    const unknown = await curl(`${s.url}/metrics`, [...ca, '-u', `someone:${PASSWORD}`]);
    expect(unknown.status).toBe(401);

    const right = await curl(`${s.url}/metrics`, [...ca, '-u', `prometheus:${PASSWORD}`]);
    expect(right.exit).toBe(0);
    expect(right.status).toBe(200);
    expect(right.body).toContain('posture_collection_success{portal="acme",source="alerts"} 1');
    expect(right.body).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(right.body).toMatch(/^nodejs_heap_size_used_bytes \d/m);
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: right.body, encoding: 'utf8' });
    expect(lint.stdout + lint.stderr).toBe('');
    expect(lint.status).toBe(0);
    expect(right.headers).toContain('x-frame-options: deny');
    expect(right.headers).toContain('strict-transport-security: max-age=31536000');

    // Every path is protected, and the headers go on the 401 too.
    const health = await curl(`${s.url}/healthz`, ca);
    expect(health.status).toBe(401);
    expect(health.headers).toContain('x-frame-options: deny');
  });

  it('serves OpenMetrics with the process metrics before the one # EOF', async () => {
    const s = await serve(webConfig());
    const r = await curl(`${s.url}/metrics`, ['--cacert', server1.cert, '-u', `prometheus:${PASSWORD}`, '-H', 'Accept: application/openmetrics-text; version=1.0.0']);
    expect(r.status).toBe(200);
    expect(r.headers).toContain('content-type: application/openmetrics-text');
    expect(r.body.match(/# EOF/g)).toHaveLength(1);
    expect(r.body.endsWith('# EOF\n')).toBe(true);
    expect(r.body).toContain('# TYPE process_cpu_user_seconds counter');
    expect(r.body).toContain('posture_collection_success{portal="acme",source="alerts"} 1');
  });

  it('does not serve plain HTTP when TLS is on', async () => {
    const s = await serve(webConfig());
    const plain = await curl(`http://127.0.0.1:${s.port}/metrics`, ['-u', `prometheus:${PASSWORD}`]);
    expect(plain.exit).not.toBe(0);
    expect(plain.body).not.toContain('posture_');
    expect(plain.status).toBe(0);
  });

  it('refuses a client that does not trust the certificate', async () => {
    const s = await serve(webConfig());
    const r = await curl(`${s.url}/metrics`, ['-u', `prometheus:${PASSWORD}`]);
    expect(r.exit).toBe(60);
  });

  it('re-reads the file when it changes: a rotated certificate and new users, without a restart', async () => {
    const logs: string[] = [];
    const s = await serve(webConfig(), logs);
    expect(await presented(s.port)).toBe(fingerprint(server1.cert));

    const server2 = selfSigned('server2', 'posture-two');
    const newHash = bcrypt.hashSync('rotated-password', 4);
    writeFileSync(s.path, webConfig(server2, `  prometheus: '${newHash}'\n`));
    expect(await presented(s.port)).toBe(fingerprint(server2.cert));
    const old = await curl(`${s.url}/metrics`, ['--cacert', server2.cert, '-u', `prometheus:${PASSWORD}`]);
    expect(old.status).toBe(401);
    const rotated = await curl(`${s.url}/metrics`, ['--cacert', server2.cert, '-u', 'prometheus:rotated-password']);
    expect(rotated.status).toBe(200);
    expect(logs.some((l) => l.includes('"msg":"web config reloaded"'))).toBe(true);

    // The same certificate files rewritten in place (as cert-manager or certbot do) are re-read too.
    const server3 = selfSigned('server3', 'posture-three');
    execFileSync('cp', [server3.cert, server2.cert]);
    execFileSync('cp', [server3.key, server2.key]);
    expect(await presented(s.port)).toBe(fingerprint(server3.cert));
  });

  it('keeps the last good config when the new file is bad, and says so once', async () => {
    const logs: string[] = [];
    const s = await serve(webConfig(), logs);
    writeFileSync(s.path, 'tls_server_config:\n  cert_file: /nonexistent.crt\n  key_file: /nonexistent.key\n');
    const r = await curl(`${s.url}/metrics`, ['--cacert', server1.cert, '-u', `prometheus:${PASSWORD}`]);
    expect(r.status).toBe(200);
    await curl(`${s.url}/metrics`, ['--cacert', server1.cert, '-u', `prometheus:${PASSWORD}`]);
    const errors = logs.filter((l) => l.includes('web config not reloaded'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('tls_server_config.cert_file: cannot read /nonexistent.crt (ENOENT)');
  });

  const other = selfSigned('other', 'posture-other');
  it.each([
    ['a certificate as the key', server1.cert, server1.cert, 'tls_server_config.key_file: not usable'],
    ['the key of another certificate', server1.cert, other.key, 'tls_server_config.key_file: not usable'],
    ['a key as the certificate', server1.key, server1.key, 'tls_server_config.cert_file: not usable'],
    ['a missing certificate', file('missing.crt'), server1.key, `tls_server_config.cert_file: cannot read ${file('missing.crt')} (ENOENT)`],
  ])('refuses a bad file at start (%s) with one error naming the key', async (_what, cert, key, message) => {
    const path = file('bad.yml');
    writeFileSync(path, `tls_server_config:\n  cert_file: ${cert}\n  key_file: ${key}\n`);
    const started = startMetricsServer(SOURCE, { host: '127.0.0.1', port: 0, logger: createLogger({ write: () => {} }), webConfigFile: path });
    await expect(started).rejects.toBeInstanceOf(ConfigError);
    await expect(started).rejects.toThrow(`POSTURE_WEB_CONFIG_FILE (--web-config-file) ${path}: ${message}`);
  });

  it('requires and verifies client certificates with RequireAndVerifyClientCert', async () => {
    const ca = selfSigned('client-ca', 'posture-client-ca');
    const client = clientCert('scraper', ca);
    const stranger = clientCert('stranger', selfSigned('other-ca', 'other-ca'));
    const s = await serve(`tls_server_config:\n  cert_file: ${server1.cert}\n  key_file: ${server1.key}\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ${ca.cert}\n`);
    const base = ['--cacert', server1.cert];
    expect((await curl(`${s.url}/metrics`, base)).status).toBe(0);
    expect((await curl(`${s.url}/metrics`, [...base, '--cert', stranger.cert, '--key', stranger.key])).status).toBe(0);
    const ok = await curl(`${s.url}/metrics`, [...base, '--cert', client.cert, '--key', client.key]);
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('posture_collection_success');
  });
});

describe('serve with POSTURE_WEB_CONFIG_FILE', () => {
  it('serves /metrics over https with basic auth', async () => {
    const server = selfSigned('serve', 'posture-serve');
    const path = file('serve-web.yml');
    writeFileSync(path, `tls_server_config:\n  cert_file: ${server.cert}\n  key_file: ${server.key}\nbasic_auth_users:\n  prometheus: '${HASH}'\n`);
    const sim = await startSimulator({ rateLimit: false, moving: false });
    let stop!: () => void;
    const results: CurlResult[] = [];
    try {
      const code = await main(['serve', '--listen', '127.0.0.1:0', '--web-config-file', path], {
        env: withOwnState({ POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: sim.apiKey }),
        stdout: () => {},
        stderr: () => {},
        stopSignal: new Promise<void>((r) => (stop = r)),
        onReady: async ({ metricsUrl }) => {
          results.push(await curl(metricsUrl!, ['--cacert', server.cert]));
          results.push(await curl(metricsUrl!, ['--cacert', server.cert, '-u', `prometheus:${PASSWORD}`]));
          stop();
        },
      });
      expect(code).toBe(0);
    } finally {
      await sim.close();
    }
    expect(results.map((r) => r.status)).toEqual([401, 200]);
    expect(results[1]!.body).toContain('process_resident_memory_bytes');
  });

  it('check-config validates the web config file and its certificate files', async () => {
    const path = file('check-bad.yml');
    writeFileSync(path, `tls_server_config:\n  cert_file: ${file('absent.crt')}\n  key_file: ${file('absent.key')}\n`);
    let stderr = '';
    const code = await main(['check-config', '--web-config-file', path], {
      env: { POSTURE_BASE_URL: 'http://127.0.0.1:9/public-api/v1', POSTURE_API_KEY: 'k-0123456789' },
      stdout: () => {},
      stderr: (t) => (stderr += t),
    });
    expect(code).toBe(2);
    expect(stderr).toBe(`config error: POSTURE_WEB_CONFIG_FILE (--web-config-file) ${path}: tls_server_config.cert_file: cannot read ${file('absent.crt')} (ENOENT).\n`);
  });

  it('exits 2 naming the key when the file is bad', async () => {
    const path = file('serve-bad.yml');
    writeFileSync(path, 'basic_auth_users:\n  prometheus: not-a-hash\n');
    let stderr = '';
    const code = await main(['serve', '--listen', '127.0.0.1:0', '--web-config-file', path], {
      env: { POSTURE_BASE_URL: 'http://127.0.0.1:9/public-api/v1', POSTURE_API_KEY: 'k-0123456789' },
      stdout: () => {},
      stderr: (t) => (stderr += t),
      stopSignal: Promise.resolve(),
    });
    expect(code).toBe(2);
    expect(stderr).toBe(`config error: POSTURE_WEB_CONFIG_FILE (--web-config-file) ${path}: basic_auth_users.prometheus: is not a bcrypt hash: make one with \`htpasswd -nBC 10 "" | tr -d ':\\n'\`.\n`);
  });
});
