/**
 * `npm run stack` (`node --import tsx scripts/stack.ts`): the simulated portal, the exporter's
 * `serve` against it and Debian's Prometheus with the repository's rules, all on 127.0.0.1, as
 * three child processes. Prints the URLs; Ctrl-C or SIGTERM stops every process it started and
 * removes its temporary directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import bcrypt from 'bcryptjs';
import { Agent, fetch as undiciFetch } from 'undici';
import { parseDocument } from 'yaml';
import { redact } from '../src/core/log.js';
import { ConfigError, ConfigErrors } from '../src/errors.js';

/** Repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const CLI = join(REPO_ROOT, 'dist/cli.js');
const PROMETHEUS_TEMPLATE = join(REPO_ROOT, 'infra/stack/prometheus.yml');
const GRAFANA_PROVISIONING = join(REPO_ROOT, 'infra/grafana/provisioning');
const GRAFANA_DASHBOARDS = join(REPO_ROOT, 'infra/grafana/dashboards');
// The simulator's documented defaults (docs/simulator.md), for the banner only.
const SIMULATOR_DEFAULTS = { devices: 250, alerts: 120, integrations: 8 } as const;
/** The `portal` label of the stack's series. */
export const STACK_PORTAL = 'stack';

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

/**
 * The stack's prometheus.yml: `template` (infra/stack/prometheus.yml) with the intervals set, the
 * scrape target replaced by `exporter` (HOST:PORT) and relative rule files made absolute against
 * `templateDir`, so the repository's rules are read in place (edit, then POST /-/reload).
 */
export function renderPrometheusConfig(
  template: string,
  opts: { exporter: string; scrapeIntervalSeconds: number; templateDir: string; web?: { caFile: string; username: string; passwordFile: string } },
): string {
  const doc = parseDocument(template);
  doc.setIn(['global', 'scrape_interval'], `${opts.scrapeIntervalSeconds}s`);
  doc.setIn(['global', 'evaluation_interval'], `${opts.scrapeIntervalSeconds}s`);
  const rules = (doc.getIn(['rule_files']) as { items?: Array<{ value?: unknown }> } | undefined)?.items ?? [];
  rules.forEach((item, i) => {
    const file = String(item.value ?? item);
    doc.setIn(['rule_files', i], isAbsolute(file) ? file : resolve(opts.templateDir, file));
  });
  doc.setIn(['scrape_configs', 0, 'static_configs', 0, 'targets'], doc.createNode([opts.exporter], { flow: true }));
  if (opts.web) {
    // The exporter behind a web config (docs/web-config.md): https, basic auth, its self-signed certificate as the CA.
    doc.setIn(['scrape_configs', 0, 'scheme'], 'https');
    doc.setIn(['scrape_configs', 0, 'basic_auth'], doc.createNode({ username: opts.web.username, password_file: opts.web.passwordFile }));
    doc.setIn(['scrape_configs', 0, 'tls_config'], doc.createNode({ ca_file: opts.web.caFile }));
  }
  if (doc.errors.length) throw new Error(`${PROMETHEUS_TEMPLATE}: ${doc.errors[0]!.message}`);
  return String(doc);
}

/** Grafana provisioning files (relative path → text) from infra/grafana/provisioning, pointed at `prometheusUrl` and `dashboardsDir`. */
export function renderGrafanaProvisioning(provisioningDir: string, opts: { prometheusUrl: string; dashboardsDir: string; scrapeIntervalSeconds?: number }): Record<string, string> {
  const datasources = parseDocument(readFileSync(join(provisioningDir, 'datasources/prometheus.yml'), 'utf8'));
  datasources.setIn(['datasources', 0, 'url'], opts.prometheusUrl);
  if (opts.scrapeIntervalSeconds !== undefined) datasources.setIn(['datasources', 0, 'jsonData', 'timeInterval'], `${opts.scrapeIntervalSeconds}s`);
  const dashboards = parseDocument(readFileSync(join(provisioningDir, 'dashboards/posture.yml'), 'utf8'));
  dashboards.setIn(['providers', 0, 'options', 'path'], opts.dashboardsDir);
  return { 'datasources/prometheus.yml': String(datasources), 'dashboards/posture.yml': String(dashboards) };
}

/** Rejects with a ConfigError when `port` cannot be bound on 127.0.0.1 (something else uses it). */
function checkPortFree(port: number, flag: string): Promise<void> {
  return new Promise((resolveFree, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new ConfigError(`--${flag}`, `port ${port} on 127.0.0.1 is not free (${err.code ?? err.message}): choose another with --${flag} or ${stackEnvName(flag)}.`)),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree()));
  });
}

interface Component {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly logFile: string;
  readonly exited: Promise<void>;
}

/** Where the stack writes its messages (stdout and stderr at the process edge). */
export interface StackIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function alive(proc: ChildProcess): boolean {
  return proc.exitCode === null && proc.signalCode === null;
}

/** Signals a child's whole process group (it was spawned detached, so it leads one). */
function signalGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (!alive(proc) || proc.pid === undefined) return;
  try {
    process.kill(-proc.pid, signal);
  } catch {
    // Already gone between the check and the kill.
  }
}

function tailOf(file: string, secrets: readonly string[], lines = 25): string {
  try {
    return redact(readFileSync(file, 'utf8'), secrets).trimEnd().split('\n').slice(-lines).map((l) => `    ${l}`).join('\n');
  } catch {
    return '    (no log)';
  }
}

/** Polls `check` until it returns a value; undefined when `stop` resolves first or `ms` passed. */
async function waitFor<T>(check: () => Promise<T | undefined>, ms: number, stop: { readonly stopping: boolean; readonly stopped: Promise<void> }): Promise<T | undefined> {
  const until = Date.now() + ms;
  while (!stop.stopping && Date.now() < until) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    await Promise.race([sleep(250), stop.stopped]);
  }
  return undefined;
}

/** The credentials and CA the stack's own checks use to reach an exporter behind a web config. */
interface ExporterAccess {
  /** Trusts the exporter's self-signed certificate. */
  readonly dispatcher: Agent;
  readonly username: string;
  readonly password: string;
}

/** GETs `url`; the body when the answer is 2xx, else undefined. With `access`, over TLS with basic auth. */
async function httpText(url: string, access?: ExporterAccess): Promise<string | undefined> {
  const res = access
    ? await undiciFetch(url, {
        signal: AbortSignal.timeout(2_000),
        dispatcher: access.dispatcher,
        headers: { authorization: `Basic ${Buffer.from(`${access.username}:${access.password}`).toString('base64')}` },
      })
    : await fetch(url, { signal: AbortSignal.timeout(2_000) });
  const text = await res.text();
  return res.ok ? text : undefined;
}

/** Files the exporter's web config needs: a self-signed certificate for 127.0.0.1, a password and its bcrypt hash. */
export interface StackWebConfig {
  readonly webConfigFile: string;
  readonly certFile: string;
  readonly passwordFile: string;
  readonly username: string;
  readonly password: string;
}

/** Makes the web config of `--web-config` in `dir`: openssl for the certificate, bcryptjs for the hash. */
export async function makeWebConfig(dir: string): Promise<StackWebConfig> {
  const certFile = join(dir, 'exporter.crt');
  const keyFile = join(dir, 'exporter.key');
  const openssl = spawn('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '7', '-subj', '/CN=posture-exporter stack', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', keyFile, '-out', certFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  let opensslErr = '';
  openssl.stderr!.on('data', (d: Buffer) => (opensslErr += d.toString('utf8')));
  const code = await new Promise<number | null>((r) => {
    openssl.once('error', () => r(-1));
    openssl.once('close', (c) => r(c));
  });
  if (code !== 0) throw new Error(`openssl could not make the exporter's certificate (exit ${String(code)}): ${opensslErr.trim().split('\n').slice(-1)[0] ?? ''}`);
  const username = 'prometheus';
  const password = randomBytes(18).toString('base64url');
  const passwordFile = join(dir, 'exporter-password');
  writeFileSync(passwordFile, password, { mode: 0o600 });
  const webConfigFile = join(dir, 'web-config.yml');
  writeFileSync(
    webConfigFile,
    [
      '# Written by npm run stack -- --web-config (docs/web-config.md).',
      'tls_server_config:',
      `  cert_file: ${certFile}`,
      `  key_file: ${keyFile}`,
      'http_server_config:',
      '  headers:',
      '    X-Content-Type-Options: nosniff',
      'basic_auth_users:',
      `  ${username}: '${await bcrypt.hash(password, 10)}'`,
      '',
    ].join('\n'),
  );
  return { webConfigFile, certFile, passwordFile, username, password };
}

/**
 * One run of the stack: each step starts or checks one thing; `shutdown` stops whatever was
 * started, in order, and removes the temporary directory.
 */
class StackRun {
  readonly components: Component[] = [];
  readonly secrets: string[] = [];
  dir: string | undefined;
  stopping = false;
  failure: string | undefined;
  private wake: () => void = () => {};
  readonly stopped = new Promise<void>((r) => (this.wake = r));
  readonly childEnv: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('POSTURE_')));
  readonly host = '127.0.0.1';
  readonly portalUrl: string;
  readonly prometheusUrl: string;
  web: StackWebConfig | undefined;
  keyFile = '';

  constructor(
    readonly options: StackOptions,
    readonly io: StackIo,
  ) {
    this.portalUrl = `http://${this.host}:${options.portalPort}/public-api/v1`;
    this.prometheusUrl = `http://${this.host}:${options.prometheusPort}`;
  }

  get exporterBase(): string {
    return `${this.web ? 'https' : 'http'}://${this.host}:${this.options.exporterPort}`;
  }

  access: ExporterAccess | undefined;

  requestStop(reason?: string): void {
    if (reason && !this.stopping) this.failure = reason;
    this.stopping = true;
    this.wake();
  }

  private readonly onSignal = () => {
    // A second Ctrl-C while stopping: do not wait for graceful exits.
    if (this.stopping) for (const c of this.components) signalGroup(c.proc, 'SIGKILL');
    this.requestStop();
  };
  private readonly lastResort = () => {
    // Synchronous only: the process is exiting (an uncaught error, or process.exit elsewhere).
    for (const c of this.components) signalGroup(c.proc, 'SIGKILL');
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  };

  installHandlers(): void {
    for (const sig of STOP_SIGNALS) process.on(sig, this.onSignal);
    process.on('exit', this.lastResort);
  }

  removeHandlers(): void {
    for (const sig of STOP_SIGNALS) process.off(sig, this.onSignal);
    process.off('exit', this.lastResort);
  }

  waitFor<T>(check: () => Promise<T | undefined>, ms: number): Promise<T | undefined> {
    return waitFor(check, ms, this);
  }

  /** Starts one child in its own process group, its output in logs/NAME.log. */
  start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, pipeStdout = false): Component {
    const logFile = join(this.dir!, 'logs', `${name}.log`);
    const fd = openSync(logFile, 'a');
    // Own process group: a terminal's Ctrl-C reaches only the stack, which stops the children in
    // order (exporter first) and can then tell a crash from a requested stop.
    const proc = spawn(command, args, { cwd: this.dir, env, stdio: ['ignore', pipeStdout ? 'pipe' : fd, fd], detached: true });
    closeSync(fd);
    const exited = new Promise<void>((r) => proc.once('close', () => r()));
    proc.once('error', (err) => this.requestStop(`${name} did not start: ${err.message}`));
    void exited.then(() => {
      if (!this.stopping) this.requestStop(`${name} exited unexpectedly (${proc.exitCode !== null ? `code ${proc.exitCode}` : `signal ${proc.signalCode}`})`);
    });
    const component = { name, proc, logFile, exited };
    this.components.push(component);
    return component;
  }

  /** Builds dist/ when it is missing; false when the build failed. */
  async buildIfMissing(): Promise<boolean> {
    if (existsSync(CLI)) return true;
    this.io.out('stack: dist/cli.js is missing: running npm run build\n');
    const build = spawn('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, env: this.childEnv, stdio: ['ignore', 'inherit', 'inherit'] });
    const code = await new Promise<number | null>((r) => {
      build.once('error', () => r(-1));
      build.once('close', (c) => r(c));
    });
    if (code !== 0 || !existsSync(CLI)) {
      this.io.err(`stack: npm run build failed (exit ${String(code)}); run it yourself to see why.\n`);
      return false;
    }
    return true;
  }

  makeDir(): void {
    this.dir = mkdtempSync(join(tmpdir(), 'posture-stack-'));
    mkdirSync(join(this.dir, 'logs'));
    this.io.out(`stack: starting in ${this.dir}\n`);
  }

  /** 1. The simulated portal. Its stdout names the key: read it here, keep it out of every log. False when it did not start. */
  async startPortal(): Promise<boolean> {
    const { options } = this;
    const sizeArgs = (['devices', 'alerts', 'integrations', 'seed'] as const).flatMap((k) => (options[k] === undefined ? [] : [`--${k}`, String(options[k])]));
    const portal = this.start('portal', process.execPath, [CLI, 'simulate', '--listen', `${this.host}:${options.portalPort}`, ...sizeArgs], this.childEnv, true);
    let portalOut = '';
    portal.proc.stdout!.on('data', (d: Buffer) => (portalOut += d.toString('utf8')));
    const key = await this.waitFor(async () => /^API key \(simulated\): (\S+)$/m.exec(portalOut)?.[1], 30_000);
    if (key === undefined) {
      if (!this.stopping) this.requestStop('the simulated portal did not start within 30 s');
      return false;
    }
    this.secrets.push(key);
    this.keyFile = join(this.dir!, 'portal-api-key');
    writeFileSync(this.keyFile, key + '\n', { mode: 0o600 });
    return true;
  }

  /** 2. The exporter: the built CLI's serve, with the whole simulated budget (it is the only client). */
  async startExporter(): Promise<void> {
    const { options } = this;
    if (options.webConfig) {
      this.web = await makeWebConfig(this.dir!);
      this.secrets.push(this.web.password);
      this.access = { dispatcher: new Agent({ connect: { ca: readFileSync(this.web.certFile, 'utf8') } }), username: this.web.username, password: this.web.password };
    }
    this.start('exporter', process.execPath, [
      CLI, 'serve', '--listen', `${this.host}:${options.exporterPort}`, '--interval-seconds', String(options.intervalSeconds), '--portal', STACK_PORTAL, '--requests-per-minute', '10',
      ...(options.vitalsTags.length ? ['--vitals-tags', options.vitalsTags.join(',')] : []),
      ...(this.web ? ['--web-config-file', this.web.webConfigFile] : []),
    ], {
      ...this.childEnv,
      POSTURE_BASE_URL: this.portalUrl,
      POSTURE_API_KEY_FILE: this.keyFile,
      // The stack's portal is new each time and the exporter its only client: its requests are recorded with the stack, not in your state directory.
      POSTURE_STATE_DIR: join(this.dir!, 'state'),
    });
  }

  /** 3. Prometheus with the repository's rules read in place (and Grafana provisioning files for the banner). */
  startPrometheus(): void {
    const { options, dir } = this;
    const config = renderPrometheusConfig(readFileSync(PROMETHEUS_TEMPLATE, 'utf8'), {
      exporter: `${this.host}:${options.exporterPort}`,
      scrapeIntervalSeconds: options.scrapeIntervalSeconds,
      templateDir: dirname(PROMETHEUS_TEMPLATE),
      ...(this.web ? { web: { caFile: this.web.certFile, username: this.web.username, passwordFile: this.web.passwordFile } } : {}),
    });
    writeFileSync(join(dir!, 'prometheus.yml'), config);
    const provisioning = renderGrafanaProvisioning(GRAFANA_PROVISIONING, { prometheusUrl: this.prometheusUrl, dashboardsDir: GRAFANA_DASHBOARDS, scrapeIntervalSeconds: options.scrapeIntervalSeconds });
    for (const [rel, text] of Object.entries(provisioning)) {
      mkdirSync(dirname(join(dir!, 'grafana/provisioning', rel)), { recursive: true });
      writeFileSync(join(dir!, 'grafana/provisioning', rel), text);
    }
    this.start('prometheus', options.prometheusBinary, [
      `--config.file=${join(dir!, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir!, 'data')}`,
      `--web.listen-address=${this.host}:${options.prometheusPort}`,
      '--web.enable-lifecycle',
    ], this.childEnv);
  }

  /** 4. Waits for the exporter's first collection and for Prometheus; false after 60 s. */
  async waitReady(): Promise<boolean> {
    const access = this.access;
    const ready = await this.waitFor(async () => {
      const [healthz, prom] = await Promise.all([httpText(`${this.exporterBase}/healthz`, access), httpText(`${this.prometheusUrl}/-/ready`)]);
      // The exporter's /healthz says "ok" alone once its first collection has finished.
      return healthz?.trim() === 'ok' && prom !== undefined ? true : undefined;
    }, 60_000);
    if (!ready && !this.stopping) this.requestStop('the exporter or Prometheus was not ready within 60 s');
    return ready === true;
  }

  /** 5. The URLs, and how to try them. */
  printBanner(): void {
    const { options, dir, prometheusUrl, portalUrl, keyFile, web } = this;
    const metricsUrl = `${this.exporterBase}/metrics`;
    const sizes = `${options.devices ?? SIMULATOR_DEFAULTS.devices} devices, ${options.alerts ?? SIMULATOR_DEFAULTS.alerts} open alerts, ${options.integrations ?? SIMULATOR_DEFAULTS.integrations} integrations`;
    const curlMetrics = web ? `curl -s --cacert ${web.certFile} -u ${web.username}:$(cat ${web.passwordFile}) ${metricsUrl}` : `curl -s ${metricsUrl}`;
    this.io.out(
      [
        '',
        'posture-exporter local stack is up (Ctrl-C stops it and removes its files):',
        `  simulated portal   ${portalUrl}   (${sizes}; API key in ${keyFile})`,
        `  exporter /metrics  ${metricsUrl}   (serve, collects every ${options.intervalSeconds} s, portal="${STACK_PORTAL}")`,
        ...(web ? [`  web config         ${web.webConfigFile}   (TLS with a self-signed certificate, basic auth user ${web.username}, password in ${web.passwordFile})`] : []),
        `  Prometheus         ${prometheusUrl}   (rules: ${prometheusUrl}/rules, alerts: ${prometheusUrl}/alerts, targets: ${prometheusUrl}/targets)`,
        `  files and logs     ${dir}   (prometheus.yml, logs/{portal,exporter,prometheus}.log)`,
        '',
        `  Try:  ${curlMetrics} | grep posture_vitals_health_ratio`,
        `        curl -s -H "X-Service-ApiKey: $(cat ${keyFile})" '${portalUrl}/vitals'`,
        `  Rules are read in place from infra/prometheus/rules/: after editing, curl -X POST ${prometheusUrl}/-/reload`,
        '',
        'Grafana is not started (it is not part of this stack and cannot be installed here). To point one at it,',
        `use the provisioning files written to ${join(dir!, 'grafana/provisioning')} (copies of`,
        `infra/grafana/provisioning/ with the data source url set to ${prometheusUrl} and the dashboards path`,
        `set to ${GRAFANA_DASHBOARDS}), e.g.:`,
        `  GF_PATHS_PROVISIONING=${join(dir!, 'grafana/provisioning')} grafana server --homepath /usr/share/grafana`,
        '  or with Docker (host network, since everything listens on 127.0.0.1):',
        `  docker run --rm --network host -v ${join(dir!, 'grafana/provisioning')}:/etc/grafana/provisioning:ro -v ${GRAFANA_DASHBOARDS}:${GRAFANA_DASHBOARDS}:ro grafana/grafana`,
        'Then open http://127.0.0.1:3000 (admin/admin): folder "Security posture".',
        '',
      ].join('\n'),
    );
  }

  /** 6. Reports once Prometheus has scraped the exporter and evaluated the rules (not awaited by shutdown). */
  reportWhenScraped(): void {
    const { prometheusUrl } = this;
    void this.waitFor(async () => {
      const targets = JSON.parse((await httpText(`${prometheusUrl}/api/v1/targets?state=active`)) ?? '{}') as { data?: { activeTargets?: Array<{ health?: string }> } };
      const rules = JSON.parse((await httpText(`${prometheusUrl}/api/v1/rules`)) ?? '{}') as { data?: { groups?: Array<{ rules?: Array<{ health?: string }> }> } };
      const all = (rules.data?.groups ?? []).flatMap((g) => g.rules ?? []);
      const up = targets.data?.activeTargets?.some((t) => t.health === 'up');
      return up && all.length > 0 && all.every((r) => r.health === 'ok') ? all.length : undefined;
    }, (this.options.scrapeIntervalSeconds * 3 + 30) * 1000).then((rules) => {
      if (this.stopping) return;
      this.io.out(rules === undefined ? `stack: Prometheus has not reported the exporter target up with every rule evaluated yet; see ${prometheusUrl}/targets\n` : `stack: Prometheus scrapes the exporter (target up${this.web ? ', over https with basic auth' : ''}) and evaluates ${rules} rules.\n`);
    });
  }

  /** Stops what was started (the exporter first), removes the directory; the exit code. */
  async shutdown(): Promise<number> {
    const { io, components } = this;
    if (this.failure) {
      io.err(`stack: ${this.failure}; stopping.\n`);
      // The logs of what died tell why; when nothing died (a timeout), all of them.
      const dead = components.filter((c) => !alive(c.proc));
      for (const c of dead.length ? dead : components) io.err(`  ${c.name} log (${c.logFile}):\n${tailOf(c.logFile, this.secrets)}\n`);
    } else {
      io.out('stack: stopping\n');
    }
    const stopOne = async (c: Component) => {
      signalGroup(c.proc, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const done = await Promise.race([c.exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 10_000)))]);
      clearTimeout(timer);
      if (!done) {
        signalGroup(c.proc, 'SIGKILL');
        await c.exited;
      }
    };
    // The exporter first, so it does not log failed collections against a portal that is gone.
    await Promise.all(components.filter((c) => c.name === 'exporter').map(stopOne));
    await Promise.all(components.filter((c) => c.name !== 'exporter').map(stopOne));
    await this.access?.dispatcher.close();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.removeHandlers();
    io.out(`stack: stopped${this.dir ? `; removed ${this.dir}` : ''}\n`);
    return this.failure ? 1 : 0;
  }
}

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Refuses at once, before anything is started, what would only fail later in a child's log: 2, or undefined when fine. */
async function preflight(options: StackOptions, io: StackIo): Promise<number | undefined> {
  try {
    accessSync(options.prometheusBinary, constants.X_OK);
  } catch {
    io.err(`stack: ${options.prometheusBinary} is not an executable: install Debian's prometheus (apt-get install prometheus) or pass --prometheus PATH.\n`);
    return 2;
  }
  try {
    await Promise.all([
      checkPortFree(options.portalPort, 'portal-port'),
      checkPortFree(options.exporterPort, 'exporter-port'),
      checkPortFree(options.prometheusPort, 'prometheus-port'),
    ]);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.err(`stack: ${err.message}\n`);
    return 2;
  }
  return undefined;
}

/** Runs the stack until SIGINT/SIGTERM (or a component dies); returns the exit code. */
export async function runStack(options: StackOptions, io: StackIo): Promise<number> {
  const refused = await preflight(options, io);
  if (refused !== undefined) return refused;
  const run = new StackRun(options, io);
  run.installHandlers();
  try {
    if (!(await run.buildIfMissing())) {
      run.removeHandlers();
      return 1;
    }
    if (run.stopping) return await run.shutdown();
    run.makeDir();
    if (!(await run.startPortal())) return await run.shutdown();
    await run.startExporter();
    run.startPrometheus();
    if (!(await run.waitReady())) return await run.shutdown();
    run.printBanner();
    run.reportWhenScraped();
    await run.stopped;
    return await run.shutdown();
  } catch (err) {
    io.err(`stack: ${redact((err as Error).stack ?? String(err), run.secrets)}\n`);
    run.failure ??= 'internal error';
    run.stopping = true;
    return await run.shutdown();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const io: StackIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };
  let options: StackOptions | undefined;
  try {
    options = parseStackOptions(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof ConfigErrors)) throw err;
    for (const p of err.problems) io.err(`stack: ${p.message}\n`);
    process.exitCode = 2;
  }
  if (options?.help) io.out(STACK_USAGE);
  else if (options) process.exitCode = await runStack(options, io);
  // Idle keep-alive sockets of the readiness checks would hold the process open for seconds.
  process.exit();
}
