/**
 * `check-config`'s advice names each setting as the user gave it (a config file's key, a flag, a
 * variable), a config file's keys one per line, and says which keys the file does not hold yet.
 * Figures by hand from docs/budget.md: a portal without tags spends 1 (Vitals) + 1 (/alerts) + 2
 * (devices) = 4 requests per round of its sources; a share of R per minute allows 60 × R per hour.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'advice-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ACME = 'base_url: https://acme.example.com/public-api/v1\napi_key: k-advice-0123456789\n';

function write(name: string, yaml: string): string {
  const file = join(dir, name);
  writeFileSync(file, yaml);
  return file;
}

/** `s` as a regular expression matching itself. */
const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * The advice lines after the first: each a way out on a line of its own, naming keys of `file`
 * (the change itself is the plan's to choose, src/schedule/plan.ts; its test checks the values).
 */
function ways(stderr: string, file: string): string[] {
  const lines = stderr.trimEnd().split('\n').slice(1);
  for (const l of lines) expect(l).toMatch(new RegExp(`^ {4}(set|or set|or raise) [a-z_\\[\\]0-9.]+(: \\d+| to \\d+)?( \\(a new key\\))? in config file ${literal(file)}$`));
  return lines;
}

describe('a plan from a config file that does not fit', () => {
  // Share 2: 120 per hour. Every source every 100 s: 4 × 36 = 144, 1 of the resolved-alerts pass (every 3600 s), 3 of the
  // access settings (every 3600 s) and 0.04 of the directory (every 86400 s): 148.04, 149.
  // Every 120 s: 4 × 30 + 4.04 = 124.04, which does not; 130 s does by the hour, 140 s minute by minute (each window counts from the end of a request's second in flight). Or a share of 3: 180 per hour, and the 4 live
  // requests of every 100 s fit 3 per 61 s beside the slow sources' first ones.
  it('names the keys of the file, one per line, and requests_per_minute where the file sets it', async () => {
    const file = write('posture.yaml', `${ACME}requests_per_minute: 2\ninterval_seconds: 100\n`);
    const r = await runMain(['check-config', '--config', file], { env: {} });
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe('config error: the intervals need 149 requests per hour but the share allows 120 (2/min); any one of these fits:');
    const lines = ways(r.stderr, file);
    // 140 s: 102.9 + 4.04 per hour.
    expect(lines.filter((l) => / interval_seconds: 140 in /.test(l))).toHaveLength(1);
    expect(lines.at(-1)).toBe(`    or raise requests_per_minute to 3 in config file ${file}`);
    expect(r.stderr).not.toContain('POSTURE_');
    // Each source's own interval is a key the file does not hold yet: said so, on a line of its own.
    const at = r.stdout.split('\n').indexOf('  smallest intervals that fit:');
    expect(at).toBeGreaterThan(0);
    expect(r.stdout.split('\n').slice(at + 1, at + 4).map((l) => l.replace(/: \d+ /, ': N '))).toEqual(
      ['vitals', 'alerts', 'devices'].map((s) => `    ${s}_interval_seconds: N (a new key) in config file ${file}`),
    );
  });

  it('names the share the file does not set as a key to add, not the variable', async () => {
    // Share 5: 300 per hour. Every 40 s: 4 × 90 = 360, and 4.04 of the slow sources: 365; every 50 s: 292, but the live
    // sources then send 4.9 of the 5 requests each 61 s holds, and what a slow source's request pushes back makes a run late
    // minute by minute: 60 s. Or a share of 7: the 6 live requests of a minute fit 7 per 61 s, the slow sources in the gaps.
    const file = write('unset.yaml', `${ACME}interval_seconds: 40\n`);
    const r = await runMain(['check-config', '--config', file], { env: {} });
    expect(r.stderr.split('\n')[0]).toBe('config error: the intervals need 365 requests per hour but the share allows 300 (5/min); any one of these fits:');
    const lines = ways(r.stderr, file);
    expect(lines.filter((l) => / interval_seconds: 60 in /.test(l))).toHaveLength(1);
    expect(lines.at(-1)).toBe(`    or raise requests_per_minute to 7 (a new key) in config file ${file}`);
  });

  it("in a `portals` list, names the top-level key that set the portal's share, and the entry's own keys", async () => {
    // Portal b: Vitals every 20 s is 180 per hour, /alerts and devices every 300 s 12 + 24, the resolved-alerts pass 1, the
    // access settings 3, the directory 0.04: 221 of 120. Or the share the top level sets, raised to 6: a minute holds 3
    // Vitals runs, the 2 device totals and 1 /alerts page, 6 per 61 s, and the slow sources' first requests take the gaps.
    const file = write('fleet.yaml', `requests_per_minute: 2\nportals:\n  - portal: a\n    ${ACME.replace('\n', '\n    ')}  - portal: b\n    base_url: https://b.example.com/public-api/v1\n    api_key: k-advice-b-0123456789\n    vitals_interval_seconds: 20\n`);
    const r = await runMain(['check-config', '--config', file], { env: {} });
    expect(r.stderr.split('\n')[0]).toBe('config error: portal b: the intervals need 221 requests per hour but the share allows 120 (2/min); any one of these fits:');
    const lines = ways(r.stderr, file);
    expect(lines[0]).toMatch(new RegExp(`^ {4}set portals\\[1\\]\\.vitals_interval_seconds: \\d+ in config file ${literal(file)}$`));
    expect(lines).toEqual([lines[0], `    or raise requests_per_minute to 6 in config file ${file}`]);
  });
});

describe('a plan from flags and variables', () => {
  it('names the flag that set the share, on the one line as before', async () => {
    const r = await runMain(['check-config', '--requests-per-minute', '2', '--interval-seconds', '100'], { env: { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-advice-0123456789' } });
    // Or a share of 3, as above.
    expect(r.stderr).toMatch(/^config error: the intervals need 149 requests per hour but the share allows 120 \(2\/min\): set [^\n]*--interval-seconds=140[^\n]*, or raise --requests-per-minute to 3\.\n$/);
  });
});
