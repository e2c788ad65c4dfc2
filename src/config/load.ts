import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import '../core/zod.js';
import * as z from 'zod/mini';
import { ConfigError, ConfigErrors } from '../errors.js';
import type { LogLevel } from '../core/log.js';
import { DEFAULT_ALERT_SLAS, parseAlertSlas, type AlertSlas } from './alert-slas.js';
import { parseObjectives, type Objective } from './objectives.js';
import { Problems } from './problems.js';
import { DEFAULT_RUNBOOK_URL, runbookUrlProblem } from './runbook.js';
import { buildPush, HEADER_NAME } from './push.js';
import { portalIdentity } from './identity.js';
import { stateDirOf } from './state-dir.js';
import { unknownKeyMessage } from './unknown.js';
import { stateTableOf } from './state-table.js';
import { ownsPortal, parseShard, SHARD_SETTING, validateShards } from './shard.js';
import { SETTINGS, SETTING_BY_KEY, defaultOf, envName, flagName, type SettingDef, type SettingKey } from './settings.js';
import type { Config, ConfigSources, IntervalSetting, KeySource, PortalConfig, SettingRef } from './types.js';

export type { Config, ConfigSources, KeySource, PortalConfig } from './types.js';

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
    case 'durations':
      return parseAlertSlas(value, name, envName(def), problems);
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
  if (isSet(path)) besideFile(parsed as Raw, dirname(resolve(path!)));
  return Object.assign(parsed as Raw, { __where: where });
}

/** The settings that name a file or directory: in a config file, a relative one is beside the file. */
const PATH_KEYS: readonly SettingKey[] = ['api_key_file', 'web_config_file', 'state_dir'];

/**
 * Resolves the relative paths of a config file's settings (top level and each `portals` entry)
 * against the file's directory, as the web config file's own paths are: the file and what it names
 * move together, whatever the working directory. (POSTURE_CONFIG has no directory: the working one.)
 */
function besideFile(file: Raw, dir: string): void {
  const entries = Array.isArray(file.portals) ? file.portals.filter((p): p is Raw => isMapping(p)) : [];
  for (const values of [file, ...entries]) {
    for (const key of PATH_KEYS) {
      const v = values[key];
      if (typeof v === 'string' && v.trim() !== '' && !isAbsolute(v.trim())) values[key] = resolve(dir, v.trim());
    }
  }
}

const FILE_EXCLUDED: ReadonlySet<string> = new Set(['config_file', 'config']);

/** A value as a file may hold it; each setting's own rules are applied by `parseValue`. */
const FileValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number()]))]);
/** What a file may hold for a setting: a mapping too for `durations`, whose parser checks it. */
const fileValueOf = (d: SettingDef) => (d.kind === 'durations' ? z.unknown() : FileValue);
const fileKeys = (keep: (d: SettingDef) => boolean) =>
  Object.fromEntries(SETTINGS.filter((d) => keep(d) && !FILE_EXCLUDED.has(d.key)).map((d) => [d.key, z.optional(fileValueOf(d))]));
/** The shape of a config file: known keys only, and `portals` as a non-empty list of per-portal settings. */
const ConfigFileSchema = z.strictObject({
  ...fileKeys(() => true),
  portals: z.optional(z.array(z.strictObject(fileKeys((d) => d.scope === 'portal'))).check(z.minLength(1))),
  // Checked entry by entry by parseObjectives, with one line per bad value.
  objectives: z.optional(z.unknown()),
  __where: z.string(),
});

/** Checks a config file's shape with zod, one problem per issue. */
function checkFileShape(file: Raw, where: string, problems: Problems): void {
  const parsed = ConfigFileSchema.safeParse(file);
  if (parsed.success) return;
  for (const issue of parsed.error.issues) {
    const at = issue.path.length ? `${where}: ${issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.').replace(/\.\[/g, '[')}` : where;
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) problems.add('POSTURE_CONFIG_FILE', `${at}: ${unknownKeyMessage(key, issue.path.length > 0)}`);
    } else if (issue.path.length === 1 && issue.path[0] === 'portal' && isMapping(file.portal, true)) {
      // A list of portals under the label's key (`portal:` for `portals:`), or one portal's settings under it.
      const what = Array.isArray(file.portal) ? 'a list: a list of portals goes under `portals:`' : 'a mapping: give one portal\'s settings at the top level, or a list of portals under `portals:`';
      problems.add('POSTURE_CONFIG_FILE', `${where}: \`portal\` holds ${what} (\`portal\` is the label of one portal, a string).`);
    } else if (issue.path[0] === 'portals' && issue.path.length <= 2) {
      problems.add('POSTURE_CONFIG_FILE', `${where}: \`portals\` must be a non-empty list of mappings.`);
    } else {
      problems.add('POSTURE_CONFIG_FILE', `${at} must be a string, a number or a list.`);
    }
  }
}

/** Whether `v` is a mapping (or, with `orList`, a list): not a value a setting takes. */
function isMapping(v: unknown, orList = false): boolean {
  return v !== null && typeof v === 'object' && (orList || !Array.isArray(v));
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
  /** How a user sets a value in this layer (the suggestions of `check-config` name it so). */
  setting: (def: SettingDef) => SettingRef;
  /** Whether the layer is a config file that was given (where an unset setting is best added). */
  inFile?: boolean;
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

/** How a message names a setting: the variable for the one portal, the key inside a `portals` entry. */
type NameOf = (key: SettingKey) => string;

/** The portal's address: a base URL, or a Cloud ID and API host; undefined (with a problem) when missing or invalid. */
function portalAddress(get: Get, problems: Problems, at: string, index: number | null, n: NameOf): { baseUrl: string; host: string; cloudId?: string } | undefined {
  const baseUrlRaw = get('base_url') as string | undefined;
  const cloudId = get('cloud_id') as string | undefined;
  const apiHost = get('api_host') as string | undefined;
  if (baseUrlRaw !== undefined && (cloudId !== undefined || apiHost !== undefined)) {
    problems.add('POSTURE_BASE_URL', `${at}${n('base_url')} and ${n('cloud_id')}/${n('api_host')} are both set: give either the base URL or the Cloud ID and host.`);
    return undefined;
  }
  if (baseUrlRaw !== undefined) return baseUrlAddress(baseUrlRaw, problems, at, n('base_url'));
  if (cloudId === undefined && apiHost === undefined) {
    problems.add('POSTURE_BASE_URL', `${at}no portal is configured: set ${n('base_url')}, or ${n('cloud_id')} and ${n('api_host')}${index === null ? ' (or run `npm start` for the simulated portal)' : ''}.`);
    return undefined;
  }
  if (cloudId === undefined || apiHost === undefined) {
    const missing: SettingKey = cloudId === undefined ? 'cloud_id' : 'api_host';
    problems.add(envName(SETTING_BY_KEY[missing]), `${at}${n(missing)} is missing: the Cloud ID and the API host go together (or give ${n('base_url')}).`);
    return undefined;
  }
  if (!DNS_LABEL.test(cloudId)) {
    problems.add('POSTURE_CLOUD_ID', `${at}${n('cloud_id')}=${JSON.stringify(cloudId)} is not a valid DNS label: use letters, digits and inner hyphens, at most 63 characters.`);
    return undefined;
  }
  if (!HOSTNAME.test(apiHost)) {
    problems.add('POSTURE_API_HOST', `${at}${n('api_host')}=${JSON.stringify(apiHost)} is not a host name: give e.g. example.com, without scheme or path.`);
    return undefined;
  }
  return { baseUrl: `https://${cloudId.toLowerCase()}.${apiHost.toLowerCase()}/public-api/v1`, host: `${cloudId}.${apiHost}`, cloudId };
}

/** The API root every portal serves; anything else answers 404 on every endpoint. */
const API_PATH = '/public-api/v1';

/** POSTURE_BASE_URL checked: a URL, https (plain http on loopback only), nothing but origin and path. */
function baseUrlAddress(raw: string, problems: Problems, at: string, name: string): { baseUrl: string; host: string } | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problems.add('POSTURE_BASE_URL', `${at}${name}=${JSON.stringify(raw)} is not a URL: give the full https://<cloud_id>.<host>/public-api/v1.`);
    return undefined;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    problems.add('POSTURE_BASE_URL', `${at}${name} must use https (plain http only for loopback addresses): got ${url.protocol}//${url.host}.`);
    return undefined;
  }
  if (url.username || url.password || url.search || url.hash) {
    problems.add('POSTURE_BASE_URL', `${at}${name} must not carry credentials, a query or a fragment: give only https://<cloud_id>.<host>/public-api/v1.`);
    return undefined;
  }
  const baseUrl = url.origin + url.pathname.replace(/\/+$/, '');
  // Every endpoint lives under the API root: anywhere else each request would answer 404.
  if (!baseUrl.endsWith(API_PATH)) {
    problems.add('POSTURE_BASE_URL', `${at}${name}=${JSON.stringify(baseUrl)} does not end in ${API_PATH}: give https://<cloud_id>.<host>${API_PATH} (the portal answers 404 elsewhere).`);
    return undefined;
  }
  return { baseUrl, host: url.hostname };
}

/** Where the portal's API key comes from: exactly one of the four key settings. */
function apiKeySource(get: Get, problems: Problems, at: string, n: NameOf): KeySource | undefined {
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
    problems.add('POSTURE_API_KEY', `${at}no API key: set ${n('api_key')}, ${n('api_key_file')}, ${n('api_key_ssm_parameter')} or ${n('api_key_secret_id')}.`);
    return undefined;
  }
  if (sources.length > 1) {
    problems.add('POSTURE_API_KEY', `${at}more than one API key source is set (${sources.map((k) => k.kind).join(', ')}): keep exactly one of ${n('api_key')}, ${n('api_key_file')}, ${n('api_key_ssm_parameter')}, ${n('api_key_secret_id')}.`);
    return undefined;
  }
  return sources[0];
}

/** One portal from its layers (its `portals` entry, then flags, env, file): address, key, and its settings. */
function buildPortal(layers: Layer[], problems: Problems, index: number | null, interval: number, file = ''): PortalConfig | undefined {
  const get: Get = (k) => lookup(k, layers, problems);
  const at = index === null ? '' : `${file}: portals[${index}]: `;
  // Inside a `portals` entry a setting is one of its keys (the variables are refused beside a list).
  const n: NameOf = (k) => (index === null ? envName(SETTING_BY_KEY[k]) : k);
  const address = portalAddress(get, problems, at, index, n);
  if (!address) return undefined;
  const found = apiKeySource(get, problems, at, n);
  if (!found) return undefined;
  // A key file is named where it was set (a portal's api_key_file), not as the variable it was not.
  const keyFileLayer = found.kind === 'file' ? layers.find((l) => isSet(l.values.api_key_file)) : undefined;
  const keyFileWhere = keyFileLayer?.where(SETTING_BY_KEY.api_key_file);
  const key: KeySource = found.kind === 'file' && keyFileWhere !== undefined && keyFileWhere !== 'env' ? { ...found, setting: keyFileWhere } : found;
  const header = (get('api_key_header') as string | undefined) ?? String(defaultOf('api_key_header'));
  if (!HEADER_NAME.test(header)) {
    problems.add('POSTURE_API_KEY_HEADER', `${at}${n('api_key_header')}=${JSON.stringify(header)} is not a valid HTTP header name.`);
  }
  return {
    name: (get('portal') as string | undefined) ?? address.cloudId ?? address.host,
    baseUrl: address.baseUrl,
    key,
    apiKeyHeader: header,
    requestsPerMinute: (get('requests_per_minute') as number | undefined) ?? Number(defaultOf('requests_per_minute')),
    pageSize: (get('page_size') as number | undefined) ?? Number(defaultOf('page_size')),
    vitalsTags: (get('vitals_tags') as string[] | undefined) ?? [],
    intervals: {
      alerts: (get('alerts_interval_seconds') as number | undefined) ?? interval,
      vitals: (get('vitals_interval_seconds') as number | undefined) ?? interval,
      devices: (get('devices_interval_seconds') as number | undefined) ?? interval,
    },
    intervalSettings: {
      alerts: intervalSetting(layers, 'alerts_interval_seconds'),
      vitals: intervalSetting(layers, 'vitals_interval_seconds'),
      devices: intervalSetting(layers, 'devices_interval_seconds'),
    },
    requestsPerMinuteSetting: settingRef(layers, 'requests_per_minute'),
    vitalsTagsSetting: settingRef(layers, 'vitals_tags'),
    resolvedAlertsIntervalSeconds: (get('resolved_alerts_interval_seconds') as number | undefined) ?? Number(defaultOf('resolved_alerts_interval_seconds')),
    resolvedAlertsIntervalSetting: intervalSetting(layers, 'resolved_alerts_interval_seconds'),
    maxSeriesPerFamily: (get('max_series_per_family') as number | undefined) ?? Number(defaultOf('max_series_per_family')),
    alertSlas: (get('alert_slas') as AlertSlas | undefined) ?? DEFAULT_ALERT_SLAS,
  };
}

/**
 * Where a setting comes from, as a user changes it: the layer that set it, else where it is best
 * added: the portal's entry in the file's `portals` (the variable would change every portal that
 * inherits), else the config file, else the variable.
 */
function settingRef(layers: Layer[], key: SettingKey): SettingRef {
  const def = SETTING_BY_KEY[key];
  const layer = layers.find((l) => isSet(l.values[key]));
  if (layer) return layer.setting(def);
  const file = layers.find((l) => l.inFile);
  return file ? { ...file.setting(def), absent: true } : { kind: 'env', name: envName(def) };
}

/** Where a source's own interval comes from (settingRef), and whether it is set for the source (else it inherits POSTURE_INTERVAL_SECONDS). */
function intervalSetting(layers: Layer[], key: SettingKey): IntervalSetting {
  return { explicit: layers.some((l) => isSet(l.values[key])), ...settingRef(layers, key) };
}

/**
 * Reads and validates the configuration once, at the edge. Throws ConfigErrors listing one
 * ConfigError per problem (each message names the setting and says the fix).
 */
export function loadConfig(sources: ConfigSources = {}): Config {
  const problems = new Problems();
  const layers = settingLayers(sources, problems);
  const g = (k: SettingKey) => lookup(k, layers.global, problems);
  const intervalSeconds = (g('interval_seconds') as number | undefined) ?? Number(defaultOf('interval_seconds'));
  const intervalFrom = settingRef(layers.global, 'interval_seconds');
  const allPortals = buildPortals(layers, problems, intervalSeconds);
  const shard = shardOfConfig(g, problems, allPortals.length);
  // By portal identity, so every entry of one portal (one budget) lands on one shard.
  const portals = allPortals.filter((p) => ownsPortal(portalIdentity(p.baseUrl), shard.ordinal, shard.total));
  const listenRaw = (g('listen') as string | undefined) ?? String(defaultOf('listen'));
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
    maxRetryAfterSeconds: (g('max_retry_after_seconds') as number | undefined) ?? Number(defaultOf('max_retry_after_seconds')),
    connectTimeoutSeconds: (g('connect_timeout_seconds') as number | undefined) ?? Number(defaultOf('connect_timeout_seconds')),
    requestTimeoutSeconds: (g('request_timeout_seconds') as number | undefined) ?? Number(defaultOf('request_timeout_seconds')),
    maxRetries: (g('max_retries') as number | undefined) ?? Number(defaultOf('max_retries')),
    listen: listen!,
    webConfigFile: g('web_config_file') as string | undefined,
    logLevel: ((g('log_level') as string | undefined) ?? String(defaultOf('log_level'))) as LogLevel,
    format: ((g('format') as string | undefined) ?? String(defaultOf('format'))) as Config['format'],
    runbookUrl: runbookUrlOf(layers.global, problems),
    push,
    lambdaMarginSeconds: (g('lambda_margin_seconds') as number | undefined) ?? Number(defaultOf('lambda_margin_seconds')),
    stateDir: stateDirOf(g('state_dir') as string | undefined, sources.env ?? process.env),
    stateDirSet: g('state_dir') !== undefined,
    stateTable: stateTableOf(g('state_table') as string | undefined, problems),
    secrets,
    shard,
    objectives: parseObjectives(layers.fileObjectives, layers.fileWhere, problems),
  };
  if (problems.list.length) throw new ConfigErrors(problems.list);
  return config;
}

/** The `runbook_url` template (flag > env > config file > default), checked. */
function runbookUrlOf(layers: Layer[], problems: Problems): string {
  const def = SETTING_BY_KEY.runbook_url;
  const template = lookup('runbook_url', layers, problems) as string | undefined;
  if (template === undefined) return DEFAULT_RUNBOOK_URL;
  const problem = runbookUrlProblem(template);
  if (problem === undefined) return template;
  const where = layers.find((l) => isSet(l.values.runbook_url))!.where(def);
  problems.add(envName(def), `${where === 'env' ? label(def) : where}=${JSON.stringify(template)} is not valid: ${problem} (default ${DEFAULT_RUNBOOK_URL}).`);
  return DEFAULT_RUNBOOK_URL;
}

/**
 * What `posture-exporter rules` needs, without a portal: the config file's objectives and the
 * `runbook_url` template (flag > env > config file), checked.
 */
export function loadObjectives(sources: ConfigSources = {}): { readonly objectives: readonly Objective[]; readonly runbookUrl: string } {
  const problems = new Problems();
  const layers = settingLayers(sources, problems);
  const objectives = parseObjectives(layers.fileObjectives, layers.fileWhere, problems);
  const runbookUrl = runbookUrlOf(layers.global, problems);
  if (problems.list.length) throw new ConfigErrors(problems.list);
  return { objectives, runbookUrl };
}

/** This process's shard (POSTURE_SHARD, a number or a pod name) of POSTURE_TOTAL_SHARDS; 0 of 1 when unsharded. */
function shardOfConfig(g: (k: SettingKey) => unknown, problems: Problems, portalsInAll: number): Config['shard'] {
  const total = (g('total_shards') as number | undefined) ?? Number(defaultOf('total_shards'));
  const raw = g('shard') as string | undefined;
  if (raw === undefined) {
    if (total > 1) problems.add('POSTURE_SHARD', `POSTURE_TOTAL_SHARDS (--total-shards) is ${total} but POSTURE_SHARD (--shard) is not set: give this process's shard, 0 to ${total - 1} (or its StatefulSet pod name).`);
    return { ordinal: 0, total, portalsInAll };
  }
  try {
    const ordinal = parseShard(raw, SHARD_SETTING, total);
    validateShards(ordinal, total);
    return { ordinal, total, portalsInAll };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.add(err.setting, err.message);
    return { ordinal: 0, total, portalsInAll };
  }
}

/** The layers a setting is looked up in (flag > env > config file), and the file's `portals` when it lists them. */
interface SettingLayers {
  readonly flags: Raw;
  readonly env: Raw;
  readonly fileTop: Raw;
  readonly fileWhere: string;
  readonly filePortals?: Raw[];
  /** The file's `objectives` value, unchecked. */
  readonly fileObjectives?: unknown;
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
    for (const [k, v] of Object.entries(file)) if (k !== 'portals' && k !== '__where' && k in SETTING_BY_KEY && fileValueOf(SETTING_BY_KEY[k as SettingKey]).safeParse(v).success) fileTop[k] = v;
    const portals = file.portals;
    if (portals !== undefined) {
      // A broken list was reported above; an empty one here keeps the single-portal settings from being asked for too.
      const usable = Array.isArray(portals) && portals.every((p) => isMapping(p));
      filePortals = usable ? (portals as Raw[]) : [];
    } else if (isMapping(file.portal, true)) {
      // Portals under `portal` (reported above): not one portal missing its address.
      filePortals = [];
    }
  }
  const global: Layer[] = [
    { values: flags, where: (d) => `--${flagName(d)}`, setting: (d) => ({ kind: 'flag', name: `--${flagName(d)}` }) },
    { values: envValues, where: () => 'env', setting: (d) => ({ kind: 'env', name: envName(d) }) },
    { values: fileTop, where: (d) => `${fileWhere}: ${d.key}`, setting: (d) => ({ kind: 'file', name: d.key, file: fileWhere }), inFile: file !== undefined },
  ];
  return { flags, env: envValues, fileTop, fileWhere, filePortals, fileObjectives: file?.objectives, global };
}

/** The portals: each entry of the file's `portals` list over the global layers, or one portal from the global layers. */
function buildPortals(layers: SettingLayers, problems: Problems, intervalSeconds: number): PortalConfig[] {
  const { flags, env, fileTop, fileWhere, filePortals, global } = layers;
  const setSomewhere = (k: string) => isSet(flags[k]) || isSet(env[k]) || isSet(fileTop[k]);
  const portals: PortalConfig[] = [];
  if (!filePortals) {
    const portal = buildPortal(global, problems, null, intervalSeconds);
    if (portal) portals.push(portal);
    return portals;
  }
  const identity: SettingKey[] = ['base_url', 'cloud_id', 'api_host', 'api_key', 'api_key_file', 'api_key_ssm_parameter', 'api_key_secret_id', 'portal'];
  for (const k of identity.filter(setSomewhere)) {
    problems.add(envName(SETTING_BY_KEY[k]), `${envName(SETTING_BY_KEY[k])} is set but ${fileWhere} lists portals: give each portal's ${k} inside \`portals\`, or drop the list.`);
  }
  const names = new Set<string>();
  const firstOf = new Map<string, { index: number; portal: PortalConfig }>();
  filePortals.forEach((entry, i) => {
    const layer: Layer = { values: entry, where: (d) => `${fileWhere}: portals[${i}].${d.key}`, setting: (d) => ({ kind: 'file', name: `portals[${i}].${d.key}`, file: fileWhere }), inFile: true };
    const portal = buildPortal([layer, ...global], problems, i, intervalSeconds, fileWhere);
    if (!portal) return;
    if (names.has(portal.name)) problems.add('POSTURE_CONFIG_FILE', `${fileWhere}: portals[${i}] repeats the portal name ${JSON.stringify(portal.name)}: give each portal a distinct \`portal\`.`);
    names.add(portal.name);
    portals.push(portal);
    // One portal has one share, however many entries (keys) read it.
    const identity = portalIdentity(portal.baseUrl);
    const first = firstOf.get(identity);
    if (!first) firstOf.set(identity, { index: i, portal });
    else if (first.portal.requestsPerMinute !== portal.requestsPerMinute) {
      problems.add('POSTURE_REQUESTS_PER_MINUTE', `${fileWhere}: portals[${first.index}] (${first.portal.name}) and portals[${i}] (${portal.name}) read the same portal ${identity} but with requests_per_minute ${first.portal.requestsPerMinute} and ${portal.requestsPerMinute}: the share belongs to the portal, so give both the same value.`);
    }
  });
  return portals;
}
