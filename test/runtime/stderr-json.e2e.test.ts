/**
 * Stderr is JSON lines, always, through the built CLI: `serve` over a fleet of 12 simulated
 * portals writes nothing else for 20 s (Node's MaxListenersExceededWarning used to appear there
 * from 6 portals on), and a warning Node raises in the process comes out as a log line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_CLI, withOwnState } from '../support/cli.js';
import { freePort } from '../support/peers.js';
import { until } from '../support/processes.js';

const PORTALS = 12;
let dir: string;
let configFile: string;
let fleet: ChildProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stderr-json-'));
  configFile = join(dir, 'fleet.yaml');
  fleet = spawn(process.execPath, [BUILT_CLI, 'simulate', '--portals', String(PORTALS), '--listen', '127.0.0.1:0', '--write-config', configFile], { env: { PATH: process.env.PATH }, stdio: 'ignore' });
  await until('the fleet config written', () => (existsSync(configFile) ? true : undefined), 15_000);
});

afterAll(async () => {
  if (fleet && fleet.exitCode === null) {
    fleet.kill('SIGTERM');
    await new Promise((r) => fleet.once('exit', r));
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Starts the built CLI with `args`, collecting stderr; `stop()` ends it with SIGTERM and resolves with its exit code and stderr. */
function start(nodeArgs: string[], args: string[], env: Record<string, string>): { stderr: () => string; stop: () => Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(process.execPath, [...nodeArgs, BUILT_CLI, ...args], { env: withOwnState({ PATH: process.env.PATH!, ...env }), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    stderr: () => stderr,
    stop: async () => {
      child.kill('SIGTERM');
      const code = await exited;
      return { code, stderr };
    },
  };
}

/** The lines of `text` that are not one JSON object each. */
const notJson = (text: string) =>
  text.split('\n').filter((line) => {
    if (line === '') return false;
    try {
      const v: unknown = JSON.parse(line);
      return v === null || typeof v !== 'object' || Array.isArray(v);
    } catch {
      return true;
    }
  });

describe('stderr of the built CLI', () => {
  it(`serve over ${PORTALS} portals writes only JSON lines for 20 s, each portal's every source run`, async () => {
    const port = await freePort();
    const serve = start([], ['serve', '--listen', `127.0.0.1:${port}`], { POSTURE_CONFIG_FILE: configFile });
    const began = Date.now();
    const runs = () => serve.stderr().split('\n').filter((l) => l.includes('"msg":"run finished"')).length;
    await until(`${PORTALS * 3} runs finished`, () => (runs() >= PORTALS * 3 ? true : undefined), 20_000, serve.stderr);
    await new Promise((r) => setTimeout(r, Math.max(0, 20_000 - (Date.now() - began))));
    const { code, stderr } = await serve.stop();
    expect(code).toBe(0);
    expect(notJson(stderr)).toEqual([]);
    expect(stderr).not.toContain('MaxListenersExceededWarning');
    const records = stderr.trimEnd().split('\n').map((l) => JSON.parse(l) as { level: string; msg: string; ok?: boolean });
    expect(records.filter((r) => r.msg === 'run finished' && r.ok !== true)).toEqual([]);
    expect(records.at(-1)!.msg).toBe('stopped');
  }, 40_000);

  it("turns a warning Node raises into a JSON log line at level warn, not Node's text", async () => {
    const emitter = join(dir, 'emit-warning.mjs');
    // Raised once the CLI has put its handler in place of Node's: one raised before the CLI has
    // loaded (a fixed delay on a busy machine) cannot be JSON, and is not what this test is about.
    writeFileSync(
      emitter,
      [
        "const node = process.listeners('warning');",
        'const poll = setInterval(() => {',
        "  const now = process.listeners('warning');",
        '  if (now.length === 0 || now.some((l) => node.includes(l))) return;',
        '  clearInterval(poll);',
        "  process.emitWarning('a test warning', { code: 'TEST_WARNING' });",
        '}, 20);',
        '',
      ].join('\n'),
    );
    const port = await freePort();
    const serve = start(['--import', emitter], ['simulate', '--listen', `127.0.0.1:${port}`], {});
    await until('the warning logged', () => (serve.stderr().includes('a test warning') ? true : undefined), 10_000, serve.stderr);
    const { stderr } = await serve.stop();
    expect(notJson(stderr)).toEqual([]);
    const warning = stderr.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((r) => r.msg === 'a test warning');
    expect(warning).toMatchObject({ level: 'warn', warning: 'Warning', code: 'TEST_WARNING' });
  });
});
