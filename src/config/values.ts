/**
 * One setting's value, whichever source gave it (flag, environment, config file): checked against
 * the setting's kind and bounds in the settings table, with one problem naming the setting and the
 * fix when it is not valid.
 */
import { parseAlertSlas, type AlertSlas } from './alert-slas.js';
import { Problems } from './problems.js';
import { SETTING_BY_KEY, envName, flagName, type SETTINGS, type SettingDef, type SettingKey } from './settings.js';

/** Whether a source holds a value for a setting (an empty or blank string is unset). */
export const isSet = (v: unknown): boolean => v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');

/** A setting as a message names it: the variable, with its flag when it has one. */
export function label(def: SettingDef): string {
  return def.flag ? `${envName(def)} (--${flagName(def)})` : envName(def);
}

/** A value as a message quotes it: a secret never, a long one cut. */
function show(def: SettingDef, value: unknown): string {
  if (def.kind === 'secret') return '(hidden)';
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return JSON.stringify(s.length > 80 ? s.slice(0, 77) + '...' : s);
}

/** The row of the settings table of `K`. */
type Row<K extends SettingKey> = Extract<(typeof SETTINGS)[number], { key: K }>;
/** What each kind of setting parses to. */
interface KindValue {
  string: string;
  secret: string;
  int: number;
  list: string[];
  enum: string;
  durations: AlertSlas;
  ints: number[];
}
/** The parsed value of setting `K`: an enum one of its values, a list of values a list of them. */
export type ValueOf<K extends SettingKey> =
  Row<K> extends { kind: 'enum'; values: readonly (infer V)[] } ? V : Row<K> extends { kind: 'list'; values: readonly (infer V)[] } ? V[] : KindValue[Row<K>['kind']];

/** Looks a setting up (undefined when no source sets it, or its value is not valid). */
export type Get = <K extends SettingKey>(key: K) => ValueOf<K> | undefined;

/** Parses `value` as setting `def` takes it; undefined, with a problem, when it is not valid. `where` is `env` or how a file names it. */
export function parseValue(def: SettingDef, value: unknown, where: string, problems: Problems): unknown {
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
    case 'ints':
      return parseInts(def, value, name, problems);
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

/**
 * A list of whole numbers from the setting's `min` to `max`, each once, at least one: comma-separated
 * text, or a list (a config file); ascending. One problem naming the setting when any item is not.
 */
function parseInts(def: SettingDef, value: unknown, name: string, problems: Problems): number[] | undefined {
  const items = Array.isArray(value) ? value.map((v) => String(v).trim()) : String(value).split(',').map((s) => s.trim());
  const min = def.min ?? 0;
  const max = def.max ?? Number.MAX_SAFE_INTEGER;
  const numbers = items.map((s) => (/^\d+$/.test(s) ? Number(s) : NaN));
  const fix = `set comma-separated whole numbers from ${min} to ${max}, each once${def.default !== undefined ? ` (default ${def.default})` : ''}`;
  if (items.length === 0 || items.every((s) => s === '') || numbers.some((n) => !Number.isInteger(n) || n < min || n > max)) {
    problems.add(envName(def), `${name}=${show(def, value)} is not valid: ${fix}.`);
    return undefined;
  }
  const repeated = numbers.find((n, i) => numbers.indexOf(n) !== i);
  if (repeated !== undefined) {
    problems.add(envName(def), `${name}=${show(def, value)} is not valid: ${repeated} is given twice; ${fix}.`);
    return undefined;
  }
  return numbers.sort((a, b) => a - b);
}

/**
 * The default of setting `key` as a value: the table's default parsed as the setting is, so each
 * default is written once. Only for settings whose default is a value, not a description.
 */
export function defaultValue<K extends SettingKey>(key: K): ValueOf<K> {
  const def = SETTING_BY_KEY[key];
  const problems = new Problems();
  const value = def.default === undefined ? undefined : parseValue(def, def.default, 'env', problems);
  if (value === undefined || problems.list.length) throw new Error(`the setting ${key} has no default value`);
  return value as ValueOf<K>;
}
