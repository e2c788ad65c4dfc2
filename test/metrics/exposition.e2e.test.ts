// The built CLI's `once`, with the resolved-alerts pass, in both exposition formats: promtool check
// metrics accepts each, and each holds every family of the pass and the interval gauge, named as
// gauges (no `_sum`, `_count` or `quantile`), each family once.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { portalForAll } from '../support/closing.js';
import { runBuiltCli, withOwnState } from '../support/cli.js';
import { CATALOGUE } from '../../src/collect/catalogue.js';

const KEY = 'sim-exposition-key-0123456789abcdef';
const sim = portalForAll({ keys: [{ key: KEY }], rateLimit: false, resolvedHistoryDays: 35 });

/** The families a `once` without tags, pushes or shards has: every source's, the pass's and the interval gauge among the exporter's. */
const PASS_FAMILIES = CATALOGUE.filter((m) => m.origin === 'resolved').map((m) => m.name);

describe.each(['prometheus', 'openmetrics'] as const)('once --format %s', (format) => {
  it('passes promtool check metrics, with every family of the resolved-alerts pass, each a gauge named once', async () => {
    // Its own state directory: a first run, so it makes the pass.
    const once = await runBuiltCli(['once', '--format', format], withOwnState({ POSTURE_BASE_URL: sim().baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'p' }));
    expect(once.code, once.stderr).toBe(0);
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: once.stdout, encoding: 'utf8' });
    expect(lint.stdout + lint.stderr).toBe('');
    expect(lint.status).toBe(0);
    const types = [...once.stdout.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(new Set(types.map(([name]) => name)).size).toBe(types.length);
    expect(types.filter(([, type]) => type !== 'gauge')).toEqual([]);
    expect(types.map(([name]) => name)).toEqual(expect.arrayContaining([...PASS_FAMILIES, 'posture_collection_interval_seconds']));
    expect(once.stdout).not.toMatch(/_(sum|count|bucket)[{ ]|[{,](quantile|le)=/);
    expect(once.stdout).toMatch(/^posture_alerts_time_to_resolve_seconds\{portal="p",severity="red",window="30d",percentile="90"\} \d/m);
  }, 60_000);
});
