/**
 * What every entry point refuses before it starts: `check-config` reports these, and `once`,
 * `serve`, `demo` and the Lambda handler refuse to start on them, with the same lines (exit 2).
 * Loading the settings (`loadConfig`) already refuses what the settings alone show; these need
 * more: each portal's plan against its share, a key file's contents, a web config file.
 */
import type { Config } from '../config/load.js';
import { resolveSecret } from '../config/secrets.js';
import { ConfigError, ConfigErrors } from '../errors.js';
import { loadWebConfig } from '../http/web-config.js';
import { checkServeConfig } from '../schedule/fit.js';

/** Every problem found, one ConfigError each (empty when the configuration may run). */
export async function startupProblems(config: Config): Promise<ConfigError[]> {
  const problems = [...checkServeConfig(config)];
  const keep = (err: unknown) => {
    if (err instanceof ConfigError) problems.push(err);
    else throw err;
  };
  // A key file that cannot be read is a settings problem too; key stores are only reached at run time.
  for (const p of config.portals) {
    if (p.key.kind !== 'file') continue;
    await resolveSecret(p.key).catch(keep);
  }
  if (config.webConfigFile !== undefined) {
    try {
      loadWebConfig(config.webConfigFile);
    } catch (err) {
      keep(err);
    }
  }
  return problems;
}

/** Throws ConfigErrors (one line per problem, exit 2) when `startupProblems` finds any. */
export async function refuseInvalid(config: Config): Promise<void> {
  const problems = await startupProblems(config);
  if (problems.length) throw new ConfigErrors(problems);
}
