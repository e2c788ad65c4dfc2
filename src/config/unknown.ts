/**
 * `POSTURE_*` environment variables that are not settings (typos such as POSTURE_INTERVAL_SECOND),
 * each with the nearest setting. Pure: the callers decide how to warn.
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

/** Edit distance (insertions, deletions, substitutions, adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The name of `known` nearest to `name` (a mistyped variable or flag), and whether it is close enough
 * to be a likely typo. A name cut short (POSTURE_WEB_CONFIG, --interval) means the shortest name it
 * begins before `separator`; else the least edit distance, close within a third of the part after
 * the first `prefixLength` characters (INTERVAL_SECOND is close to INTERVAL_SECONDS, LOG not to API_KEY).
 */
export function nearestName(name: string, known: readonly string[], separator: string, prefixLength = 0): { nearest: string; close: boolean } {
  const extended = known.filter((k) => k.startsWith(name + separator)).sort((a, b) => a.length - b.length)[0];
  if (extended !== undefined) return { nearest: extended, close: true };
  let nearest = known[0] ?? '';
  let best = Infinity;
  for (const k of known) {
    const dist = editDistance(name, k);
    if (dist < best) [nearest, best] = [k, dist];
  }
  return { nearest, close: best <= Math.max(2, Math.floor((name.length - prefixLength) / 3)) };
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

/** One warning line for an unknown variable (names only, never values). */
export function unknownSettingMessage(u: UnknownSetting): string {
  return u.close
    ? `${u.name} is not a setting and is ignored: did you mean ${u.nearest}?`
    : `${u.name} is not a setting and is ignored (the nearest is ${u.nearest}; see posture-exporter --help).`;
}
