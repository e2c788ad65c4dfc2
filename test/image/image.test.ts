/**
 * The OCI image, built and run for real: `npm run image -- --local-base` (buildah, mmdebstrap,
 * podman; root), then the image's `once` through `buildah run --isolation chroot` and its `serve` on
 * a read-only root file system, each against a simulated portal on 127.0.0.1; and `once` with the
 * settings that need the AWS SDK the image carries (POSTURE_STATE_TABLE against dynalite, the key
 * from SSM Parameter Store through a loopback stand-in).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { freePort } from '../support/peers.js';
import { startDynalite, type Dynalite } from '../support/dynalite.js';
import { startAwsFake, type AwsFake } from '../lambda/aws-fake.js';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const CLI = join(ROOT, 'dist/cli.js');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
const IMAGE = `localhost/posture-exporter:${pkg.version}`;
const KEY = 'sim-image-key-0123456789abcdef';
const NAME = `posture-image-test-${process.pid}`;

interface ImageConfig {
  User: string;
  Entrypoint: string[];
  Cmd: string[];
  ExposedPorts: Record<string, unknown>;
  Env: string[];
  Labels: Record<string, string>;
}

let built: { image: string; base: string; bytes: number; addedBytes: number };
let config: ImageConfig;
let rootfs: string;

async function buildah(...args: string[]): Promise<string> {
  return (await run('buildah', args, { maxBuffer: 64 * 1024 * 1024 })).stdout;
}

async function imageSize(image: string): Promise<number> {
  return Number((await run('podman', ['image', 'inspect', '--format', '{{.Size}}', image])).stdout.trim());
}

beforeAll(async () => {
  const { stdout } = await run('npm', ['run', '--silent', 'image', '--', '--local-base'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
  built = JSON.parse(stdout.trim().split('\n').at(-1)!);
  const inspected = JSON.parse(await buildah('inspect', '--type', 'image', IMAGE)) as { OCIv1: { config: ImageConfig } };
  config = inspected.OCIv1.config;
  await buildah('from', '--name', NAME, IMAGE);
  rootfs = (await buildah('mount', NAME)).trim();
}, 20 * 60_000);

afterAll(async () => {
  await buildah('umount', NAME).catch(() => undefined);
  await buildah('rm', NAME).catch(() => undefined);
});

/** Every path under the image's root (relative, directories with a trailing slash), without /proc, /sys, /dev. */
function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = relative(rootfs, path);
    if (['proc', 'sys', 'dev'].includes(rel)) continue;
    if (entry.isDirectory()) {
      out.push(rel + '/');
      walk(path, out);
    } else out.push(rel);
  }
  return out;
}

/** Exposition with the two values that differ from run to run (when, and how long) replaced. */
function normalised(text: string): string {
  return text
    .split('\n')
    // prom-client's process_* / nodejs_* defaults (if served) describe the process, not the portal.
    .filter((l) => !/^(# (HELP|TYPE) )?(process|nodejs)_/.test(l))
    .map((l) => l.replace(/^(posture_collection_(last_success_timestamp|duration)_seconds\{[^}]*\}) \S+$/, '$1 <volatile>'))
    .join('\n');
}

function sample(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  expect(line, `${name}{${labels}}`).toBeDefined();
  return Number(line!.split(' ').at(-1));
}

describe('the image', () => {
  it('runs the CLI as a numeric non-root user, serves on 9877 by default, and carries the OCI labels', () => {
    expect(config.User).toBe('65532:65532');
    expect(config.Entrypoint).toEqual(['/nodejs/bin/node', '/app/cli.js']);
    expect(config.Cmd).toEqual(['serve']);
    expect(Object.keys(config.ExposedPorts)).toEqual(['9877/tcp']);
    expect(config.Env).toContain('POSTURE_LISTEN=0.0.0.0:9877');
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    expect(config.Labels).toMatchObject({
      'org.opencontainers.image.title': 'posture-exporter',
      'org.opencontainers.image.version': pkg.version,
      'org.opencontainers.image.revision': head,
    });
    expect(config.Labels['org.opencontainers.image.source']).toMatch(/\S/);
    expect(config.Labels['org.opencontainers.image.licenses']).toMatch(/\S/);
  });

  it('adds at most 10 MB over its base', async () => {
    expect(built.image).toBe(IMAGE);
    const added = (await imageSize(IMAGE)) - (await imageSize(built.base));
    expect(added).toBe(built.addedBytes);
    expect(added).toBeGreaterThan(0);
    expect(added).toBeLessThanOrEqual(10_000_000);
  });

  it('holds the bundles only: no npm install, no sources, no source maps, no npm; the AWS SDK as one bundle with a one-file package per client', () => {
    const paths = walk(rootfs);
    expect(paths.length).toBeGreaterThan(1000);
    expect(paths.filter((p) => /(^|\/)node_modules\/$/.test(p))).toEqual(['app/node_modules/']);
    expect(paths.filter((p) => /(^|\/)npm$/.test(p) || p.endsWith('/npm-cli.js'))).toEqual([]);
    expect(paths).not.toContain('src/');
    const app = paths.filter((p) => p.startsWith('app/'));
    expect(app).toContain('app/cli.js');
    expect(app).toContain('app/chunks/aws-sdk.cjs');
    const clients = ['client-dynamodb', 'client-secrets-manager', 'client-ssm'];
    expect(app.filter((p) => p.startsWith('app/node_modules/')).sort()).toEqual(
      ['app/node_modules/', 'app/node_modules/@aws-sdk/', ...clients.flatMap((c) => [`app/node_modules/@aws-sdk/${c}/`, `app/node_modules/@aws-sdk/${c}/index.js`, `app/node_modules/@aws-sdk/${c}/package.json`])].sort(),
    );
    expect(app.filter((p) => !p.startsWith('app/node_modules/') && !/^app\/(|cli\.js|package\.json|chunks\/|chunks\/[\w-]+\.c?js)$/.test(p))).toEqual([]);
    expect(statSync(join(rootfs, 'app/cli.js')).size).toBeGreaterThan(0);
  });

  describe('once with the settings that need the AWS SDK: POSTURE_STATE_TABLE, POSTURE_API_KEY_SSM_PARAMETER', () => {
    let sim: Simulator;
    let dynamo: Dynalite;
    let aws: AwsFake;
    const TABLE = 'posture-image-ledger';
    beforeAll(async () => {
      [sim, dynamo, aws] = await Promise.all([
        startSimulator({ keys: [{ key: KEY }], alerts: 300, devices: 500, integrations: 6, moving: false }),
        startDynalite(),
        startAwsFake({ parameters: { '/posture/image-key': KEY } }),
      ]);
      await dynamo.createTable(TABLE);
    });
    afterAll(async () => {
      await Promise.all([sim?.close(), dynamo?.close(), aws?.close()]);
    });

    it('reads its key from SSM, records every request in the table, and prints the portal\'s exact counts', async () => {
      const env = { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY_SSM_PARAMETER: '/posture/image-key', AWS_ENDPOINT_URL_SSM: aws.endpoint, POSTURE_STATE_TABLE: TABLE, POSTURE_PORTAL: 'image', ...dynamo.env };
      const inImage = await run('buildah', [
        'run', '--isolation', 'chroot', '--network', 'host',
        ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
        NAME, '--', ...config.Entrypoint, 'once', '--log-level', 'warn',
      ], { maxBuffer: 64 * 1024 * 1024 });
      expect(inImage.stderr).not.toContain(KEY);
      expect(aws.calls.map((c) => c.target)).toEqual(['AmazonSSM.GetParameter']);
      const open: Record<string, number> = {};
      for (const a of sim.data().alerts()) if (!a.resolved) open[a.state.toLowerCase()] = (open[a.state.toLowerCase()] ?? 0) + 1;
      for (const [severity, n] of Object.entries(open)) expect(sample(inImage.stdout, 'posture_alerts_open', `severity="${severity}"`)).toBe(n);
      expect(sample(inImage.stdout, 'posture_devices', 'activity="active"') + sample(inImage.stdout, 'posture_devices', 'activity="inactive"')).toBe([...sim.data().devices()].length);
      // Each request the portal answered is an item of the table's chain for this portal (numbered from 1).
      const items = await dynamo.items(TABLE, sim.baseUrl);
      expect(items.length).toBe(sim.requests.length);
      expect(items.map((i) => i.n).sort((a, b) => a - b)).toEqual(Array.from({ length: sim.requests.length }, (_, i) => i + 1));
    });
  });

  describe('once, run with buildah (chroot isolation, host network)', () => {
    let sim: Simulator;
    beforeAll(async () => {
      sim = await startSimulator({ keys: [{ key: KEY }], alerts: 300, devices: 2000, integrations: 10, moving: false });
    });
    afterAll(async () => {
      await sim?.close();
    });

    it('prints the exposition that once from the checkout prints, with the portal\'s exact counts', async () => {
      const env = { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'image' };
      const inImage = await run('buildah', [
        'run', '--isolation', 'chroot', '--network', 'host',
        ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
        NAME, '--', ...config.Entrypoint, 'once',
      ], { maxBuffer: 64 * 1024 * 1024 });
      const fromCheckout = await run(process.execPath, [CLI, 'once'], { env: { PATH: process.env.PATH, ...env }, maxBuffer: 64 * 1024 * 1024 });
      expect(inImage.stdout).toContain('posture_alerts_open{');
      expect(normalised(inImage.stdout)).toBe(normalised(fromCheckout.stdout));
      expect(inImage.stderr).not.toContain(KEY);

      const open: Record<string, number> = {};
      for (const a of sim.data().alerts()) if (!a.resolved) open[a.state.toLowerCase()] = (open[a.state.toLowerCase()] ?? 0) + 1;
      expect(Object.keys(open).length).toBeGreaterThan(0);
      for (const [severity, n] of Object.entries(open)) expect(sample(inImage.stdout, 'posture_alerts_open', `severity="${severity}"`)).toBe(n);
      const active = sample(inImage.stdout, 'posture_devices', 'activity="active"');
      expect(active).toBeGreaterThan(0);
      expect(active + sample(inImage.stdout, 'posture_devices', 'activity="inactive"')).toBe([...sim.data().devices()].length);
    });
  });

  describe('serve, on a read-only root file system as in the Deployment', () => {
    let sim: Simulator;
    let runner: ChildProcess;
    let exited: Promise<number | null>;
    let nodePid = 0;
    let base = '';
    let stderr = '';

    beforeAll(async () => {
      sim = await startSimulator({ keys: [{ key: KEY }], alerts: 2000, devices: 5000, integrations: 12, moving: false });
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      const [uid, gid] = config.User.split(':');
      const envs = [...config.Env, `POSTURE_LISTEN=127.0.0.1:${port}`, `POSTURE_BASE_URL=${sim.baseUrl}`, `POSTURE_API_KEY=${KEY}`, 'POSTURE_INTERVAL_SECONDS=300'];
      // A private mount and PID namespace: the image's root bind-mounted read-only, a tmpfs at /tmp
      // and one, root's and 0777 as an emptyDir is, where the Deployment mounts it (the state
      // directory's parent), and the image's entrypoint + command as its user, as PID 1.
      const stateDir = config.Env.find((e) => e.startsWith('POSTURE_STATE_DIR='))!.slice('POSTURE_STATE_DIR='.length);
      const script = [
        'r="$1"; shift',
        'mount --bind "$r" "$r"',
        'mount -o remount,bind,ro "$r"',
        'if touch "$r/.written" 2>/dev/null; then echo "the root is writable" >&2; exit 97; fi',
        'mount -t proc proc "$r/proc"',
        'mount -t tmpfs -o size=16m tmpfs "$r/tmp"',
        `mount -t tmpfs -o size=16m,mode=0777 tmpfs "$r${dirname(stateDir)}"`,
        'mount --rbind /dev "$r/dev"',
        `exec env -i ${envs.map((e) => `'${e}'`).join(' ')} "$(command -v chroot)" --userspec=${uid}:${gid} "$r" "$@"`,
      ].join('\n');
      runner = spawn('unshare', ['--mount', '--pid', '--fork', 'sh', '-ec', script, 'sh', rootfs, ...config.Entrypoint, ...config.Cmd], { stdio: ['ignore', 'ignore', 'pipe'] });
      runner.stderr!.on('data', (d) => (stderr += String(d)));
      exited = new Promise((resolve) => runner.once('exit', (code) => resolve(code)));
      const deadline = Date.now() + 30_000;
      for (;;) {
        const text = await fetch(`${base}/metrics`).then((r) => r.text()).catch(() => '');
        if (text.includes('posture_alerts_open{')) break;
        if (Date.now() > deadline || runner.exitCode !== null) throw new Error(`serve did not collect:\n${stderr.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      // unshare --fork: its one child is the exporter (PID 1 in the namespace).
      const children = readFileSync(`/proc/${runner.pid}/task/${runner.pid}/children`, 'utf8').trim().split(/\s+/);
      expect(children).toHaveLength(1);
      nodePid = Number(children[0]);
    }, 60_000);

    afterAll(async () => {
      if (runner && runner.exitCode === null && nodePid > 0) process.kill(nodePid, 'SIGTERM');
      await sim?.close();
    });

    it('answers /metrics and /healthz', async () => {
      const metrics = await fetch(`${base}/metrics`);
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(text).toContain('posture_exporter_build_info{portal="127.0.0.1",version="' + pkg.version + '",runtime="serve"} 1');
      expect(sample(text, 'posture_collection_success', 'source="alerts"')).toBe(1);
      const health = await fetch(`${base}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.text()).toBe('ok\n');
    });

    it('runs as the image\'s non-root user, within the Deployment\'s memory request', () => {
      const status = readFileSync(`/proc/${nodePid}/status`, 'utf8');
      const uids = /^Uid:\s+(.*)$/m.exec(status)![1]!.split(/\s+/);
      expect(uids).toEqual(Array(4).fill('65532'));
      expect(readFileSync(`/proc/${nodePid}/cmdline`, 'utf8').split('\0').filter(Boolean)).toEqual([...config.Entrypoint, ...config.Cmd]);
      const deployment = parse(readFileSync(join(ROOT, 'infra/k8s/base/deployment.yaml'), 'utf8'));
      const request = /^(\d+)Mi$/.exec(deployment.spec.template.spec.containers[0].resources.requests.memory);
      expect(request).not.toBeNull();
      const peakKb = Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)![1]);
      expect(peakKb).toBeGreaterThan(10_000);
      expect(peakKb * 1024).toBeLessThan(Number(request![1]) * 1024 * 1024);
    });

    it('stops cleanly on SIGTERM', async () => {
      process.kill(nodePid, 'SIGTERM');
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 10_000))]);
      expect(code).toBe(0);
      expect(stderr).not.toContain(KEY);
      expect(stderr).toContain('"msg":"run finished"');
      // The state directory was writable: no warning about it.
      expect(stderr).not.toContain('POSTURE_STATE_DIR');
    });
  });
});
