/** The `rules` command: the config file's objectives as Prometheus rule groups, on stdout or in `--output FILE`, their runbook links from `runbook_url`. */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { loadObjectives } from '../config/load.js';
import { flagName, SETTING_BY_KEY, type SettingKey } from '../config/settings.js';
import type { CliIo } from '../core/io.js';
import { ConfigError, ConfigErrors } from '../errors.js';
import { objectiveRulesYaml } from './rules.js';

/**
 * Runs `rules`; returns the exit code (0); throws ConfigError(s) for bad flags and objectives
 * (exit 2), and for `unknown`, the environment's `POSTURE_*` variables that are not settings (a
 * mistyped POSTURE_CONFIG_FILE would write the rules of no file).
 */
export function rulesCommand(flags: Partial<Record<SettingKey, string>>, other: Readonly<Record<string, unknown>>, io: CliIo, unknown: readonly ConfigError[]): number {
  // Only what the command reads: another flag given here would be silently ignored.
  const stray = [
    ...Object.keys(flags).filter((k) => k !== 'config_file' && k !== 'runbook_url').map((k) => `--${flagName(SETTING_BY_KEY[k as SettingKey])}`),
    ...Object.entries(other).filter(([k, v]) => k !== 'output' && v !== undefined).map(([k]) => `--${k}`),
  ];
  if (stray.length) throw new ConfigError(stray[0]!, `rules takes only --config, --runbook-url and --output: drop ${stray.join(', ')}.`);
  const { objectives, runbookUrl } = loadObjectives({ env: io.env, flags });
  const text = objectiveRulesYaml(objectives, runbookUrl);
  if (unknown.length) throw new ConfigErrors([...unknown]);
  const output = other.output as string | undefined;
  if (output === undefined) {
    io.stdout(text);
    return 0;
  }
  // Whole or not at all: Prometheus may be reading the file while it is rewritten.
  const tmp = `${output}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, output);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new ConfigError('--output', `--output ${output}: cannot write it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give a path in a folder that exists and may be written.`, { cause: err });
  }
  return 0;
}
