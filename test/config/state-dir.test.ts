import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-secret-value-123' };

describe('the state directory setting', () => {
  it.each([
    ['the flag over the environment and the file', { POSTURE_STATE_DIR: '/env/state', POSTURE_CONFIG: JSON.stringify({ state_dir: '/file/state' }) }, { state_dir: '/flag/state' }, '/flag/state'],
    ['the environment over the file', { POSTURE_STATE_DIR: '/env/state', POSTURE_CONFIG: JSON.stringify({ state_dir: '/file/state' }) }, {}, '/env/state'],
    ['the config file over the default', { XDG_STATE_HOME: '/xdg', POSTURE_CONFIG: JSON.stringify({ state_dir: '/file/state' }) }, {}, '/file/state'],
    ['$XDG_STATE_HOME/posture-exporter by default', { XDG_STATE_HOME: '/var/state', HOME: '/home/u' }, {}, '/var/state/posture-exporter'],
    ['~/.local/state/posture-exporter without XDG_STATE_HOME', { HOME: '/home/u' }, {}, '/home/u/.local/state/posture-exporter'],
    ['~/.local/state/posture-exporter when XDG_STATE_HOME is relative (the XDG spec ignores it)', { XDG_STATE_HOME: 'state', HOME: '/home/u' }, {}, '/home/u/.local/state/posture-exporter'],
    ['the user\'s home without HOME', {}, {}, join(homedir(), '.local', 'state', 'posture-exporter')],
    ['a relative setting from the working directory', { POSTURE_STATE_DIR: 'var/state' }, {}, resolve('var/state')],
  ])('takes %s', (_what, env, flags, expected) => {
    expect(loadConfig({ env: { ...base, ...env }, flags }).stateDir).toBe(expected);
  });

  it('says whether it was set or is the default', () => {
    expect(loadConfig({ env: { ...base, HOME: '/home/u' } }).stateDirSet).toBe(false);
    expect(loadConfig({ env: { ...base, POSTURE_STATE_DIR: '/tmp/posture-exporter' } }).stateDirSet).toBe(true);
    expect(loadConfig({ env: { ...base, POSTURE_CONFIG: JSON.stringify({ state_dir: '/s' }) } }).stateDirSet).toBe(true);
  });
});
