/**
 * A key file that cannot be read is named where it was set: a portal's `api_key_file` in the
 * config file (which portal, which file), a flag, or POSTURE_API_KEY_FILE, never a variable the
 * user did not set.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { resolveSecret } from '../../src/config/secrets.js';
import { ConfigError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'key-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BASE = 'https://acme.example.com/public-api/v1';

async function refusal(key: Parameters<typeof resolveSecret>[0]): Promise<ConfigError> {
  const err = await resolveSecret(key).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigError);
  return err as ConfigError;
}

describe('a key file that cannot be read', () => {
  it("is named as the portal's api_key_file in the config file, not POSTURE_API_KEY_FILE", async () => {
    const present = join(dir, 'acme.key');
    writeFileSync(present, 'acme-key-0123456789\n');
    const missing = join(dir, 'keys', 'globex');
    const file = join(dir, 'fleet.yaml');
    writeFileSync(file, `portals:\n  - portal: acme\n    base_url: ${BASE}\n    api_key_file: ${present}\n  - portal: globex\n    base_url: https://globex.example.com/public-api/v1\n    api_key_file: ${missing}\n`);
    const config = loadConfig({ env: { POSTURE_CONFIG_FILE: file } });
    expect(await resolveSecret(config.portals[0]!.key)).toBe('acme-key-0123456789');
    const err = await refusal(config.portals[1]!.key);
    expect(err.setting).toBe(`config file ${file}: portals[1].api_key_file`);
    expect(err.message).toBe(`cannot read the API key from config file ${file}: portals[1].api_key_file (${missing}) (ENOENT): check it exists and the process may read it.`);
    expect(err.message).not.toContain('POSTURE_API_KEY_FILE');
  });

  it('is named as the flag when a flag gave it, and as the variable when the environment did', async () => {
    const missing = join(dir, 'nowhere.key');
    const byFlag = loadConfig({ env: { POSTURE_BASE_URL: BASE }, flags: { api_key_file: missing } });
    expect((await refusal(byFlag.portals[0]!.key)).message).toBe(`cannot read the API key from --api-key-file (${missing}) (ENOENT): check it exists and the process may read it.`);
    const byEnv = loadConfig({ env: { POSTURE_BASE_URL: BASE, POSTURE_API_KEY_FILE: missing } });
    const err = await refusal(byEnv.portals[0]!.key);
    expect(err.setting).toBe('POSTURE_API_KEY_FILE');
    expect(err.message).toBe(`cannot read the API key from POSTURE_API_KEY_FILE (${missing}) (ENOENT): check it exists and the process may read it.`);
  });

  it('given at the top of a one-portal config, is named there', async () => {
    const missing = join(dir, 'shared.key');
    const config = loadConfig({ env: { POSTURE_CONFIG: JSON.stringify({ base_url: BASE, api_key_file: missing }) } });
    expect((await refusal(config.portals[0]!.key)).setting).toBe('POSTURE_CONFIG: api_key_file');
  });
});
