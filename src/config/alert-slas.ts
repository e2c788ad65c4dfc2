/**
 * The alert SLAs (`alert_slas`): how long an unresolved, unsnoozed alert of each severity may stay
 * open before posture_alerts_over_sla counts it. Given as a mapping in a config file
 * (`{red: 1d, amber: 7d}`) or as `red=1d,amber=7d` (environment, flag, or a string in the file);
 * severities left out keep their defaults.
 */
import { SEVERITIES } from '../domain.js';
import { durationMs } from './objectives.js';
import type { Problems } from './problems.js';
import { defaultOf } from './settings.js';

/** A severity that has an SLA (an alert of any other state, `unknown`, has none). */
export type SlaSeverity = (typeof SEVERITIES)[number];

/** Seconds an alert of each severity may stay open. */
export type AlertSlas = Readonly<Record<SlaSeverity, number>>;

const EXAMPLE = 'red=1d,amber=7d,green=30d';

function parsePairs(pairs: ReadonlyArray<readonly [string, unknown]>, name: string, setting: string, problems: Problems): AlertSlas | undefined {
  const out: Record<string, number> = { ...DEFAULT_ALERT_SLAS };
  const seen = new Set<string>();
  let ok = true;
  const bad = (message: string) => {
    ok = false;
    problems.add(setting, `${name}: ${message}`);
  };
  for (const [severity, value] of pairs) {
    if (!(SEVERITIES as readonly string[]).includes(severity)) {
      bad(`${JSON.stringify(severity.slice(0, 40))} is not a severity: give SLAs for red, amber or green (e.g. ${EXAMPLE}).`);
      continue;
    }
    if (seen.has(severity)) {
      bad(`${severity} is given twice: give each severity once.`);
      continue;
    }
    seen.add(severity);
    const ms = typeof value === 'string' ? durationMs(value.trim()) : undefined;
    if (ms === undefined || ms <= 0) {
      bad(`${severity}=${JSON.stringify(typeof value === 'string' ? value.slice(0, 40) : value)} is not valid: give a Prometheus duration above 0, such as 12h, 1d or 3d (default ${severity}=${formatDuration(DEFAULT_ALERT_SLAS[severity as SlaSeverity])}).`);
      continue;
    }
    out[severity] = ms / 1000;
  }
  return ok ? (out as AlertSlas) : undefined;
}

/**
 * `alert_slas` as given (`red=1d,amber=7d` or a mapping of severity to duration), checked: one
 * problem per bad entry, each naming `name` (where it was set) and the fix; severities left out
 * keep their defaults. Undefined when any entry is bad.
 */
export function parseAlertSlas(value: unknown, name: string, setting: string, problems: Problems): AlertSlas | undefined {
  if (typeof value === 'string') {
    const entries = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
    const pairs: Array<readonly [string, unknown]> = [];
    for (const entry of entries) {
      const eq = entry.indexOf('=');
      if (eq === -1) {
        problems.add(setting, `${name}: ${JSON.stringify(entry.slice(0, 40))} is not severity=duration: write e.g. ${EXAMPLE}.`);
        return undefined;
      }
      pairs.push([entry.slice(0, eq).trim(), entry.slice(eq + 1)]);
    }
    return parsePairs(pairs, name, setting, problems);
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return parsePairs(Object.entries(value), name, setting, problems);
  problems.add(setting, `${name} must be a mapping of severity to duration ({red: 1d, amber: 7d, green: 30d}) or a string such as ${EXAMPLE}.`);
  return undefined;
}

const UNITS = [
  ['d', 86_400],
  ['h', 3600],
  ['m', 60],
  ['s', 1],
] as const;

/** Seconds as a short Prometheus duration (86400 → `1d`, 5400 → `1h30m`); a fraction of a second in ms. */
function formatDuration(seconds: number): string {
  let rest = Math.round(seconds * 1000);
  let out = '';
  for (const [unit, s] of UNITS) {
    const n = Math.floor(rest / (s * 1000));
    if (n > 0) out += `${n}${unit}`;
    rest -= n * s * 1000;
  }
  if (rest > 0) out += `${rest}ms`;
  return out || '0s';
}

/** The SLAs in words (`red 1d, amber 7d, green 30d`). */
function describeAlertSlas(slas: AlertSlas): string {
  return SEVERITIES.map((s) => `${s} ${formatDuration(slas[s])}`).join(', ');
}

/** `check-config`'s lines: the alert SLAs, once when every portal has the same, else per group of portals. */
export function alertSlaLines(portals: ReadonlyArray<{ readonly name: string; readonly alertSlas: AlertSlas }>): string[] {
  const byText = new Map<string, string[]>();
  for (const p of portals) {
    const text = describeAlertSlas(p.alertSlas);
    byText.set(text, [...(byText.get(text) ?? []), p.name]);
  }
  if (byText.size === 1) return [`alert SLAs: ${[...byText.keys()][0]!} (posture_alerts_over_sla)`];
  return [...byText].map(([text, names]) => `alert SLAs of ${names.join(', ')}: ${text}`);
}

/** The default SLAs, from the settings table (red 1 day, amber 7 days, green 30 days). */
export const DEFAULT_ALERT_SLAS = Object.fromEntries(
  String(defaultOf('alert_slas'))
    .split(',')
    .map((entry) => {
      const [severity, duration] = entry.split('=') as [SlaSeverity, string];
      return [severity, durationMs(duration)! / 1000];
    }),
) as AlertSlas;
