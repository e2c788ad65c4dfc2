/**
 * The state directory: where processes record their requests to each portal and backfill keeps its
 * progress. Pure path logic; the files themselves are written by `src/state/`.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * The state directory: the setting when given (relative to the working directory), else
 * `$XDG_STATE_HOME/posture-exporter`, else `~/.local/state/posture-exporter` (the XDG base
 * directory spec ignores a relative `XDG_STATE_HOME`).
 */
export function stateDirOf(setting: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  if (setting !== undefined) return resolve(setting);
  const xdg = env.XDG_STATE_HOME;
  const home = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.local', 'state');
  return join(home, 'posture-exporter');
}
