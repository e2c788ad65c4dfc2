/**
 * `POSTURE_*` environment variables that are not settings (typos such as POSTURE_INTERVAL_SECOND),
 * each with the nearest setting. Pure: the callers refuse to start on them.
 */
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

/** The edit distance from `a` to the nearest beginning of `b` (0 when `b` starts with `a`). */
export function prefixDistance(a: string, b: string): number {
  return Math.min(...distances(a, b));
}

/**
 * The name of `known` nearest to `name` (a mistyped variable or flag), and whether it is close enough
 * to be a likely typo; `prefixLength` characters at the start are the namespace (`POSTURE_`), not
 * part of what was typed. In order:
 * - a name cut short at a word (POSTURE_WEB_CONFIG, --interval): the shortest name it begins before `separator`;
 * - a name with a separator too many at the end (POSTURE_PUSH_): the name without it;
 * - a name that begins with what was typed, give or take a typo (POSTURE_INTERVL, --intervall:
 *   POSTURE_INTERVAL_SECONDS, --interval-seconds), within a quarter of the typed part, the fewest
 *   edits first, then the nearest whole name;
 * - else the least edit distance, close within a third of the typed part (INTERVAL_SECOND is close
 *   to INTERVAL_SECONDS, LOG not to API_KEY).
 */
export function nearestName(name: string, known: readonly string[], separator: string, prefixLength = 0): { nearest: string; close: boolean } {
  const extended = known.filter((k) => k.startsWith(name + separator)).sort((a, b) => a.length - b.length)[0];
  if (extended !== undefined) return { nearest: extended, close: true };
  // A stray separator at the end (POSTURE_PUSH_) is a slip, not the start of a longer name.
  const stripped = name.endsWith(separator) ? name.slice(0, -separator.length) : undefined;
  if (stripped !== undefined && known.includes(stripped)) return { nearest: stripped, close: true };
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
    const { nearest, close } = nearestName(upper, known, '_', 'POSTURE_'.length);
    out.push({ name, nearest, close });
  }
  return out;
}

/**
 * The line that refuses an unknown variable (names only, never values): a typo leaves the setting
 * meant at its default, so every command and the Lambda refuse to start on it.
 */
export function unknownSettingMessage(u: UnknownSetting): string {
  return u.close
    ? `${u.name} is not a setting: did you mean ${u.nearest}? Rename it, or unset it.`
    : `${u.name} is not a setting (the nearest is ${u.nearest}): unset it, or see posture-exporter --help for the settings.`;
}
