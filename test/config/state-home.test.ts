/**
 * The suite never writes into the state directory of whoever runs it (test/support/state-home.ts):
 * a configuration that names none gets a temporary one, and so do the processes a test starts
 * with this process's environment.
 */
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-state-home-0123456789' };

describe('the state directory of a test', () => {
  it('is temporary when the environment a test passes names none, not under the user\'s home', () => {
    const { stateDir } = loadConfig({ env: base });
    expect(stateDir.startsWith(join(tmpdir(), 'posture-test-home-'))).toBe(true);
    expect(stateDir.startsWith(join(userInfo().homedir, '.local'))).toBe(false);
  });

  it('is temporary for whatever inherits this process\'s environment, with no POSTURE_STATE_DIR', () => {
    expect(process.env.XDG_STATE_HOME?.startsWith(join(tmpdir(), 'posture-test-home-'))).toBe(true);
    expect(process.env.POSTURE_STATE_DIR).toBeUndefined();
    expect(loadConfig({ env: { ...base, XDG_STATE_HOME: process.env.XDG_STATE_HOME } }).stateDir).toBe(join(process.env.XDG_STATE_HOME!, 'posture-exporter'));
  });

  it('is the one a test gives', () => {
    expect(loadConfig({ env: { ...base, XDG_STATE_HOME: '/srv/state' } }).stateDir).toBe('/srv/state/posture-exporter');
    expect(loadConfig({ env: { ...base, POSTURE_STATE_DIR: '/srv/mine' } }).stateDir).toBe('/srv/mine');
  });
});
