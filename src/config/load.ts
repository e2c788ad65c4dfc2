import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, ConfigErrors } from '../errors.js';
import type { LogLevel } from '../core/log.js';
import { SETTINGS, SETTING_BY_KEY, envName, flagName, type SettingDef, type SettingKey } from './settings.js';

/** Where a secret (the API key, a remote-write credential) comes from; resolved at the edge (file read, SSM, Secrets Manager). */
export type KeySource =
  | { kind: 'value'; value: string }
  | { kind: 'file'; path: string }
  | { kind: 'ssm'; name: string }
  | { kind: 'secret'; id: string };

/** One portal to collect. */
export interface PortalConfig {
  /** The `portal` label. */
  readonly name: string;
  readonly baseUrl: string;
  readonly key: KeySource;
  readonly apiKeyHeader: string;
  readonly requestsPerMinute: number;
  readonly pageSize: number;
  readonly vitalsTags: readonly string[];
}

export type SinkName = 'otlp' | 'remote_write' | 'pushgateway';

/** The validated configuration of the process. */
export interface Config {
  readonly portals: readonly PortalConfig[];
  readonly intervalSeconds: number;
  readonly maxStalenessSeconds: number;
  readonly cycleTimeoutSeconds: number;
  readonly connectTimeoutSeconds: number;
  readonly requestTimeoutSeconds: number;
  readonly maxRetries: number;
  readonly listen: { host: string; port: number };
  /** `serve`: the web configuration file for `/metrics` (TLS, basic auth, headers), when set. */
  readonly webConfigFile?: string;
  readonly logLevel: LogLevel;
  readonly format: 'prometheus' | 'openmetrics' | 'json';
  readonly push: {
    readonly sinks: readonly SinkName[];
    readonly remoteWriteUrl?: string;
    readonly remoteWriteSigv4Region?: string;
    /** From POSTURE_REMOTE_WRITE_BEARER_TOKEN (`value`), its SSM parameter or its secret; resolved when first pushed. */
    readonly remoteWriteBearerToken?: KeySource;
    readonly remoteWriteUsername?: string;
    /** From POSTURE_REMOTE_WRITE_PASSWORD (`value`), its SSM parameter or its secret; resolved when first pushed. */
    readonly remoteWritePassword?: KeySource;
    readonly pushgatewayUrl?: string;
    readonly pushgatewayJob: string;
  };
  readonly lambdaMarginSeconds: number;
  /** Every secret value in the config (for log redaction); secrets from files or stores are added when read. */
  readonly secrets: readonly string[];
}

/** Inputs of the loader; precedence is flag > env > config file > default. */
export interface ConfigSources {
  env?: Record<string, string | undefined>;
  /** Flags by setting key (the CLI maps `--page-size` to `page_size`). */
  flags?: Partial<Record<SettingKey, string>>;
  /** Reads a file (injected for tests); default fs.readFileSync utf8. */
  readFile?: (path: string) => string;
  /** When true, a missing portal is not an error (`npm start` demo supplies the simulated one). */
  allowNoPortal?: boolean;
}

type Raw = Record<string, unknown>;

const isSet = (v: unknown): boolean => v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');

function label(def: SettingDef): string {
  return def.flag ? `${envName(def)} (--${flagName(def)})` : envName(def);
}

function show(def: SettingDef, value: unknown): string {
  if (def.kind === 'secret') return '(hidden)';
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return JSON.stringify(s.length > 80 ? s.slice(0, 77) + '...' : s);
}

/** Accumulates one ConfigError per problem, so `check-config` can list them all. */
class Problems {
  readonly list: ConfigError[] = [];
  add(setting: string, message: string): void {
    this.list.push(new ConfigError(setting, message));
  }
}

function parseValue(def: SettingDef, value: unknown, where: string, problems: Problems): unknown {
  const name = where === 'env' ? label(def) : where;
  switch (def.kind) {
    case 'int': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : NaN;
      const min = def.min ?? 0;
      const max = def.max ?? Number.MAX_SAFE_INTEGER;
      if (!Number.isInteger(n) || n < min || n > max) {
        problems.add(envName(def), `${name}=${show(def, value)} is not valid: set a whole number from ${min} to ${max}${def.default !== undefined ? ` (default ${def.default})` : ''}.`);
        return undefined;
      }
      return n;
    }
    case 'list': {
      const items = Array.isArray(value) ? value.map(String) : String(value).split(',');
      const list = items.map((s) => s.trim()).filter((s) => s !== '');
      if (def.values) {
        const bad = list.filter((s) => !def.values!.includes(s));
        if (bad.length) {
          problems.add(envName(def), `${name}=${show(def, value)} is not valid: use a comma-separated subset of ${def.values.join(', ')}.`);
          return undefined;
        }
      }
      return [...new Set(list)];
    }
    case 'enum': {
      const s = String(value).trim();
      if (!def.values!.includes(s)) {
        problems.add(envName(def), `${name}=${show(def, value)} is not valid: use one of ${def.values!.join(', ')}.`);
        return undefined;
      }
      return s;
    }
    default:
      if (typeof value !== 'string') {
        problems.add(envName(def), `${name} must be a string, got ${show(def, value)}.`);
        return undefined;
      }
      return value.trim();
  }
}

function readConfigFile(sources: ConfigSources, env: Record<string, string | undefined>, problems: Problems): Raw | undefined {
  const path = sources.flags?.config_file ?? env[envName(SETTING_BY_KEY.config_file)];
  const inline = env[envName(SETTING_BY_KEY.config)];
  if (isSet(path) && isSet(inline)) {
    problems.add('POSTURE_CONFIG', 'POSTURE_CONFIG and POSTURE_CONFIG_FILE (--config) are both set: keep one of them.');
    return undefined;
  }
  let text: string;
  let where: string;
  if (isSet(path)) {
    where = `config file ${path}`;
    try {
      text = (sources.readFile ?? ((p: string) => readFileSync(p, 'utf8')))(path!);
    } catch (err) {
      problems.add('POSTURE_CONFIG_FILE', `POSTURE_CONFIG_FILE (--config): cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give a readable JSON or YAML file.`);
      return undefined;
    }
  } else if (isSet(inline)) {
    where = 'POSTURE_CONFIG';
    text = inline!;
  } else {
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = /\.json$/i.test(path ?? '') || where === 'POSTURE_CONFIG' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    // Only the position: the parsers quote the text around an error, which may hold a key.
    const msg = (err as Error).message;
    const at = /position (\d+)/.exec(msg)?.[1];
    const line = /line (\d+), column (\d+)/.exec(msg);
    const position = at !== undefined ? ` at character ${at}` : line ? ` at line ${line[1]}, column ${line[2]}` : '';
    problems.add(where === 'POSTURE_CONFIG' ? 'POSTURE_CONFIG' : 'POSTURE_CONFIG_FILE', `${where} is not valid ${where === 'POSTURE_CONFIG' || /\.json$/i.test(path ?? '') ? 'JSON' : 'YAML'}${position}: fix the syntax there.`);
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    problems.add(where === 'POSTURE_CONFIG' ? 'POSTURE_CONFIG' : 'POSTURE_CONFIG_FILE', `${where} must hold a mapping of settings (and optionally \`portals\`).`);
    return undefined;
  }
  return Object.assign(parsed as Raw, { __where: where });
}

const FILE_EXCLUDED: ReadonlySet<string> = new Set(['config_file', 'config']);

/** A value as a file may hold it; each setting's own rules are applied by `parseValue`. */
const FileValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number()]))]);
const fileKeys = (keep: (d: SettingDef) => boolean) =>
  Object.fromEntries(SETTINGS.filter((d) => keep(d) && !FILE_EXCLUDED.has(d.key)).map((d) => [d.key, FileValue.optional()]));
/** The shape of a config file: known keys only, and `portals` as a non-empty list of per-portal settings. */
const ConfigFileSchema = z.strictObject({
  ...fileKeys(() => true),
  portals: z.array(z.strictObject(fileKeys((d) => d.scope === 'portal'))).min(1).optional(),
  __where: z.string(),
});

/** Checks a config file's shape with zod, one problem per issue. */
function checkFileShape(file: Raw, where: string, problems: Problems): void {
  const parsed = ConfigFileSchema.safeParse(file);
  if (parsed.success) return;
  for (const issue of parsed.error.issues) {
    const at = issue.path.length ? `${where}: ${issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.').replace(/\.\[/g, '[')}` : where;
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) problems.add('POSTURE_CONFIG_FILE', `${at}: unknown setting \`${key}\`: remove it or use one of the documented keys (README, Configuration).`);
    } else if (issue.path[0] === 'portals' && issue.path.length <= 2) {
      problems.add('POSTURE_CONFIG_FILE', `${where}: \`portals\` must be a non-empty list of mappings.`);
    } else {
      problems.add('POSTURE_CONFIG_FILE', `${at} must be a string, a number or a list.`);
    }
  }
}

function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Parses `HOST:PORT` (`[::1]:9877`; `:9877` = `emptyHost`, all interfaces unless said otherwise). */
export function parseListen(value: string, emptyHost = '0.0.0.0'): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  return { host: m[1] ?? (m[2] || emptyHost), port };
}

interface Layer {
  values: Raw;
  /** How to name a value of this layer in a message. */
  where: (def: SettingDef) => string;
}

/** Looks a setting up through the layers (flag > env > file > defaults), parsing the first set value. */
function lookup(key: SettingKey, layers: Layer[], problems: Problems): unknown {
  const def = SETTING_BY_KEY[key];
  for (const layer of layers) {
    const v = layer.values[key];
    if (isSet(v)) return parseValue(def, v, layer.where(def), problems);
  }
  return undefined;
}

function buildPortal(layers: Layer[], problems: Problems, index: number | null): PortalConfig | undefined {
  const get = (k: SettingKey) => lookup(k, layers, problems);
  const at = index === null ? '' : `portals[${index}]: `;
  const baseUrlRaw = get('base_url') as string | undefined;
  const cloudId = get('cloud_id') as string | undefined;
  const apiHost = get('api_host') as string | undefined;
  let baseUrl: string | undefined;
  let host: string | undefined;
  if (baseUrlRaw !== undefined && (cloudId !== undefined || apiHost !== undefined)) {
    problems.add('POSTURE_BASE_URL', `${at}POSTURE_BASE_URL and POSTURE_CLOUD_ID/POSTURE_API_HOST are both set: give either the base URL or the Cloud ID and host.`);
    return undefined;
  }
  if (baseUrlRaw !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(baseUrlRaw);
    } catch {
      problems.add('POSTURE_BASE_URL', `${at}POSTURE_BASE_URL=${JSON.stringify(baseUrlRaw)} is not a URL: give the full https://<cloud_id>.<host>/public-api/v1.`);
      return undefined;
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
      problems.add('POSTURE_BASE_URL', `${at}POSTURE_BASE_URL must use https (plain http only for loopback addresses): got ${url.protocol}//${url.host}.`);
      return undefined;
    }
    if (url.username || url.password || url.search || url.hash) {
      problems.add('POSTURE_BASE_URL', `${at}POSTURE_BASE_URL must not carry credentials, a query or a fragment: give only https://<cloud_id>.<host>/public-api/v1.`);
      return undefined;
    }
    baseUrl = url.origin + url.pathname.replace(/\/+$/, '');
    host = url.hostname;
  } else if (cloudId !== undefined || apiHost !== undefined) {
    if (cloudId === undefined || apiHost === undefined) {
      problems.add(cloudId === undefined ? 'POSTURE_CLOUD_ID' : 'POSTURE_API_HOST', `${at}${cloudId === undefined ? 'POSTURE_CLOUD_ID' : 'POSTURE_API_HOST'} is missing: the Cloud ID and the API host go together (or give POSTURE_BASE_URL).`);
      return undefined;
    }
    if (!DNS_LABEL.test(cloudId)) {
      problems.add('POSTURE_CLOUD_ID', `${at}POSTURE_CLOUD_ID=${JSON.stringify(cloudId)} is not a valid DNS label: use letters, digits and inner hyphens, at most 63 characters.`);
      return undefined;
    }
    if (!HOSTNAME.test(apiHost)) {
      problems.add('POSTURE_API_HOST', `${at}POSTURE_API_HOST=${JSON.stringify(apiHost)} is not a host name: give e.g. example.com, without scheme or path.`);
      return undefined;
    }
    baseUrl = `https://${cloudId.toLowerCase()}.${apiHost.toLowerCase()}/public-api/v1`;
    host = `${cloudId}.${apiHost}`;
  } else {
    problems.add('POSTURE_BASE_URL', `${at}no portal is configured: set POSTURE_BASE_URL, or POSTURE_CLOUD_ID and POSTURE_API_HOST${index === null ? ' (or run `npm start` for the simulated portal)' : ''}.`);
    return undefined;
  }

  const keySources: KeySource[] = [];
  const apiKey = get('api_key') as string | undefined;
  const apiKeyFile = get('api_key_file') as string | undefined;
  const ssm = get('api_key_ssm_parameter') as string | undefined;
  const secretId = get('api_key_secret_id') as string | undefined;
  if (apiKey !== undefined) keySources.push({ kind: 'value', value: apiKey });
  if (apiKeyFile !== undefined) keySources.push({ kind: 'file', path: apiKeyFile });
  if (ssm !== undefined) keySources.push({ kind: 'ssm', name: ssm });
  if (secretId !== undefined) keySources.push({ kind: 'secret', id: secretId });
  if (keySources.length === 0) {
    problems.add('POSTURE_API_KEY', `${at}no API key: set POSTURE_API_KEY, POSTURE_API_KEY_FILE, POSTURE_API_KEY_SSM_PARAMETER or POSTURE_API_KEY_SECRET_ID.`);
    return undefined;
  }
  if (keySources.length > 1) {
    problems.add('POSTURE_API_KEY', `${at}more than one API key source is set (${keySources.map((k) => k.kind).join(', ')}): keep exactly one of POSTURE_API_KEY, POSTURE_API_KEY_FILE, POSTURE_API_KEY_SSM_PARAMETER, POSTURE_API_KEY_SECRET_ID.`);
    return undefined;
  }
  const header = (get('api_key_header') as string | undefined) ?? String(SETTING_BY_KEY.api_key_header.default);
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header)) {
    problems.add('POSTURE_API_KEY_HEADER', `${at}POSTURE_API_KEY_HEADER=${JSON.stringify(header)} is not a valid HTTP header name.`);
  }
  const name = (get('portal') as string | undefined) ?? cloudId ?? host!;
  return {
    name,
    baseUrl,
    key: keySources[0]!,
    apiKeyHeader: header,
    requestsPerMinute: (get('requests_per_minute') as number | undefined) ?? 5,
    pageSize: (get('page_size') as number | undefined) ?? 500,
    vitalsTags: (get('vitals_tags') as string[] | undefined) ?? [],
  };
}

/**
 * Reads and validates the configuration once, at the edge. Throws ConfigErrors listing one
 * ConfigError per problem (each message names the setting and says the fix).
 */
export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? process.env;
  const problems = new Problems();
  const flags: Raw = { ...(sources.flags ?? {}) };
  for (const key of Object.keys(flags)) {
    const def = SETTING_BY_KEY[key as SettingKey];
    if (!def || !def.flag) problems.add(`--${key.replace(/_/g, '-')}`, `--${key.replace(/_/g, '-')} is not a flag: see \`posture-exporter --help\`${def ? ` (set ${envName(def)} in the environment instead)` : ''}.`);
  }
  const envValues: Raw = {};
  for (const def of SETTINGS) {
    const v = env[envName(def)];
    if (v !== undefined) envValues[def.key] = v;
  }
  const file = readConfigFile(sources, env, problems);
  const fileWhere = (file?.__where as string | undefined) ?? '';
  const fileTop: Raw = {};
  let filePortals: Raw[] | undefined;
  if (file) {
    // Problems are reported; what is usable is still read, so one typo does not hide the rest.
    checkFileShape(file, fileWhere, problems);
    for (const [k, v] of Object.entries(file)) if (k !== 'portals' && k !== '__where' && k in SETTING_BY_KEY && FileValue.safeParse(v).success) fileTop[k] = v;
    const portals = file.portals;
    if (portals !== undefined) {
      // A broken list was reported above; an empty one here keeps the single-portal settings from being asked for too.
      const usable = Array.isArray(portals) && portals.every((p) => p !== null && typeof p === 'object' && !Array.isArray(p));
      filePortals = usable ? (portals as Raw[]) : [];
    }
  }
  const flagLayer: Layer = { values: flags, where: (d) => `--${flagName(d)}` };
  const envLayer: Layer = { values: envValues, where: () => 'env' };
  const fileLayer: Layer = { values: fileTop, where: (d) => `${fileWhere}: ${d.key}` };
  const globalLayers = [flagLayer, envLayer, fileLayer];
  const g = (k: SettingKey) => lookup(k, globalLayers, problems);

  const portals: PortalConfig[] = [];
  if (filePortals) {
    const identity: SettingKey[] = ['base_url', 'cloud_id', 'api_host', 'api_key', 'api_key_file', 'api_key_ssm_parameter', 'api_key_secret_id', 'portal'];
    for (const k of identity) {
      if (isSet(flags[k]) || isSet(envValues[k]) || isSet(fileTop[k])) {
        problems.add(envName(SETTING_BY_KEY[k]), `${envName(SETTING_BY_KEY[k])} is set but ${fileWhere} lists portals: give each portal's ${k} inside \`portals\`, or drop the list.`);
      }
    }
    const names = new Set<string>();
    filePortals.forEach((entry, i) => {
      const layer: Layer = { values: entry, where: (d) => `${fileWhere}: portals[${i}].${d.key}` };
      const portal = buildPortal([layer, ...globalLayers], problems, i);
      if (!portal) return;
      if (names.has(portal.name)) problems.add('POSTURE_CONFIG_FILE', `${fileWhere}: portals[${i}] repeats the portal name ${JSON.stringify(portal.name)}: give each portal a distinct \`portal\`.`);
      names.add(portal.name);
      portals.push(portal);
    });
  } else {
    const anyPortal = ['base_url', 'cloud_id', 'api_host'].some((k) => isSet(flags[k]) || isSet(envValues[k]) || isSet(fileTop[k]));
    if (anyPortal || !sources.allowNoPortal) {
      const portal = buildPortal(globalLayers, problems, null);
      if (portal) portals.push(portal);
    }
  }

  const intervalSeconds = (g('interval_seconds') as number | undefined) ?? 300;
  const listenRaw = (g('listen') as string | undefined) ?? String(SETTING_BY_KEY.listen.default);
  const listen = parseListen(listenRaw);
  if (!listen) problems.add('POSTURE_LISTEN', `POSTURE_LISTEN (--listen)=${JSON.stringify(listenRaw)} is not HOST:PORT: give e.g. 0.0.0.0:9877 or 127.0.0.1:9877.`);
  const cycleTimeoutSeconds = (g('cycle_timeout_seconds') as number | undefined) ?? 60;
  const push = buildPush(g, problems);
  const secrets = [
    ...portals.flatMap((p) => (p.key.kind === 'value' ? [p.key.value] : [])),
    ...[push.remoteWriteBearerToken, push.remoteWritePassword].flatMap((k) => (k?.kind === 'value' ? [k.value] : [])),
  ];
  // Every lookup runs before the verdict, so all problems are reported at once.
  const config: Config = {
    portals,
    intervalSeconds,
    maxStalenessSeconds: (g('max_staleness_seconds') as number | undefined) ?? 2 * intervalSeconds,
    cycleTimeoutSeconds,
    connectTimeoutSeconds: (g('connect_timeout_seconds') as number | undefined) ?? 10,
    requestTimeoutSeconds: (g('request_timeout_seconds') as number | undefined) ?? 30,
    maxRetries: (g('max_retries') as number | undefined) ?? 3,
    listen: listen!,
    webConfigFile: g('web_config_file') as string | undefined,
    logLevel: ((g('log_level') as string | undefined) ?? 'info') as LogLevel,
    format: ((g('format') as string | undefined) ?? 'prometheus') as Config['format'],
    push,
    lambdaMarginSeconds: (g('lambda_margin_seconds') as number | undefined) ?? 10,
    secrets,
  };
  if (problems.list.length) throw new ConfigErrors(problems.list);
  return config;
}

/** The settings of one remote-write credential: the plain value, its SSM parameter, its secret. */
type CredentialKeys = readonly [value: SettingKey, ssm: SettingKey, secret: SettingKey];
const BEARER_TOKEN_KEYS: CredentialKeys = ['remote_write_bearer_token', 'remote_write_bearer_token_ssm_parameter', 'remote_write_bearer_token_secret_id'];
const PASSWORD_KEYS: CredentialKeys = ['remote_write_password', 'remote_write_password_ssm_parameter', 'remote_write_password_secret_id'];

/** The environment name of the setting a credential came from (the plain one when unset). */
function credentialSetting(keys: CredentialKeys, source: KeySource | undefined): string {
  const key = source?.kind === 'ssm' ? keys[1] : source?.kind === 'secret' ? keys[2] : keys[0];
  return envName(SETTING_BY_KEY[key]);
}

/**
 * One remote-write credential's source. More than one is a problem; the first is still returned,
 * so the auth rules below do not report the same mistake twice.
 */
function credentialSource(g: (k: SettingKey) => unknown, problems: Problems, what: string, keys: CredentialKeys): KeySource | undefined {
  const sources: KeySource[] = [];
  const value = g(keys[0]) as string | undefined;
  const ssm = g(keys[1]) as string | undefined;
  const secretId = g(keys[2]) as string | undefined;
  if (value !== undefined) sources.push({ kind: 'value', value });
  if (ssm !== undefined) sources.push({ kind: 'ssm', name: ssm });
  if (secretId !== undefined) sources.push({ kind: 'secret', id: secretId });
  if (sources.length > 1) {
    const names = keys.map((k) => envName(SETTING_BY_KEY[k]));
    problems.add(names[0]!, `more than one ${what} source is set (${sources.map((k) => k.kind).join(', ')}): keep exactly one of ${names.join(', ')}.`);
  }
  return sources[0];
}

function buildPush(g: (k: SettingKey) => unknown, problems: Problems): Config['push'] {
  const sinks = ((g('push') as string[] | undefined) ?? []) as SinkName[];
  const push = {
    sinks,
    remoteWriteUrl: g('remote_write_url') as string | undefined,
    remoteWriteSigv4Region: g('remote_write_sigv4_region') as string | undefined,
    remoteWriteBearerToken: credentialSource(g, problems, 'remote-write bearer token', BEARER_TOKEN_KEYS),
    remoteWriteUsername: g('remote_write_username') as string | undefined,
    remoteWritePassword: credentialSource(g, problems, 'remote-write password', PASSWORD_KEYS),
    pushgatewayUrl: g('pushgateway_url') as string | undefined,
    pushgatewayJob: (g('pushgateway_job') as string | undefined) ?? 'posture-exporter',
  };
  const checkUrl = (setting: string, value: string | undefined) => {
    if (value === undefined) return;
    try {
      const u = new URL(value);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('scheme');
    } catch {
      problems.add(setting, `${setting}=${JSON.stringify(value)} is not an http(s) URL: give the receiver's full URL.`);
    }
  };
  checkUrl('POSTURE_REMOTE_WRITE_URL', push.remoteWriteUrl);
  checkUrl('POSTURE_PUSHGATEWAY_URL', push.pushgatewayUrl);
  if (sinks.includes('remote_write') && !push.remoteWriteUrl) problems.add('POSTURE_REMOTE_WRITE_URL', 'POSTURE_PUSH includes remote_write but POSTURE_REMOTE_WRITE_URL is not set: give the receiver\'s remote-write URL.');
  if (sinks.includes('pushgateway') && !push.pushgatewayUrl) problems.add('POSTURE_PUSHGATEWAY_URL', 'POSTURE_PUSH includes pushgateway but POSTURE_PUSHGATEWAY_URL is not set: give the Pushgateway\'s base URL.');
  // The messages name the setting each credential came from (the plain one when it is unset).
  const bearerSetting = credentialSetting(BEARER_TOKEN_KEYS, push.remoteWriteBearerToken);
  const passwordSetting = credentialSetting(PASSWORD_KEYS, push.remoteWritePassword);
  const auths = [push.remoteWriteSigv4Region && 'sigv4', push.remoteWriteBearerToken && 'bearer', (push.remoteWriteUsername || push.remoteWritePassword) && 'basic'].filter(Boolean);
  if (auths.length > 1) problems.add('POSTURE_REMOTE_WRITE_SIGV4_REGION', `remote write has more than one auth method set (${auths.join(', ')}): keep one of POSTURE_REMOTE_WRITE_SIGV4_REGION, ${bearerSetting}, POSTURE_REMOTE_WRITE_USERNAME+${passwordSetting.slice('POSTURE_REMOTE_WRITE_'.length)}.`);
  if (Boolean(push.remoteWriteUsername) !== Boolean(push.remoteWritePassword)) problems.add('POSTURE_REMOTE_WRITE_USERNAME', `POSTURE_REMOTE_WRITE_USERNAME and ${passwordSetting} go together: set both for basic auth.`);
  return push;
}

/** Smallest `serve` interval (seconds) at which one cycle per interval fits every portal's budget. */
export function minimumIntervalSeconds(config: Pick<Config, 'portals'>): number {
  let worst = 60;
  for (const p of config.portals) {
    const requests = minimumRequestsPerCycle(p);
    worst = Math.max(worst, 60 * Math.ceil(requests / p.requestsPerMinute));
  }
  return worst;
}

/** Fewest requests a cycle needs: Vitals (1 + 1 per tag), devices (2), alerts (at least 1). */
export function minimumRequestsPerCycle(portal: Pick<PortalConfig, 'vitalsTags'>): number {
  return 1 + portal.vitalsTags.length + 2 + 1;
}

/** Checks `serve`-only constraints; returns problems (empty when fine). */
export function checkServeConfig(config: Config): ConfigError[] {
  const out: ConfigError[] = [];
  const min = minimumIntervalSeconds(config);
  if (config.intervalSeconds < min) {
    out.push(new ConfigError('POSTURE_INTERVAL_SECONDS', `POSTURE_INTERVAL_SECONDS (--interval-seconds)=${config.intervalSeconds} cannot fit a cycle in the budget (${config.portals.map((p) => `${p.name}: ${minimumRequestsPerCycle(p)} requests at ${p.requestsPerMinute}/min`).join('; ')}): set it to ${min} or more.`));
  }
  if (config.cycleTimeoutSeconds > config.intervalSeconds) {
    out.push(new ConfigError('POSTURE_CYCLE_TIMEOUT_SECONDS', `POSTURE_CYCLE_TIMEOUT_SECONDS (--cycle-timeout-seconds)=${config.cycleTimeoutSeconds} is longer than the interval (${config.intervalSeconds} s): set it to ${config.intervalSeconds} or less.`));
  }
  return out;
}
