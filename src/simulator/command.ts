/**
 * The `simulate` command: one simulated portal, or with `--portals N` a fleet of N portals behind
 * one port, each with its own data, key and 10-per-60-s budget. `--write-config FILE` writes the
 * exporter's `portals` config for what is served, each key in a file of its own beside it.
 * `--regress INTEGRATION` (also `demo`'s) stages a regression of one integration's configuration.
 */
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { parseListen } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { CliIo } from '../core/io.js';
import { ConfigError, ConfigErrors } from '../errors.js';
import { asListenError } from '../http/server.js';
import { startFleet } from './fleet.js';
import { startSimulator, type Simulator, type SimulatorOptions } from './index.js';

/** Most portals `--portals` serves (a built portal holds about 20 KB; names cost little until called). */
const MAX_PORTALS = 100_000;

/** The flags `simulate` reads besides the simulated sizes. */
export interface SimulateFlags {
  listen?: string | undefined;
  portals?: string | undefined;
  writeConfig?: string | undefined;
  regress?: string | undefined;
}

/** The share of configuration-compliant devices `--regress` takes away unless it says another. */
const DEFAULT_REGRESSION = 0.8;

/**
 * Stages `--regress INTEGRATION[=FRACTION]` on `sim`: from now on, the integration's (key or name)
 * configuration-compliant devices are down by FRACTION (default 0.8: 80 % non-compliant, a burn
 * rate of about 16 against a 95 % objective, which pages). Returns the line saying so; a bad
 * value is a ConfigError naming the integrations that can regress.
 */
export function stageRegression(sim: Pick<Simulator, 'injectRegression' | 'data'>, raw: string): string {
  const m = /^\s*([^=]+?)\s*(?:=\s*(.*?)\s*)?$/.exec(raw);
  const enabled = sim.data().vitals().filter((r) => r.vitalsEnabled).map((r) => r.key);
  const which = `give the key of an integration with Vitals (${enabled.join(', ') || 'none here'}), optionally =FRACTION from 0 to 1 (default ${DEFAULT_REGRESSION})`;
  const fraction = m?.[2] === undefined ? DEFAULT_REGRESSION : /^(?:0?\.\d+|1(?:\.0*)?)$/.test(m[2]) ? Number(m[2]) : NaN;
  if (!m || !(fraction > 0 && fraction <= 1)) throw new ConfigError('--regress', `--regress=${JSON.stringify(raw)} is not valid: ${which}.`);
  try {
    sim.injectRegression({ integration: m[1]!, fraction });
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    throw new ConfigError('--regress', `--regress=${JSON.stringify(raw)}: the simulated portal has no integration ${JSON.stringify(m[1])} with Vitals: ${which}.`, { cause: err });
  }
  return `regression (--regress): ${m[1]} has ${Math.round(fraction * 100)} % fewer configuration-compliant devices from now on\n`;
}

/** One portal as the exporter's config lists it. */
interface Served {
  name: string;
  baseUrl: string;
  apiKey: string;
}

/** Parses `--portals`: a whole number from 1 to MAX_PORTALS. */
function portalCount(raw: string): number {
  const n = /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!(Number.isInteger(n) && n >= 1 && n <= MAX_PORTALS)) throw new ConfigError('--portals', `--portals=${JSON.stringify(raw)} is not valid: give a whole number of portals from 1 to ${MAX_PORTALS}.`);
  return n;
}

/**
 * Writes `file` (YAML the exporter's --config reads: a `portals` list of `portal`, `base_url`,
 * `api_key_file`) and each key to `<stem>-keys/<portal>` beside it, mode 0600. Paths are absolute,
 * so the exporter may run from any directory. Returns the keys' directory.
 */
function writeFleetConfig(file: string, portals: readonly Served[], command: string): string {
  const path = resolve(file);
  const keysDir = join(dirname(path), `${basename(path, extname(path))}-keys`);
  try {
    mkdirSync(keysDir, { recursive: true, mode: 0o700 });
    chmodSync(keysDir, 0o700);
    for (const p of portals) {
      const keyFile = join(keysDir, p.name);
      writeFileSync(keyFile, p.apiKey + '\n', { mode: 0o600 });
      // The mode of `writeFileSync` applies only to a new file; an older one is narrowed too.
      chmodSync(keyFile, 0o600);
    }
    // JSON strings are YAML double-quoted scalars: any name or path reads back as written.
    const q = JSON.stringify;
    const body = `portals:\n${portals.map((p) => `  - portal: ${q(p.name)}\n    base_url: ${q(p.baseUrl)}\n    api_key_file: ${q(join(keysDir, p.name))}\n`).join('')}`;
    // Written whole, then renamed: a reader never sees half a file.
    const partial = `${path}.partial`;
    writeFileSync(partial, `# The simulated portals of \`${command}\`, valid while it runs.\n# Each key is in ${keysDir}.\n${body}`, { mode: 0o600 });
    renameSync(partial, path);
  } catch (err) {
    throw new ConfigError('--write-config', `--write-config: cannot write ${path} or ${keysDir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give a file in a folder this user may write.`, { cause: err });
  }
  return keysDir;
}

/**
 * Runs `simulate` until the stop signal; returns the exit code. Refuses (ConfigErrors, exit 2)
 * `unknown`, the environment's `POSTURE_*` variables that are not settings: it reads POSTURE_LISTEN.
 */
export async function simulateCommand(flags: SimulateFlags, sim: SimulatorOptions, io: CliIo, clock: Clock, unknown: readonly ConfigError[]): Promise<number> {
  const listen = flags.listen ?? io.env.POSTURE_LISTEN ?? '127.0.0.1:9878';
  // The simulated portal stays on loopback unless a host is named.
  const address = parseListen(listen, '127.0.0.1');
  if (!address) throw new ConfigError('POSTURE_LISTEN', `POSTURE_LISTEN (--listen)=${JSON.stringify(listen)} is not HOST:PORT: give e.g. 127.0.0.1:9878.`);
  const count = flags.portals === undefined ? undefined : portalCount(flags.portals);
  if (count !== undefined && flags.regress !== undefined) throw new ConfigError('--regress', '--regress stages a regression in one simulated portal: drop --portals, or --regress.');
  // A mistyped POSTURE_LISTEN would serve on the default address: nothing starts on a typo.
  if (unknown.length) throw new ConfigErrors([...unknown]);
  const served: Served[] = [];
  let regression = '';
  let close: () => Promise<void>;
  let url: string;
  try {
    if (count === undefined) {
      const portal = await startSimulator({ ...sim, clock, host: address.host, port: address.port });
      served.push({ name: 'simulated', baseUrl: portal.baseUrl, apiKey: portal.apiKey });
      close = () => portal.close();
      url = portal.baseUrl;
      if (flags.regress !== undefined) {
        try {
          regression = stageRegression(portal, flags.regress);
        } catch (err) {
          await close();
          throw err;
        }
      }
    } else {
      const fleet = await startFleet({ ...sim, portals: count, clock, host: address.host, port: address.port });
      for (const name of fleet.names) served.push({ name, baseUrl: fleet.baseUrl(name), apiKey: fleet.apiKey(name) });
      close = () => fleet.close();
      url = fleet.baseUrl(fleet.names[0]!).replace(`/p/${fleet.names[0]!}/`, '/p/<portal>/');
    }
  } catch (err) {
    throw asListenError(err, address.host, address.port);
  }
  try {
    const command = `posture-exporter simulate${count === undefined ? '' : ` --portals ${count}`}`;
    const keysDir = flags.writeConfig === undefined ? undefined : writeFleetConfig(flags.writeConfig, served, command);
    const configFile = flags.writeConfig === undefined ? undefined : resolve(flags.writeConfig);
    if (count === undefined) {
      const [p] = served;
      io.stdout(`simulated portal: ${p!.baseUrl}\nAPI key (simulated): ${p!.apiKey}\n${regression}\n`);
      io.stdout(configFile ? `config: ${configFile} (key in ${keysDir})\n\nPOSTURE_CONFIG_FILE=${configFile} posture-exporter once\n` : `POSTURE_BASE_URL=${p!.baseUrl} POSTURE_API_KEY=${p!.apiKey} posture-exporter once\n`);
    } else {
      io.stdout(`simulated fleet: ${count} portal(s) at ${url}, each with its own key and 10 requests per 60 s\n`);
      if (configFile) io.stdout(`config: ${configFile} (keys in ${keysDir})\n\nPOSTURE_CONFIG_FILE=${configFile} posture-exporter once\n`);
      else io.stdout(`${served.map((p) => `${p.name} ${p.baseUrl} key ${p.apiKey}`).join('\n')}\n\nadd --write-config FILE for the exporter's config of these portals\n`);
    }
    io.onReady?.({ portalUrl: url });
    await (io.stopSignal ?? new Promise<void>(() => {}));
  } finally {
    await close();
  }
  return 0;
}
