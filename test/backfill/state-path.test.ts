import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { defaultStatePath, loadState } from '../../src/backfill/state.js';
import { startSimulator } from '../../src/simulator/index.js';
import { runMain } from '../support/cli.js';
import { closeAfterEach } from '../support/closing.js';

const T0 = Date.UTC(2026, 10, 22, 9, 30, 0);

describe('defaultStatePath', () => {
  it.each([
    ['beside --output', 'out/vitals.om', { XDG_STATE_HOME: '/var/state', HOME: '/home/u' }, 'out/vitals.om.progress.json'],
    ['in $XDG_STATE_HOME without --output', undefined, { XDG_STATE_HOME: '/var/state', HOME: '/home/u' }, '/var/state/posture-exporter/backfill.state.json'],
    ['in ~/.local/state without XDG_STATE_HOME', undefined, { HOME: '/home/u' }, '/home/u/.local/state/posture-exporter/backfill.state.json'],
    ['in ~/.local/state when XDG_STATE_HOME is relative (the XDG spec ignores it)', undefined, { XDG_STATE_HOME: 'state', HOME: '/home/u' }, '/home/u/.local/state/posture-exporter/backfill.state.json'],
    ['in the user\'s home without HOME', undefined, {}, join(homedir(), '.local/state/posture-exporter/backfill.state.json')],
  ])('puts the state file %s', (_what, output, env, expected) => {
    expect(defaultStatePath(output, env)).toBe(expected);
  });
});

describe('backfill --push remote_write without --output', () => {
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

  it('falls back to ~/.local/state and names that file when it asks for --resume', async () => {
    const state = join(dir, 'home', '.local', 'state', 'posture-exporter', 'backfill.state.json');
    mkdirSync(join(state, '..'), { recursive: true });
    writeFileSync(state, JSON.stringify({ version: 1, portals: {} }));
    const r = await backfill(['--days', '2', '--push', 'remote_write'], { HOME: join(dir, 'home'), POSTURE_REMOTE_WRITE_URL: 'http://127.0.0.1:9/api/v1/write' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${state} holds an earlier backfill: add --resume`);
  });
});
