import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { defaultStatePath, loadState } from '../../src/backfill/state.js';
import { startSimulator } from '../../src/simulator/index.js';
import { runMain } from '../support/cli.js';
import { closeAfterEach } from '../support/closing.js';

const T0 = Date.UTC(2026, 10, 22, 9, 30, 0);

describe('defaultStatePath', () => {
  it('puts a push-only run\'s progress in backfill.state.json in the state directory', () => {
    expect(defaultStatePath(undefined, '/var/state/posture-exporter')).toBe('/var/state/posture-exporter/backfill.state.json');
  });

  it('gives each output its own file in the state directory, named after it, never beside it', () => {
    const a = defaultStatePath('out/vitals.om', '/var/state/posture-exporter');
    const b = defaultStatePath('elsewhere/vitals.om', '/var/state/posture-exporter');
    expect(a).toMatch(/^\/var\/state\/posture-exporter\/backfill-vitals\.om-[0-9a-f]{12}\.state\.json$/);
    expect(b).toMatch(/^\/var\/state\/posture-exporter\/backfill-vitals\.om-[0-9a-f]{12}\.state\.json$/);
    expect(a).not.toBe(b);
    // The same output, however it is written, is the same file.
    expect(defaultStatePath(join(process.cwd(), 'out', 'vitals.om'), '/var/state/posture-exporter')).toBe(a);
  });
});

describe('backfill\'s progress in the state directory', () => {
  let dir: string;
  let receiver: Server | undefined;
  const closing = closeAfterEach();
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'backfill-state-'));
  });
  afterEach(async () => {
    if (receiver) await new Promise((r) => receiver!.close(r));
    receiver = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** A remote-write receiver that takes everything (the state file is what this test reads). */
  async function acceptAll(): Promise<string> {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((r) => receiver!.listen(0, '127.0.0.1', r));
    const address = receiver.address();
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/v1/write`;
  }

  async function backfill(argv: string[], env: Record<string, string>) {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const sim = closing(await startSimulator({ clock, seed: 7 }));
    return runMain(['backfill', ...argv], {
      env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: sim.apiKey, POSTURE_PORTAL: 'acme', POSTURE_REQUESTS_PER_MINUTE: '5', ...env },
      clock,
    });
  }

  it('keeps its state in the XDG state folder it creates, not in the working directory', async () => {
    const url = await acceptAll();
    const state = join(dir, 'xdg', 'posture-exporter', 'backfill.state.json');
    const r = await backfill(['--days', '2', '--push', 'remote_write'], { XDG_STATE_HOME: join(dir, 'xdg'), HOME: join(dir, 'home'), POSTURE_REMOTE_WRITE_URL: url });
    expect(r.stderr).not.toContain('"level":"error"');
    expect(r.code).toBe(0);
    expect(loadState(state)).toMatchObject({ remoteWriteUrl: url, portals: { acme: { days: expect.any(Object) } } });
    expect(Object.keys(loadState(state).portals.acme!.days)).toHaveLength(2);
    expect(existsSync(join(process.cwd(), 'posture-backfill.state.json'))).toBe(false);
    expect(existsSync(join(dir, 'home'))).toBe(false);
  });

  it('with --output keeps its progress in POSTURE_STATE_DIR, and writes nothing beside the output', async () => {
    const out = join(dir, 'out', 'vitals.om');
    mkdirSync(join(dir, 'out'));
    const r = await backfill(['--days', '2', '--output', out], { POSTURE_STATE_DIR: join(dir, 'state') });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(join(dir, 'out'))).toEqual(['vitals.om']);
    expect(Object.keys(loadState(defaultStatePath(out, join(dir, 'state'))).portals.acme!.days)).toHaveLength(2);
  });

  it('warns once, naming POSTURE_STATE_DIR and what is lost, when the state directory cannot be written, and still writes every day', async () => {
    // A directory under a regular file cannot be made, whoever runs the test (root too).
    writeFileSync(join(dir, 'file'), '');
    const out = join(dir, 'vitals.om');
    const r = await backfill(['--days', '3', '--output', out], { POSTURE_STATE_DIR: join(dir, 'file', 'state') });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('3 day(s) written');
    const warnings = r.stderr.split('\n').filter((l) => l.includes('POSTURE_STATE_DIR'));
    expect(warnings).toHaveLength(1);
    const line = JSON.parse(warnings[0]!) as { level: string; msg: string };
    expect(line.level).toBe('warn');
    expect(line.msg).toContain(`POSTURE_STATE_DIR (--state-dir) ${join(dir, 'file', 'state')} cannot be written`);
    expect(line.msg).toContain('not kept for --resume');
    expect(line.msg).toContain('a restart or another process does not count them');
    expect(existsSync(join(dir, 'file', 'state'))).toBe(false);
  });

  it('falls back to ~/.local/state and names that file when it asks for --resume', async () => {
    const state = join(dir, 'home', '.local', 'state', 'posture-exporter', 'backfill.state.json');
    mkdirSync(join(state, '..'), { recursive: true });
    writeFileSync(state, JSON.stringify({ version: 1, portals: {} }));
    const r = await backfill(['--days', '2', '--push', 'remote_write'], { HOME: join(dir, 'home'), POSTURE_REMOTE_WRITE_URL: 'http://127.0.0.1:9/api/v1/write' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${state} holds an earlier backfill: add --resume`);
  });
});
