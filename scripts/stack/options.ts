/**
 * The stack's command line: its settings, each a flag or a `POSTURE_STACK_*` environment variable,
 * and the `--help` text.
 */
import { parseArgs } from 'node:util';
import { ConfigError, ConfigErrors } from '../../src/errors.js';

/** Settings of the stack; each is a flag or a `POSTURE_STACK_*` environment variable (flag > env > default). */
export interface StackOptions {
  /** @default 9878 */
  readonly portalPort: number;
  /** @default 9877 */
  readonly exporterPort: number;
  /** @default 9090 */
  readonly prometheusPort: number;
  /** The exporter's collection interval. @default 60 */
  readonly intervalSeconds: number;
  /** Prometheus's scrape and rule evaluation interval. @default 15 */
  readonly scrapeIntervalSeconds: number;
  /** Simulated devices (the simulator's default when unset). */
  readonly devices?: number;
  /** Simulated open alerts (the simulator's default when unset). */
  readonly alerts?: number;
  /** Simulated integrations (the simulator's default when unset). */
  readonly integrations?: number;
  /** Simulator seed (the simulator's default when unset). */
  readonly seed?: number;
  /** Tags the exporter also collects Vitals for (the dashboards' tag variable). @default ['laptops', 'servers'] */
  readonly vitalsTags: readonly string[];
  /** @default '/usr/bin/prometheus' */
  readonly prometheusBinary: string;
  /** Serve /metrics with a web config (self-signed TLS, basic auth); Prometheus scrapes over https. @default false */
  readonly webConfig: boolean;
  readonly help: boolean;
}

interface OptionDef {
  readonly key: Exclude<keyof StackOptions, 'help'>;
  readonly flag: string;
  readonly kind: 'port' | 'int' | 'list' | 'path' | 'bool';
  readonly min?: number;
  readonly max?: number;
  readonly default?: number | string;
  readonly doc: string;
}

const OPTIONS: readonly OptionDef[] = [
  { key: 'portalPort', flag: 'portal-port', kind: 'port', default: 9878, doc: 'simulated portal port' },
  { key: 'exporterPort', flag: 'exporter-port', kind: 'port', default: 9877, doc: 'exporter /metrics port' },
  { key: 'prometheusPort', flag: 'prometheus-port', kind: 'port', default: 9090, doc: 'Prometheus port' },
  { key: 'intervalSeconds', flag: 'interval-seconds', kind: 'int', min: 10, max: 86400, default: 60, doc: 'exporter collection interval (serve refuses intervals the portal budget cannot fit)' },
  { key: 'scrapeIntervalSeconds', flag: 'scrape-interval-seconds', kind: 'int', min: 1, max: 3600, default: 15, doc: 'Prometheus scrape and rule evaluation interval' },
  { key: 'devices', flag: 'devices', kind: 'int', min: 0, max: 10_000_000, doc: 'simulated devices (simulator default 250)' },
  { key: 'alerts', flag: 'alerts', kind: 'int', min: 0, max: 10_000_000, doc: 'simulated open alerts (simulator default 120)' },
  { key: 'integrations', flag: 'integrations', kind: 'int', min: 0, max: 10_000_000, doc: 'simulated integrations (simulator default 8)' },
  { key: 'seed', flag: 'seed', kind: 'int', min: 0, max: 10_000_000, doc: 'simulator seed (default 1)' },
  { key: 'vitalsTags', flag: 'vitals-tags', kind: 'list', default: 'laptops,servers', doc: 'tags the exporter collects Vitals for (comma-separated; empty for none)' },
  { key: 'prometheusBinary', flag: 'prometheus', kind: 'path', default: '/usr/bin/prometheus', doc: 'Prometheus binary' },
  { key: 'webConfig', flag: 'web-config', kind: 'bool', default: 'false', doc: 'serve /metrics over https with basic auth (a web config with a self-signed certificate; docs/web-config.md)' },
];

/** Environment variable of a stack option (`--exporter-port` → `POSTURE_STACK_EXPORTER_PORT`). */
export function stackEnvName(flag: string): string {
  return 'POSTURE_STACK_' + flag.toUpperCase().replace(/-/g, '_');
}

/** The `--help` text. */
export const STACK_USAGE = `npm run stack [-- flags]: the simulated portal, the exporter (serve) and Prometheus with the
posture rules, on 127.0.0.1. Ctrl-C stops everything. Flags (or environment variables):
${OPTIONS.map((o) => `  --${`${o.flag}${o.kind === 'bool' ? '' : o.kind === 'list' || o.kind === 'path' ? ' VALUE' : ' N'}`.padEnd(28)} ${stackEnvName(o.flag).padEnd(38)} ${o.doc}${o.default !== undefined ? ` [${o.default}]` : ''}`).join('\n')}
The exporter ignores POSTURE_* settings of your shell: it always reads the stack's portal.
`;

/** Parses flags and `POSTURE_STACK_*` variables; throws ConfigErrors listing every problem. */
export function parseStackOptions(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): StackOptions {
  const spec: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const o of OPTIONS) spec[o.flag] = { type: o.kind === 'bool' ? 'boolean' : 'string' };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], options: spec, allowPositionals: false, strict: true }));
  } catch (err) {
    throw new ConfigErrors([new ConfigError('argv', `${(err as Error).message.split('\n')[0]} (see npm run stack -- --help).`)]);
  }
  const problems: ConfigError[] = [];
  const out: Record<string, unknown> = { help: values.help === true };
  for (const o of OPTIONS) {
    const fromFlag = values[o.flag];
    const envValue = env[stackEnvName(o.flag)];
    const raw = typeof fromFlag === 'string' ? fromFlag : fromFlag === true ? 'true' : envValue !== undefined && envValue.trim() !== '' ? envValue : o.default;
    const name = typeof fromFlag === 'string' ? `--${o.flag}` : `${stackEnvName(o.flag)} (--${o.flag})`;
    if (raw === undefined) continue;
    const text = String(raw).trim();
    if (o.kind === 'list') {
      out[o.key] = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
      continue;
    }
    if (o.kind === 'bool') {
      const b = /^(1|true|yes)$/i.test(text) ? true : /^(0|false|no)$/i.test(text) ? false : undefined;
      if (b === undefined) problems.push(new ConfigError(`--${o.flag}`, `${name}=${JSON.stringify(text)} is not valid: give true or false.`));
      out[o.key] = b ?? false;
      continue;
    }
    if (o.kind === 'path') {
      if (text === '') problems.push(new ConfigError(`--${o.flag}`, `${name} is empty: give the path of the binary.`));
      out[o.key] = text;
      continue;
    }
    const min = o.kind === 'port' ? 1 : (o.min ?? 0);
    const max = o.kind === 'port' ? 65535 : (o.max ?? Number.MAX_SAFE_INTEGER);
    const n = /^\d+$/.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      problems.push(new ConfigError(`--${o.flag}`, `${name}=${JSON.stringify(text)} is not valid: give a whole number from ${min} to ${max}.`));
      continue;
    }
    out[o.key] = n;
  }
  const ports = OPTIONS.filter((o) => o.kind === 'port').map((o) => [o.flag, out[o.key]] as const);
  for (let i = 0; i < ports.length; i++) {
    for (let j = i + 1; j < ports.length; j++) {
      if (ports[i]![1] !== undefined && ports[i]![1] === ports[j]![1]) {
        problems.push(new ConfigError(`--${ports[j]![0]}`, `--${ports[i]![0]} and --${ports[j]![0]} are both ${String(ports[i]![1])}: give each component its own port.`));
      }
    }
  }
  if (problems.length) throw new ConfigErrors(problems);
  return out as unknown as StackOptions;
}
