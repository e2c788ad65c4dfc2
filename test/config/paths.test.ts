/**
 * A config file's relative paths (the key file, the web config file, the state directory) are
 * relative to the file's own directory, as the web config file's own paths are: what the file names
 * moves with it, whatever the working directory. Inline JSON (POSTURE_CONFIG) has no directory.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { resolveSecret } from '../../src/config/secrets.js';

const dir = mkdtempSync(join(tmpdir(), 'config-paths-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BASE = 'https://acme.example.com/public-api/v1';

describe('relative paths in a config file', () => {
  it('resolve against the directory of the file, top level and per portal', async () => {
    const etc = join(dir, 'etc');
    mkdirSync(join(etc, 'keys'), { recursive: true });
    writeFileSync(join(etc, 'eu.key'), 'k-eu-0123456789\n');
    writeFileSync(join(etc, 'keys', 'us.key'), 'k-us-0123456789\n');
    const file = join(etc, 'posture.yaml');
    writeFileSync(
      file,
      [
        'state_dir: ./state',
        'web_config_file: web.yml',
        'portals:',
        '  - portal: eu',
        `    base_url: ${BASE}`,
        '    api_key_file: ./eu.key',
        '  - portal: us',
        '    base_url: https://us.example.com/public-api/v1',
        '    api_key_file: keys/../keys/us.key',
        '  - portal: abs',
        '    base_url: https://abs.example.com/public-api/v1',
        '    api_key_file: /run/secrets/abs',
        '',
      ].join('\n'),
    );
    // Given relative to the working directory (this test's, not the file's), as a user types it.
    const c = loadConfig({ env: { POSTURE_CONFIG_FILE: join(etc, '..', 'etc', 'posture.yaml') } });
    expect(c.portals.map((p) => p.key)).toEqual([
      { kind: 'file', path: join(etc, 'eu.key'), setting: `config file ${join(etc, '..', 'etc', 'posture.yaml')}: portals[0].api_key_file` },
      { kind: 'file', path: join(etc, 'keys', 'us.key'), setting: `config file ${join(etc, '..', 'etc', 'posture.yaml')}: portals[1].api_key_file` },
      { kind: 'file', path: '/run/secrets/abs', setting: `config file ${join(etc, '..', 'etc', 'posture.yaml')}: portals[2].api_key_file` },
    ]);
    expect(await resolveSecret(c.portals[0]!.key)).toBe('k-eu-0123456789');
    expect(await resolveSecret(c.portals[1]!.key)).toBe('k-us-0123456789');
    expect(c.stateDir).toBe(join(etc, 'state'));
    expect(c.webConfigFile).toBe(join(etc, 'web.yml'));
  });

  it('a top-level api_key_file too', () => {
    const file = join(dir, 'single', 'posture.yaml');
    mkdirSync(join(dir, 'single'), { recursive: true });
    writeFileSync(file, `base_url: ${BASE}\napi_key_file: secret.key\n`);
    expect(loadConfig({ env: { POSTURE_CONFIG_FILE: file } }).portals[0]!.key).toMatchObject({ kind: 'file', path: join(dir, 'single', 'secret.key') });
  });

  it('flags and variables stay relative to the working directory', () => {
    const file = join(dir, 'single', 'posture.yaml');
    const c = loadConfig({ env: { POSTURE_CONFIG_FILE: file, POSTURE_STATE_DIR: 'here' }, flags: { web_config_file: 'web.yml' } });
    expect(c.stateDir).toBe(resolve('here'));
    expect(c.webConfigFile).toBe('web.yml');
  });

  it('inline JSON (POSTURE_CONFIG) has no directory: its paths are as given', () => {
    const c = loadConfig({ env: { POSTURE_CONFIG: JSON.stringify({ base_url: BASE, api_key_file: './k.key' }) } });
    expect(c.portals[0]!.key).toMatchObject({ kind: 'file', path: './k.key' });
  });
});
