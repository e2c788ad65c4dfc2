/**
 * The backfill's memory between runs: per portal and day, the archive lists already fetched
 * (kept while the OpenMetrics file needs them) and the lists already pushed by remote write.
 * Written atomically after every day, so an interrupted run loses at most the day in flight.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { foldVitals, type VitalsList } from '../sources/vitals.js';
import { ConfigError } from '../errors.js';
import type { VitalsRecord } from '../upstream/schemas.js';
import { tagOfKey } from './plan.js';

/** One portal's day. */
export interface DayState {
  /** Fetched lists by key (`''` whole portal, `tag:<t>`); dropped once no output needs them. */
  lists?: Record<string, VitalsRecord[]>;
  /** Keys of the lists remote write has delivered. */
  pushed?: string[];
}

/** The whole state file. */
export interface BackfillState {
  version: 1;
  /** The receiver `pushed` refers to (URL without credentials or query). */
  remoteWriteUrl?: string;
  /**
   * Per portal: its base URL, when this state last asked it for something (ms on
   * `clock.monotonic()`, whose origin is the wall clock at process start, so a later run can
   * compare it with its own reading), and its days.
   */
  portals: Record<string, { baseUrl: string; lastRequestAt?: number; days: Record<string, DayState> }>;
}

/**
 * The state file's default place, in the state directory (POSTURE_STATE_DIR), never the working
 * directory, where it would end up in a checkout or an image: one file per output (named after
 * it, and by a hash of its absolute path), or `backfill.state.json` for a run that only pushes.
 */
export function defaultStatePath(output: string | undefined, stateDir: string): string {
  if (output === undefined) return join(stateDir, 'backfill.state.json');
  const path = resolve(output);
  const name = basename(path).replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 64);
  return join(stateDir, `backfill-${name}-${createHash('sha256').update(path).digest('hex').slice(0, 12)}.state.json`);
}

/** Reads the state file; a missing file is an empty state. Throws ConfigError('--state') on a file that is not one. */
export function loadState(path: string): BackfillState {
  if (!existsSync(path)) return { version: 1, portals: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError('--state', `${path} is not a backfill state file (${err instanceof SyntaxError ? 'not JSON' : (err as Error).message}): remove it to start over, or give another --state.`, { cause: err });
  }
  const s = parsed as Partial<BackfillState> | null;
  if (!s || s.version !== 1 || typeof s.portals !== 'object' || s.portals === null) {
    throw new ConfigError('--state', `${path} is not a backfill state file (version 1 expected): remove it to start over, or give another --state.`);
  }
  return s as BackfillState;
}

/** Writes the state through a temporary file and a rename, so a crash never leaves half a file. */
export function saveState(path: string, state: BackfillState): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, JSON.stringify(state));
  renameSync(tmp, path);
}

/** The stored lists of a day, re-validated as a live response is, for the keys given; undefined when one is missing. */
export function storedLists(day: DayState | undefined, keys: readonly string[]): VitalsList[] | undefined {
  const out: VitalsList[] = [];
  for (const key of keys) {
    const records = day?.lists?.[key];
    if (!records) return undefined;
    out.push(foldVitals(records, tagOfKey(key)));
  }
  return out;
}

/** Writes text through a temporary file and a rename. */
export function writeFileAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}
