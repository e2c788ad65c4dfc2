import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError, ConfigErrors } from '../errors.js';
import type { LogLevel } from '../core/log.js';
import { SOURCES, type Source } from '../domain.js';
import { MAX_INTERVAL_SECONDS, planPortal, runSeconds, type IntervalChange, type PortalPlan } from '../schedule/plan.js';
import { SETTINGS, SETTING_BY_KEY, envName, flagName, type SettingDef, type SettingKey, type SinkName } from './settings.js';

/** Where a secret (the API key, a remote-write credential) comes from; resolved at the edge (file read, SSM, Secrets Manager). */
export type KeySource =
  | { kind: 'value'; value: string }
  | { kind: 'file'; path: string }
  | { kind: 'ssm'; name: string }
  | { kind: 'secret'; id: string };

/** How a user sets a setting: a flag, an environment variable, or a key of a config file. */
export interface SettingRef {
  readonly kind: 'flag' | 'env' | 'file';
  /** `--alerts-interval-seconds`, `POSTURE_ALERTS_INTERVAL_SECONDS`, or the key (`portals[0].alerts_interval_seconds`). */
  readonly name: string;
  /** The file (or POSTURE_CONFIG) holding the key. */
  readonly file?: string;
}

/** How a source's interval is set, and whether it is set for the source itself (else it is POSTURE_INTERVAL_SECONDS). */
export interface IntervalSetting extends SettingRef {
  readonly explicit: boolean;
}

/** A setting with a value, as a user would write it: `--x=1`, `POSTURE_X=1`, or `x: 1 in file.yaml`. */
export function formatSetting(ref: SettingRef, value: number | string): string {
  return ref.kind === 'file' ? `${ref.name}: ${value} in ${ref.file}` : `${ref.name}=${value}`;
}

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
  /** `serve`: seconds between runs of each source. */
  readonly intervals: Readonly<Record<Source, number>>;
  /** How each source's interval is set (unset: POSTURE_<SOURCE>_INTERVAL_SECONDS, not set explicitly). */
  readonly intervalSettings?: Readonly<Record<Source, IntervalSetting>>;
  /** Most series per label-valued family for this portal (the rest folded into `__other__`). */
  readonly maxSeriesPerFamily: number;
}

export type { SinkName } from './settings.js';

/** The validated configuration of the process. */
export interface Config {
  readonly portals: readonly PortalConfig[];
  readonly intervalSeconds: number;
  /** How POSTURE_INTERVAL_SECONDS is set (unset: the variable). */
  readonly intervalSetting?: SettingRef;
  /** Unset: two intervals of each source. */
  readonly maxStalenessSeconds?: number;
  /** An explicit cap on a run; unset: from the plan (once), the invocation (Lambda), the next run (serve). */
  readonly cycleTimeoutSeconds?: number;
  readonly maxRetryAfterSeconds: number;
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
    /** POSTURE_REMOTE_WRITE_HEADERS, parsed; the values are secrets. */
    readonly remoteWriteHeaders: Readonly<Record<string, string>>;
    readonly pushgatewayUrl?: string;
    readonly pushgatewayJob: string;
    readonly pushgatewayUsername?: string;
    /** From POSTURE_PUSHGATEWAY_PASSWORD (`value`), its SSM parameter or its secret; resolved when first pushed. */
    readonly pushgatewayPassword?: KeySource;
    /** Per push request; unset: 10 s (OTLP: its OTEL_* timeout). */
    readonly timeoutSeconds?: number;
    /** Retries of a remote write or Pushgateway request. */
    readonly maxRetries: number;
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

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
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
  /** How a user sets a value in this layer (the suggestions of `check-config` name it so). */
  setting: (def: SettingDef) => SettingRef;
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

type Get = (k: SettingKey) => unknown;

/** The portal's address: a base URL, or a Cloud ID and API host; undefined (with a problem) when missing or invalid. */
function portalAddress(get: Get, problems: Problems, at: string, index: number | null): { baseUrl: string; host: string; cloudId?: string } | undefined {
  const baseUrlRaw = get('base_url') as string | undefined;
  const cloudId = get('cloud_id') as string | undefined;
  const apiHost = get('api_host') as string | undefined;
  if (baseUrlRaw !== undefined && (cloudId !== undefined || apiHost !== undefined)) {
    problems.add('POSTURE_BASE_URL', `${at}POSTURE_BASE_URL and POSTURE_CLOUD_ID/POSTURE_API_HOST are both set: give either the base URL or the Cloud ID and host.`);
    return undefined;
  }
  if (baseUrlRaw !== undefined) return baseUrlAddress(baseUrlRaw, problems, at);
  if (cloudId === undefined && apiHost === undefined) {
    problems.add('POSTURE_BASE_URL', `${at}no portal is configured: set POSTURE_BASE_URL, or POSTURE_CLOUD_ID and POSTURE_API_HOST${index === null ? ' (or run `npm start` for the simulated portal)' : ''}.`);
    return undefined;
  }
  if (cloudId === undefined || apiHost === undefined) {
    const missing = cloudId === undefined ? 'POSTURE_CLOUD_ID' : 'POSTURE_API_HOST';
    problems.add(missing, `${at}${missing} is missing: the Cloud ID and the API host go together (or give POSTURE_BASE_URL).`);
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
  return { baseUrl: `https://${cloudId.toLowerCase()}.${apiHost.toLowerCase()}/public-api/v1`, host: `${cloudId}.${apiHost}`, cloudId };
}

/** POSTURE_BASE_URL checked: a URL, https (plain http on loopback only), nothing but origin and path. */
function baseUrlAddress(raw: string, problems: Problems, at: string): { baseUrl: string; host: string } | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problems.add('POSTURE_BASE_URL', `${at}POSTURE_BASE_URL=${JSON.stringify(raw)} is not a URL: give the full https://<cloud_id>.<host>/public-api/v1.`);
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
  return { baseUrl: url.origin + url.pathname.replace(/\/+$/, ''), host: url.hostname };
}

/** Where the portal's API key comes from: exactly one of the four key settings. */
function apiKeySource(get: Get, problems: Problems, at: string): KeySource | undefined {
  const sources: KeySource[] = [];
  const apiKey = get('api_key') as string | undefined;
  const apiKeyFile = get('api_key_file') as string | undefined;
  const ssm = get('api_key_ssm_parameter') as string | undefined;
  const secretId = get('api_key_secret_id') as string | undefined;
  if (apiKey !== undefined) sources.push({ kind: 'value', value: apiKey });
  if (apiKeyFile !== undefined) sources.push({ kind: 'file', path: apiKeyFile });
  if (ssm !== undefined) sources.push({ kind: 'ssm', name: ssm });
  if (secretId !== undefined) sources.push({ kind: 'secret', id: secretId });
  if (sources.length === 0) {
    problems.add('POSTURE_API_KEY', `${at}no API key: set POSTURE_API_KEY, POSTURE_API_KEY_FILE, POSTURE_API_KEY_SSM_PARAMETER or POSTURE_API_KEY_SECRET_ID.`);
    return undefined;
  }
  if (sources.length > 1) {
    problems.add('POSTURE_API_KEY', `${at}more than one API key source is set (${sources.map((k) => k.kind).join(', ')}): keep exactly one of POSTURE_API_KEY, POSTURE_API_KEY_FILE, POSTURE_API_KEY_SSM_PARAMETER, POSTURE_API_KEY_SECRET_ID.`);
    return undefined;
  }
  return sources[0];
}

/** One portal from its layers (its `portals` entry, then flags, env, file): address, key, and its settings. */
function buildPortal(layers: Layer[], problems: Problems, index: number | null, interval: number): PortalConfig | undefined {
  const get: Get = (k) => lookup(k, layers, problems);
  const at = index === null ? '' : `portals[${index}]: `;
  const address = portalAddress(get, problems, at, index);
  if (!address) return undefined;
  const key = apiKeySource(get, problems, at);
  if (!key) return undefined;
  const header = (get('api_key_header') as string | undefined) ?? String(SETTING_BY_KEY.api_key_header.default);
  if (!HEADER_NAME.test(header)) {
    problems.add('POSTURE_API_KEY_HEADER', `${at}POSTURE_API_KEY_HEADER=${JSON.stringify(header)} is not a valid HTTP header name.`);
  }
  return {
    name: (get('portal') as string | undefined) ?? address.cloudId ?? address.host,
    baseUrl: address.baseUrl,
    key,
    apiKeyHeader: header,
    requestsPerMinute: (get('requests_per_minute') as number | undefined) ?? 5,
    pageSize: (get('page_size') as number | undefined) ?? 500,
    vitalsTags: (get('vitals_tags') as string[] | undefined) ?? [],
    intervals: {
      alerts: (get('alerts_interval_seconds') as number | undefined) ?? interval,
      vitals: (get('vitals_interval_seconds') as number | undefined) ?? interval,
      devices: (get('devices_interval_seconds') as number | undefined) ?? interval,
    },
    intervalSettings: {
      alerts: intervalSetting(layers, index, 'alerts_interval_seconds'),
      vitals: intervalSetting(layers, index, 'vitals_interval_seconds'),
      devices: intervalSetting(layers, index, 'devices_interval_seconds'),
    },
    maxSeriesPerFamily: (get('max_series_per_family') as number | undefined) ?? Number(SETTING_BY_KEY.max_series_per_family.default),
  };
}

/**
 * Where a source's own interval comes from, as a user changes it: the layer that set it, else (it
 * inherits POSTURE_INTERVAL_SECONDS) the portal's entry in the file's `portals`, or the variable.
 */
function intervalSetting(layers: Layer[], index: number | null, key: SettingKey): IntervalSetting {
  const def = SETTING_BY_KEY[key];
  const layer = layers.find((l) => isSet(l.values[key]));
  if (layer) return { explicit: true, ...layer.setting(def) };
  // The entry, not the variable: the variable would change every portal that inherits.
  return { explicit: false, ...(index === null ? { kind: 'env', name: envName(def) } : layers[0]!.setting(def)) };
}

/**
 * Reads and validates the configuration once, at the edge. Throws ConfigErrors listing one
 * ConfigError per problem (each message names the setting and says the fix).
 */
export function loadConfig(sources: ConfigSources = {}): Config {
  const problems = new Problems();
  const layers = settingLayers(sources, problems);
  const g = (k: SettingKey) => lookup(k, layers.global, problems);
  const intervalSeconds = (g('interval_seconds') as number | undefined) ?? 300;
  const intervalDef = SETTING_BY_KEY.interval_seconds;
  const intervalFrom = layers.global.find((l) => isSet(l.values.interval_seconds))?.setting(intervalDef) ?? { kind: 'env', name: envName(intervalDef) };
  const portals = buildPortals(layers, sources, problems, intervalSeconds);
  const listenRaw = (g('listen') as string | undefined) ?? String(SETTING_BY_KEY.listen.default);
  const listen = parseListen(listenRaw);
  if (!listen) problems.add('POSTURE_LISTEN', `POSTURE_LISTEN (--listen)=${JSON.stringify(listenRaw)} is not HOST:PORT: give e.g. 0.0.0.0:9877 or 127.0.0.1:9877.`);
  const push = buildPush(g, problems);
  const secrets = [
    ...portals.flatMap((p) => (p.key.kind === 'value' ? [p.key.value] : [])),
    ...[push.remoteWriteBearerToken, push.remoteWritePassword, push.pushgatewayPassword].flatMap((k) => (k?.kind === 'value' ? [k.value] : [])),
    ...Object.values(push.remoteWriteHeaders),
  ];
  // Every lookup runs before the verdict, so all problems are reported at once.
  const config: Config = {
    portals,
    intervalSeconds,
    intervalSetting: intervalFrom,
    maxStalenessSeconds: g('max_staleness_seconds') as number | undefined,
    cycleTimeoutSeconds: g('cycle_timeout_seconds') as number | undefined,
    maxRetryAfterSeconds: (g('max_retry_after_seconds') as number | undefined) ?? 120,
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

/** The layers a setting is looked up in (flag > env > config file), and the file's `portals` when it lists them. */
interface SettingLayers {
  readonly flags: Raw;
  readonly env: Raw;
  readonly fileTop: Raw;
  readonly fileWhere: string;
  readonly filePortals?: Raw[];
  readonly global: Layer[];
}

/** Reads flags (refusing settings that are not flags), the environment and the config file into layers. */
function settingLayers(sources: ConfigSources, problems: Problems): SettingLayers {
  const env = sources.env ?? process.env;
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
  const global: Layer[] = [
    { values: flags, where: (d) => `--${flagName(d)}`, setting: (d) => ({ kind: 'flag', name: `--${flagName(d)}` }) },
    { values: envValues, where: () => 'env', setting: (d) => ({ kind: 'env', name: envName(d) }) },
    { values: fileTop, where: (d) => `${fileWhere}: ${d.key}`, setting: (d) => ({ kind: 'file', name: d.key, file: fileWhere }) },
  ];
  return { flags, env: envValues, fileTop, fileWhere, filePortals, global };
}

/** The portals: each entry of the file's `portals` list over the global layers, or one portal from the global layers. */
function buildPortals(layers: SettingLayers, sources: ConfigSources, problems: Problems, intervalSeconds: number): PortalConfig[] {
  const { flags, env, fileTop, fileWhere, filePortals, global } = layers;
  const setSomewhere = (k: string) => isSet(flags[k]) || isSet(env[k]) || isSet(fileTop[k]);
  const portals: PortalConfig[] = [];
  if (!filePortals) {
    const anyPortal = ['base_url', 'cloud_id', 'api_host'].some(setSomewhere);
    if (anyPortal || !sources.allowNoPortal) {
      const portal = buildPortal(global, problems, null, intervalSeconds);
      if (portal) portals.push(portal);
    }
    return portals;
  }
  const identity: SettingKey[] = ['base_url', 'cloud_id', 'api_host', 'api_key', 'api_key_file', 'api_key_ssm_parameter', 'api_key_secret_id', 'portal'];
  for (const k of identity.filter(setSomewhere)) {
    problems.add(envName(SETTING_BY_KEY[k]), `${envName(SETTING_BY_KEY[k])} is set but ${fileWhere} lists portals: give each portal's ${k} inside \`portals\`, or drop the list.`);
  }
  const names = new Set<string>();
  filePortals.forEach((entry, i) => {
    const layer: Layer = { values: entry, where: (d) => `${fileWhere}: portals[${i}].${d.key}`, setting: (d) => ({ kind: 'file', name: `portals[${i}].${d.key}`, file: fileWhere }) };
    const portal = buildPortal([layer, ...global], problems, i, intervalSeconds);
    if (!portal) return;
    if (names.has(portal.name)) problems.add('POSTURE_CONFIG_FILE', `${fileWhere}: portals[${i}] repeats the portal name ${JSON.stringify(portal.name)}: give each portal a distinct \`portal\`.`);
    names.add(portal.name);
    portals.push(portal);
  });
  return portals;
}

/** The settings of one remote-write credential: the plain value, its SSM parameter, its secret. */
type CredentialKeys = readonly [value: SettingKey, ssm: SettingKey, secret: SettingKey];
const BEARER_TOKEN_KEYS: CredentialKeys = ['remote_write_bearer_token', 'remote_write_bearer_token_ssm_parameter', 'remote_write_bearer_token_secret_id'];
const PASSWORD_KEYS: CredentialKeys = ['remote_write_password', 'remote_write_password_ssm_parameter', 'remote_write_password_secret_id'];
const PUSHGATEWAY_PASSWORD_KEYS: CredentialKeys = ['pushgateway_password', 'pushgateway_password_ssm_parameter', 'pushgateway_password_secret_id'];

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
    remoteWriteHeaders: parseHeaders(g('remote_write_headers') as string | undefined, problems),
    pushgatewayUrl: g('pushgateway_url') as string | undefined,
    pushgatewayJob: (g('pushgateway_job') as string | undefined) ?? 'posture-exporter',
    pushgatewayUsername: g('pushgateway_username') as string | undefined,
    pushgatewayPassword: credentialSource(g, problems, 'Pushgateway password', PUSHGATEWAY_PASSWORD_KEYS),
    timeoutSeconds: g('push_timeout_seconds') as number | undefined,
    maxRetries: (g('push_max_retries') as number | undefined) ?? 3,
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
  if (Boolean(push.pushgatewayUsername) !== Boolean(push.pushgatewayPassword)) {
    const pushgatewayPasswordSetting = credentialSetting(PUSHGATEWAY_PASSWORD_KEYS, push.pushgatewayPassword);
    problems.add('POSTURE_PUSHGATEWAY_USERNAME', `POSTURE_PUSHGATEWAY_USERNAME and ${pushgatewayPasswordSetting} go together: set both for basic auth.`);
  }
  return push;
}

/** Headers the remote-write sink sets itself, or that the auth settings own. */
const RESERVED_HEADERS: ReadonlySet<string> = new Set(['authorization', 'content-type', 'content-encoding', 'content-length', 'host', 'user-agent', 'x-prometheus-remote-write-version']);

/**
 * POSTURE_REMOTE_WRITE_HEADERS: `Name=value,Name2=value2`, values percent-decoded (as in
 * OTEL_EXPORTER_OTLP_HEADERS). Problems name the header, never its value (it may be a credential).
 */
function parseHeaders(raw: string | undefined, problems: Problems): Record<string, string> {
  const headers: Record<string, string> = {};
  if (raw === undefined) return headers;
  const setting = 'POSTURE_REMOTE_WRITE_HEADERS';
  raw.split(',').forEach((entry, i) => {
    if (entry.trim() === '') return;
    const eq = entry.indexOf('=');
    const name = (eq < 0 ? entry : entry.slice(0, eq)).trim();
    if (eq < 0 || !HEADER_NAME.test(name)) {
      problems.add(setting, `${setting}: entry ${i + 1} is not Name=value with a valid header name: give e.g. X-Scope-OrgID=tenant-1,Name2=value2.`);
      return;
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      problems.add(setting, `${setting}: the ${name} header is set by the exporter itself${name.toLowerCase() === 'authorization' ? ' (use the remote-write bearer token, basic-auth or SigV4 settings)' : ''}: remove it.`);
      return;
    }
    if (Object.keys(headers).some((k) => k.toLowerCase() === name.toLowerCase())) {
      problems.add(setting, `${setting}: the ${name} header is given more than once: keep one.`);
      return;
    }
    try {
      headers[name] = decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      problems.add(setting, `${setting}: the value of ${name} has an invalid percent-escape: write a literal % as %25.`);
    }
  });
  return headers;
}

/** The plan of a portal for `serve` (and `check-config`), with what the last runs taught when known. */
export function planOf(portal: PortalConfig, learned: { alertsTotal?: number; pageCap?: number } = {}): PortalPlan {
  const inherited = SOURCES.filter((s) => !portal.intervalSettings?.[s].explicit);
  return planPortal({ requestsPerMinute: portal.requestsPerMinute, pageSize: portal.pageSize, vitalsTags: portal.vitalsTags, intervals: portal.intervals, inherited, ...learned });
}

/** Staleness limit of each source in ms: the setting, else two intervals of the source. */
export function stalenessMs(config: Pick<Config, 'maxStalenessSeconds'>, portal: PortalConfig): Record<Source, number> {
  const of = (s: Source) => (config.maxStalenessSeconds ?? 2 * portal.intervals[s]) * 1000;
  return { vitals: of('vitals'), alerts: of('alerts'), devices: of('devices') };
}

/** The API root every portal serves; anything else answers 404 on every endpoint. */
export const API_PATH = '/public-api/v1';

/** `check-config`: each portal's base URL ends in /public-api/v1 (the loader accepts others; at run time the 404 names the path). */
export function checkApiPaths(config: Config): ConfigError[] {
  return config.portals
    .filter((p) => !p.baseUrl.endsWith(API_PATH))
    .map((p) => new ConfigError('POSTURE_BASE_URL', `${config.portals.length > 1 ? `portal ${p.name}: ` : ''}POSTURE_BASE_URL=${JSON.stringify(p.baseUrl)} does not end in ${API_PATH}: give https://<cloud_id>.<host>${API_PATH} (the portal answers 404 elsewhere).`));
}

/** How to set a source's own interval, as the portal's settings say (the variable when unknown). */
function sourceSetting(portal: PortalConfig, s: Source): SettingRef {
  return portal.intervalSettings?.[s] ?? { kind: 'env', name: `POSTURE_${s.toUpperCase()}_INTERVAL_SECONDS` };
}

/** An interval change as the settings a user writes, e.g. `--alerts-interval-seconds=20` or `POSTURE_INTERVAL_SECONDS=50`. */
export function formatChange(config: Pick<Config, 'intervalSetting'>, portal: PortalConfig, change: Pick<IntervalChange, 'sources' | 'interval'>): string {
  const parts = SOURCES.filter((s) => change.sources[s] !== undefined).map((s) => formatSetting(sourceSetting(portal, s), change.sources[s]!));
  if (change.interval !== undefined) parts.unshift(formatSetting(config.intervalSetting ?? { kind: 'env', name: 'POSTURE_INTERVAL_SECONDS' }, change.interval));
  return parts.join(' ');
}

/** Every source's interval set for the source itself, as a user writes them (the smallest intervals that fit). */
export function formatIntervals(portal: PortalConfig, intervals: Readonly<Record<Source, number>>): string {
  return SOURCES.map((s) => formatSetting(sourceSetting(portal, s), intervals[s])).join(' ');
}

/**
 * Checks `serve`-only constraints: each portal's intervals must fit its share; returns problems
 * (empty when fine). Each names the change that changes least, and POSTURE_INTERVAL_SECONDS when it
 * alone also fixes it; each of them, applied alone, makes the plan fit.
 */
export function checkServeConfig(config: Config): ConfigError[] {
  const out: ConfigError[] = [];
  for (const p of config.portals) {
    const plan = planOf(p);
    if (plan.fits) continue;
    const at = config.portals.length > 1 ? `portal ${p.name}: ` : '';
    const long = plan.sources.find((s) => runSeconds(s.requestsPerRun, p.requestsPerMinute) >= s.intervalSeconds);
    const why =
      plan.requestsPerHour > plan.capacityPerHour
        ? `the intervals need ${Math.ceil(plan.requestsPerHour)} requests per hour but the share allows ${plan.capacityPerHour} (${p.requestsPerMinute}/min)`
        : `a run of ${long!.source} (${long!.requestsPerRun} requests at ${p.requestsPerMinute}/min) takes at least ${runSeconds(long!.requestsPerRun, p.requestsPerMinute)} s, not less than its interval of ${long!.intervalSeconds} s`;
    const change = plan.change;
    if (!change) {
      out.push(new ConfigError('POSTURE_REQUESTS_PER_MINUTE', `${at}${why}, and no interval up to ${MAX_INTERVAL_SECONDS} s fits: raise POSTURE_REQUESTS_PER_MINUTE or give fewer POSTURE_VITALS_TAGS.`));
      continue;
    }
    const alone = plan.intervalAlone !== undefined && change.interval === undefined ? ` (or ${formatChange(config, p, { sources: {}, interval: plan.intervalAlone })})` : '';
    const first = SOURCES.find((s) => change.sources[s] !== undefined);
    out.push(new ConfigError(first ? `POSTURE_${first.toUpperCase()}_INTERVAL_SECONDS` : 'POSTURE_INTERVAL_SECONDS', `${at}${why}: set ${formatChange(config, p, change)}${alone}, or raise POSTURE_REQUESTS_PER_MINUTE.`));
  }
  return out;
}
