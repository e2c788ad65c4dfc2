/**
 * What every entry point refuses before it starts: `check-config` reports these, and `once`,
 * `serve`, `demo` and the Lambda handler refuse to start on them, with the same lines (exit 2).
 * Loading the settings (`loadConfig`) already refuses what the settings alone show; these need
 * more: the environment's unknown `POSTURE_*` variables, each portal's plan against its share, a
 * key file's contents, a web config file. `backfill`, `rules` and `simulate` refuse the unknown
 * variables too, with the same lines (they have no plan to check).
 */
import type { Config, PortalConfig } from '../config/load.js';
import { resolveSecret, type KeyStoreOptions } from '../config/secrets.js';
import { unknownSettingMessage, unknownSettings } from '../config/unknown.js';
import { ConfigError, ConfigErrors } from '../errors.js';
import { checkServeConfig } from '../schedule/fit.js';
import { proxyProblems } from '../net/agents.js';

/**
 * One ConfigError per `POSTURE_*` variable of `env` that is not a setting: a typo leaves the
 * setting meant at its default, so nothing runs on it.
 */
export function unknownVariables(env: Readonly<Record<string, string | undefined>>): ConfigError[] {
  return unknownSettings(env).map((u) => new ConfigError(u.name, unknownSettingMessage(u)));
}

/** The problems a settings error holds (one for a ConfigError), or undefined for any other error. */
export function problemsOf(err: unknown): ConfigError[] | undefined {
  if (err instanceof ConfigErrors) return err.problems;
  if (err instanceof ConfigError) return [err];
  return undefined;
}

/** `first` and then the other problems not among them: the unknown variables come first, as they may be why the rest are wrong. */
export function problemsFirst(first: readonly ConfigError[], rest: readonly ConfigError[]): ConfigError[] {
  return [...first, ...rest.filter((p) => !first.includes(p))];
}

/** Adds a ConfigError to `problems`; any other error is thrown on. */
function keepIn(problems: ConfigError[]): (err: unknown) => void {
  return (err) => {
    if (err instanceof ConfigError) problems.push(err);
    else throw err;
  };
}

/**
 * What the settings show without reading a portal's key: `unknown` (from `unknownVariables`)
 * first, then each portal's plan against its share, the web config file and the proxy variables
 * (read from the process's environment, where every outward call reads them: src/net/agents.ts).
 */
export async function settingsProblems(config: Config, unknown: readonly ConfigError[]): Promise<ConfigError[]> {
  const problems = [...unknown, ...checkServeConfig(config), ...proxyProblems(process.env)];
  if (config.webConfigFile !== undefined) {
    try {
      // Imported only when set: the Lambda never serves, and its start-up stays small.
      (await import('../http/web-config.js')).loadWebConfig(config.webConfigFile);
    } catch (err) {
      keepIn(problems)(err);
    }
  }
  return problems;
}

/**
 * The key files of `portals` that cannot be read (or are empty), one ConfigError each: a settings
 * problem too; key stores are only reached at run time. A key read is kept for the process.
 */
export async function keyFileProblems(portals: readonly PortalConfig[], keyStore?: KeyStoreOptions): Promise<ConfigError[]> {
  const problems: ConfigError[] = [];
  for (const p of portals) {
    if (p.key.kind !== 'file') continue;
    await resolveSecret(p.key, keyStore).then(() => undefined, keepIn(problems));
  }
  return problems;
}

/**
 * Every problem found, one ConfigError each (empty when the configuration may run): `unknown`
 * (from `unknownVariables`) first, then `settingsProblems` and the key files of the portals this
 * process collects (its shard's).
 */
export async function startupProblems(config: Config, unknown: readonly ConfigError[]): Promise<ConfigError[]> {
  return [...(await settingsProblems(config, unknown)), ...(await keyFileProblems(config.portals))];
}

/** Throws ConfigErrors (one line per problem, exit 2) when `startupProblems` finds any. */
export async function refuseInvalid(config: Config, unknown: readonly ConfigError[]): Promise<void> {
  const problems = await startupProblems(config, unknown);
  if (problems.length) throw new ConfigErrors(problems);
}
