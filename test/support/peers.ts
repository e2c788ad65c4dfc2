/**
 * Real Prometheus-ecosystem peers for end-to-end tests: Debian's Prometheus (2.42), Pushgateway and
 * VictoriaMetrics, and Prometheus 3 and the OpenTelemetry Collector built from their Go modules
 * (test/support/go-tools.ts), each started on a free loopback port in a temporary directory, and
 * stopped (process killed, directory removed) by `stop()` or, at the latest, when the test process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { goTool } from './go-tools.js';

/** A running peer. */
export interface Peer {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  url: string;
  port: number;
  /** Kills the process and removes its temporary directory. */
  stop(): Promise<void>;
  /** What the process has written to stdout and stderr (the last 64 KiB). */
  logs(): string;
}

const READY_TIMEOUT_MS = 20_000;
const LOG_LIMIT = 64 * 1024;
const live = new Set<{ child: ChildProcess; dir: string }>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort when a test forgets stop() or the run is interrupted: synchronous cleanup only.
  process.on('exit', () => {
    for (const { child, dir } of live) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** A TCP port that was free a moment ago on 127.0.0.1 (bind to port 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not read the bound port'))));
    });
  });
}

function tail(text: string, lines = 40): string {
  return text.split('\n').slice(-lines).join('\n');
}

async function startPeer(opts: {
  name: string;
  binary: string;
  args: (port: number, dir: string) => string[];
  readyPath: string;
  dir: string;
  /** Whether the ready path's status means ready. @default 2xx */
  ready?: (status: number) => boolean;
}): Promise<Peer> {
  installExitHook();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child = spawn(opts.binary, opts.args(port, opts.dir), { cwd: opts.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const entry = { child, dir: opts.dir };
  live.add(entry);
  const append = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    if (output.length > LOG_LIMIT) output = output.slice(-LOG_LIMIT);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killed = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000).unref())]);
      if (!killed) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    live.delete(entry);
    rmSync(opts.dir, { recursive: true, force: true });
  };

  const started = Date.now();
  for (;;) {
    if (spawnError || child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`${opts.name} exited before it was ready${spawnError ? ` (${spawnError.message})` : ''}:\n${tail(output)}`);
    }
    try {
      const res = await fetch(url + opts.readyPath, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (opts.ready ? opts.ready(res.status) : res.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() - started > READY_TIMEOUT_MS) {
      await stop();
      throw new Error(`${opts.name} was not ready at ${url}${opts.readyPath} within ${READY_TIMEOUT_MS / 1000} s:\n${tail(output)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, port, stop, logs: () => output };
}

/** Which Prometheus: Debian's 2.42, or 3.x built by scripts/ensure-tools.sh. */
export type PrometheusVersion = 2 | 3;

/**
 * Starts Prometheus (Debian's, or `version: 3`) with `config` (prometheus.yml text); rule files are
 * written beside it, so the config can name them relatively; `storagePath` (kept on stop) instead
 * of a fresh data directory.
 */
export function startPrometheus(opts: { config: string; extraArgs?: string[]; rulesFiles?: Record<string, string>; storagePath?: string; version?: PrometheusVersion }): Promise<Peer> {
  const binary = opts.version === 3 ? goTool('prometheus3') : '/usr/bin/prometheus';
  const dir = mkdtempSync(join(tmpdir(), 'peer-prometheus-'));
  writeFileSync(join(dir, 'prometheus.yml'), opts.config);
  for (const [name, text] of Object.entries(opts.rulesFiles ?? {})) writeFileSync(join(dir, name), text);
  return startPeer({
    name: opts.version === 3 ? 'prometheus 3' : 'prometheus',
    binary,
    dir,
    readyPath: '/-/ready',
    args: (port) => [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${opts.storagePath ?? join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      ...(opts.extraArgs ?? []),
    ],
  });
}

/** Starts Debian's Prometheus Pushgateway (no persistence); `webConfig` is written to a `--web.config.file` (basic auth, TLS); `extraArgs` are appended. */
export function startPushgateway(opts: { webConfig?: string; extraArgs?: string[] } = {}): Promise<Peer> {
  const dir = mkdtempSync(join(tmpdir(), 'peer-pushgateway-'));
  if (opts.webConfig !== undefined) writeFileSync(join(dir, 'web.yml'), opts.webConfig);
  return startPeer({
    name: 'pushgateway',
    binary: '/usr/bin/prometheus-pushgateway',
    dir,
    readyPath: '/-/ready',
    // Behind basic auth, a 401 is the answer of a ready Pushgateway.
    ready: (status) => status === 200 || (opts.webConfig !== undefined && status === 401),
    // Debian's build persists to /var/lib/prometheus by default; an empty file name keeps it in memory.
    args: (port) => [
      `--web.listen-address=127.0.0.1:${port}`,
      '--persistence.file=',
      ...(opts.webConfig === undefined ? [] : [`--web.config.file=${join(dir, 'web.yml')}`]),
      ...(opts.extraArgs ?? []),
    ],
  });
}

/** Starts Debian's single-node VictoriaMetrics; `extraArgs` are appended (e.g. `-search.latencyOffset=0s`). */
export function startVictoriaMetrics(opts: { extraArgs?: string[] } = {}): Promise<Peer> {
  const dir = mkdtempSync(join(tmpdir(), 'peer-victoriametrics-'));
  return startPeer({
    name: 'victoria-metrics',
    binary: '/usr/bin/victoria-metrics',
    dir,
    readyPath: '/health',
    args: (port) => [`-httpListenAddr=127.0.0.1:${port}`, `-storageDataPath=${join(dir, 'data')}`, ...(opts.extraArgs ?? [])],
  });
}

/**
 * Starts the OpenTelemetry Collector with the config `config(port)` returns (YAML; `port` is where
 * its OTLP/HTTP receiver must listen, on 127.0.0.1); the peer's `url` is that receiver's base URL.
 * Its own telemetry should be off (`service.telemetry.metrics.level: none`), or it listens on 8888.
 */
export function startOtelcol(opts: { config: (port: number) => string }): Promise<Peer> {
  const binary = goTool('otelcol');
  const dir = mkdtempSync(join(tmpdir(), 'peer-otelcol-'));
  return startPeer({
    name: 'otelcol',
    binary,
    dir,
    readyPath: '/v1/metrics',
    // The OTLP/HTTP receiver answers a GET with 405: it is listening.
    ready: (status) => status === 405,
    args: (port) => {
      writeFileSync(join(dir, 'config.yaml'), opts.config(port));
      return [`--config=${join(dir, 'config.yaml')}`];
    },
  });
}

/** Runs an instant query through `/api/v1/query`; throws when Prometheus answers with an error or a range vector. */
export async function queryPrometheusApi(
  baseUrl: string,
  promql: string,
  time?: number,
): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const params = new URLSearchParams({ query: promql });
  if (time !== undefined) params.set('time', String(time));
  const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/api/v1/query?${params.toString()}`);
  const text = await res.text();
  let body: { status?: string; errorType?: string; error?: string; data?: { resultType?: string; result?: unknown } };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    throw new Error(`query ${promql}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`);
  }
  if (!res.ok || body.status !== 'success') throw new Error(`query ${promql}: HTTP ${res.status} ${body.errorType ?? ''}: ${body.error ?? text.slice(0, 200)}`);
  const { resultType, result } = body.data ?? {};
  // A scalar or string result comes back as one element without labels, so callers get one shape.
  if (resultType === 'scalar' || resultType === 'string') return [{ metric: {}, value: result as [number, string] }];
  if (resultType !== 'vector' || !Array.isArray(result)) throw new Error(`query ${promql}: expected an instant vector, got ${resultType}`);
  return result as Array<{ metric: Record<string, string>; value: [number, string] }>;
}

/**
 * A peer for the whole file or `describe`: started before its tests, stopped after them. Call the
 * returned function inside a test to get it.
 */
export function peerForAll(start: () => Promise<Peer>): () => Peer {
  let peer: Peer | undefined;
  beforeAll(async () => {
    peer = await start();
  });
  afterAll(async () => {
    await peer?.stop();
  });
  return () => {
    if (!peer) throw new Error('the peer is not started yet: use it inside a test');
    return peer;
  };
}
