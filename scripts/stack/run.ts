/**
 * One run of the stack: the simulated portal, the exporter's `serve` against it and Debian's
 * Prometheus with the repository's rules, started in order and stopped in order.
 */
import { spawn } from 'node:child_process';
import { accessSync, closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Agent } from 'undici';
import { redact } from '../../src/core/log.js';
import { ConfigError } from '../../src/errors.js';
import { alive, checkPortFree, httpText, signalGroup, tailOf, waitFor, type Component, type ExporterAccess } from './children.js';
import { GRAFANA_DASHBOARDS, GRAFANA_PROVISIONING, makeWebConfig, PROMETHEUS_TEMPLATE, REPO_ROOT, renderGrafanaProvisioning, renderPrometheusConfig, type StackWebConfig } from './files.js';
import type { StackOptions } from './options.js';

const CLI = join(REPO_ROOT, 'dist/cli.js');
// The simulator's documented defaults (docs/simulator.md), for the banner only.
const SIMULATOR_DEFAULTS = { devices: 250, alerts: 120, integrations: 8 } as const;
/** The `portal` label of the stack's series. */
const STACK_PORTAL = 'stack';

/** Where the stack writes its messages (stdout and stderr at the process edge). */
export interface StackIo {
  out: (text: string) => void;
  err: (text: string) => void;
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
