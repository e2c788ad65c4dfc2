/**
 * What a push sent, and what a receiver holds of it, as maps of series (`name{labels}`) to values,
 * for the end-to-end tests of Prometheus 3 and the OpenTelemetry Collector (test/sinks/*3*.e2e.test.ts).
 * What was sent comes from the exporter's own output of the same run (`once --format json`), or,
 * for the Lambda bundle, from a second sink: a loopback remote-write receiver whose requests are
 * decoded here (test/sinks/decode.ts, written from the .proto files), never from the receiver under test.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import snappy from 'snappyjs';
import { expect } from 'vitest';
import { CATALOGUE } from '../../src/collect/catalogue.js';
import type { VitalsRecord } from '../../src/simulator/records.js';
import { decodeWriteRequest } from '../sinks/decode.js';
import { seriesKey } from '../sinks/fixtures.js';
import type { Receiver } from '../sinks/receiver.js';
import { BUILT_CLI, runProcess } from './cli.js';
import { queryPrometheusApi } from './peers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The Lambda bundle `npm run build` writes. */
const LAMBDA_BUNDLE = join(ROOT, 'dist/lambda/index.mjs');

/** Series → value. */
export type SeriesValues = Map<string, number>;

/** The shard's own families: no `portal`; a push labels them `shard`. */
const SHARD_FAMILIES = CATALOGUE.filter((m) => 'noPortal' in m && m.noPortal).map((m) => m.name);
/** The families that report on the previous push: `once` prints this run's outcome, which its push could not carry; a Lambda's first push has none. */
export const PUSH_OUTCOME_FAMILIES: ReadonlySet<string> = new Set(['posture_push_success', 'posture_push_duration_seconds']);

/** The sample name of a series key. */
function nameOf(key: string): string {
  return key.slice(0, key.indexOf('{'));
}

/**
 * The settings of a run collecting `portal` from the simulated portal at `baseUrl` with `key`,
 * sinks aside. A warm Lambda's second invocation collects again at once, within the first one's
 * window: the whole share, and one page of open alerts and one of resolved ones (5 requests, then 4).
 */
export function runEnv(baseUrl: string, key: string, portal: string): Record<string, string> {
  return { POSTURE_BASE_URL: baseUrl, POSTURE_API_KEY: key, POSTURE_PORTAL: portal, POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_PAGE_SIZE: '5000' };
}

/** One `once` run: how it ended, what it printed (`--format json`) and its log. */
export interface OnceRun {
  code: number | null;
  stderr: string;
  /** Unix ms of the collection (the JSON's `collectedAt`): remote-write samples carry it. */
  collectedAt: number;
  /** What the run pushed: its printed samples without this run's push outcome, with the shard's own (0 of 1, labelled `shard`). */
  pushed: SeriesValues;
}

/** Runs the built CLI's `once --format json` with exactly `env` (PATH added) and reads what it pushed. */
export async function oncePush(env: Record<string, string>): Promise<OnceRun> {
  const { code, stdout, stderr } = await runProcess(process.execPath, [BUILT_CLI, 'once', '--format', 'json'], { env: { PATH: process.env.PATH, ...env } });
  if (code !== 0) throw new Error(`once exited ${code}:\n${stderr.slice(-3000)}`);
  const out = JSON.parse(stdout) as { collectedAt: string; samples: Array<{ name: string; labels: Record<string, string>; value: number }> };
  const pushed: SeriesValues = new Map();
  for (const s of out.samples) if (!PUSH_OUTCOME_FAMILIES.has(s.name)) pushed.set(seriesKey(s.name, s.labels), s.value);
  // Unsharded: shard 0 of 1 (docs/sharding.md).
  for (const name of SHARD_FAMILIES) pushed.set(seriesKey(name, { shard: '0' }), name === 'posture_exporter_total_shards' ? 1 : 0);
  return { code, stderr, collectedAt: Date.parse(out.collectedAt), pushed };
}

/**
 * Invokes the handler of the built bundle `invocations` times in one fresh Node process (a warm
 * container: from the second on, a push carries the previous one's outcome), as the Lambda runtime
 * would, with a scheduled event and 60 s to run; prints each outcome as `INVOCATION_RESULT <ms> <json>`,
 * <ms> the wall time the invocation started.
 */
const WARM_RUNNER = `
const [bundle, n] = process.argv.slice(1);
const { handler } = await import(bundle);
for (let i = 0; i < Number(n); i++) {
  const started = Date.now();
  const context = { functionName: 'posture-exporter-e2e', awsRequestId: 'e2e-' + i, getRemainingTimeInMillis: () => Math.max(0, started + 60000 - Date.now()) };
  const event = { version: '0', id: 'e2e-' + i, 'detail-type': 'Scheduled Event', source: 'aws.events', time: new Date(started).toISOString(), detail: {} };
  let result;
  try { result = { ok: true, summary: await handler(event, context) }; } catch (err) { result = { ok: false, error: String(err) }; }
  process.stdout.write('INVOCATION_RESULT ' + started + ' ' + JSON.stringify(result) + '\\n');
}
`;

/**
 * Invokes the built Lambda bundle (`dist/lambda/index.mjs`) `invocations` times in a fresh Node
 * process whose whole environment is `env` (PATH added); throws unless each invocation's push
 * succeeded. Returns the wall time each invocation started.
 */
export async function invokeLambda(env: Record<string, string>, invocations = 1): Promise<number[]> {
  const { code, stdout, stderr } = await runProcess(process.execPath, ['--input-type=module', '-e', WARM_RUNNER, pathToFileURL(LAMBDA_BUNDLE).href, String(invocations)], {
    env: { PATH: process.env.PATH, ...env },
  });
  const results = stdout.split('\n').filter((l) => l.startsWith('INVOCATION_RESULT '));
  if (code !== 0 || results.length !== invocations) throw new Error(`the Lambda bundle failed (exit ${code}):\n${stdout.slice(-3000)}\n${stderr.slice(-2000)}`);
  return results.map((line) => {
    const [, started, json] = /^INVOCATION_RESULT (\d+) (.*)$/.exec(line)!;
    const result = JSON.parse(json!) as { ok: boolean; summary?: { sinks: Array<{ sink: string; ok: boolean }> } };
    if (!result.ok || result.summary!.sinks.some((s) => !s.ok)) throw new Error(`the Lambda bundle's push failed: ${line}`);
    return Number(started);
  });
}

/** Every series the loopback remote-write receiver got (decoded) at or after `since` (Unix ms), with its one sample's value, and its timestamp. */
export function remoteWritten(receiver: Pick<Receiver, 'requests'>, since = 0): { series: SeriesValues; timestamps: Map<string, number> } {
  const series: SeriesValues = new Map();
  const timestamps = new Map<string, number>();
  for (const req of receiver.requests.filter((r) => r.at >= since)) {
    for (const ts of decodeWriteRequest(snappy.uncompress(new Uint8Array(req.body))).timeseries) {
      const labels = Object.fromEntries(ts.labels);
      const { __name__: name, ...rest } = labels;
      for (const s of ts.samples) {
        const key = seriesKey(name!, rest);
        series.set(key, s.value);
        timestamps.set(key, s.timestamp);
      }
    }
  }
  return { series, timestamps };
}

/** Labels a receiver adds that a push does not carry: OTLP's `job` and `instance` (from the resource's service.name and service.instance.id). */
const RECEIVER_LABELS = ['job', 'instance'];

/**
 * What Prometheus holds at `time` (default now) of the series `selector` picks (e.g. `{portal="x"}`),
 * as series → value, without the labels the receiver adds (`job`, `instance`) and those in `drop`.
 */
export async function heldBy(prometheusUrl: string, selector: string, opts: { time?: number; drop?: readonly string[] } = {}): Promise<SeriesValues> {
  const drop = new Set([...RECEIVER_LABELS, ...(opts.drop ?? [])]);
  const out: SeriesValues = new Map();
  for (const r of await queryPrometheusApi(prometheusUrl, selector, opts.time)) {
    const { __name__: name, ...labels } = r.metric;
    if (name === 'target_info') continue;
    const kept = Object.fromEntries(Object.entries(labels).filter(([k]) => !drop.has(k)));
    const key = seriesKey(name!, kept);
    if (out.has(key)) throw new Error(`${key} twice in ${selector}: the labels in ${[...drop].join(', ')} told them apart`);
    out.set(key, Number(r.value[1]));
  }
  return out;
}

/** Polls `read` until it holds at least `size` series (a Collector forwards on its own schedule), at most `ms`; returns the last reading. */
export async function untilHolds(read: () => Promise<SeriesValues>, size: number, ms = 20_000): Promise<SeriesValues> {
  const started = Date.now();
  for (;;) {
    const got = await read();
    if (got.size >= size || Date.now() - started > ms) return got;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The selector of one run's series: its portal's, and its shard's own (OTLP labels them with the run's `job`). */
export function runSelector(portal: string, job?: string): string {
  const shard = SHARD_FAMILIES.join('|');
  return `{portal=${JSON.stringify(portal)}} or {__name__=~"(${shard}).*",job=${JSON.stringify(job ?? '')}}`;
}

/**
 * Vitals whose names need care on every path (quotes, a backslash, a newline, non-ASCII, a slash)
 * and ratios that are not short decimals: set as the simulated portal's fixture.
 */
export const TRICKY_VITALS: VitalsRecord[] = [
  {
    key: 'defender', name: 'Defender "ATP" \\ Plan 2\nß', vitalsEnabled: true,
    agentDeployedPossibleCompliant: 300, agentDeployedCompliant: 293, agentFunctioningPossibleCompliant: 293,
    agentFunctioningCompliant: 281, configurationPossibleCompliant: 281, configurationCompliant: 199,
  },
  {
    key: 'crowdstrike', name: 'CrowdStrike Falcon – Zürich/HQ', vitalsEnabled: true,
    agentDeployedPossibleCompliant: 7, agentDeployedCompliant: 7, agentFunctioningPossibleCompliant: 7,
    agentFunctioningCompliant: 6, configurationPossibleCompliant: 6, configurationCompliant: 1,
  },
  { key: 'intune', name: 'Microsoft Intune', vitalsEnabled: false, activeAgents: 1234 },
];

/** docs/push.md's table of the names Prometheus 3's OTLP receiver and the Collector give each family by default: catalogue name → name. */
function documentedNames(): Map<string, string> {
  const doc = readFileSync(join(ROOT, 'docs/push.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Names in Prometheus'));
  const out = new Map<string, string>();
  for (const m of section.matchAll(/^\| `(posture_[a-z_]+)` \| `[^`]*` \| (?:`([a-z_]+)`|same) \|/gm)) out.set(m[1]!, m[2] ?? m[1]!);
  return out;
}

/**
 * That `held` (a receiver with the default translation) is `sent` under the names docs/push.md's
 * table gives; a family without a row, or a row the receiver contradicts, fails with the rows as
 * measured (a series is the same series when its labels and value are).
 */
export function expectDocumentedNames(sent: SeriesValues, held: SeriesValues): void {
  const documented = documentedNames();
  const bySeries = new Map([...held].map(([key, value]) => [`${key.slice(key.indexOf('{'))} ${value}`, nameOf(key)]));
  const measured = new Map<string, string>();
  for (const [key, value] of sent) {
    const name = nameOf(key);
    const heldName = bySeries.get(`${key.slice(name.length)} ${value}`);
    if (heldName !== undefined && heldName.startsWith(name)) measured.set(name, heldName);
  }
  const units = new Map<string, string>(CATALOGUE.map((m) => [m.name, m.unit]));
  const rows = [...measured].map(([name, got]) => `| \`${name}\` | \`${units.get(name) ?? '?'}\` | ${got === name ? 'same' : `\`${got}\``} |`);
  const wrong = [...measured].filter(([name, got]) => documented.get(name) !== got);
  expect(wrong, `docs/push.md's names table, as measured:\n${rows.join('\n')}\n`).toEqual([]);
  const renamed: SeriesValues = new Map([...sent].map(([key, value]) => [documented.get(nameOf(key))! + key.slice(nameOf(key).length), value]));
  expect(held).toEqual(renamed);
}

/** That `series` holds every family a push carries (serve's counters never are pushed), but those in `but`. */
export function expectEveryPushedFamily(series: SeriesValues, opts: { but?: ReadonlySet<string> } = {}): void {
  const families = CATALOGUE.filter((m) => m.type !== 'counter')
    .map((m) => m.name)
    .filter((n) => !opts.but?.has(n));
  expect(new Set([...series.keys()].map(nameOf))).toEqual(new Set(families));
}
