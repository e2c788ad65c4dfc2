/**
 * The stack's child processes and how it watches them: each in its own process group, polled over
 * HTTP until ready, its log's tail shown (redacted) when it dies.
 */
import { type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { redact } from '../../src/core/log.js';
import { ConfigError } from '../../src/errors.js';
import { stackEnvName } from './options.js';

/** Rejects with a ConfigError when `port` cannot be bound on 127.0.0.1 (something else uses it). */
export function checkPortFree(port: number, flag: string): Promise<void> {
  return new Promise((resolveFree, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new ConfigError(`--${flag}`, `port ${port} on 127.0.0.1 is not free (${err.code ?? err.message}): choose another with --${flag} or ${stackEnvName(flag)}.`)),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree()));
  });
}

/** A child the stack started: its log file, and a promise kept when it has exited. */
export interface Component {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly logFile: string;
  readonly exited: Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Whether the child has neither exited nor been killed. */
export function alive(proc: ChildProcess): boolean {
  return proc.exitCode === null && proc.signalCode === null;
}

/** Signals a child's whole process group (it was spawned detached, so it leads one). */
export function signalGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (!alive(proc) || proc.pid === undefined) return;
  try {
    process.kill(-proc.pid, signal);
  } catch {
    // Already gone between the check and the kill.
  }
}

/** The last `lines` of a child's log, `secrets` redacted, indented for the stack's messages. */
export function tailOf(file: string, secrets: readonly string[], lines = 25): string {
  try {
    return redact(readFileSync(file, 'utf8'), secrets).trimEnd().split('\n').slice(-lines).map((l) => `    ${l}`).join('\n');
  } catch {
    return '    (no log)';
  }
}

/** Polls `check` until it returns a value; undefined when `stop` resolves first or `ms` passed. */
export async function waitFor<T>(check: () => Promise<T | undefined>, ms: number, stop: { readonly stopping: boolean; readonly stopped: Promise<void> }): Promise<T | undefined> {
  const until = Date.now() + ms;
  while (!stop.stopping && Date.now() < until) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    await Promise.race([sleep(250), stop.stopped]);
  }
  return undefined;
}

/** The credentials and CA the stack's own checks use to reach an exporter behind a web config. */
export interface ExporterAccess {
  /** Trusts the exporter's self-signed certificate. */
  readonly dispatcher: Agent;
  readonly username: string;
  readonly password: string;
}

/** GETs `url`; the body when the answer is 2xx, else undefined. With `access`, over TLS with basic auth. */
export async function httpText(url: string, access?: ExporterAccess): Promise<string | undefined> {
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
