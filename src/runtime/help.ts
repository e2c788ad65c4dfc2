/**
 * `--help`: the global help (every command and setting), and each command's own (`<command>
 * --help`, `help <command>`): what it does, its own flags and the settings it reads. One table of
 * commands feeds both, so the two cannot say different things.
 */
import { JOB_INTERVALS } from '../config/intervals.js';
import { SETTINGS, envName, flagName, type SettingDef, type SettingKey } from '../config/settings.js';
import { VERSION } from '../version.js';

/** The commands. */
export const COMMANDS = ['once', 'serve', 'simulate', 'demo', 'check-config', 'backfill', 'rules'] as const;
type Command = (typeof COMMANDS)[number];

/** A flag of a command's own (not a setting): how it is written, and what it does. */
type OwnFlag = readonly [flag: string, what: string];

const SIMULATED_SIZE: readonly OwnFlag[] = [
  ['--devices N', 'devices of the simulated portal'],
  ['--alerts N', 'alerts of the simulated portal'],
  ['--integrations N', 'integrations of the simulated portal'],
  ['--seed S', 'seed of its data (the same seed, the same portal)'],
];
const REGRESS: OwnFlag = ['--regress INTEGRATION[=FRACTION]', "takes FRACTION (default 0.8) of the integration's configuration-compliant devices away from the start, so objective alerts fire"];

/** What `--push` means for backfill (the setting, taking remote_write only there). */
const BACKFILL_PUSH: OwnFlag = ['--push remote_write', 'push to POSTURE_REMOTE_WRITE_URL (with --output, or alone)'];

interface CommandHelp {
  /** What follows `posture-exporter <command>` in its usage line. */
  readonly usage: string;
  /** What it does, in lines as the global help prints them. */
  readonly summary: readonly string[];
  /** Its own flags. */
  readonly own: readonly OwnFlag[];
}

const HELP: Readonly<Record<Command, CommandHelp>> = {
  once: {
    usage: '[flags]',
    summary: ['collect once; metrics on stdout (--format prometheus|openmetrics|json), logs on stderr;', 'exit 0 when every source succeeded, 1 otherwise'],
    own: [],
  },
  serve: { usage: '[flags]', summary: ['collect every --interval-seconds and serve the last collection on /metrics'], own: [] },
  simulate: {
    usage: '[--listen HOST:PORT] [--devices N] [--alerts N] [--integrations N] [--seed S] [--portals N [--write-config FILE]] [--regress INTEGRATION[=FRACTION]]',
    summary: [
      'run the simulated portal alone (--listen, --devices, --alerts, --integrations, --seed);',
      '--portals N serves a fleet of N portals on one port, each with its own data, key and',
      "budget; --write-config FILE writes the exporter's `portals` config for them;",
      '--regress INTEGRATION[=FRACTION] takes FRACTION (default 0.8) of its configuration-',
      'compliant devices away from the start, so objective alerts fire',
    ],
    own: [
      ...SIMULATED_SIZE,
      ['--portals N', 'a fleet of N portals on one port, each with its own data, key and budget'],
      ['--write-config FILE', "with --portals: write the exporter's `portals` config for them"],
      REGRESS,
    ],
  },
  demo: {
    usage: '[flags]',
    summary: ['the simulated portal plus serve against it (what `npm start` runs; --regress as', 'for simulate); with a portal configured, plain serve'],
    own: [...SIMULATED_SIZE, REGRESS],
  },
  'check-config': {
    usage: '[--lambda] [flags]',
    summary: ['validate the settings and exit (0 valid, 2 invalid, one line per problem); --lambda', 'checks them as the Lambda function does at start (a push sink required)'],
    own: [['--lambda', 'as the Lambda function checks its environment at start: a push sink required, the key files left to each shard\'s invocation (osls package runs it)']],
  },
  backfill: {
    usage: '--days N | --from yyyyMMdd --to yyyyMMdd, --output FILE and/or --push remote_write [--resume] [--state FILE] [flags]',
    summary: [
      'load past days of the Vitals archive: --days N | --from yyyyMMdd --to yyyyMMdd,',
      'into --output FILE (OpenMetrics for promtool) and/or --push remote_write;',
      '--resume continues a run (--state FILE); exit 0 all days written, 1 some failed',
    ],
    own: [
      ['--days N', 'the past N days, or --from and --to:'],
      ['--from yyyyMMdd', 'the first day'],
      ['--to yyyyMMdd', 'the last day (included)'],
      ['--output FILE', 'write OpenMetrics for promtool tsdb create-blocks-from openmetrics'],
      BACKFILL_PUSH,
      ['--resume', 'continue an earlier run recorded in the state file (days written are skipped)'],
      ['--state FILE', 'where progress is recorded (default: in POSTURE_STATE_DIR, one file per --output)'],
    ],
  },
  rules: {
    usage: '[--config FILE] [--runbook-url TEMPLATE] [--output FILE]',
    summary: ["write the Prometheus rules of the config file's objectives (docs/objectives.md):", '--config FILE, --output FILE (default stdout), --runbook-url TEMPLATE'],
    own: [['--output FILE', 'write the rules there (whole or not at all) instead of stdout']],
  },
};

/** The commands that read a portal's settings: every setting that is a flag but the few below. */
const COLLECTING: readonly Command[] = ['once', 'serve', 'demo', 'check-config', 'backfill'];
const SERVING: readonly Command[] = ['serve', 'demo', 'check-config'];
const PUSHING: readonly Command[] = ['once', 'check-config'];
/** The commands that read the live portal (backfill reads its Vitals archive). */
const ONLINE: readonly Command[] = ['once', ...SERVING];

/** Settings only some commands read (any other flag-setting: the collecting commands). */
const READ_ONLY_BY: Partial<Record<SettingKey, readonly Command[]>> = {
  config_file: [...COLLECTING, 'rules'],
  runbook_url: ['rules'],
  listen: [...SERVING, 'simulate'],
  web_config_file: SERVING,
  format: ['once', 'check-config'],
  interval_seconds: SERVING,
  // Served values only; backfill reads the Vitals archive alone.
  max_staleness_seconds: SERVING,
  page_size: ONLINE,
  alert_slas: ONLINE,
  [JOB_INTERVALS.resolved.key]: ONLINE,
  ...Object.fromEntries(Object.values(JOB_INTERVALS).flatMap((row) => (row.inherits ? [[row.key, SERVING]] : []))),
  ...Object.fromEntries(SETTINGS.filter((s) => s.key.startsWith('pushgateway_')).map((s) => [s.key, PUSHING])),
  // backfill pushes by remote write only.
  ...Object.fromEntries(SETTINGS.filter((s) => s.key === 'push' || s.key.startsWith('push_') || s.key.startsWith('remote_write_')).map((s) => [s.key, [...PUSHING, 'backfill']])),
};

/** The settings `command` reads that may be given as flags. */
function settingsOf(command: Command): SettingDef[] {
  return SETTINGS.filter((s) => s.flag && (READ_ONLY_BY[s.key as SettingKey] ?? COLLECTING).includes(command));
}

const settingLine = (s: SettingDef) => `  --${flagName(s).padEnd(28)} ${envName(s)}`;
const ownLine = ([flag, what]: OwnFlag) => `  ${flag.padEnd(30)} ${what}`;

const SECRETS = `Secrets (POSTURE_API_KEY, POSTURE_REMOTE_WRITE_BEARER_TOKEN, POSTURE_REMOTE_WRITE_PASSWORD) are read
from the environment only, never from flags; each may instead come from SSM Parameter Store or
Secrets Manager (its _SSM_PARAMETER or _SECRET_ID setting). See README.md for every setting and metric.
`;

/** The global help: every command, every setting, the simulated portal's and backfill's flags. */
export function globalHelp(): string {
  return `posture-exporter ${VERSION}: Security Posture portal metrics for Prometheus

Usage: posture-exporter <command> [flags]

Commands (posture-exporter <command> --help for one command's flags):
${COMMANDS.map((c) => HELP[c].summary.map((line, i) => `  ${(i === 0 ? c : '').padEnd(14)} ${line}`).join('\n')).join('\n')}

Flags (each also an environment variable; flag > env > config file > default):
${SETTINGS.filter((s) => s.flag).map(settingLine).join('\n')}
  --devices N --alerts N --integrations N --seed S   simulated portal size (simulate, demo)

Backfill flags (posture-exporter backfill ...):
${HELP.backfill.own.map(ownLine).join('\n')}

${SECRETS}`;
}

/** One command's help: its usage, what it does, its own flags and the settings it reads; undefined for no such command. */
export function commandHelp(command: string): string | undefined {
  if (!(COMMANDS as readonly string[]).includes(command)) return undefined;
  const c = command as Command;
  const { usage, summary, own } = HELP[c];
  const settings = settingsOf(c).filter((s) => !(c === 'backfill' && s.key === 'push'));
  const readsKeys = settings.some((s) => s.key === 'api_key_file');
  return [
    `posture-exporter ${VERSION}: ${c}`,
    '',
    `Usage: posture-exporter ${c} ${usage}`,
    '',
    ...summary,
    '',
    ...(own.length ? [`Flags of ${c}:`, ...own.map(ownLine), ''] : []),
    `Settings it reads (each also an environment variable; flag > env > config file > default):`,
    ...settings.map(settingLine),
    '',
    ...(readsKeys ? [SECRETS] : ['See README.md for every setting.\n']),
  ].join('\n');
}
