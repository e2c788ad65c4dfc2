/**
 * Every misspelling gets the nearest setting, wherever it was made: a config file's keys (top level
 * and inside a `portals` entry) as flags and variables get it. Each case runs `check-config` on a
 * file written as a user would and asserts the whole line it prints.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'suggestions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PORTAL = 'base_url: https://acme.example.com/public-api/v1\napi_key: k-suggest-0123456789\n';
let n = 0;

/** `check-config --config <file holding yaml>`: its exit code and stderr. */
async function checkConfig(yaml: string, env: Record<string, string> = {}): Promise<{ code: number; stderr: string; file: string }> {
  const file = join(dir, `posture-${n++}.yaml`);
  writeFileSync(file, yaml);
  const r = await runMain(['check-config', '--config', file], { env });
  return { code: r.code, stderr: r.stderr, file };
}

describe('a misspelt key at the top of a config file', () => {
  // Each line as typed, and the setting its key means.
  it.each([
    ['intervl_seconds: 120', 'interval_seconds'],
    ['vital_tags: [laptops]', 'vitals_tags'],
    ['alert_sla: {red: 12h}', 'alert_slas'],
    ['statedir: ./state', 'state_dir'],
    ['objective: []', 'objectives'],
  ])('%s: did you mean the setting?', async (line, meant) => {
    const typed = line.slice(0, line.indexOf(':'));
    const r = await checkConfig(`${PORTAL}${line}\n`);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`config error: config file ${r.file}: unknown setting \`${typed}\`: did you mean \`${meant}\`? Rename it, or remove it.\n`);
  });

  it("a variable's name as a key: the key it means, and how keys are spelt", async () => {
    const r = await checkConfig(`${PORTAL}POSTURE_PAGE_SIZE: 100\n`);
    expect(r.stderr).toBe(
      `config error: config file ${r.file}: unknown setting \`POSTURE_PAGE_SIZE\`: did you mean \`page_size\` (a config file names a setting in lower case with underscores, without POSTURE_)? Rename it, or remove it.\n`,
    );
  });

  it('the config file named inside itself: where it goes instead', async () => {
    const r = await checkConfig(`${PORTAL}config_file: other.yaml\n`);
    expect(r.stderr).toBe(`config error: config file ${r.file}: \`config_file\` says where the settings are, so it is not read from a config file: remove it (set POSTURE_CONFIG_FILE or --config instead).\n`);
  });

  it('a key far from every setting: no guess', async () => {
    const r = await checkConfig(`${PORTAL}colour_scheme: dark\n`);
    expect(r.stderr).toBe(`config error: config file ${r.file}: unknown setting \`colour_scheme\`: remove it or use one of the documented keys (README, Configuration).\n`);
  });
});

describe('inside a `portals` entry', () => {
  const entry = '  - base_url: https://acme.example.com/public-api/v1\n    api_key: k-suggest-0123456789\n';

  it('a misspelt per-portal key: the per-portal setting', async () => {
    const r = await checkConfig(`portals:\n${entry}    vital_tags: [laptops]\n`);
    expect(r.stderr).toBe(`config error: config file ${r.file}: portals[0]: unknown setting \`vital_tags\`: did you mean \`vitals_tags\`? Rename it, or remove it.\n`);
  });

  it("interval_seconds per portal: top-level only, and the portal's own intervals instead", async () => {
    const r = await checkConfig(`portals:\n${entry}    interval_seconds: 60\n`);
    expect(r.stderr).toBe(
      `config error: config file ${r.file}: portals[0]: \`interval_seconds\` is top-level only: move it out of \`portals\`, where it applies to every portal, or give this portal its own alerts_interval_seconds, vitals_interval_seconds and devices_interval_seconds.\n`,
    );
  });

  it('a misspelt top-level key: the setting, and that it is top-level only', async () => {
    const r = await checkConfig(`portals:\n${entry}    statedir: ./state\n`);
    expect(r.stderr).toBe(`config error: config file ${r.file}: portals[0]: unknown setting \`statedir\`: did you mean \`state_dir\`? It is top-level only: move it out of \`portals\`, where it applies to every portal.\n`);
  });

  it("a missing key names that portal's api_key keys, not the variables", async () => {
    const r = await checkConfig(`portals:\n${entry}  - portal: globex\n    base_url: https://globex.example.com/public-api/v1\n`);
    expect(r.stderr).toBe(`config error: config file ${r.file}: portals[1]: no API key: set api_key, api_key_file, api_key_ssm_parameter or api_key_secret_id.\n`);
  });

  it("a missing address names that portal's keys", async () => {
    const r = await checkConfig(`portals:\n${entry}  - portal: globex\n    api_key: k-globex-0123456789\n`);
    expect(r.stderr).toBe(`config error: config file ${r.file}: portals[1]: no portal is configured: set base_url, or cloud_id and api_host.\n`);
  });
});

describe('`portal:` holding portals', () => {
  it('a list: points to `portals:`, with no line about a missing portal', async () => {
    const r = await checkConfig(`portal:\n  - base_url: https://acme.example.com/public-api/v1\n    api_key: k-suggest-0123456789\n`);
    expect(r.stderr).toBe(`config error: config file ${r.file}: \`portal\` holds a list: a list of portals goes under \`portals:\` (\`portal\` is the label of one portal, a string).\n`);
  });

  it("a mapping: one portal's settings go at the top level", async () => {
    const r = await checkConfig(`portal:\n  base_url: https://acme.example.com/public-api/v1\n  api_key: k-suggest-0123456789\n`);
    expect(r.stderr).toBe(
      `config error: config file ${r.file}: \`portal\` holds a mapping: give one portal's settings at the top level, or a list of portals under \`portals:\` (\`portal\` is the label of one portal, a string).\n`,
    );
  });
});

describe('flags and variables', () => {
  it('--state-directory: did you mean --state-dir?', async () => {
    const r = await runMain(['check-config', '--state-directory', '/tmp/x'], { env: {} });
    expect(r).toEqual({ code: 2, stdout: '', stderr: 'usage error: unknown flag --state-directory: did you mean --state-dir?\n' });
  });

  it('POSTURE_SHARDS: did you mean POSTURE_TOTAL_SHARDS (the count), or POSTURE_SHARD a letter away?', async () => {
    const file = join(dir, 'shards.yaml');
    writeFileSync(file, PORTAL);
    const r = await runMain(['check-config', '--config', file], { env: { POSTURE_SHARDS: '3' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('config error: POSTURE_SHARDS is not a setting: did you mean POSTURE_TOTAL_SHARDS or POSTURE_SHARD? Rename it, or unset it.\n');
  });
});
