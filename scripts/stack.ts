/**
 * `npm run stack` (`node --import tsx scripts/stack.ts`): the simulated portal, the exporter's
 * `serve` against it and Debian's Prometheus with the repository's rules, all on 127.0.0.1, as
 * three child processes. Prints the URLs; Ctrl-C or SIGTERM stops every process it started and
 * removes its temporary directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
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
  readonly help: boolean;
}

interface OptionDef {
  readonly key: Exclude<keyof StackOptions, 'help'>;
  readonly flag: string;
  readonly kind: 'port' | 'int' | 'list' | 'path';
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
];

/** Environment variable of a stack option (`--exporter-port` → `POSTURE_STACK_EXPORTER_PORT`). */
export function stackEnvName(flag: string): string {
  return 'POSTURE_STACK_' + flag.toUpperCase().replace(/-/g, '_');
}

/** The `--help` text. */
export const STACK_USAGE = `npm run stack [-- flags]: the simulated portal, the exporter (serve) and Prometheus with the
posture rules, on 127.0.0.1. Ctrl-C stops everything. Flags (or environment variables):
${OPTIONS.map((o) => `  --${`${o.flag} ${o.kind === 'list' || o.kind === 'path' ? 'VALUE' : 'N'}`.padEnd(28)} ${stackEnvName(o.flag).padEnd(38)} ${o.doc}${o.default !== undefined ? ` [${o.default}]` : ''}`).join('\n')}
The exporter ignores POSTURE_* settings of your shell: it always reads the stack's portal.
`;

/** Parses flags and `POSTURE_STACK_*` variables; throws ConfigErrors listing every problem. */
export function parseStackOptions(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): StackOptions {
  const spec: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const o of OPTIONS) spec[o.flag] = { type: 'string' };
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
    const raw = typeof fromFlag === 'string' ? fromFlag : envValue !== undefined && envValue.trim() !== '' ? envValue : o.default;
    const name = typeof fromFlag === 'string' ? `--${o.flag}` : `${stackEnvName(o.flag)} (--${o.flag})`;
    if (raw === undefined) continue;
    const text = String(raw).trim();
    if (o.kind === 'list') {
      out[o.key] = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
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
export function renderPrometheusConfig(template: string, opts: { exporter: string; scrapeIntervalSeconds: number; templateDir: string }): string {
  const doc = parseDocument(template);
  doc.setIn(['global', 'scrape_interval'], `${opts.scrapeIntervalSeconds}s`);
  doc.setIn(['global', 'evaluation_interval'], `${opts.scrapeIntervalSeconds}s`);
  const rules = (doc.getIn(['rule_files']) as { items?: Array<{ value?: unknown }> } | undefined)?.items ?? [];
  rules.forEach((item, i) => {
    const file = String(item.value ?? item);
    doc.setIn(['rule_files', i], isAbsolute(file) ? file : resolve(opts.templateDir, file));
  });
  doc.setIn(['scrape_configs', 0, 'static_configs', 0, 'targets'], doc.createNode([opts.exporter], { flow: true }));
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

/** Runs the stack until SIGINT/SIGTERM (or a component dies); returns the exit code. */
export async function runStack(options: StackOptions, io: StackIo): Promise<number> {
  // Refuse at once, before anything is started, what would only fail later in a child's log.
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

  const components: Component[] = [];
  const secrets: string[] = [];
  let dir: string | undefined;
  let stopping = false;
  let failure: string | undefined;
  let wake: () => void = () => {};
  const stopped = new Promise<void>((r) => (wake = r));
  const requestStop = (reason?: string) => {
    if (reason && !stopping) failure = reason;
    stopping = true;
    wake();
  };

  const onSignal = () => {
    // A second Ctrl-C while stopping: do not wait for graceful exits.
    if (stopping) for (const c of components) signalGroup(c.proc, 'SIGKILL');
    requestStop();
  };
  const lastResort = () => {
    // Synchronous only: the process is exiting (an uncaught error, or process.exit elsewhere).
    for (const c of components) signalGroup(c.proc, 'SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
  const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const sig of SIGNALS) process.on(sig, onSignal);
  process.on('exit', lastResort);

  const start = (name: string, command: string, args: string[], env: NodeJS.ProcessEnv, pipeStdout = false): Component => {
    const logFile = join(dir!, 'logs', `${name}.log`);
    const fd = openSync(logFile, 'a');
    // Own process group: a terminal's Ctrl-C reaches only the stack, which stops the children in
    // order (exporter first) and can then tell a crash from a requested stop.
    const proc = spawn(command, args, { cwd: dir, env, stdio: ['ignore', pipeStdout ? 'pipe' : fd, fd], detached: true });
    closeSync(fd);
    const exited = new Promise<void>((r) => proc.once('close', () => r()));
    proc.once('error', (err) => requestStop(`${name} did not start: ${err.message}`));
    void exited.then(() => {
      if (!stopping) requestStop(`${name} exited unexpectedly (${proc.exitCode !== null ? `code ${proc.exitCode}` : `signal ${proc.signalCode}`})`);
    });
    const component = { name, proc, logFile, exited };
    components.push(component);
    return component;
  };

  /** Polls `check` until it returns a value; undefined when the stack is stopping or `ms` passed. */
  const waitFor = async <T>(check: () => Promise<T | undefined>, ms: number): Promise<T | undefined> => {
    const until = Date.now() + ms;
    while (!stopping && Date.now() < until) {
      const v = await check().catch(() => undefined);
      if (v !== undefined) return v;
      await Promise.race([sleep(250), stopped]);
    }
    return undefined;
  };
  const httpText = async (url: string): Promise<string | undefined> => {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    const text = await res.text();
    return res.ok ? text : undefined;
  };

  const childEnv: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('POSTURE_')));
  const host = '127.0.0.1';
  const portalUrl = `http://${host}:${options.portalPort}/public-api/v1`;
  const metricsUrl = `http://${host}:${options.exporterPort}/metrics`;
  const prometheusUrl = `http://${host}:${options.prometheusPort}`;

  try {
    if (!existsSync(CLI)) {
      io.out('stack: dist/cli.js is missing: running npm run build\n');
      const build = spawn('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, env: childEnv, stdio: ['ignore', 'inherit', 'inherit'] });
      const code = await new Promise<number | null>((r) => {
        build.once('error', () => r(-1));
        build.once('close', (c) => r(c));
      });
      if (code !== 0 || !existsSync(CLI)) {
        io.err(`stack: npm run build failed (exit ${String(code)}); run it yourself to see why.\n`);
        return 1;
      }
    }

    if (stopping) return await shutdown();
    dir = mkdtempSync(join(tmpdir(), 'posture-stack-'));
    mkdirSync(join(dir, 'logs'));
    io.out(`stack: starting in ${dir}\n`);

    // 1. The simulated portal. Its stdout names the key: read it here, keep it out of every log.
    const sizeArgs = (['devices', 'alerts', 'integrations', 'seed'] as const).flatMap((k) => (options[k] === undefined ? [] : [`--${k}`, String(options[k])]));
    const portal = start('portal', process.execPath, [CLI, 'simulate', '--listen', `${host}:${options.portalPort}`, ...sizeArgs], childEnv, true);
    let portalOut = '';
    portal.proc.stdout!.on('data', (d: Buffer) => (portalOut += d.toString('utf8')));
    const key = await waitFor(async () => /^API key \(simulated\): (\S+)$/m.exec(portalOut)?.[1], 30_000);
    if (key === undefined) {
      if (!stopping) requestStop('the simulated portal did not start within 30 s');
      return await shutdown();
    }
    secrets.push(key);
    const keyFile = join(dir, 'portal-api-key');
    writeFileSync(keyFile, key + '\n', { mode: 0o600 });

    // 2. The exporter: the built CLI's serve, with the whole simulated budget (it is the only client).
    start('exporter', process.execPath, [CLI, 'serve', '--listen', `${host}:${options.exporterPort}`, '--interval-seconds', String(options.intervalSeconds), '--portal', STACK_PORTAL, '--requests-per-minute', '10', ...(options.vitalsTags.length ? ['--vitals-tags', options.vitalsTags.join(',')] : [])], {
      ...childEnv,
      POSTURE_BASE_URL: portalUrl,
      POSTURE_API_KEY_FILE: keyFile,
    });

    // 3. Prometheus with the repository's rules read in place.
    const config = renderPrometheusConfig(readFileSync(PROMETHEUS_TEMPLATE, 'utf8'), { exporter: `${host}:${options.exporterPort}`, scrapeIntervalSeconds: options.scrapeIntervalSeconds, templateDir: dirname(PROMETHEUS_TEMPLATE) });
    writeFileSync(join(dir, 'prometheus.yml'), config);
    const provisioning = renderGrafanaProvisioning(GRAFANA_PROVISIONING, { prometheusUrl, dashboardsDir: GRAFANA_DASHBOARDS, scrapeIntervalSeconds: options.scrapeIntervalSeconds });
    for (const [rel, text] of Object.entries(provisioning)) {
      mkdirSync(dirname(join(dir, 'grafana/provisioning', rel)), { recursive: true });
      writeFileSync(join(dir, 'grafana/provisioning', rel), text);
    }
    start('prometheus', options.prometheusBinary, [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=${host}:${options.prometheusPort}`,
      '--web.enable-lifecycle',
    ], childEnv);

    const ready = await waitFor(async () => {
      const [healthz, prom] = await Promise.all([httpText(metricsUrl.replace(/metrics$/, 'healthz')), httpText(`${prometheusUrl}/-/ready`)]);
      // The exporter's /healthz says "ok" alone once its first collection has finished.
      return healthz?.trim() === 'ok' && prom !== undefined ? true : undefined;
    }, 60_000);
    if (!ready) {
      if (!stopping) requestStop('the exporter or Prometheus was not ready within 60 s');
      return await shutdown();
    }

    const sizes = `${options.devices ?? SIMULATOR_DEFAULTS.devices} devices, ${options.alerts ?? SIMULATOR_DEFAULTS.alerts} open alerts, ${options.integrations ?? SIMULATOR_DEFAULTS.integrations} integrations`;
    io.out(
      [
        '',
        'posture-exporter local stack is up (Ctrl-C stops it and removes its files):',
        `  simulated portal   ${portalUrl}   (${sizes}; API key in ${keyFile})`,
        `  exporter /metrics  ${metricsUrl}   (serve, collects every ${options.intervalSeconds} s, portal="${STACK_PORTAL}")`,
        `  Prometheus         ${prometheusUrl}   (rules: ${prometheusUrl}/rules, alerts: ${prometheusUrl}/alerts, targets: ${prometheusUrl}/targets)`,
        `  files and logs     ${dir}   (prometheus.yml, logs/{portal,exporter,prometheus}.log)`,
        '',
        `  Try:  curl -s ${metricsUrl} | grep posture_vitals_health_ratio`,
        `        curl -s -H "X-Service-ApiKey: $(cat ${keyFile})" '${portalUrl}/vitals'`,
        `  Rules are read in place from infra/prometheus/rules/: after editing, curl -X POST ${prometheusUrl}/-/reload`,
        '',
        'Grafana is not started (it is not part of this stack and cannot be installed here). To point one at it,',
        `use the provisioning files written to ${join(dir, 'grafana/provisioning')} (copies of`,
        `infra/grafana/provisioning/ with the data source url set to ${prometheusUrl} and the dashboards path`,
        `set to ${GRAFANA_DASHBOARDS}), e.g.:`,
        `  GF_PATHS_PROVISIONING=${join(dir, 'grafana/provisioning')} grafana server --homepath /usr/share/grafana`,
        '  or with Docker (host network, since everything listens on 127.0.0.1):',
        `  docker run --rm --network host -v ${join(dir, 'grafana/provisioning')}:/etc/grafana/provisioning:ro -v ${GRAFANA_DASHBOARDS}:${GRAFANA_DASHBOARDS}:ro grafana/grafana`,
        'Then open http://127.0.0.1:3000 (admin/admin): folder "Security posture".',
        '',
      ].join('\n'),
    );

    // Report once Prometheus has scraped the exporter and evaluated the rules (not awaited by shutdown).
    void waitFor(async () => {
      const targets = JSON.parse((await httpText(`${prometheusUrl}/api/v1/targets?state=active`)) ?? '{}') as { data?: { activeTargets?: Array<{ health?: string }> } };
      const rules = JSON.parse((await httpText(`${prometheusUrl}/api/v1/rules`)) ?? '{}') as { data?: { groups?: Array<{ rules?: Array<{ health?: string }> }> } };
      const all = (rules.data?.groups ?? []).flatMap((g) => g.rules ?? []);
      const up = targets.data?.activeTargets?.some((t) => t.health === 'up');
      return up && all.length > 0 && all.every((r) => r.health === 'ok') ? all.length : undefined;
    }, (options.scrapeIntervalSeconds * 3 + 30) * 1000).then((rules) => {
      if (stopping) return;
      io.out(rules === undefined ? `stack: Prometheus has not reported the exporter target up with every rule evaluated yet; see ${prometheusUrl}/targets\n` : `stack: Prometheus scrapes the exporter (target up) and evaluates ${rules} rules.\n`);
    });

    await stopped;
    return await shutdown();
  } catch (err) {
    io.err(`stack: ${redact((err as Error).stack ?? String(err), secrets)}\n`);
    failure ??= 'internal error';
    stopping = true;
    return await shutdown();
  }

  async function shutdown(): Promise<number> {
    if (failure) {
      io.err(`stack: ${failure}; stopping.\n`);
      // The logs of what died tell why; when nothing died (a timeout), all of them.
      const dead = components.filter((c) => !alive(c.proc));
      for (const c of dead.length ? dead : components) io.err(`  ${c.name} log (${c.logFile}):\n${tailOf(c.logFile, secrets)}\n`);
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
    if (dir) rmSync(dir, { recursive: true, force: true });
    for (const sig of SIGNALS) process.off(sig, onSignal);
    process.off('exit', lastResort);
    io.out(`stack: stopped${dir ? `; removed ${dir}` : ''}\n`);
    return failure ? 1 : 0;
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
