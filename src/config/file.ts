/**
 * The config file as a source of settings (POSTURE_CONFIG_FILE or --config, or POSTURE_CONFIG
 * inline): read, parsed as JSON or YAML, its shape checked (known keys only), its relative paths
 * resolved beside it, and split into its top-level settings, its `portals` and its `objectives`.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import '../core/zod.js';
import * as z from 'zod/mini';
import type { Problems } from './problems.js';
import { SETTINGS, SETTING_BY_KEY, envName, type SettingDef, type SettingKey } from './settings.js';
import type { ConfigSources } from './types.js';
import { unknownKeyMessage } from './unknown.js';
import { isSet } from './values.js';

/** Settings as one source holds them, by key, unparsed. */
export type Raw = Record<string, unknown>;

/** What a config file gives: its settings, its portals when it lists them, its objectives. */
export interface FileSettings {
  /** How messages name the file: `config file <path>` or `POSTURE_CONFIG`. */
  readonly where: string;
  /** The top-level settings whose values have a usable shape. */
  readonly top: Raw;
  /** The `portals` entries; empty when the list is broken (reported); undefined when the file lists none. */
  readonly portals?: Raw[];
  /** The `objectives` value, unchecked (parseObjectives checks it). */
  readonly objectives?: unknown;
}

/** Whether `v` is a mapping (or, with `orList`, a list): not a value a setting takes. */
function isMapping(v: unknown, orList = false): boolean {
  return v !== null && typeof v === 'object' && (orList || !Array.isArray(v));
}

/** Reads the config file (or POSTURE_CONFIG) and checks it, one problem per mistake; undefined when there is none or it cannot be read. */
export function readFileSettings(sources: ConfigSources, env: Readonly<Record<string, string | undefined>>, problems: Problems): FileSettings | undefined {
  const file = readConfigFile(sources, env, problems);
  if (!file) return undefined;
  const { where, values } = file;
  // Problems are reported; what is usable is still read, so one typo does not hide the rest.
  checkFileShape(values, where, problems);
  const top: Raw = {};
  for (const [k, v] of Object.entries(values)) if (k !== 'portals' && k in SETTING_BY_KEY && fileValueOf(SETTING_BY_KEY[k as SettingKey]).safeParse(v).success) top[k] = v;
  let portals: Raw[] | undefined;
  if (values.portals !== undefined) {
    // A broken list was reported above; an empty one here keeps the single-portal settings from being asked for too.
    const usable = Array.isArray(values.portals) && values.portals.every((p) => isMapping(p));
    portals = usable ? (values.portals as Raw[]) : [];
  } else if (isMapping(values.portal, true)) {
    // Portals under `portal` (reported above): not one portal missing its address.
    portals = [];
  }
  return { where, top, portals, objectives: values.objectives };
}

function readConfigFile(sources: ConfigSources, env: Readonly<Record<string, string | undefined>>, problems: Problems): { where: string; values: Raw } | undefined {
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
  const json = where === 'POSTURE_CONFIG' || /\.json$/i.test(path ?? '');
  const setting = where === 'POSTURE_CONFIG' ? 'POSTURE_CONFIG' : 'POSTURE_CONFIG_FILE';
  let parsed: unknown;
  try {
    parsed = json ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    // Only the position: the parsers quote the text around an error, which may hold a key.
    const msg = (err as Error).message;
    const at = /position (\d+)/.exec(msg)?.[1];
    const line = /line (\d+), column (\d+)/.exec(msg);
    const position = at !== undefined ? ` at character ${at}` : line ? ` at line ${line[1]}, column ${line[2]}` : '';
    problems.add(setting, `${where} is not valid ${json ? 'JSON' : 'YAML'}${position}: fix the syntax there.`);
    return undefined;
  }
  if (!isMapping(parsed)) {
    problems.add(setting, `${where} must hold a mapping of settings (and optionally \`portals\`).`);
    return undefined;
  }
  if (isSet(path)) besideFile(parsed as Raw, dirname(resolve(path!)));
  return { where, values: parsed as Raw };
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
