/**
 * The built CLI on real time, as an operator meets a broken setup: a rejected key is named at the
 * default level without the key, and a refused portal fails `once` within seconds and `serve`'s
 * runs as refused, never late. Needs `npm run build`.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { portalForAll } from '../support/closing.js';
import { BUILT_CLI, runBuiltCli, withOwnState } from '../support/cli.js';
// A port that was free a moment ago: nothing listens on it, so connecting is refused.
import { freePort as closedPort } from '../support/peers.js';

const KEY = 'sim-failures-cli-key-0123456789ab';
const WRONG = 'wrong-failures-cli-key-9876543210';
const sim = portalForAll({ keys: [{ key: KEY }], rateLimit: false, moving: false });

const jsonLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the built CLI names what failed', () => {
  it('once with a rejected key: an error line per source naming the 401, at the default level, without the key', async () => {
    const r = await runBuiltCli(['once'], { POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: WRONG });
    expect(r.code).toBe(1);
    const errors = jsonLines(r.stderr).filter((l) => l.level === 'error');
    // The resolved-alerts pass runs too (a first run) and fails alike.
    expect(errors.map((l) => l.source).sort()).toEqual(['alerts', 'devices', 'resolved', 'vitals']);
    for (const l of errors) {
      expect(l).toMatchObject({ reason: 'rejected-key', error: 'AuthenticationError' });
      expect(l.msg).toMatch(new RegExp(`^collecting ${String(l.source)} failed.*: The portal rejected the API key \\(401\\) on /vitals: check the key in POSTURE_API_KEY`));
    }
    expect(r.stderr).toMatch(/collection failed for: vitals, alerts, devices, resolved: The portal rejected the API key \(401\)/);
    expect(r.stderr + r.stdout).not.toContain(WRONG);
  }, 30_000);

  it('once against a refused port: fails within 30 s saying the connection was refused', async () => {
    const port = await closedPort();
    const started = Date.now();
    const r = await runBuiltCli(['once'], { POSTURE_BASE_URL: `http://127.0.0.1:${port}/public-api/v1`, POSTURE_API_KEY: KEY });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(r.code).toBe(1);
    const errors = jsonLines(r.stderr).filter((l) => l.level === 'error');
    expect(errors.map((l) => l.source).sort()).toEqual(['alerts', 'devices', 'resolved', 'vitals']);
    for (const l of errors) expect(l.msg).toContain(`connection refused by 127.0.0.1:${port}`);
    expect(r.stderr).toContain(`collection failed for: vitals, alerts, devices, resolved: connection refused by 127.0.0.1:${port}`);
    expect(r.stderr).not.toMatch(/late/);
    expect(r.stderr + r.stdout).not.toContain(KEY);
  }, 40_000);

  it('serve against a refused port: each source logs refused within 30 s, never late', async () => {
    const port = await closedPort();
    const child = spawn(process.execPath, [BUILT_CLI, 'serve'], {
      env: withOwnState({ PATH: process.env.PATH, POSTURE_BASE_URL: `http://127.0.0.1:${port}/public-api/v1`, POSTURE_API_KEY: KEY, POSTURE_LISTEN: '127.0.0.1:0', POSTURE_INTERVAL_SECONDS: '60' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const started = Date.now();
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no refused line for every source within 30 s:\n${stderr}`)), 30_000);
        child.stderr.setEncoding('utf8').on('data', (d: string) => {
          stderr += d;
          const sources = new Set(jsonLines(stderr.slice(0, stderr.lastIndexOf('\n') + 1)).filter((l) => l.level === 'error').map((l) => l.source));
          if (sources.size === 3) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', (code) => reject(new Error(`serve exited (${code}):\n${stderr}`)));
      });
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    expect(Date.now() - started).toBeLessThan(30_000);
    const lines = jsonLines(stderr.slice(0, stderr.lastIndexOf('\n') + 1));
    for (const l of lines.filter((x) => x.level === 'error')) {
      expect(l).toMatchObject({ reason: 'refused', msg: expect.stringContaining(`connection refused by 127.0.0.1:${port}`) });
    }
    expect(lines.filter((l) => l.msg === 'run finished').every((l) => l.ok === false)).toBe(true);
    expect(stderr).not.toMatch(/late/);
  }, 45_000);
});
