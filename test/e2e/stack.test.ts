/**
 * `npm run stack` (scripts/stack.ts): options, the generated Prometheus configuration, and the
 * whole stack started as a child process on ports chosen here, checked through Prometheus's API,
 * then stopped with SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import bcrypt from 'bcryptjs';
import { makeWebConfig, renderGrafanaProvisioning, renderPrometheusConfig } from '../../scripts/stack/files.js';
import { parseStackOptions, stackEnvName } from '../../scripts/stack/options.js';
import { loadWebConfig } from '../../src/http/web-config.js';
import { ConfigError, ConfigErrors } from '../../src/errors.js';
import { loadRuleExpressions, REPO_ROOT, ruleFiles, runPromtool } from '../infra/support.js';
import { freePort, queryPrometheusApi } from '../support/peers.js';
import { commandOf, descendantsOf, exists, until } from '../support/processes.js';
import { thrownBy } from '../support/errors.js';

const STACK = join(REPO_ROOT, 'scripts/stack.ts');

/** The environment of a fresh shell: no POSTURE_* settings. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('POSTURE_'))), ...extra };
}

function problemsOf(fn: () => unknown): ConfigError[] {
  return thrownBy(fn, ConfigErrors).problems;
}

describe('stack options', () => {
  it('defaults to the documented ports, a 60 s collection interval and two Vitals tags', () => {
    expect(parseStackOptions([], {})).toEqual({
      help: false,
      portalPort: 9878,
      exporterPort: 9877,
      prometheusPort: 9090,
      intervalSeconds: 60,
      scrapeIntervalSeconds: 15,
      vitalsTags: ['laptops', 'servers'],
      prometheusBinary: '/usr/bin/prometheus',
      webConfig: false,
    });
  });

  it('takes flags over POSTURE_STACK_* variables over defaults', () => {
    const env = { [stackEnvName('exporter-port')]: '19877', [stackEnvName('devices')]: '500', [stackEnvName('interval-seconds')]: '120', [stackEnvName('vitals-tags')]: '' };
    const o = parseStackOptions(['--interval-seconds', '90', '--alerts=40', '--vitals-tags', 'mobile'], env);
    expect(o).toMatchObject({ exporterPort: 19877, devices: 500, alerts: 40, intervalSeconds: 90, vitalsTags: ['mobile'] });
    expect(parseStackOptions(['--vitals-tags='], {}).vitalsTags).toEqual([]);
  });

  it('takes --web-config as a switch, or POSTURE_STACK_WEB_CONFIG=true', () => {
    expect(parseStackOptions(['--web-config'], {}).webConfig).toBe(true);
    expect(parseStackOptions([], { POSTURE_STACK_WEB_CONFIG: 'true' }).webConfig).toBe(true);
    expect(parseStackOptions([], { POSTURE_STACK_WEB_CONFIG: '0' }).webConfig).toBe(false);
    expect(problemsOf(() => parseStackOptions([], { POSTURE_STACK_WEB_CONFIG: 'maybe' })).map((p) => p.message)).toEqual(['POSTURE_STACK_WEB_CONFIG (--web-config)="maybe" is not valid: give true or false.']);
  });

  it.each([
    [['--exporter-port', '0'], '--exporter-port', '--exporter-port="0" is not valid: give a whole number from 1 to 65535.'],
    [['--prometheus-port', '70000'], '--prometheus-port', '--prometheus-port="70000" is not valid: give a whole number from 1 to 65535.'],
    [['--interval-seconds', '5'], '--interval-seconds', '--interval-seconds="5" is not valid: give a whole number from 10 to 86400.'],
    [['--scrape-interval-seconds', '1.5'], '--scrape-interval-seconds', '--scrape-interval-seconds="1.5" is not valid: give a whole number from 1 to 3600.'],
    [['--devices=-3'], '--devices', '--devices="-3" is not valid: give a whole number from 0 to 10000000.'],
    [['--prometheus', ' '], '--prometheus', '--prometheus is empty: give the path of the binary.'],
    [['--portal-port', '9090'], '--prometheus-port', '--portal-port and --prometheus-port are both 9090: give each component its own port.'],
    [['--no-such-flag'], 'argv', "Unknown option '--no-such-flag' (see npm run stack -- --help)."],
  ])('refuses %j', (argv, setting, message) => {
    const problems = problemsOf(() => parseStackOptions(argv, {}));
    expect(problems.map((p) => [p.setting, p.message])).toEqual([[setting, message]]);
  });

  it('names the environment variable when the bad value comes from it, and lists every problem', () => {
    const problems = problemsOf(() => parseStackOptions(['--seed', 'x'], { POSTURE_STACK_PORTAL_PORT: 'http' }));
    expect(problems.map((p) => p.message)).toEqual([
      'POSTURE_STACK_PORTAL_PORT (--portal-port)="http" is not valid: give a whole number from 1 to 65535.',
      '--seed="x" is not valid: give a whole number from 0 to 10000000.',
    ]);
  });
});

describe('generated configuration', () => {
  const template = readFileSync(join(REPO_ROOT, 'infra/stack/prometheus.yml'), 'utf8');

  it('points Prometheus at the exporter with the repository rules, and promtool accepts it', async () => {
    const text = renderPrometheusConfig(template, { exporter: '127.0.0.1:19877', scrapeIntervalSeconds: 5, templateDir: join(REPO_ROOT, 'infra/stack') });
    expect(text).toContain('scrape_interval: 5s');
    expect(text).toContain('evaluation_interval: 5s');
    expect(text).toContain(`- ${join(REPO_ROOT, 'infra/prometheus/rules')}/*.yml`);
    expect(text).toMatch(/targets: \[ 127\.0\.0\.1:19877 \]/);
    const dir = mkdtempSync(join(tmpdir(), 'stack-config-'));
    try {
      writeFileSync(join(dir, 'prometheus.yml'), text);
      // check config also loads and checks every rule file it names.
      const res = await runPromtool(['check', 'config', join(dir, 'prometheus.yml')]);
      expect(res.output).toContain(`SUCCESS: ${ruleFiles().length} rule files found`);
      expect(res.code, res.output).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('scrapes over https with basic auth and the exporter\'s certificate as the CA when the exporter has a web config', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stack-web-'));
    try {
      const web = await makeWebConfig(dir);
      const text = renderPrometheusConfig(template, { exporter: '127.0.0.1:19877', scrapeIntervalSeconds: 5, templateDir: join(REPO_ROOT, 'infra/stack'), web: { caFile: web.certFile, username: web.username, passwordFile: web.passwordFile } });
      expect(text).toContain('scheme: https');
      expect(text).toContain(`password_file: ${web.passwordFile}`);
      expect(text).toContain(`ca_file: ${web.certFile}`);
      expect(text).not.toContain(web.password);
      writeFileSync(join(dir, 'prometheus.yml'), text);
      const res = await runPromtool(['check', 'config', join(dir, 'prometheus.yml')]);
      expect(res.code, res.output).toBe(0);
      // The web config the stack writes is one the exporter accepts, and its hash is of the password.
      const loaded = loadWebConfig(web.webConfigFile);
      expect(loaded.config.tls?.certFile).toBe(web.certFile);
      expect(await bcrypt.compare(web.password, loaded.config.basicAuthUsers.get(web.username)!)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps infra/stack/prometheus.yml usable on its own', async () => {
    const res = await runPromtool(['check', 'config', 'infra/stack/prometheus.yml']);
    expect(res.code, res.output).toBe(0);
  });

  it('writes Grafana provisioning pointed at the stack\'s Prometheus and the committed dashboards', () => {
    const files = renderGrafanaProvisioning(join(REPO_ROOT, 'infra/grafana/provisioning'), { prometheusUrl: 'http://127.0.0.1:19090', dashboardsDir: '/repo/infra/grafana/dashboards', scrapeIntervalSeconds: 5 });
    expect(Object.keys(files).sort()).toEqual(['dashboards/posture.yml', 'datasources/prometheus.yml']);
    expect(files['datasources/prometheus.yml']).toMatch(/^ {4}url: http:\/\/127\.0\.0\.1:19090$/m);
    expect(files['datasources/prometheus.yml']).toMatch(/^ {6}timeInterval: 5s$/m);
    expect(files['dashboards/posture.yml']).toMatch(/^ {6}path: \/repo\/infra\/grafana\/dashboards$/m);
  });
});

describe('npm run stack', () => {
  let stack: ChildProcess | undefined;
  let started: number[] = [];
  let blocker: Server | undefined;
  afterAll(async () => {
    // After a failed assertion: stop the stack the way a user would, then make sure.
    if (stack && stack.exitCode === null && stack.signalCode === null) {
      const gone = new Promise<void>((r) => stack!.once('exit', () => r()));
      stack.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 15_000))]);
      stack.kill('SIGKILL');
    }
    // An orphaned stack still stops its children and removes its folder on SIGTERM.
    for (const pid of started.filter(exists)) process.kill(pid, 'SIGTERM');
    await until('the processes the tests started to stop', () => (started.some(exists) ? undefined : true), 10_000).catch(() => undefined);
    for (const pid of started.filter(exists)) process.kill(pid, 'SIGKILL');
    await new Promise<void>((r) => (blocker ? blocker.close(() => r()) : r()));
  });

  it('runs the portal, the exporter and Prometheus with the rules, and SIGTERM stops every process it started', async () => {
    const ports = new Set<number>();
    while (ports.size < 3) ports.add(await freePort());
    const [portalPort, exporterPort, prometheusPort] = [...ports] as [number, number, number];
    let output = '';
    stack = spawn(
      process.execPath,
      ['--import', 'tsx', STACK, '--portal-port', String(portalPort), '--exporter-port', String(exporterPort), '--prometheus-port', String(prometheusPort), '--scrape-interval-seconds', '1', '--devices', '180'],
      { cwd: REPO_ROOT, env: cleanEnv({ POSTURE_STACK_ALERTS: '60', POSTURE_API_KEY: 'must-be-ignored' }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<number | null>((r) => stack!.once('exit', (code) => r(code)));
    stack.stdout!.on('data', (d) => (output += String(d)));
    stack.stderr!.on('data', (d) => (output += String(d)));
    const log = () => output;

    const prometheus = `http://127.0.0.1:${prometheusPort}`;
    await until('the stack to print its URLs', () => (output.includes('local stack is up') ? true : undefined), 60_000, log);
    // What runs under the stack, read from /proc (independent of what the stack says it started).
    const children = descendantsOf(stack.pid!);
    started = [...started, ...children];
    expect(output).toContain(`http://127.0.0.1:${portalPort}/public-api/v1`);
    expect(output).toContain(`http://127.0.0.1:${exporterPort}/metrics`);
    expect(output).toContain(prometheus);
    expect(output).toContain('Grafana is not started');
    expect(output).toContain('grafana/provisioning');
    const dir = /stack: starting in (\S+)/.exec(output)![1]!;
    expect(existsSync(join(dir, 'prometheus.yml'))).toBe(true);

    // Prometheus scrapes the exporter the stack started.
    await until('the exporter target to be up', async () => {
      const res = (await (await fetch(`${prometheus}/api/v1/targets?state=active`)).json()) as { data: { activeTargets: Array<{ scrapeUrl: string; health: string }> } };
      return res.data.activeTargets.find((t) => t.scrapeUrl === `http://127.0.0.1:${exporterPort}/metrics` && t.health === 'up');
    }, 30_000, log);
    // Every rule of the repository is loaded from infra/prometheus/rules/ and evaluates cleanly.
    const expected = loadRuleExpressions().map((r) => `${r.kind} ${r.name} ${r.file}: ok`).sort();
    let loaded: string[] = [];
    await until('every rule to be loaded and evaluated', async () => {
      const res = (await (await fetch(`${prometheus}/api/v1/rules`)).json()) as { data: { groups: Array<{ file: string; rules: Array<{ type: string; name: string; health: string }> }> } };
      loaded = res.data.groups.flatMap((g) => g.rules.map((r) => `${r.type === 'alerting' ? 'alert' : 'record'} ${r.name} ${g.file}: ${r.health}`)).sort();
      return loaded.length === expected.length && loaded.every((x) => x.endsWith(': ok')) ? true : undefined;
    }, 30_000, log).catch(() => undefined);
    expect(loaded).toEqual(expected);
    // The size flags reached the simulated portal, and the exporter read it (not the shell's POSTURE_*).
    const devices = await until('device totals in Prometheus', async () => {
      const rows = await queryPrometheusApi(prometheus, 'sum(posture_devices{portal="stack"})');
      return rows.length ? Number(rows[0]!.value[1]) : undefined;
    }, 20_000, log);
    expect(devices).toBe(180);
    expect(await queryPrometheusApi(prometheus, 'min(posture_collection_success{portal="stack"})')).toMatchObject([{ value: [expect.any(Number), '1'] }]);
    const tags = await queryPrometheusApi(prometheus, 'count by (tag) (posture_vitals_integration_info{portal="stack", tag!=""})');
    expect(tags.map((r) => r.metric.tag).sort()).toEqual(['laptops', 'servers']);

    // The key stays in a private file, never in the stack's output.
    const key = readFileSync(join(dir, 'portal-api-key'), 'utf8').trim();
    expect(key.length).toBeGreaterThan(8);
    expect(output).not.toContain(key);
    // Its requests are recorded with the stack (its portal is new each run), not in the user's state directory.
    expect(readdirSync(join(dir, 'state', 'sends'))).toHaveLength(1);

    const commands = children.map(commandOf);
    expect(commands.some((c) => c.includes('dist/cli.js simulate'))).toBe(true);
    expect(commands.some((c) => c.includes('dist/cli.js serve'))).toBe(true);
    expect(commands.some((c) => c.startsWith('/usr/bin/prometheus'))).toBe(true);

    stack.kill('SIGTERM');
    expect(await exited).toBe(0);
    // Reaped children vanish at once; the loader's helper (esbuild) leaves when its pipe closes.
    await until('every child process to be gone', () => (children.every((pid) => !exists(pid)) ? true : undefined), 10_000, () => `${log()}\nstill running: ${children.filter(exists).map((p) => `${p} ${commandOf(p)}`).join('; ')}`);
    expect(existsSync(dir)).toBe(false);
    expect(output).toContain(`stack: stopped; removed ${dir}`);
    expect(output).not.toContain(key);
    // Nothing listens any more.
    for (const port of [portalPort, exporterPort, prometheusPort]) await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  }, 90_000);

  it('with --web-config, serves /metrics over https with basic auth and Prometheus scrapes it', async () => {
    const ports = new Set<number>();
    while (ports.size < 3) ports.add(await freePort());
    const [portalPort, exporterPort, prometheusPort] = [...ports] as [number, number, number];
    let output = '';
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', STACK, '--portal-port', String(portalPort), '--exporter-port', String(exporterPort), '--prometheus-port', String(prometheusPort), '--scrape-interval-seconds', '1', '--web-config'],
      { cwd: REPO_ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    stack = child;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.stdout!.on('data', (d) => (output += String(d)));
    child.stderr!.on('data', (d) => (output += String(d)));
    const log = () => output;
    await until('the stack to print its URLs', () => (output.includes('local stack is up') ? true : undefined), 60_000, log);
    started = [...started, ...descendantsOf(child.pid!)];
    expect(output).toContain(`https://127.0.0.1:${exporterPort}/metrics`);
    const dir = /stack: starting in (\S+)/.exec(output)![1]!;
    const password = readFileSync(join(dir, 'exporter-password'), 'utf8');
    const ca = readFileSync(join(dir, 'exporter.crt'), 'utf8');
    const prometheus = `http://127.0.0.1:${prometheusPort}`;
    await until('the https target to be up', async () => {
      const res = (await (await fetch(`${prometheus}/api/v1/targets?state=active`)).json()) as { data: { activeTargets: Array<{ scrapeUrl: string; health: string }> } };
      return res.data.activeTargets.find((t) => t.scrapeUrl === `https://127.0.0.1:${exporterPort}/metrics` && t.health === 'up');
    }, 30_000, log);
    const rows = await until('process metrics scraped over https', async () => {
      const r = await queryPrometheusApi(prometheus, 'process_resident_memory_bytes');
      return r.length ? r : undefined;
    }, 20_000, log);
    expect(Number(rows[0]!.value[1])).toBeGreaterThan(0);
    // The exporter itself: 401 without credentials, no plain HTTP.
    const agent = new Agent({ connect: { ca } });
    try {
      expect((await undiciFetch(`https://127.0.0.1:${exporterPort}/metrics`, { dispatcher: agent })).status).toBe(401);
      const ok = await undiciFetch(`https://127.0.0.1:${exporterPort}/metrics`, { dispatcher: agent, headers: { authorization: `Basic ${Buffer.from(`prometheus:${password}`).toString('base64')}` } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('posture_collection_success');
    } finally {
      await agent.close();
    }
    await expect(fetch(`http://127.0.0.1:${exporterPort}/metrics`)).rejects.toThrow();
    expect(output).not.toContain(password);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(dir)).toBe(false);
  }, 90_000);

  /** `npm run stack` as a user starts it, up; its process tree read from /proc, and its folder. */
  async function npmRunStack(): Promise<{ child: ChildProcess; exited: Promise<number | null>; tree: number[]; dir: string; output: () => string }> {
    const ports = new Set<number>();
    while (ports.size < 3) ports.add(await freePort());
    const [portalPort, exporterPort, prometheusPort] = [...ports] as [number, number, number];
    let output = '';
    const child = spawn('npm', ['run', 'stack', '--', '--portal-port', String(portalPort), '--exporter-port', String(exporterPort), '--prometheus-port', String(prometheusPort)], {
      cwd: REPO_ROOT,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stack = child;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.stdout!.on('data', (d) => (output += String(d)));
    child.stderr!.on('data', (d) => (output += String(d)));
    await until('the stack to print its URLs', () => (output.includes('local stack is up') ? true : undefined), 60_000, () => output);
    const tree = descendantsOf(child.pid!);
    started = [...started, ...tree];
    const commands = tree.map(commandOf);
    for (const what of ['dist/cli.js simulate', 'dist/cli.js serve', '/usr/bin/prometheus']) expect(commands.some((c) => c.includes(what)), commands.join('\n')).toBe(true);
    const dir = /stack: starting in (\S+)/.exec(output)![1]!;
    expect(existsSync(dir)).toBe(true);
    return { child, exited, tree, dir, output: () => output };
  }

  it.each(['SIGTERM', 'SIGINT'] as const)('npm run stack stopped by %s to its PID stops every process it started and removes its folder', async (signal) => {
    const run = await npmRunStack();
    run.child.kill(signal);
    await until('every process of the tree to be gone', () => (run.tree.every((pid) => !exists(pid)) ? true : undefined), 15_000, () =>
      `${run.output()}\n${run.tree.filter(exists).map((pid) => `still running: ${pid} ${commandOf(pid)}`).join('\n')}`,
    );
    expect(existsSync(run.dir)).toBe(false);
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain(`stack: stopped; removed ${run.dir}`);
  }, 90_000);

  it('stops the others and removes its folder when one of its children dies', async () => {
    const run = await npmRunStack();
    const prometheus = run.tree.find((pid) => commandOf(pid).startsWith('/usr/bin/prometheus'))!;
    process.kill(prometheus, 'SIGKILL');
    expect(await run.exited).toBe(1);
    await until('every process of the tree to be gone', () => (run.tree.every((pid) => !exists(pid)) ? true : undefined), 10_000, () =>
      run.tree.filter(exists).map((pid) => `still running: ${pid} ${commandOf(pid)}`).join('\n'),
    );
    expect(existsSync(run.dir)).toBe(false);
    expect(run.output()).toContain('stack: prometheus exited unexpectedly (signal SIGKILL); stopping.');
  }, 90_000);

  it('refuses a port that is taken, before starting anything', async () => {
    blocker = createServer();
    const port = await new Promise<number>((r) => blocker!.listen(0, '127.0.0.1', () => r((blocker!.address() as { port: number }).port)));
    const child = spawn(process.execPath, ['--import', 'tsx', STACK, '--prometheus-port', String(port), '--portal-port', String(await freePort()), '--exporter-port', String(await freePort())], { cwd: REPO_ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += String(d)));
    child.stderr!.on('data', (d) => (output += String(d)));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(2);
    expect(output).toContain(`stack: port ${port} on 127.0.0.1 is not free (EADDRINUSE): choose another with --prometheus-port or POSTURE_STACK_PROMETHEUS_PORT.`);
    expect(output).not.toContain('starting in');
  }, 30_000);

  it('refuses a Prometheus binary that is not there, before starting anything', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', STACK, '--prometheus', '/nonexistent/prometheus', '--portal-port', String(await freePort())], { cwd: REPO_ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d) => (output += String(d)));
    child.stderr!.on('data', (d) => (output += String(d)));
    expect(await new Promise<number | null>((r) => child.once('exit', (c) => r(c)))).toBe(2);
    expect(output).toContain("stack: /nonexistent/prometheus is not an executable: install Debian's prometheus (apt-get install prometheus) or pass --prometheus PATH.");
    expect(output).not.toContain('starting in');
  }, 30_000);
});
