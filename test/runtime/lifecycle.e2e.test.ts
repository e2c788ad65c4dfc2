/**
 * The process edge on real time: `npm start` stopped by a signal to the PID the user started
 * frees its port and leaves no process behind, and an address that cannot be bound is one line
 * naming it and `--listen`, exit 2, no stack trace and no banner.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/log.js';
import { startMetricsServer } from '../../src/http/server.js';
import { BUILT_CLI, runProcess, withOwnState } from '../support/cli.js';
import { freePort } from '../support/peers.js';
import { commandOf, descendantsOf, exists, until } from '../support/processes.js';
import { unprivilegedCli, type UnprivilegedCli } from '../support/unprivileged.js';

const REPO_ROOT = new URL('../../', import.meta.url).pathname;

/** The environment of a fresh shell: no POSTURE_* settings. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('POSTURE_'))), ...extra };
}

/**
 * A project folder running the repository's own package.json scripts on its sources, so
 * `npm start`'s build writes its own dist/ and not the one other tests are running.
 */
function projectCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lifecycle-'));
  copyFileSync(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'));
  for (const name of ['src', 'scripts', 'node_modules', 'tsconfig.json']) symlinkSync(join(REPO_ROOT, name), join(dir, name));
  return dir;
}

async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(1_000) });
    return true;
  } catch {
    return false;
  }
}

describe('npm start', () => {
  let child: ChildProcess | undefined;
  let tree: number[] = [];
  let dir: string | undefined;
  afterEach(() => {
    // After a failed assertion: nothing this test started outlives it.
    if (child?.pid !== undefined && exists(child.pid)) child.kill('SIGKILL');
    for (const pid of tree.filter(exists)) process.kill(pid, 'SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
    child = undefined;
    tree = [];
    dir = undefined;
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('stopped by %s to its PID frees the metrics port within 5 s and leaves no process', async (signal) => {
    dir = projectCopy();
    const port = await freePort();
    let output = '';
    // A state directory of its own: npm needs the user's HOME, the demo must not write there.
    const started = spawn('npm', ['start'], { cwd: dir, env: cleanEnv({ POSTURE_LISTEN: `127.0.0.1:${port}`, POSTURE_STATE_DIR: join(dir, 'state') }), stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    started.stdout!.on('data', (d) => (output += String(d)));
    started.stderr!.on('data', (d) => (output += String(d)));
    const exited = new Promise<number | null>((r) => started.once('exit', (code) => r(code)));
    const healthz = `http://127.0.0.1:${port}/healthz`;
    await until('the metrics port to answer', async () => ((await answers(healthz)) ? true : undefined), 60_000, () => output);
    tree = descendantsOf(started.pid!);
    expect(tree.map(commandOf).some((c) => c.includes('dist/cli.js demo')), tree.map(commandOf).join('\n')).toBe(true);

    const sentAt = Date.now();
    started.kill(signal);
    await until('the metrics port to stop answering', async () => ((await answers(healthz)) ? undefined : true), 5_000, () => output);
    await until('every process of the tree to be gone', () => (tree.every((pid) => !exists(pid)) ? true : undefined), 5_000 - (Date.now() - sentAt), () =>
      tree.filter(exists).map((pid) => `still running: ${pid} ${commandOf(pid)}`).join('\n'),
    );
    expect(await exited).toBe(0);
    expect(output).toContain('"msg":"stopped"');
  }, 90_000);
});

/** The lowest port this machine reserves for privileged processes, minus one (80 when it allows). */
function privilegedPort(): number {
  const start = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8').trim());
  expect(start, 'the machine has no privileged ports to test EACCES with').toBeGreaterThan(1);
  return Math.min(80, start - 1);
}

describe('an address that cannot be bound', () => {
  let blocker: Server | undefined;
  // Root could bind a privileged port: the CLI runs as a user without privileges.
  let unprivileged: UnprivilegedCli;
  beforeAll(() => {
    unprivileged = unprivilegedCli();
  });
  afterAll(() => unprivileged?.remove());
  afterEach(async () => {
    await new Promise<void>((r) => (blocker ? blocker.close(() => r()) : r()));
    blocker = undefined;
  });

  // serve needs a portal; it never reaches it (the port is refused first).
  const portalEnv = { POSTURE_BASE_URL: 'http://127.0.0.1:1/public-api/v1', POSTURE_API_KEY: 'not-a-real-key' };

  it.each([
    ['serve', portalEnv],
    ['demo', {}],
    ['simulate', {}],
  ] as const)('%s on a busy port: exit 2, one line naming the address and --listen, no banner, no stack trace', async (command, env) => {
    blocker = createServer();
    const port = await new Promise<number>((r) => blocker!.listen(0, '127.0.0.1', () => r((blocker!.address() as { port: number }).port)));
    const ran = await runProcess(process.execPath, [BUILT_CLI, command, '--listen', `127.0.0.1:${port}`], { env: { PATH: process.env.PATH, ...env } });
    expect(ran.code, ran.stderr).toBe(2);
    expect(ran.stderr.trimEnd().split('\n')).toEqual([
      `error: cannot listen on 127.0.0.1:${port}: the address is already in use (EADDRINUSE): stop what uses it or give another port with --listen (POSTURE_LISTEN).`,
    ]);
    expect(ran.stdout).toBe('');
  });

  it.each([
    ['serve', '192.0.2.1:9877', 'EADDRNOTAVAIL', portalEnv],
    ['simulate', '192.0.2.1:9878', 'EADDRNOTAVAIL', {}],
    ['demo', 'a privileged port', 'EACCES', {}],
  ] as const)('%s on %s: exit 2 and one line naming the address and --listen (%s)', async (command, where, code, env) => {
    const listen = where === 'a privileged port' ? `127.0.0.1:${privilegedPort()}` : where;
    const [cmd, args] = unprivileged.command([command, '--listen', listen]);
    const ran = await runProcess(cmd, args, { env: { PATH: process.env.PATH, ...unprivileged.env, ...env }, cwd: unprivileged.cwd });
    expect(ran.code, ran.stderr).toBe(2);
    const lines = ran.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^error: cannot listen on ${listen.replace(/\./g, '\\.')}: .*\\(${code}\\).* with --listen \\(POSTURE_LISTEN\\)\\.$`));
    expect(ran.stdout).toBe('');
  });
});

describe('stopping the metrics server', () => {
  it('closes a keep-alive connection whose request was in flight, instead of waiting out its 65 s keep-alive', async () => {
    const server = await startMetricsServer(
      { samples: () => [], ready: true, describe: () => ({ portals: [], intervalSeconds: 60 }) },
      { host: '127.0.0.1', port: 0, logger: createLogger({ write: () => {} }) },
    );
    const socket = connect((server.server.address() as { port: number }).port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let answer = '';
    socket.on('data', (d) => (answer += String(d)));
    const socketClosed = new Promise((r) => socket.once('close', r));
    // Half a request: the connection is busy, not idle, when the server is asked to stop.
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await new Promise((r) => setTimeout(r, 200));
    const stoppedAt = Date.now();
    const closed = server.close();
    socket.write('Connection: keep-alive\r\n\r\n');
    await closed;
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
    await socketClosed;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  }, 15_000);
});

describe('once stopped by a signal', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('stops at once on %s while waiting out a 429, exit 1, one line, nothing on stdout', async (signal) => {
    const { startSimulator } = await import('../../src/simulator/index.js');
    const sim = await startSimulator({ alerts: 20, moving: false });
    try {
      // Every request waits out a 60 s Retry-After: without the signal the run would take minutes.
      sim.addFault({ path: '/vitals', times: Infinity, fault: { kind: 'status', status: 429, retryAfter: '60' } });
      // Not the user's environment: its HOME would hold the state directory.
      const child = spawn(process.execPath, [BUILT_CLI, 'once'], { env: withOwnState({ PATH: process.env.PATH, POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: sim.apiKey }), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      await until("a 429", () => (sim.requests.some((r) => r.status === 429) ? true : undefined), 10_000);
      const sent = performance.now();
      child.kill(signal);
      const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      expect(performance.now() - sent).toBeLessThan(3_000);
      expect(code).toBe(1);
      expect(stdout).toBe('');
      expect(stderr.trimEnd().split('\n').at(-1)).toBe('posture-exporter: interrupted by a signal before the run finished: nothing written');
      expect(stderr).not.toContain(sim.apiKey);
    } finally {
      await sim.close();
    }
  }, 30_000);
});
