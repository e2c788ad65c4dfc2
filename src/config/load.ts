/**
 * The configuration, read and validated once, at the edge: the sources of settings and their merge
 * (layers.ts: flags, environment, config file.ts), the portals (portal.ts, address.ts), and here
 * the process's own settings, each problem reported before the verdict.
 */
import { ConfigError, ConfigErrors } from '../errors.js';
import { portalIdentity } from './identity.js';
import { settingLayers, getter, layerOf, settingRef, type Layer } from './layers.js';
import { parseObjectives, type Objective } from './objectives.js';
import { buildPortals } from './portal.js';
import { Problems } from './problems.js';
import { buildPush } from './push.js';
import { EXAMPLE_RUNBOOK_URL, runbookUrlProblem } from './runbook.js';
import { SETTING_BY_KEY, envName } from './settings.js';
import { ownsPortal, parseShard, SHARD_SETTING, validateShards } from './shard.js';
import { stateDirOf } from './state-dir.js';
import { stateTableOf } from './state-table.js';
import type { Config, ConfigSources } from './types.js';
import { defaultValue, label, type Get } from './values.js';

export type { Config, ConfigSources, KeySource, PortalConfig } from './types.js';

/** Parses `HOST:PORT` (`[::1]:9877`; `:9877` = `emptyHost`, all interfaces unless said otherwise). */
export function parseListen(value: string, emptyHost = '0.0.0.0'): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  return { host: m[1] ?? (m[2] || emptyHost), port };
}

/**
 * Reads and validates the configuration once, at the edge. Throws ConfigErrors listing one
 * ConfigError per problem (each message names the setting and says the fix).
 */
export function loadConfig(sources: ConfigSources = {}): Config {
  const problems = new Problems();
  const layers = settingLayers(sources, problems);
  const get = getter(layers.global, problems);
  const or = <K extends Parameters<Get>[0]>(key: K) => get(key) ?? defaultValue(key);
  const intervalSeconds = or('interval_seconds');
  const allPortals = buildPortals(layers, problems, intervalSeconds);
  const shard = shardOfConfig(get, problems, allPortals.length);
  // By portal identity, so every entry of one portal (one budget) lands on one shard.
  const portals = allPortals.filter((p) => ownsPortal(portalIdentity(p.baseUrl), shard.ordinal, shard.total));
  const listenRaw = or('listen');
  const listen = parseListen(listenRaw);
  if (!listen) problems.add('POSTURE_LISTEN', `POSTURE_LISTEN (--listen)=${JSON.stringify(listenRaw)} is not HOST:PORT: give e.g. 0.0.0.0:9877 or 127.0.0.1:9877.`);
  const push = buildPush(get, problems);
  const secrets = [
    ...portals.flatMap((p) => (p.key.kind === 'value' ? [p.key.value] : [])),
    ...[push.remoteWriteBearerToken, push.remoteWritePassword, push.pushgatewayPassword].flatMap((k) => (k?.kind === 'value' ? [k.value] : [])),
    ...Object.values(push.remoteWriteHeaders),
  ];
  const stateDir = get('state_dir');
  // Every lookup runs before the verdict, so all problems are reported at once.
  const config: Config = {
    portals,
    intervalSeconds,
    intervalSetting: settingRef(layers.global, 'interval_seconds'),
    maxStalenessSeconds: get('max_staleness_seconds'),
    cycleTimeoutSeconds: get('cycle_timeout_seconds'),
    maxRetryAfterSeconds: or('max_retry_after_seconds'),
    connectTimeoutSeconds: or('connect_timeout_seconds'),
    requestTimeoutSeconds: or('request_timeout_seconds'),
    maxRetries: or('max_retries'),
    listen: listen!,
    webConfigFile: get('web_config_file'),
    logLevel: or('log_level'),
    format: or('format'),
    runbookUrl: runbookUrlOf(layers.global, problems),
    push,
    lambdaMarginSeconds: or('lambda_margin_seconds'),
    stateDir: stateDirOf(stateDir, sources.env ?? process.env),
    stateDirSet: stateDir !== undefined,
    stateTable: stateTableOf(get('state_table'), problems),
    secrets,
    shard,
    objectives: parseObjectives(layers.file?.objectives, layers.file?.where ?? '', problems),
  };
  if (problems.list.length) throw new ConfigErrors(problems.list);
  return config;
}

/** The `runbook_url` template (flag > env > config file), checked; undefined when unset (no `runbook_url`). */
function runbookUrlOf(layers: readonly Layer[], problems: Problems): string | undefined {
  const def = SETTING_BY_KEY.runbook_url;
  const template = getter(layers, problems)('runbook_url');
  if (template === undefined) return undefined;
  const problem = runbookUrlProblem(template);
  if (problem === undefined) return template;
  const where = layerOf(layers, 'runbook_url')!.where(def);
  problems.add(envName(def), `${where === 'env' ? label(def) : where}=${JSON.stringify(template)} is not valid: ${problem}, e.g. ${EXAMPLE_RUNBOOK_URL} (or unset it for none).`);
  return undefined;
}

/**
 * What `posture-exporter rules` needs, without a portal: the config file's objectives and the
 * `runbook_url` template (flag > env > config file), checked; undefined when unset.
 */
export function loadObjectives(sources: ConfigSources = {}): { readonly objectives: readonly Objective[]; readonly runbookUrl?: string } {
  const problems = new Problems();
  const layers = settingLayers(sources, problems);
  const objectives = parseObjectives(layers.file?.objectives, layers.file?.where ?? '', problems);
  const runbookUrl = runbookUrlOf(layers.global, problems);
  if (problems.list.length) throw new ConfigErrors(problems.list);
  return { objectives, runbookUrl };
}

/** This process's shard (POSTURE_SHARD, a number or a pod name) of POSTURE_TOTAL_SHARDS; 0 of 1 when unsharded. */
function shardOfConfig(get: Get, problems: Problems, portalsInAll: number): Config['shard'] {
  const total = get('total_shards') ?? defaultValue('total_shards');
  const raw = get('shard');
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

