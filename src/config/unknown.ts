/**
 * Names that are not settings, each with the nearest setting: `POSTURE_*` environment variables
 * (typos such as POSTURE_INTERVAL_SECOND), flags (the CLI) and config file keys (the loader). Pure:
 * the callers refuse to start on them.
 */
import { JOB_INTERVALS } from './intervals.js';
import { SETTINGS, envName } from './settings.js';

/** Prefixes of other tools' variables in the same namespace (the local stack's options). */
const OTHER_NAMESPACES = ['POSTURE_STACK_'] as const;

/** One variable that is not a setting. */
export interface UnknownSetting {
  readonly name: string;
  /** The setting whose name is nearest. */
  readonly nearest: string;
  /** Whether the nearest setting is close enough to be a likely typo. */
  readonly close: boolean;
  /** Another setting as likely meant (as near, or the one whose last words were given alone). */
  readonly also?: string;
}

/** The nearest name to a mistyped one, whether it is close enough to be a likely typo, and another as likely. */
export interface Nearest {
  readonly nearest: string;
  readonly close: boolean;
  readonly also?: string;
}

/** The last row of the edit-distance table of `a` against `b`: entry j is the distance from `a` to `b`'s first j characters. */
function distances(a: string, b: string): number[] {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]!;
}

/** Edit distance (insertions, deletions, substitutions, adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  return distances(a, b)[b.length]!;
}

/** Whether `a` and `b` differ by one edit: a character left out, one too many, one changed, or two adjacent ones swapped. */
export function oneEditApart(a: string, b: string): boolean {
  if (a === b) return false;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  if (long.length - short.length > 1) return false;
  let i = 0;
  while (i < short.length && short[i] === long[i]) i++;
  if (short.length < long.length) return short.slice(i) === long.slice(i + 1);
  if (short.slice(i + 1) === long.slice(i + 1)) return true;
  return short[i] === long[i + 1] && short[i + 1] === long[i] && short.slice(i + 2) === long.slice(i + 2);
}

/** The edit distance from `a` to the nearest beginning of `b` (0 when `b` starts with `a`). */
export function prefixDistance(a: string, b: string): number {
  return Math.min(...distances(a, b));
}

/**
 * The name of `known` nearest to `name` (a mistyped variable, flag or key), and whether it is close
 * enough to be a likely typo; `prefixLength` characters at the start are the namespace (`POSTURE_`),
 * not part of what was typed. In order:
 * - a name one edit away (a letter left out, one too many, one changed, two swapped: POSTURE_API_KEYFILE
 *   is POSTURE_API_KEY_FILE, never POSTURE_API_KEY), and a second one when two are; when what was
 *   typed is the last words of another name, given alone, that name first and the one edit away
 *   beside it (POSTURE_SHARDS: the count POSTURE_TOTAL_SHARDS, or POSTURE_SHARD);
 * - a name cut short at a word (POSTURE_WEB_CONFIG, --interval): the shortest name it begins before `separator`;
 * - the last words of a name, given alone (POSTURE_TAGS, four characters at least): the shortest
 *   name they end (POSTURE_VITALS_TAGS);
 * - the words of one name, some cut short or spelt out (--state-directory: --state-dir);
 * - a name that begins with what was typed, give or take a typo (POSTURE_INTERVL, --intervall:
 *   POSTURE_INTERVAL_SECONDS, --interval-seconds), within a quarter of the typed part, the fewest
 *   edits first, then the nearest whole name;
 * - else the least edit distance, close within a third of the typed part (INTERVAL_SECONDS_ is close
 *   to INTERVAL_SECONDS, LOG not to API_KEY).
 */
export function nearestName(name: string, known: readonly string[], separator: string, prefixLength = 0): Nearest {
  const namespace = name.slice(0, prefixLength);
  const typedPart = name.slice(prefixLength);
  // The last words of a name given alone (POSTURE_SHARDS, the count): the shortest name they end.
  const ending = typedPart.length >= 4 ? known.filter((k) => k.startsWith(namespace) && k.endsWith(separator + typedPart)).sort((a, b) => a.length - b.length)[0] : undefined;
  const oneEdit = known.filter((k) => oneEditApart(name, k));
  if (oneEdit.length > 0) {
    // The last words given whole say more than a letter too many: the count first (POSTURE_SHARDS), the ordinal beside it.
    const [nearest, also] = ending !== undefined && ending !== oneEdit[0] ? [ending, oneEdit[0]] : [oneEdit[0]!, oneEdit[1]];
    return { nearest, close: true, ...(also !== undefined && { also }) };
  }
  const extended = known.filter((k) => k.startsWith(name + separator)).sort((a, b) => a.length - b.length)[0];
  if (extended !== undefined) return { nearest: extended, close: true };
  if (ending !== undefined) return { nearest: ending, close: true };
  // The same words, some cut short or spelt out (--state-directory: --state-dir): the one name that matches so.
  const abbreviated = known.filter((k) => k !== name && k.startsWith(namespace) && sameWords(typedPart, k.slice(prefixLength), separator));
  if (abbreviated.length === 1) return { nearest: abbreviated[0]!, close: true };
  const typed = name.length - prefixLength;
  const ranked = known
    .map((k) => ({ k, prefix: prefixDistance(name, k), whole: editDistance(name, k) }))
    .sort((a, b) => a.prefix - b.prefix || a.whole - b.whole || a.k.length - b.k.length);
  const begins = ranked[0];
  // Four typed characters at least: a short stem begins too many names to point at one.
  if (begins && typed >= 4 && begins.prefix <= Math.max(1, Math.floor(typed / 4))) return { nearest: begins.k, close: true };
  let nearest = known[0] ?? '';
  let best = Infinity;
  for (const { k, whole } of ranked.sort((a, b) => known.indexOf(a.k) - known.indexOf(b.k))) {
    if (whole < best) [nearest, best] = [k, whole];
  }
  return { nearest, close: best <= Math.max(2, Math.floor(typed / 3)) };
}

/** Whether `a` and `b` have as many words, each the other's word or the beginning of it (three characters at least). */
function sameWords(a: string, b: string, separator: string): boolean {
  const x = a.split(separator);
  const y = b.split(separator);
  return x.length === y.length && x.every((w, i) => {
    const v = y[i]!;
    return w === v || (Math.min(w.length, v.length) >= 3 && (w.startsWith(v) || v.startsWith(w)));
  });
}

/** The names of every setting's environment variable. */
const SETTING_ENV_NAMES: readonly string[] = SETTINGS.map((s) => envName(s));

/**
 * The `POSTURE_*` variables of `env` that are not settings, sorted by name. The prefix is matched
 * without regard to case (`posture_interval_seconds` is a typo too).
 */
export function unknownSettings(env: Readonly<Record<string, string | undefined>>, known: readonly string[] = SETTING_ENV_NAMES): UnknownSetting[] {
  const names = new Set(known);
  const out: UnknownSetting[] = [];
  for (const name of Object.keys(env).sort()) {
    const upper = name.toUpperCase();
    if (!upper.startsWith('POSTURE_') || names.has(name) || env[name] === undefined) continue;
    if (OTHER_NAMESPACES.some((p) => upper.startsWith(p))) continue;
    out.push({ name, ...nearestName(upper, known, '_', 'POSTURE_'.length) });
  }
  return out;
}

/**
 * The line that refuses an unknown variable (names only, never values): a typo leaves the setting
 * meant at its default, so every command and the Lambda refuse to start on it.
 */
export function unknownSettingMessage(u: UnknownSetting): string {
  return u.close
    ? `${u.name} is not a setting: did you mean ${u.nearest}${u.also !== undefined ? ` or ${u.also}` : ''}? Rename it, or unset it.`
    : `${u.name} is not a setting (the nearest is ${u.nearest}): unset it, or see posture-exporter --help for the settings.`;
}

/** Keys a config file never holds: they say where the settings are. */
const WHERE_SETTINGS_ARE: readonly string[] = ['config_file', 'config'];
/** The keys of a config file's top level: the settings (but where the file is), `portals` and `objectives`. */
const TOP_LEVEL_KEYS: readonly string[] = [...SETTINGS.map((s) => s.key).filter((k) => !WHERE_SETTINGS_ARE.includes(k)), 'portals', 'objectives'];
/** The keys of an entry of a config file's `portals`: the per-portal settings. */
const PORTAL_KEYS: readonly string[] = SETTINGS.filter((s) => s.scope === 'portal').map((s) => s.key);

/** The per-portal interval settings that follow `interval_seconds` when unset. */
const INHERITING_INTERVALS: readonly string[] = Object.values(JOB_INTERVALS).flatMap((row) => (row.inherits ? [row.key] : []));

/** `a`, `a and b`, `a, b and c`. */
const inList = (items: readonly string[]): string => (items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items.at(-1)!}` : items.join(''));

/** Why a top-level key is not read in a `portals` entry, and where it goes. */
function topLevelOnly(key: string): string {
  const own = key === 'interval_seconds' ? `, or give this portal its own ${inList(INHERITING_INTERVALS)}` : '';
  return `\`${key}\` is top-level only: move it out of \`portals\`, where it applies to every portal${own}.`;
}

/**
 * The message for a key of a config file that is not a setting there (after `config file x.yaml:`
 * and, in a `portals` entry, `portals[i]:`), with the nearest key as flags and variables get it:
 * a top-level key inside an entry says it is top-level only; a variable's or a flag's name the key it means.
 */
export function unknownKeyMessage(key: string, inPortal: boolean): string {
  if (WHERE_SETTINGS_ARE.includes(key)) {
    const def = SETTINGS.find((s) => s.key === key)!;
    return `\`${key}\` says where the settings are, so it is not read from a config file: remove it (set ${envName(def)}${def.flag ? ' or --config' : ''} instead).`;
  }
  const known = inPortal ? [...PORTAL_KEYS, ...TOP_LEVEL_KEYS.filter((k) => !PORTAL_KEYS.includes(k))] : TOP_LEVEL_KEYS;
  const notHere = (k: string) => inPortal && !PORTAL_KEYS.includes(k);
  if (notHere(key) && TOP_LEVEL_KEYS.includes(key)) return topLevelOnly(key);
  // POSTURE_PAGE_SIZE or page-size: the variable's or the flag's name for the key.
  const asKey = key.toLowerCase().replace(/^posture_/, '').replace(/-/g, '_');
  const { nearest, close, also }: Nearest = known.includes(asKey) ? { nearest: asKey, close: true } : nearestName(key, known, '_');
  if (!close) return `unknown setting \`${key}\`: remove it or use one of the documented keys (README, Configuration).`;
  const then = notHere(nearest) ? ` It is top-level only: move it out of \`portals\`, where it applies to every portal.` : ' Rename it, or remove it.';
  const spelt = known.includes(asKey) && asKey !== key ? ' (a config file names a setting in lower case with underscores, without POSTURE_)' : '';
  return `unknown setting \`${key}\`: did you mean \`${nearest}\`${also !== undefined ? ` or \`${also}\`` : ''}${spelt}?${then}`;
}
