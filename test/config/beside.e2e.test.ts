/**
 * A config file and its key file side by side pass `check-config` run from anywhere (here `/`): the
 * key file's relative path is read beside the config file, not in the working directory.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILT_CLI, runProcess } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'beside-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('check-config from /', () => {
  it('reads `api_key_file: ./eu.key` beside the config file', async () => {
    writeFileSync(join(dir, 'eu.key'), 'k-beside-0123456789\n');
    const file = join(dir, 'posture.yaml');
    writeFileSync(file, 'portals:\n  - portal: eu\n    base_url: https://eu.example.com/public-api/v1\n    api_key_file: ./eu.key\n');
    const r = await runProcess(process.execPath, [BUILT_CLI, 'check-config', '--config', file], { env: { PATH: process.env.PATH }, cwd: '/' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^configuration is valid: 1 portal\(s\)\nportal eu \(https:\/\/eu\.example\.com\/public-api\/v1, key from file\)/);
    expect(r.stdout).not.toContain('k-beside-0123456789');
  });

  it('says which file it could not read, at the path beside the config file', async () => {
    const file = join(dir, 'missing.yaml');
    writeFileSync(file, 'base_url: https://eu.example.com/public-api/v1\napi_key_file: ./absent.key\n');
    const r = await runProcess(process.execPath, [BUILT_CLI, 'check-config', '--config', file], { env: { PATH: process.env.PATH }, cwd: '/' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`(${join(dir, 'absent.key')}) (ENOENT)`);
  });
});
