/**
 * Backfill end to end with real tools: the OpenMetrics file through promtool into Prometheus,
 * remote write into VictoriaMetrics (takes old samples as is) and into Prometheus (refuses them
 * without an out-of-order window, takes them with one). Every value is read back at its day's
 * 23:59:59 UTC and compared with the simulated portal's archive.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runMain } from '../support/cli.js';
import { queryPrometheusApi, startPrometheus, startVictoriaMetrics, type Peer } from '../support/peers.js';
import { archive, busiestMinute, daysBefore, endOfDaySeconds, expectedSeries } from './support.js';

// Real time (receivers judge sample age against their own clock), moved by the fake clock only while waiting for budget.
const NOW = Date.now();
const DAYS = [1, 2, 3, 4, 5].map((n) => daysBefore(NOW, n));
const TAG = 'servers';
const SEED = 11;

let dir: string;
let twin: Simulator;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'backfill-e2e-'));
  twin = await startSimulator({ clock: new FakeClock(NOW), rateLimit: false, seed: SEED, devices: 150 });
});
afterAll(async () => {
  await twin?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `backfill` against a fresh rate-limited simulated portal; returns the exit code, stderr and the portal's request log. */
async function backfill(argv: string[], env: Record<string, string> = {}) {
  const clock = new FakeClock(NOW, { autoAdvance: true });
  const sim = await startSimulator({ clock, seed: SEED, devices: 150 });
  try {
    const { code, stderr } = await runMain(['backfill', ...argv], {
      env: { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: sim.apiKey, POSTURE_PORTAL: 'acme', POSTURE_VITALS_TAGS: TAG, POSTURE_REQUESTS_PER_MINUTE: '4', ...env },
      clock,
    });
    return { code, stderr, requests: [...sim.requests] };
  } finally {
    await sim.close();
  }
}

/** Every expected series per day (whole portal and the tag), keyed `name{labels}` without the timestamp. */
async function expectedByDay(): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>();
  for (const day of DAYS) {
    const m = new Map<string, number>();
    for (const tag of [undefined, TAG]) for (const [k, v] of expectedSeries('acme', day, tag, await archive(twin, day, tag))) m.set(k.slice(0, k.lastIndexOf(' ')), v);
    out.set(day, m);
  }
  return out;
}

/** `name{labels}` in the order the catalogue writes them (portal, the family's labels, tag). */
function seriesKey(metric: Record<string, string>): string {
  const { __name__: name, portal, tag, ...rest } = metric;
  const order = ['integration', 'name', 'vitals_enabled', 'stage'];
  const labels = [`portal="${portal}"`, ...order.filter((l) => rest[l] !== undefined).map((l) => `${l}="${rest[l]}"`), ...(tag ? [`tag="${tag}"`] : [])];
  return `${name}{${labels.join(',')}}`;
}

/** What a Prometheus-API server answers at `day`'s 23:59:59 for every Vitals series, and each sample's own timestamp. */
async function readBack(url: string, day: string): Promise<{ values: Map<string, number>; stamps: Set<number> }> {
  const at = endOfDaySeconds(day);
  const values = new Map<string, number>();
  for (const r of await queryPrometheusApi(url, '{__name__=~"posture_vitals_.+"}', at)) values.set(seriesKey(r.metric), Number(r.value[1]));
  const stamps = new Set<number>();
  // timestamp() drops the name, so one family at a time keeps the label sets apart.
  for (const name of new Set([...values.keys()].map((k) => k.slice(0, k.indexOf('{'))))) {
    for (const r of await queryPrometheusApi(url, `timestamp(${name})`, at)) stamps.add(Number(r.value[1]));
  }
  return { values, stamps };
}

describe('backfill → OpenMetrics → promtool tsdb create-blocks-from openmetrics → Prometheus', () => {
  let prom: Peer | undefined;
  afterAll(() => prom?.stop());

  it('gives, at each day\'s 23:59:59 UTC, exactly the archive\'s values, whole and per tag', async () => {
    const file = join(dir, 'vitals.om');
    const r = await backfill(['--days', '5', '--output', file]);
    expect(r.stderr).toContain('5 day(s) written');
    expect(r.code).toBe(0);
    expect(r.requests).toHaveLength(10);
    expect(busiestMinute(r.requests)).toBeLessThanOrEqual(4);
    expect(readFileSync(file, 'utf8').endsWith('# EOF\n')).toBe(true);

    const blocks = join(dir, 'blocks');
    execFileSync('promtool', ['tsdb', 'create-blocks-from', 'openmetrics', file, blocks], { stdio: 'pipe' });
    prom = await startPrometheus({ config: 'global:\n  scrape_interval: 1h\n', storagePath: blocks });
    const want = await expectedByDay();
    for (const day of DAYS) {
      const got = await readBack(prom.url, day);
      expect(got.values.size, day).toBeGreaterThan(2 * 8);
      expect(got.values, day).toEqual(want.get(day));
      expect([...got.stamps]).toEqual([endOfDaySeconds(day)]);
    }
  });
});

describe('backfill --push remote_write', () => {
  it('lands every day in VictoriaMetrics with exact counts, ratios to its 12 digits and 23:59:59 UTC timestamps', async () => {
    const vm = await startVictoriaMetrics();
    try {
      const r = await backfill(['--days', '5', '--push', 'remote_write', '--state', join(dir, 'vm.state.json')], { POSTURE_REMOTE_WRITE_URL: `${vm.url}/api/v1/write` });
      expect(r.stderr).toContain('5 day(s) written');
      expect(r.code).toBe(0);
      expect(busiestMinute(r.requests)).toBeLessThanOrEqual(4);

      const want = new Map<string, number>();
      for (const [day, m] of await expectedByDay()) for (const [k, v] of m) want.set(`${k} ${endOfDaySeconds(day) * 1000}`, v);
      let got = new Map<string, number>();
      for (let i = 0; i < 50 && got.size < want.size; i++) {
        await fetch(`${vm.url}/internal/force_flush`).then((res) => res.arrayBuffer());
        const res = await fetch(`${vm.url}/api/v1/export?${new URLSearchParams({ 'match[]': '{__name__=~"posture_vitals_.+"}', start: String(endOfDaySeconds(DAYS[4]!) - 60) }).toString()}`);
        got = new Map();
        for (const line of (await res.text()).split('\n').filter(Boolean)) {
          const row = JSON.parse(line) as { metric: Record<string, string>; values: number[]; timestamps: number[] };
          row.values.forEach((v, j) => got.set(`${seriesKey(row.metric)} ${row.timestamps[j]}`, v));
        }
        if (got.size < want.size) await new Promise((res) => setTimeout(res, 100));
      }
      expect(want.size).toBeGreaterThan(5 * 2 * 8);
      // VictoriaMetrics keeps a float as a decimal of 12 significant digits (truncated): counts come back exact, ratios within 1e-11.
      expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
      const ratios = [...got].filter(([k]) => k.startsWith('posture_vitals_health_ratio'));
      const counts = [...got].filter(([k]) => !k.startsWith('posture_vitals_health_ratio'));
      expect(ratios.length).toBeGreaterThan(0);
      expect(counts.length).toBeGreaterThan(0);
      for (const [k, v] of ratios) expect(Math.abs(v - want.get(k)!), k).toBeLessThan(1e-11);
      for (const [k, v] of counts) expect(v, k).toBe(want.get(k));
    } finally {
      await vm.stop();
    }
  });

  it('reports the days a Prometheus without an out-of-order window refuses, and lands them all with one', async () => {
    const strict = await startPrometheus({ config: 'global:\n  scrape_interval: 1h\n', extraArgs: ['--web.enable-remote-write-receiver'] });
    let failedDays: string[];
    try {
      const r = await backfill(['--days', '3', '--push', 'remote_write', '--state', join(dir, 'strict.state.json')], { POSTURE_REMOTE_WRITE_URL: `${strict.url}/api/v1/write` });
      expect(r.code).toBe(1);
      failedDays = [...r.stderr.matchAll(/not written: acme (\d{8}): the remote-write receiver did not take this day: .*HTTP 400.*out of bounds/g)].map((m) => m[1]!);
      expect(failedDays).toEqual([DAYS[1], DAYS[2]]);
      expect(r.stderr).toContain('1 day(s) written');
    } finally {
      await strict.stop();
    }

    const ooo = await startPrometheus({ config: 'global:\n  scrape_interval: 1h\nstorage:\n  tsdb:\n    out_of_order_time_window: 30d\n', extraArgs: ['--web.enable-remote-write-receiver'] });
    try {
      const r = await backfill(['--days', '5', '--push', 'remote_write', '--state', join(dir, 'ooo.state.json')], { POSTURE_REMOTE_WRITE_URL: `${ooo.url}/api/v1/write` });
      expect(r.stderr).toContain('5 day(s) written');
      expect(r.code).toBe(0);
      const want = await expectedByDay();
      for (const day of DAYS) {
        const got = await readBack(ooo.url, day);
        expect(got.values, day).toEqual(want.get(day));
        expect([...got.stamps]).toEqual([endOfDaySeconds(day)]);
      }
    } finally {
      await ooo.stop();
    }
  });
});
