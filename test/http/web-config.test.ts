import bcrypt from 'bcryptjs';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { BasicAuthChecker, clientCertAccepted, parseBasicAuth, parseWebConfig } from '../../src/http/web-config.js';
import { configErrorOf } from '../support/errors.js';

const PATH = '/etc/posture/web.yml';
const HASH = bcrypt.hashSync('s3cret', 4);

describe('parseWebConfig', () => {
  it('reads every supported key, resolving relative paths against the file', () => {
    const config = parseWebConfig(
      `tls_server_config:
  cert_file: tls/server.crt
  key_file: /abs/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.pem
  min_version: TLS13
http_server_config:
  headers:
    x-frame-options: deny
    Strict-Transport-Security: max-age=31536000
basic_auth_users:
  prometheus: '${HASH}'
`,
      PATH,
    );
    expect(config.tls).toEqual({ certFile: '/etc/posture/tls/server.crt', keyFile: '/abs/server.key', clientAuthType: 'RequireAndVerifyClientCert', clientCaFile: '/etc/posture/ca.pem', minVersion: 'TLSv1.3' });
    expect(config.headers).toEqual({ 'X-Frame-Options': 'deny', 'Strict-Transport-Security': 'max-age=31536000' });
    expect([...config.basicAuthUsers]).toEqual([['prometheus', HASH]]);
  });

  it.each([
    ['', {}],
    ['{}', {}],
    ['tls_server_config:\n  cert_file: a\n  key_file: b\n', { tls: { certFile: '/etc/posture/a', keyFile: '/etc/posture/b', clientAuthType: 'NoClientCert', minVersion: 'TLSv1.2' } }],
  ])('accepts %j', (text, expected) => {
    expect(parseWebConfig(text, PATH)).toEqual({ basicAuthUsers: new Map(), headers: {}, ...expected });
  });

  it.each([
    ['tls_server_config: [1]\n', 'tls_server_config: must be a mapping.'],
    ['tls_server_config:\n  key_file: b\n', 'tls_server_config.cert_file: is missing'],
    ['tls_server_config:\n  cert_file: a\n', 'tls_server_config.key_file: is missing'],
    ['tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Always\n', 'tls_server_config.client_auth_type: "Always" is not valid'],
    ['tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n', 'tls_server_config.client_ca_file: is missing'],
    ['tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n', 'tls_server_config.client_ca_file: is set but client_auth_type is NoClientCert'],
    ['tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n', 'tls_server_config.min_version: "TLS14" is not valid'],
    ['tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [x]\n', 'tls_server_config.cipher_suites: unknown or unsupported key'],
    ['tls_config:\n  cert_file: a\n', 'tls_config: unknown or unsupported key'],
    ['http_server_config:\n  headers:\n    Server: x\n', 'http_server_config.headers.Server: is not one of the headers that may be set'],
    ['http_server_config:\n  http2: maybe\n', 'http_server_config.http2: must be true or false.'],
    ['basic_auth_users:\n  prometheus: plain-password\n', 'basic_auth_users.prometheus: is not a bcrypt hash'],
    ['basic_auth_users: [a]\n', 'basic_auth_users: must be a mapping.'],
    ['a: [\n', 'not valid YAML at line'],
  ])('refuses %j naming the key', (text, message) => {
    const err = configErrorOf(() => parseWebConfig(text, PATH));
    expect(err.setting).toBe('POSTURE_WEB_CONFIG_FILE');
    expect(err.message).toContain(`POSTURE_WEB_CONFIG_FILE (--web-config-file) ${PATH}: ${message}`);
  });

  it('never quotes a password or hash in a message', () => {
    const err = (() => {
      try {
        parseWebConfig('basic_auth_users:\n  u: hunter2-password\n', PATH);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).not.toContain('hunter2');
  });
});

describe('parseBasicAuth', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  it.each([
    [`Basic ${b64('u:p')}`, { user: 'u', password: 'p' }],
    [`basic ${b64('u:p:q')}`, { user: 'u', password: 'p:q' }],
    [`Basic ${b64('u:')}`, { user: 'u', password: '' }],
    [`Basic ${b64('nocolon')}`, undefined],
    [`Bearer ${b64('u:p')}`, undefined],
    ['Basic !!!', undefined],
    [undefined, undefined],
  ])('%j', (header, expected) => {
    expect(parseBasicAuth(header)).toEqual(expected);
  });
});

describe('BasicAuthChecker', () => {
  const users = new Map([['prometheus', HASH]]);
  const header = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

  it('accepts the right password and refuses a wrong one, an unknown user or none', async () => {
    const checker = new BasicAuthChecker();
    expect(await checker.check(users, header('prometheus', 's3cret'))).toBe(true);
    expect(await checker.check(users, header('prometheus', 's3cret'))).toBe(true);
    expect(await checker.check(users, header('prometheus', 'wrong'))).toBe(false);
    expect(await checker.check(users, header('other', 's3cret'))).toBe(false);
    expect(await checker.check(users, undefined)).toBe(false);
  });

  it('lets everyone in when there are no users', async () => {
    expect(await new BasicAuthChecker().check(new Map(), undefined)).toBe(true);
  });

  it('does not keep accepting a cached password once the hash changes', async () => {
    const checker = new BasicAuthChecker();
    expect(await checker.check(users, header('prometheus', 's3cret'))).toBe(true);
    expect(await checker.check(new Map([['prometheus', bcrypt.hashSync('rotated', 4)]]), header('prometheus', 's3cret'))).toBe(false);
  });
});

describe('clientCertAccepted', () => {
  it.each([
    ['NoClientCert', false, false, true],
    ['RequestClientCert', false, false, true],
    ['RequireAnyClientCert', false, false, false],
    ['RequireAnyClientCert', true, false, true],
    ['VerifyClientCertIfGiven', false, false, true],
    ['VerifyClientCertIfGiven', true, false, false],
    ['VerifyClientCertIfGiven', true, true, true],
    ['RequireAndVerifyClientCert', true, false, false],
    ['RequireAndVerifyClientCert', true, true, true],
  ] as const)('%s with a cert: %s, verified: %s → %s', (type, hasCert, authorized, expected) => {
    expect(clientCertAccepted(type, { hasCert, authorized })).toBe(expected);
  });
});

describe('docs/web-config.md', () => {
  it('shows a web config that parses, with a hash of the password it names', async () => {
    const doc = readFileSync(new URL('../../docs/web-config.md', import.meta.url), 'utf8');
    const block = /```yaml\n(tls_server_config:[\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    const config = parseWebConfig(block!, '/etc/posture-exporter/web.yml');
    expect(config.tls?.certFile).toBe('/etc/posture-exporter/server.crt');
    expect(Object.keys(config.headers)).toEqual(['X-Content-Type-Options', 'Strict-Transport-Security']);
    expect(await bcrypt.compare('example-password', config.basicAuthUsers.get('prometheus')!)).toBe(true);
  });
});
