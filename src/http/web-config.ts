/**
 * The web configuration file of Prometheus exporters (the exporter toolkit's `--web.config.file`
 * format, as node_exporter and blackbox_exporter read it): TLS, basic auth and response headers
 * for `/metrics`. Parsing and validation are pure; `WebConfigWatcher` re-reads the files when they
 * change (certificates rotate) and keeps the last good configuration when a new one is bad.
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { createSecureContext, type SecureContextOptions, type SecureVersion } from 'node:tls';
import bcrypt from 'bcryptjs';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../errors.js';

const SETTING = 'POSTURE_WEB_CONFIG_FILE';

/** The exporter toolkit's client certificate policies (Go's tls.ClientAuthType names). */
export const CLIENT_AUTH_TYPES = ['NoClientCert', 'RequestClientCert', 'RequireAnyClientCert', 'VerifyClientCertIfGiven', 'RequireAndVerifyClientCert'] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];

const TLS_VERSIONS: Readonly<Record<string, SecureVersion>> = { TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' };

/** The response headers the exporter toolkit allows in `http_server_config.headers`. */
const ALLOWED_HEADERS = ['Content-Security-Policy', 'X-Frame-Options', 'X-Content-Type-Options', 'X-XSS-Protection', 'Strict-Transport-Security'] as const;

/** A bcrypt hash as `htpasswd -B` and the toolkit write it. */
const BCRYPT_HASH = /^\$2[aby]?\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

/** The TLS part, with file paths resolved against the web config file's directory. */
export interface WebTlsConfig {
  readonly certFile: string;
  readonly keyFile: string;
  readonly clientAuthType: ClientAuthType;
  readonly clientCaFile?: string;
  readonly minVersion: SecureVersion;
  readonly maxVersion?: SecureVersion;
}

/** A validated web configuration. */
export interface WebConfig {
  readonly tls?: WebTlsConfig;
  /** User name → bcrypt hash; empty: no authentication. */
  readonly basicAuthUsers: ReadonlyMap<string, string>;
  /** Headers set on every response. */
  readonly headers: Readonly<Record<string, string>>;
}

function fail(where: string, key: string, message: string): never {
  throw new ConfigError(SETTING, `${SETTING} (--web-config-file) ${where}: ${key ? `${key}: ` : ''}${message}`);
}

function mapping(value: unknown, where: string, key: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) fail(where, key, 'must be a mapping.');
  return value as Record<string, unknown>;
}

function onlyKeys(value: Record<string, unknown>, allowed: readonly string[], where: string, prefix: string): void {
  for (const k of Object.keys(value)) {
    if (!allowed.includes(k)) fail(where, `${prefix}${k}`, `unknown or unsupported key: use ${allowed.join(', ')}.`);
  }
}

function str(value: unknown, where: string, key: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') fail(where, key, 'must be a string.');
  return value;
}

/**
 * Parses and validates the YAML text of a web config file; `path` names it in messages and
 * anchors relative file paths. Throws one ConfigError naming the key at fault.
 */
export function parseWebConfig(text: string, path: string): WebConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    const line = /line (\d+), column (\d+)/.exec((err as Error).message);
    fail(path, '', `not valid YAML${line ? ` at line ${line[1]}, column ${line[2]}` : ''}: fix the syntax there.`);
  }
  const top = mapping(doc, path, '');
  onlyKeys(top, ['tls_server_config', 'http_server_config', 'basic_auth_users'], path, '');
  const base = dirname(path);
  const file = (v: string) => (isAbsolute(v) ? v : resolve(base, v));

  let tls: WebTlsConfig | undefined;
  if (top.tls_server_config !== undefined && top.tls_server_config !== null) {
    const t = mapping(top.tls_server_config, path, 'tls_server_config');
    onlyKeys(t, ['cert_file', 'key_file', 'client_auth_type', 'client_ca_file', 'min_version', 'max_version'], path, 'tls_server_config.');
    const certFile = str(t.cert_file, path, 'tls_server_config.cert_file');
    const keyFile = str(t.key_file, path, 'tls_server_config.key_file');
    if (!certFile) fail(path, 'tls_server_config.cert_file', 'is missing: give the server certificate (PEM) with key_file.');
    if (!keyFile) fail(path, 'tls_server_config.key_file', 'is missing: give the private key (PEM) of cert_file.');
    const authType = str(t.client_auth_type, path, 'tls_server_config.client_auth_type') ?? 'NoClientCert';
    if (!(CLIENT_AUTH_TYPES as readonly string[]).includes(authType)) fail(path, 'tls_server_config.client_auth_type', `${JSON.stringify(authType)} is not valid: use one of ${CLIENT_AUTH_TYPES.join(', ')}.`);
    const caFile = str(t.client_ca_file, path, 'tls_server_config.client_ca_file');
    if (!caFile && (authType === 'VerifyClientCertIfGiven' || authType === 'RequireAndVerifyClientCert')) fail(path, 'tls_server_config.client_ca_file', `is missing: client_auth_type ${authType} verifies client certificates against it.`);
    if (caFile && authType === 'NoClientCert') fail(path, 'tls_server_config.client_ca_file', 'is set but client_auth_type is NoClientCert: set client_auth_type (e.g. RequireAndVerifyClientCert) or drop client_ca_file.');
    const version = (key: 'min_version' | 'max_version'): SecureVersion | undefined => {
      const v = str(t[key], path, `tls_server_config.${key}`);
      if (v === undefined) return undefined;
      const mapped = TLS_VERSIONS[v];
      if (!mapped) fail(path, `tls_server_config.${key}`, `${JSON.stringify(v)} is not valid: use one of ${Object.keys(TLS_VERSIONS).join(', ')}.`);
      return mapped;
    };
    const minVersion = version('min_version') ?? 'TLSv1.2';
    const maxVersion = version('max_version');
    if (maxVersion && Number(maxVersion.slice(5) || 0) < Number(minVersion.slice(5) || 0)) fail(path, 'tls_server_config.max_version', 'is lower than min_version.');
    tls = { certFile: file(certFile), keyFile: file(keyFile), clientAuthType: authType as ClientAuthType, ...(caFile ? { clientCaFile: file(caFile) } : {}), minVersion, ...(maxVersion ? { maxVersion } : {}) };
  }

  const h = mapping(top.http_server_config, path, 'http_server_config');
  onlyKeys(h, ['headers', 'http2'], path, 'http_server_config.');
  if (h.http2 !== undefined && typeof h.http2 !== 'boolean') fail(path, 'http_server_config.http2', 'must be true or false.');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(mapping(h.headers, path, 'http_server_config.headers'))) {
    const canonical = ALLOWED_HEADERS.find((a) => a.toLowerCase() === name.toLowerCase());
    if (!canonical) fail(path, `http_server_config.headers.${name}`, `is not one of the headers that may be set: ${ALLOWED_HEADERS.join(', ')}.`);
    if (typeof value !== 'string' || /[\r\n]/.test(value)) fail(path, `http_server_config.headers.${name}`, 'must be a one-line string.');
    headers[canonical] = value;
  }

  const users = new Map<string, string>();
  for (const [user, hash] of Object.entries(mapping(top.basic_auth_users, path, 'basic_auth_users'))) {
    // Never the value: it is a password hash.
    if (typeof hash !== 'string' || !BCRYPT_HASH.test(hash)) fail(path, `basic_auth_users.${user}`, 'is not a bcrypt hash: make one with `htpasswd -nBC 10 "" | tr -d \':\\n\'`.');
    if (user.includes(':')) fail(path, `basic_auth_users.${user}`, 'a user name cannot contain ":".');
    users.set(user, hash);
  }
  return { ...(tls ? { tls } : {}), basicAuthUsers: users, headers };
}

/** Reads the certificate, key and CA files of a TLS config into a secure context; a ConfigError names the key at fault. */
function secureContextOptions(tls: WebTlsConfig, path: string, read: (p: string) => Buffer = (p) => readFileSync(p)): SecureContextOptions {
  const load = (key: string, file: string) => {
    try {
      return read(file);
    } catch (err) {
      fail(path, `tls_server_config.${key}`, `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
    }
  };
  const options: SecureContextOptions = {
    cert: load('cert_file', tls.certFile),
    key: load('key_file', tls.keyFile),
    ...(tls.clientCaFile ? { ca: load('client_ca_file', tls.clientCaFile) } : {}),
    minVersion: tls.minVersion,
    ...(tls.maxVersion ? { maxVersion: tls.maxVersion } : {}),
  };
  // Each file on its own first, so the message names the one at fault.
  const check = (key: string, what: string, test: () => unknown) => {
    try {
      test();
    } catch (err) {
      fail(path, `tls_server_config.${key}`, `not usable (${(err as Error).message.replace(/\s+/g, ' ')}): give ${what}.`);
    }
  };
  check('cert_file', 'a PEM certificate (chain)', () => new X509Certificate(options.cert as Buffer));
  check('key_file', 'the PEM private key of cert_file', () => createPrivateKey(options.key as Buffer));
  if (options.ca) check('client_ca_file', 'PEM CA certificates', () => new X509Certificate(options.ca as Buffer));
  check('key_file', 'the private key that belongs to cert_file', () => createSecureContext(options));
  return options;
}

/** Node's `requestCert` / `rejectUnauthorized` for a client auth policy; the rest is checked per request. */
export function clientCertOptions(type: ClientAuthType): { requestCert: boolean; rejectUnauthorized: boolean } {
  return { requestCert: type !== 'NoClientCert', rejectUnauthorized: type === 'RequireAndVerifyClientCert' };
}

/** Whether a connection's client certificate satisfies the policy (after the handshake). */
export function clientCertAccepted(type: ClientAuthType, peer: { hasCert: boolean; authorized: boolean }): boolean {
  switch (type) {
    case 'RequireAnyClientCert':
      return peer.hasCert;
    case 'VerifyClientCertIfGiven':
      return !peer.hasCert || peer.authorized;
    case 'RequireAndVerifyClientCert':
      return peer.hasCert && peer.authorized;
    default:
      return true;
  }
}

/** The user name and password of a `Basic` Authorization header, or undefined. */
export function parseBasicAuth(header: string | undefined): { user: string; password: string } | undefined {
  const m = header && /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

// A hash to compare against when the user is unknown, so the answer takes as long as for a known one.
const DUMMY_HASH = '$2b$10$' + 'C'.repeat(53);

/**
 * Checks basic-auth credentials against bcrypt hashes, as the exporter toolkit does: an unknown
 * user costs a bcrypt comparison too, and successful checks are cached by a hash of the
 * credentials so a scrape every 15 s does not cost a bcrypt run each time.
 */
export class BasicAuthChecker {
  private readonly cache = new Map<string, true>();
  constructor(private readonly maxCached = 256) {}

  async check(users: ReadonlyMap<string, string>, header: string | undefined): Promise<boolean> {
    if (users.size === 0) return true;
    const creds = parseBasicAuth(header);
    if (!creds) return false;
    const hash = users.get(creds.user);
    const key = createHash('sha256').update(`${creds.user}\0${creds.password}\0${hash ?? ''}`).digest('hex');
    if (hash !== undefined && this.cache.has(key)) return true;
    // bcrypt compares in constant time; an unknown user spends the same bcrypt run on the dummy hash.
    const ok = await bcrypt.compare(creds.password, hash ?? DUMMY_HASH);
    const valid = ok && hash !== undefined;
    if (valid) {
      if (this.cache.size >= this.maxCached) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, true);
    }
    return valid;
  }
}

/** What a watcher serves from: the config and, with TLS, the secure context options built from its files. */
export interface LoadedWebConfig {
  readonly config: WebConfig;
  readonly tlsOptions?: SecureContextOptions;
}

/** Loads a web config file and its TLS files; throws a ConfigError naming the key at fault. */
export function loadWebConfig(path: string, read: (p: string) => Buffer = (p) => readFileSync(p)): LoadedWebConfig {
  let text: string;
  try {
    text = read(path).toString('utf8');
  } catch (err) {
    throw new ConfigError(SETTING, `${SETTING} (--web-config-file): cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give a readable YAML file.`);
  }
  const config = parseWebConfig(text, path);
  return config.tls ? { config, tlsOptions: secureContextOptions(config.tls, path, read) } : { config };
}

/** A cheap fingerprint of the files: size, modification time and inode of each (absent: '-'). */
function fingerprint(files: readonly string[]): string {
  return files
    .map((f) => {
      try {
        const s = statSync(f, { bigint: true });
        return `${s.ino}:${s.size}:${s.mtimeNs}`;
      } catch {
        return '-';
      }
    })
    .join('|');
}

/**
 * Holds the current web config, re-reading it when the file or its TLS files change. Checks are
 * synchronous `stat`s, at most once per `recheckMs`, so they can run on each new connection.
 */
export class WebConfigWatcher {
  private loaded: LoadedWebConfig;
  private files: string[];
  private print: string;
  private checkedAt: number;
  private lastError: string | undefined;

  constructor(
    readonly path: string,
    private readonly options: { recheckMs?: number; now?: () => number; onReload?: (loaded: LoadedWebConfig) => void; onError?: (err: ConfigError) => void } = {},
  ) {
    this.files = [path];
    this.print = fingerprint(this.files);
    this.loaded = loadWebConfig(path);
    this.files = filesOf(path, this.loaded.config);
    this.print = fingerprint(this.files);
    this.checkedAt = this.now();
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** The current configuration (re-read first when the files changed). */
  current(): LoadedWebConfig {
    const now = this.now();
    if (now - this.checkedAt < (this.options.recheckMs ?? 1000)) return this.loaded;
    this.checkedAt = now;
    const print = fingerprint(this.files);
    if (print === this.print) return this.loaded;
    try {
      const next = loadWebConfig(this.path);
      if (Boolean(next.config.tls) !== Boolean(this.loaded.config.tls)) {
        throw new ConfigError(SETTING, `${SETTING} (--web-config-file) ${this.path}: tls_server_config: turning TLS ${next.config.tls ? 'on' : 'off'} needs a restart; the running server keeps ${this.loaded.config.tls ? 'TLS' : 'plain HTTP'}.`);
      }
      this.loaded = next;
      this.files = filesOf(this.path, next.config);
      this.print = fingerprint(this.files);
      this.lastError = undefined;
      this.options.onReload?.(next);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      // Keep serving with the last good config; report each distinct problem once.
      this.print = print;
      if (err.message !== this.lastError) {
        this.lastError = err.message;
        this.options.onError?.(err);
      }
    }
    return this.loaded;
  }
}

function filesOf(path: string, config: WebConfig): string[] {
  return [path, ...(config.tls ? [config.tls.certFile, config.tls.keyFile, ...(config.tls.clientCaFile ? [config.tls.clientCaFile] : [])] : [])];
}
