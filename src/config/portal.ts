/**
 * The portals: one from the process's settings, or one per entry of the config file's `portals`
 * (each entry over the process's settings). Each has an address, exactly one key source and its
 * own settings, defaults from the settings table and intervals from JOB_INTERVALS.
 */
import { SLOW_JOBS, SOURCES, type Job, type SlowJob, type Source } from '../domain.js';
import { portalAddress, type NameOf } from './address.js';
import { portalIdentity } from './identity.js';
import { JOB_INTERVALS, type IntervalRow } from './intervals.js';
import { getter, intervalSetting, layerOf, portalEntryLayer, settingRef, type Layer, type SettingLayers } from './layers.js';
import type { Problems } from './problems.js';
import { HEADER_NAME } from './push.js';
import { SETTING_BY_KEY, envName, type SettingKey } from './settings.js';
import type { IntervalSetting, KeySource, PortalConfig } from './types.js';
import { defaultValue, isSet, type Get } from './values.js';

/** Where the portal's API key comes from: exactly one of the four key settings. */
function apiKeySource(get: Get, problems: Problems, at: string, n: NameOf): KeySource | undefined {
  const sources: KeySource[] = [];
  const apiKey = get('api_key');
  const apiKeyFile = get('api_key_file');
  const ssm = get('api_key_ssm_parameter');
  const secretId = get('api_key_secret_id');
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

/** A job's interval: its own setting, else POSTURE_INTERVAL_SECONDS (`inherited`) or the job's own default. */
function intervalOf(get: Get, job: Job, inherited: number): number {
  const row: IntervalRow = JOB_INTERVALS[job];
  return get(JOB_INTERVALS[job].key) ?? (row.inherits ? inherited : row.default);
}

/** Each source's interval and how it is set. */
function sourceIntervals(get: Get, layers: readonly Layer[], inherited: number): Pick<PortalConfig, 'intervals' | 'intervalSettings'> {
  return {
    intervals: Object.fromEntries(SOURCES.map((s) => [s, intervalOf(get, s, inherited)])) as Record<Source, number>,
    intervalSettings: Object.fromEntries(SOURCES.map((s) => [s, intervalSetting(layers, JOB_INTERVALS[s].key)])) as Record<Source, IntervalSetting>,
  };
}

/** Each slow job's interval and how it is set. */
function slowIntervals(get: Get, layers: readonly Layer[], inherited: number): Pick<PortalConfig, 'slowIntervals' | 'slowIntervalSettings'> {
  return {
    slowIntervals: Object.fromEntries(SLOW_JOBS.map((j) => [j, intervalOf(get, j, inherited)])) as Record<SlowJob, number>,
    slowIntervalSettings: Object.fromEntries(SLOW_JOBS.map((j) => [j, intervalSetting(layers, JOB_INTERVALS[j].key)])) as Record<SlowJob, IntervalSetting>,
  };
}

/** One portal from its layers (its `portals` entry, then flags, env, file): address, key, and its settings. */
function buildPortal(layers: readonly Layer[], problems: Problems, index: number | null, interval: number, file = ''): PortalConfig | undefined {
  const get = getter(layers, problems);
  const at = index === null ? '' : `${file}: portals[${index}]: `;
  // Inside a `portals` entry a setting is one of its keys (the variables are refused beside a list).
  const n: NameOf = (k) => (index === null ? envName(SETTING_BY_KEY[k]) : k);
  const address = portalAddress(get, problems, at, index, n);
  if (!address) return undefined;
  const found = apiKeySource(get, problems, at, n);
  if (!found) return undefined;
  // A key file is named where it was set (a portal's api_key_file), not as the variable it was not.
  const keyFileWhere = found.kind === 'file' ? layerOf(layers, 'api_key_file')?.where(SETTING_BY_KEY.api_key_file) : undefined;
  const key: KeySource = found.kind === 'file' && keyFileWhere !== undefined && keyFileWhere !== 'env' ? { ...found, setting: keyFileWhere } : found;
  const header = get('api_key_header') ?? defaultValue('api_key_header');
  if (!HEADER_NAME.test(header)) {
    problems.add('POSTURE_API_KEY_HEADER', `${at}${n('api_key_header')}=${JSON.stringify(header)} is not a valid HTTP header name.`);
  }
  return {
    name: get('portal') ?? address.cloudId ?? address.host,
    baseUrl: address.baseUrl,
    key,
    apiKeyHeader: header,
    requestsPerMinute: get('requests_per_minute') ?? defaultValue('requests_per_minute'),
    pageSize: get('page_size') ?? defaultValue('page_size'),
    vitalsTags: get('vitals_tags') ?? [],
    ...sourceIntervals(get, layers, interval),
    requestsPerMinuteSetting: settingRef(layers, 'requests_per_minute'),
    vitalsTagsSetting: settingRef(layers, 'vitals_tags'),
    ...slowIntervals(get, layers, interval),
    directoryInactiveDays: get('directory_inactive_days') ?? defaultValue('directory_inactive_days'),
    maxSeriesPerFamily: get('max_series_per_family') ?? defaultValue('max_series_per_family'),
    alertSlas: get('alert_slas') ?? defaultValue('alert_slas'),
  };
}

/** The settings that say which portal, and with which key: beside a `portals` list, each entry gives its own. */
const IDENTITY_KEYS: readonly SettingKey[] = ['base_url', 'cloud_id', 'api_host', 'api_key', 'api_key_file', 'api_key_ssm_parameter', 'api_key_secret_id', 'portal'];

/** The portals: each entry of the file's `portals` list over the global layers, or one portal from the global layers. */
export function buildPortals(layers: SettingLayers, problems: Problems, intervalSeconds: number): PortalConfig[] {
  const { flags, env, file, global } = layers;
  const portals: PortalConfig[] = [];
  if (!file?.portals) {
    const portal = buildPortal(global, problems, null, intervalSeconds);
    if (portal) portals.push(portal);
    return portals;
  }
  const fileWhere = file.where;
  const setSomewhere = (k: string) => isSet(flags[k]) || isSet(env[k]) || isSet(file.top[k]);
  for (const k of IDENTITY_KEYS.filter(setSomewhere)) {
    problems.add(envName(SETTING_BY_KEY[k]), `${envName(SETTING_BY_KEY[k])} is set but ${fileWhere} lists portals: give each portal's ${k} inside \`portals\`, or drop the list.`);
  }
  const names = new Set<string>();
  const firstOf = new Map<string, { index: number; portal: PortalConfig }>();
  file.portals.forEach((entry, i) => {
    const portal = buildPortal([portalEntryLayer(entry, i, fileWhere), ...global], problems, i, intervalSeconds, fileWhere);
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
