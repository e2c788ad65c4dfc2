import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config/load.js';
import { problemsFirst, problemsOf, refuseInvalid, settingsProblems, startupProblems, unknownVariables } from './startup.js';
import { pushRequiredProblem } from '../config/push.js';
import { SETTINGS, SETTING_BY_KEY, envName, flagName, type SettingKey } from '../config/settings.js';
import { nearestName } from '../config/unknown.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { CliIo } from '../core/io.js';
import { createLogger, redact, type Logger } from '../core/log.js';
import { ConfigError, ConfigErrors, ListenError, UntrustedCertificateError } from '../errors.js';
import { renderJson, renderText } from '../metrics/render.js';
import { CATALOGUE } from '../collect/catalogue.js';
import type { SimulatorOptions } from '../simulator/index.js';
import type { PushOutcome } from '../sinks/index.js';
import { Exporter, failedSources, failureReasons, untrustedIn } from '../exporter/exporter.js';
import { VERSION } from '../version.js';
import { COMMANDS, commandHelp, globalHelp } from './help.js';
import { explainPlan } from '../schedule/explain.js';
import type { BackfillFlags } from '../backfill/command.js';
import type { SimulateFlags } from '../simulator/command.js';
import { alertSlaLines } from '../config/alert-slas.js';
import { describeObjective } from '../config/objectives.js';
import { burnRateLines } from '../objectives/windows.js';
import { openState, type ProcessState } from '../state/index.js';
import { PassMemory } from '../schedule/passes.js';

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

const SIM_FLAGS = ['devices', 'alerts', 'integrations', 'seed'] as const;
const SIMULATE_FLAGS = { portals: { type: 'string' }, 'write-config': { type: 'string' }, regress: { type: 'string' } } as const;
const BACKFILL_FLAGS = { days: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, output: { type: 'string' }, resume: { type: 'boolean' }, state: { type: 'string' } } as const;

/** Every flag the CLI takes, with its type: each setting's, the simulated portal's, backfill's and simulate's. */
export const CLI_OPTIONS: Readonly<Record<string, { type: 'string' | 'boolean' }>> = {
  help: { type: 'boolean' },
  version: { type: 'boolean' },
  // check-config: as the Lambda checks its environment at start (docs/serverless.md).
  lambda: { type: 'boolean' },
  ...BACKFILL_FLAGS,
  ...SIMULATE_FLAGS,
  ...Object.fromEntries(SETTINGS.filter((s) => s.flag).map((s) => [flagName(s), { type: 'string' as const }])),
  ...Object.fromEntries(SIM_FLAGS.map((f) => [f, { type: 'string' as const }])),
};

function parseCli(argv: string[]): { command: string | undefined; flags: Partial<Record<SettingKey, string>>; sim: Partial<Record<(typeof SIM_FLAGS)[number], string>>; simulate: SimulateFlags; backfill: BackfillFlags; help: boolean; version: boolean; lambda: boolean; topic: string | undefined } {
  const options = CLI_OPTIONS;
  checkFlags(argv, options);
  const { values, positionals } = parseArgs({ args: withDashValues(argv, options), options, allowPositionals: true, strict: true });
  // `help <command>` is that command's --help.
  const topic = positionals[0] === 'help' ? positionals[1] : undefined;
  if (positionals.length > (topic === undefined ? 1 : 2)) throw new ConfigError('command', `unexpected argument ${JSON.stringify(positionals[topic === undefined ? 1 : 2])}: give one command (see --help).`);
  const flags: Partial<Record<SettingKey, string>> = {};
  // Only settings that are flags: `config` (inline JSON, env only) would otherwise share `--config` with `config_file`.
  for (const s of SETTINGS) {
    if (!s.flag) continue;
    const v = values[flagName(s)];
    if (typeof v === 'string') flags[s.key as SettingKey] = v;
  }
  const sim: Partial<Record<(typeof SIM_FLAGS)[number], string>> = {};
  for (const f of SIM_FLAGS) if (typeof values[f] === 'string') sim[f] = values[f] as string;
  const backfill = Object.fromEntries(Object.keys(BACKFILL_FLAGS).filter((f) => values[f] !== undefined).map((f) => [f, values[f]])) as BackfillFlags;
  const simulate: SimulateFlags = { portals: values.portals as string | undefined, writeConfig: values['write-config'] as string | undefined, regress: values.regress as string | undefined };
  return { command: positionals[0], flags, sim, simulate, backfill, help: values.help === true, version: values.version === true, lambda: values.lambda === true, topic };
}

/**
 * One usage line per mistake before the strict parse, whose own messages quote the argument
 * (unbalanced) and would echo a value given to a flag that does not exist, such as a key.
 */
function checkFlags(argv: string[], options: Readonly<Record<string, { type: 'string' | 'boolean' }>>): void {
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true });
  for (const t of tokens) {
    if (t.kind !== 'option') continue;
    const def = options[t.name] ? undefined : SETTINGS.find((d) => !d.flag && flagName(d) === t.name);
    if (def) {
      // A secret on the command line shows in `ps`: say where it goes instead, never what was given.
      const file = SETTINGS.find((d) => d.key === `${def.key}_file` && d.flag);
      throw new UsageError(`${t.rawName} is not a flag (secrets on the command line show in ps): set ${envName(def)} in the environment${file ? `, or give --${flagName(file)} FILE` : ''}.`);
    }
    const type = options[t.name]?.type;
    if (type === undefined) {
      const { nearest, close, also } = nearestName(t.name, Object.keys(options), '-');
      throw new UsageError(`unknown flag ${t.rawName}${close ? `: did you mean --${nearest}${also !== undefined ? ` or --${also}` : ''}?` : ' (see posture-exporter --help).'}`);
    }
    if (type === 'string' && (t.value === undefined || (!t.inlineValue && t.value.startsWith('--')))) throw new UsageError(`${t.rawName} needs a value: give ${t.rawName} VALUE or ${t.rawName}=VALUE.`);
    if (type === 'boolean' && t.inlineValue) throw new UsageError(`${t.rawName} takes no value: give ${t.rawName} alone.`);
  }
}

/**
 * `--shard -1` as `--shard=-1`: a value that begins with a dash is still the flag's value, and the
 * setting's own check then says what is wrong with it (the strict parse calls it "ambiguous").
 */
function withDashValues(argv: string[], options: Readonly<Record<string, { type: 'string' | 'boolean' }>>): string[] {
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true });
  const joined = new Map<number, string>();
  for (const t of tokens) {
    if (t.kind === 'option' && options[t.name]?.type === 'string' && !t.inlineValue && t.value?.startsWith('-')) joined.set(t.index, `${t.rawName}=${t.value}`);
  }
  return argv.flatMap((arg, i) => (joined.has(i) ? [joined.get(i)!] : joined.has(i - 1) ? [] : [arg]));
}

/** A mistake on the command line (exit 2), told apart from a bad setting. */
class UsageError extends Error {}

function simulatorOptions(sim: Partial<Record<(typeof SIM_FLAGS)[number], string>>): SimulatorOptions {
  const out: SimulatorOptions = {};
  for (const f of SIM_FLAGS) {
    const v = sim[f];
    if (v === undefined) continue;
    if (!/^\d+$/.test(v) || Number(v) > 10_000_000) throw new ConfigError(`--${f}`, `--${f}=${JSON.stringify(v)} is not valid: give a whole number from 0 to 10000000.`);
    out[f] = Number(v);
  }
  return out;
}

/** One `config error:` line per problem (`first`, the unknown variables, before the error's own), exit 2. */
function printProblems(err: unknown, io: CliIo, first: readonly ConfigError[] = []): number {
  const problems = problemsOf(err);
  if (problems) {
    for (const p of problemsFirst(first, problems)) io.stderr(`config error: ${p.message}\n`);
    return EXIT_USAGE;
  }
  if (err instanceof ListenError) {
    io.stderr(`error: ${err.message}\n`);
    return EXIT_USAGE;
  }
  throw err;
}

/** A command that does not exist: one line naming the commands, exit 2. */
function unknownCommand(command: string, io: CliIo): number {
  io.stderr(`usage error: unknown command ${JSON.stringify(command)}: use ${COMMANDS.slice(0, -1).join(', ')} or ${COMMANDS.at(-1)!} (see --help)\n`);
  return EXIT_USAGE;
}

/** The commands that read a portal (CliIo.beforeReading). */
const READING = new Set(['once', 'serve', 'demo', 'backfill']);

/** Runs the CLI; returns the exit code. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseCli>;
  try {
    parsed = parseCli(argv);
  } catch (err) {
    if (err instanceof ConfigError) return printProblems(err, io);
    if (err instanceof UsageError) {
      io.stderr(`usage error: ${err.message}\n`);
      return EXIT_USAGE;
    }
    io.stderr(`usage error: ${(err as Error).message.split('\n')[0]} (see posture-exporter --help)\n`);
    return EXIT_USAGE;
  }
  if (parsed.version) {
    io.stdout(`${VERSION}\n`);
    return EXIT_OK;
  }
  if (parsed.help || parsed.command === undefined || parsed.command === 'help') {
    // `<command> --help` and `help <command>`: that command's own; else every command's.
    const about = parsed.command === 'help' ? parsed.topic : parsed.command;
    if (about === undefined) {
      io.stdout(globalHelp());
      return parsed.command === undefined && !parsed.help ? EXIT_USAGE : EXIT_OK;
    }
    const help = commandHelp(about);
    if (help === undefined) return unknownCommand(about, io);
    io.stdout(help);
    return EXIT_OK;
  }
  const simulateOnly = Object.entries({ '--portals': parsed.simulate.portals, '--write-config': parsed.simulate.writeConfig }).filter(([, v]) => v !== undefined);
  if (simulateOnly.length && parsed.command !== 'simulate') {
    io.stderr(`usage error: ${simulateOnly.map(([f]) => f).join(' and ')} belong${simulateOnly.length === 1 ? 's' : ''} to simulate: run posture-exporter simulate ${simulateOnly.map(([f]) => f).join(' ')} (see --help)\n`);
    return EXIT_USAGE;
  }
  if (parsed.lambda && parsed.command !== 'check-config') {
    io.stderr('usage error: --lambda belongs to check-config: it checks the settings as the Lambda function does at start (see posture-exporter check-config --help)\n');
    return EXIT_USAGE;
  }
  if (parsed.simulate.regress !== undefined && parsed.command !== 'simulate' && parsed.command !== 'demo') {
    io.stderr('usage error: --regress belongs to simulate and demo (npm start): it stages a regression in the simulated portal (see --help)\n');
    return EXIT_USAGE;
  }
  const clock = io.clock ?? systemClock;
  // A POSTURE_* variable that is not a setting (a typo) leaves the setting meant unset: every command refuses to start on it.
  const unknown = unknownVariables(io.env);
  if (READING.has(parsed.command)) io.beforeReading?.();
  try {
    switch (parsed.command) {
      case 'once':
        return await runOnce(parsed.flags, io, clock, unknown);
      case 'serve':
        return await runServe(parsed.flags, io, clock, unknown);
      case 'check-config':
        return await runCheckConfig(parsed.flags, io, unknown, parsed.lambda);
      case 'simulate':
        return await (await import('../simulator/command.js')).simulateCommand({ listen: parsed.flags.listen, ...parsed.simulate }, simulatorOptions(parsed.sim), io, clock, unknown);
      case 'demo':
        return await runDemo(parsed.flags, simulatorOptions(parsed.sim), io, clock, unknown, parsed.simulate.regress);
      case 'backfill':
        return await (await import('../backfill/command.js')).backfillCommand(parsed.flags, parsed.backfill, io, clock, unknown);
      case 'rules':
        return (await import('../objectives/command.js')).rulesCommand(parsed.flags, { ...parsed.backfill }, io, unknown);
      default:
        return unknownCommand(parsed.command, io);
    }
  } catch (err) {
    // Settings that could not load, or a command's own refusal: the unknown variables are named too, first.
    return printProblems(err, io, unknown);
  }
}

/**
 * Where the process records its requests to each portal: the DynamoDB table when POSTURE_STATE_TABLE
 * is set (loaded only then: it brings the AWS SDK), else the state directory.
 */
async function ledgersOf(config: Config, logger: Logger, clock: Clock): Promise<Pick<ProcessState, 'ledgerOf'> & Partial<Pick<ProcessState, 'passes'>>> {
  if (config.stateTable === undefined) return openState(config.stateDir, logger, clock);
  const { openTable } = await import('../state/table.js');
  return openTable(config.stateTable, logger, clock);
}

function makeLogger(config: Pick<Config, 'logLevel' | 'secrets'>, io: CliIo, clock: Clock): { logger: Logger; secrets: string[] } {
  const secrets = [...config.secrets];
  const logger = createLogger({ level: config.logLevel, write: (l) => io.stderr(l + '\n'), secrets, clock });
  return { logger, secrets };
}

async function runOnce(flags: Partial<Record<SettingKey, string>>, io: CliIo, clock: Clock, unknown: readonly ConfigError[]): Promise<number> {
  const config = loadConfig({ env: io.env, flags });
  await refuseInvalid(config, unknown);
  const { logger, secrets } = makeLogger(config, io, clock);
  const { ledgerOf, passes } = await ledgersOf(config, logger, clock);
  // The resolved-alerts pass runs when its interval has passed since the last (the table or the state directory remembers; without either, every run).
  const exporter = new Exporter(config, { clock, logger, runtime: 'once', onSecret: (s) => secrets.push(s), ledgerOf, passes: passes ?? new PassMemory(() => clock.monotonic()) });
  const { shard } = config;
  if (config.portals.length === 0) logger.info('this shard owns no portal: nothing to collect', { shard: shard.ordinal, totalShards: shard.total, portalsInAll: shard.portalsInAll });
  // SIGTERM/SIGINT stop the run at once (requests in flight, waits for the budget, pushes).
  const stop = new AbortController();
  void io.stopSignal?.then(() => stop.abort(new Error('interrupted')));
  const results = await exporter.collect({ signal: stop.signal });
  if (stop.signal.aborted) return interrupted(io);
  const facts = { version: VERSION, runtime: 'once' as const };
  let push: PushOutcome[] | undefined;
  if (config.push.sinks.length > 0) {
    // Loaded only when pushing: the OpenTelemetry SDK and the AWS signer are large.
    const { pushAll } = await import('../sinks/index.js');
    const { buildBatches, sinksOf } = await import('../sinks/configured.js');
    // Every shard's push carries its shard gauges, as the Lambda's does (0 of 1 unsharded; alone from a shard that owns no portal),
    // so the shard rules see shards run from cron; stdout stays the portals' series and the process's own.
    const own = { ordinal: shard.ordinal, total: shard.total };
    const batches = buildBatches(results, exporter.samplesOf(results, { ...facts, shard: own }), { ...own, at: clock.now() });
    push = await pushAll(sinksOf(config, { onSecret: (s) => secrets.push(s) }), batches, { clock, logger, deadline: clock.monotonic() + (config.cycleTimeoutSeconds ?? 60) * 1000, signal: stop.signal, env: io.env });
    if (stop.signal.aborted) return interrupted(io);
  }
  const samples = exporter.samplesOf(results, push ? { ...facts, push } : facts);
  const collectedAt = Math.max(...results.map((r) => r.finishedAt), 0);
  io.stdout(config.format === 'json' ? renderJson(samples, collectedAt, CATALOGUE) : await renderText(samples, config.format, CATALOGUE));
  // A certificate this process does not trust is a setting to fix (NODE_EXTRA_CA_CERTS), not an outage: exit 2 with its line.
  const untrusted = untrustedIn(results) ?? untrustedPush(push);
  if (untrusted) {
    io.stderr(`config error: ${redact(untrusted.message, secrets)}\n`);
    return EXIT_USAGE;
  }
  const failed = failedSources(results);
  if (failed.length > 0) {
    // One cause shared by every failed source (a rejected key, an unreachable portal) is said here too.
    const causes = failureReasons(results);
    const cause = causes.size === 1 ? `: ${redact([...causes][0]!, secrets)}` : ' (see the log lines above)';
    io.stderr(`posture-exporter: collection failed for: ${failed.join(', ')}${cause}\n`);
    return EXIT_FAILED;
  }
  return EXIT_OK;
}

/** The untrusted certificate a push met (a SinkError's cause), if one did. */
function untrustedPush(push: readonly PushOutcome[] | undefined): UntrustedCertificateError | undefined {
  const cause = push?.find((o) => o.error?.cause instanceof UntrustedCertificateError)?.error?.cause;
  return cause as UntrustedCertificateError | undefined;
}

/** `once` stopped by a signal: one line, nothing on stdout (a partial collection is not a result). */
function interrupted(io: CliIo): number {
  io.stderr('posture-exporter: interrupted by a signal before the run finished: nothing written\n');
  return EXIT_FAILED;
}

/** `serve` until the stop signal; `onListening` runs once /metrics is really served (banners wait for it). */
async function serveWith(config: Config, io: CliIo, clock: Clock, unknown: readonly ConfigError[], portalUrl?: string, onListening?: (metricsUrl: string) => void): Promise<number> {
  await refuseInvalid(config, unknown);
  const { logger, secrets } = makeLogger(config, io, clock);
  const { ledgerOf } = await ledgersOf(config, logger, clock);
  // Loaded by the commands that serve: the HTTP server and its TLS and web config are no part of once or check-config.
  const { startServe } = await import('./serve.js');
  const handle = await startServe(config, { clock, logger, onSecret: (s) => secrets.push(s), ledgerOf });
  onListening?.(`${handle.url}/metrics`);
  io.onReady?.({ metricsUrl: `${handle.url}/metrics`, portalUrl });
  // Until the stop signal, or a portal's certificate found untrusted at its first contact (a setting to fix: exit 2).
  const refused = await Promise.race([(io.stopSignal ?? new Promise<void>(() => {})).then(() => undefined), handle.refused]);
  await handle.stop();
  if (refused) {
    io.stderr(`config error: ${redact(refused.message, secrets)}\n`);
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

async function runServe(flags: Partial<Record<SettingKey, string>>, io: CliIo, clock: Clock, unknown: readonly ConfigError[]): Promise<number> {
  return serveWith(loadConfig({ env: io.env, flags }), io, clock, unknown);
}

/**
 * `check-config`: exit 0 only when nothing is wrong; else the plan on stdout and one line per
 * problem, as once, serve and the Lambda refuse to start. With `lambda`, what the Lambda function
 * refuses at start: a push sink is required, and the key files are left to each shard's first
 * invocation (the packaging runs it on the function's environment).
 */
async function runCheckConfig(flags: Partial<Record<SettingKey, string>>, io: CliIo, unknown: readonly ConfigError[], lambda: boolean): Promise<number> {
  const config = loadConfig({ env: io.env, flags });
  const noSink = lambda ? pushRequiredProblem(config.push) : undefined;
  const problems = lambda ? [...(await settingsProblems(config, unknown)), ...(noSink ? [noSink] : [])] : await startupProblems(config, unknown);
  if (problems.length) {
    io.stdout(`${explainPlan(config).join('\n')}\n`);
    throw new ConfigErrors(problems);
  }
  const { shard } = config;
  const owned = shard.total > 1 ? `\nshard ${shard.ordinal} of ${shard.total} owns ${config.portals.length} of ${shard.portalsInAll} portal(s)${config.portals.length ? `: ${config.portals.map((p) => p.name).join(', ')}` : ''}` : '';
  io.stdout(`configuration is valid: ${config.portals.length} portal(s)${config.push.sinks.length ? `; push to ${config.push.sinks.join(', ')}` : ''}${owned}\n${explainPlan(config).join('\n')}\n${ledgerLine(config)}\n`);
  io.stdout(config.objectives.length ? `${config.objectives.flatMap((o) => [describeObjective(o), ...burnRateLines(o).map((l) => `  ${l}`)]).join('\n')}\n` : 'no objectives (the config file sets `objectives: []`)\n');
  io.stdout(alertSlaLines(config.portals).join('\n') + (config.portals.length ? '\n' : ''));
  return EXIT_OK;
}

/** The ledger `once`, `serve` and the Lambda record each request in: the table when set (the state directory then holds only backfill's progress), else the state directory. */
function ledgerLine(config: Config): string {
  if (config.stateTable === undefined) return `state directory: ${config.stateDir}`;
  return `requests recorded in the DynamoDB table ${config.stateTable} (POSTURE_STATE_TABLE), shared by every process that uses it, with each entry's resolved-alerts passes (no state directory is used for them)`;
}

async function runDemo(flags: Partial<Record<SettingKey, string>>, sim: SimulatorOptions, io: CliIo, clock: Clock, unknown: readonly ConfigError[], regress?: string): Promise<number> {
  const configured = ['POSTURE_BASE_URL', 'POSTURE_CLOUD_ID', 'POSTURE_CONFIG', 'POSTURE_CONFIG_FILE'].some((k) => io.env[k]) || flags.base_url || flags.cloud_id || flags.config_file;
  if (configured && regress !== undefined) throw new ConfigError('--regress', '--regress stages a regression in the simulated portal, but a portal is configured: drop --regress, or the portal settings for the simulated one.');
  if (configured) return runServe(flags, io, clock, unknown);
  // The simulated portal brings its own key: a key given without an address is a real portal's, its address mistyped or missing.
  const keyKeys: SettingKey[] = ['api_key', 'api_key_file', 'api_key_ssm_parameter', 'api_key_secret_id'];
  const keySet = keyKeys.filter((k) => io.env[envName(SETTING_BY_KEY[k])] || flags[k]);
  if (keySet.length) {
    const names = keySet.map((k) => (flags[k] ? `--${flagName(SETTING_BY_KEY[k])}` : envName(SETTING_BY_KEY[k]))).join(', ');
    throw new ConfigError('POSTURE_BASE_URL', `${names} is set but no portal address is: set POSTURE_BASE_URL (or POSTURE_CLOUD_ID and POSTURE_API_HOST) for the real portal, or unset ${names} for the simulated portal, which uses its own key.`);
  }
  // Refused before the simulated portal starts, as serve refuses before it listens.
  if (unknown.length > 0) throw new ConfigErrors([...unknown]);
  const { startSimulator } = await import('../simulator/index.js');
  const portal = await startSimulator({ ...sim, clock, host: '127.0.0.1', port: 0 });
  try {
    const regression = regress === undefined ? '' : `  ${(await import('../simulator/command.js')).stageRegression(portal, regress)}`;
    const env = {
      ...io.env,
      POSTURE_BASE_URL: portal.baseUrl,
      POSTURE_API_KEY: portal.apiKey,
      POSTURE_PORTAL: io.env.POSTURE_PORTAL ?? 'demo',
      POSTURE_INTERVAL_SECONDS: io.env.POSTURE_INTERVAL_SECONDS ?? '60',
      POSTURE_LISTEN: io.env.POSTURE_LISTEN ?? '127.0.0.1:9877',
    };
    const config = loadConfig({ env, flags });
    // Only once /metrics is served: a busy port is one error line, not a banner then an error.
    return await serveWith(config, io, clock, unknown, portal.baseUrl, (metricsUrl) =>
      io.stderr(
        `posture-exporter demo: simulated portal at ${portal.baseUrl}\n` +
          `  metrics:  ${metricsUrl} (collected every ${config.intervalSeconds} s)\n` +
          regression +
          `  point it at a real portal: POSTURE_BASE_URL=https://<cloud_id>.<host>/public-api/v1 POSTURE_API_KEY_FILE=key.txt npm start\n`,
      ),
    );
  } finally {
    await portal.close();
  }
}
