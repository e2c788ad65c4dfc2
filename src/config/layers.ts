/**
 * The sources of settings and their merge: flags over the environment over the config file (and,
 * for a portal of the file's `portals`, its entry over them all); a setting is the first source's
 * value, parsed. Defaults are the settings table's, applied by the caller.
 */
import type { Problems } from './problems.js';
import { readFileSettings, type FileSettings, type Raw } from './file.js';
import { SETTINGS, SETTING_BY_KEY, envName, flagName, type SettingDef, type SettingKey } from './settings.js';
import type { ConfigSources, IntervalSetting, SettingRef } from './types.js';
import { isSet, parseValue, type Get, type ValueOf } from './values.js';

/** One source of settings, as the lookups read it. */
export interface Layer {
  readonly values: Raw;
  /** How to name a value of this layer in a message (`env`: the variable and its flag). */
  readonly where: (def: SettingDef) => string;
  /** How a user sets a value in this layer (the suggestions of `check-config` name it so). */
  readonly setting: (def: SettingDef) => SettingRef;
  /** Whether the layer is a config file that was given (where an unset setting is best added). */
  readonly inFile?: boolean;
}

/** Every source of settings: the layers of the process's settings (flag > env > config file), and the file's own parts. */
export interface SettingLayers {
  readonly flags: Raw;
  readonly env: Raw;
  /** The config file, when one was given and read. */
  readonly file?: FileSettings;
  /** flag > env > config file. */
  readonly global: readonly Layer[];
}

/** The flags, by key; a flag that is not a setting's, or of a setting that has none (secrets), is a problem. */
function flagValues(sources: ConfigSources, problems: Problems): Raw {
  const flags: Raw = { ...(sources.flags ?? {}) };
  for (const key of Object.keys(flags)) {
    const def = SETTING_BY_KEY[key as SettingKey];
    if (!def || !def.flag) problems.add(`--${key.replace(/_/g, '-')}`, `--${key.replace(/_/g, '-')} is not a flag: see \`posture-exporter --help\`${def ? ` (set ${envName(def)} in the environment instead)` : ''}.`);
  }
  return flags;
}

/** The settings' variables of the environment, by key. */
function envValues(env: Readonly<Record<string, string | undefined>>): Raw {
  const values: Raw = {};
  for (const def of SETTINGS) {
    const v = env[envName(def)];
    if (v !== undefined) values[def.key] = v;
  }
  return values;
}

/** Reads the flags, the environment and the config file into layers, each problem reported. */
export function settingLayers(sources: ConfigSources, problems: Problems): SettingLayers {
  const env = sources.env ?? process.env;
  const flags = flagValues(sources, problems);
  const fromEnv = envValues(env);
  const file = readFileSettings(sources, env, problems);
  const fileWhere = file?.where ?? '';
  const global: Layer[] = [
    { values: flags, where: (d) => `--${flagName(d)}`, setting: (d) => ({ kind: 'flag', name: `--${flagName(d)}` }) },
    { values: fromEnv, where: () => 'env', setting: (d) => ({ kind: 'env', name: envName(d) }) },
    { values: file?.top ?? {}, where: (d) => `${fileWhere}: ${d.key}`, setting: (d) => ({ kind: 'file', name: d.key, file: fileWhere }), inFile: file !== undefined },
  ];
  return { flags, env: fromEnv, file, global };
}

/** The layer of entry `index` of the file's `portals`. */
export function portalEntryLayer(entry: Raw, index: number, fileWhere: string): Layer {
  return { values: entry, where: (d) => `${fileWhere}: portals[${index}].${d.key}`, setting: (d) => ({ kind: 'file', name: `portals[${index}].${d.key}`, file: fileWhere }), inFile: true };
}

/** The first layer that sets `key`. */
export function layerOf(layers: readonly Layer[], key: SettingKey): Layer | undefined {
  return layers.find((l) => isSet(l.values[key]));
}

/** Looks settings up through `layers` (the first that sets one wins), parsing the value; each problem reported. */
export function getter(layers: readonly Layer[], problems: Problems): Get {
  return <K extends SettingKey>(key: K) => {
    const def = SETTING_BY_KEY[key];
    const layer = layerOf(layers, key);
    return layer ? (parseValue(def, layer.values[key], layer.where(def), problems) as ValueOf<K> | undefined) : undefined;
  };
}

/**
 * Where a setting comes from, as a user changes it: the layer that set it, else where it is best
 * added: the portal's entry in the file's `portals` (the variable would change every portal that
 * inherits), else the config file, else the variable.
 */
export function settingRef(layers: readonly Layer[], key: SettingKey): SettingRef {
  const def = SETTING_BY_KEY[key];
  const layer = layerOf(layers, key);
  if (layer) return layer.setting(def);
  const file = layers.find((l) => l.inFile);
  return file ? { ...file.setting(def), absent: true } : { kind: 'env', name: envName(def) };
}

/** Where a job's own interval comes from (settingRef), and whether it is set for the job (else its default). */
export function intervalSetting(layers: readonly Layer[], key: SettingKey): IntervalSetting {
  return { explicit: layerOf(layers, key) !== undefined, ...settingRef(layers, key) };
}
