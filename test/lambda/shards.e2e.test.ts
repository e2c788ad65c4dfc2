/**
 * The Lambda fan-out: one handler (container) per shard, invoked at once with
 * `{"shard": i, "totalShards": n}` as a Step Functions Map item delivers it, against a simulated
 * fleet of portals (each with its own key and 10-per-60 s budget), pushing to Debian's Pushgateway
 * through a loopback proxy that counts the pushes of every portal.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import { ConfigError } from '../../src/errors.js';
import { portalIdentity } from '../../src/config/identity.js';
import { ownsPortal } from '../../src/config/shard.js';
import { createHandler, InvocationFailedError, shardOfEvent, type InvocationSummary } from '../../src/runtime/lambda.js';
import { startFleet, type Fleet } from '../../src/simulator/fleet.js';
import type { Simulator } from '../../src/simulator/index.js';
import { startPushgateway, type Peer } from '../support/peers.js';
import { CHECKED, expectedFromPortal, familiesOf, fleetEnv as fleetEnvIn, lambdaContext, pushgatewayGroups, scheduledEvent, type ReadSample } from './support.js';

const PORTALS = 30;
const TOTAL = 3;

let proxy: { url: string; pushes: Map<string, number>; close(): Promise<void> };
let clock: FakeClock;
let fleet: Fleet;
let dir: string;
let logs: string[];
/** Key files the handlers opened. */
let keyReads: string[];

/** A loopback proxy to the Pushgateway that counts PUT/POST requests per `portal` grouping label. */
async function countingProxy(target: string): Promise<typeof proxy> {
  const pushes = new Map<string, number>();
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const portal = /\/portal\/([^/]+)/.exec(req.url ?? '')?.[1];
    const source = /\/source\/([^/]+)/.exec(req.url ?? '')?.[1];
    if (portal && (req.method === 'PUT' || req.method === 'POST')) {
      const group = source ? `${portal}/${source}` : portal;
      pushes.set(group, (pushes.get(group) ?? 0) + 1);
    }
    const upstream = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, pushes, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

let pgw: Peer;

// One Pushgateway per test: the values read back are only this test's pushes.
beforeEach(async () => {
  pgw = await startPushgateway();
  proxy = await countingProxy(pgw.url);
  clock = new FakeClock(Date.UTC(2026, 10, 23, 12, 0, 0), { autoAdvance: true });
  fleet = await startFleet({ portals: PORTALS, clock, moving: false });
  dir = mkdtempSync(join(tmpdir(), 'lambda-shards-'));
  logs = [];
  keyReads = [];
});
afterEach(async () => {
  const text = logs.join('\n');
  for (const name of fleet.names) expect(text).not.toContain(fleet.apiKey(name));
  await Promise.all([fleet.close(), proxy.close(), pgw.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/** Settings of a fleet deployment pushing through the counting proxy, under a job of this test's own. */
function fleetEnv(): Record<string, string> {
  return fleetEnvIn(fleet, dir, proxy.url, `shards-${clock.now()}-${Math.random().toString(36).slice(2)}`);
}

/** A fresh container (as Lambda runs one per concurrent invocation); key-file reads are recorded. */
function container(env: Record<string, string>) {
  return createHandler({
    env,
    clock,
    write: (line) => logs.push(line),
    keyStore: {
      readFile: async (path: string) => {
        keyReads.push(path);
        const { readFile } = await import('node:fs/promises');
        return readFile(path, 'utf8');
      },
    },
  });
}

const owned = (shard: number, total = TOTAL) => fleet.names.filter((n) => ownsPortal(portalIdentity(fleet.baseUrl(n)), shard, total));

describe('Lambda fan-out over a fleet of portals', () => {
  it('three shards invoked at once push every portal exactly once, exact, none over budget', async () => {
    const env = fleetEnv();
    const at = clock.now();
    const summaries = await Promise.all([0, 1, 2].map((shard) => container(env)({ shard, totalShards: TOTAL }, lambdaContext(120_000, `req-shard-${shard}`))));

    // Each shard collected exactly the portals jump hash gives it; together, every portal once.
    for (const [shard, summary] of summaries.entries()) {
      expect(summary.shard).toEqual({ shard, totalShards: TOTAL, portals: owned(shard).length });
      expect(summary.portals.map((p) => p.portal).sort()).toEqual(owned(shard));
      // A fresh container runs each portal's resolved-alerts pass (no record of one).
      for (const p of summary.portals) expect(p.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
      expect(summary.sinks.every((s) => s.ok)).toBe(true);
    }
    const union = summaries.flatMap((s) => s.portals.map((p) => p.portal));
    expect(union.sort()).toEqual([...fleet.names]);
    expect(summaries.every((s) => s.portals.length > 0)).toBe(true);

    // Every portal contacted, none over its budget, and each pushed once per group.
    expect(fleet.overBudget()).toEqual([]);
    for (const name of fleet.names) expect(fleet.requests(name).length, name).toBeGreaterThan(0);
    const pushedPortals = new Set([...proxy.pushes.keys()].filter((k) => k.startsWith('portal-')).map((k) => k.split('/')[0]));
    expect([...pushedPortals].sort()).toEqual([...fleet.names]);
    for (const name of fleet.names) {
      const mine = [...proxy.pushes.entries()].filter(([k]) => k === name || k.startsWith(`${name}/`));
      expect(mine.length, name).toBeGreaterThan(0);
      for (const [group, count] of mine) expect(count, group).toBe(1);
    }

    // The values at the Pushgateway are the portal's own data, exactly.
    const groups = await pushgatewayGroups(pgw.url);
    for (const name of fleet.names) {
      const samples: ReadSample[] = [];
      for (const g of groups.values()) if (g.labels.portal === name) samples.push(...g.samples);
      const expected = expectedFromPortal(fleet.portal(name) as unknown as Simulator, at);
      for (const source of ['vitals', 'alerts', 'devices'] as const) {
        expect(familiesOf(samples, CHECKED[source]), `${name} ${source}`).toEqual(expected[source]);
      }
    }

    // Each shard's gauges in its own group (job and shard), so the shard rules see all three.
    const shardGroups = [...groups.entries()].filter(([k]) => k.startsWith('shard=')).sort(([a], [b]) => a.localeCompare(b));
    expect(shardGroups.map(([k, g]) => [k, Object.fromEntries(g.samples.map((x) => [x.name, x.value]))])).toEqual([0, 1, 2].map((i) => [`shard=${i}`, { posture_exporter_shard_ordinal: i, posture_exporter_total_shards: TOTAL }]));
  }, 60_000);

  it('a shard contacts only its own portals and reads only their keys', async () => {
    const env = fleetEnv();
    const summary = await container(env)({ shard: 'posture-exporter-1', totalShards: '3' }, lambdaContext(120_000, 'req-pod-name'));
    expect(summary.shard).toEqual({ shard: 1, totalShards: 3, portals: owned(1).length });
    for (const name of fleet.names) {
      expect(fleet.requests(name).length > 0, name).toBe(owned(1).includes(name));
    }
    expect(keyReads.map((p) => p.slice(dir.length + 1, -'.key'.length)).sort()).toEqual(owned(1));
  }, 60_000);

  it('a shard that owns no portal contacts nobody and pushes only its shard gauges', async () => {
    const env = fleetEnv();
    // With more shards than portals, jump hash leaves some shards empty.
    const total = 100;
    const empty = Array.from({ length: total }, (_, i) => i).find((i) => owned(i, total).length === 0)!;
    expect(empty).toBeDefined();
    const before = new Map(proxy.pushes);
    const summary: InvocationSummary = await container(env)({ shard: empty, totalShards: total }, lambdaContext(120_000, 'req-empty'));
    expect(summary).toEqual({ portals: [], sinks: [{ sink: 'pushgateway', ok: true, durationMs: expect.any(Number) }], shard: { shard: empty, totalShards: total, portals: 0 } });
    // No portal's group moved; the shard's own group says it ran.
    expect(proxy.pushes).toEqual(before);
    for (const name of fleet.names) expect(fleet.requests(name)).toEqual([]);
    const groups = await pushgatewayGroups(pgw.url);
    expect([...groups.keys()]).toEqual([`shard=${empty}`]);
    expect(groups.get(`shard=${empty}`)!.samples.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: 'posture_exporter_shard_ordinal', labels: {}, value: empty },
      { name: 'posture_exporter_total_shards', labels: {}, value: total },
    ]);
  });

  it.each([
    ['an EventBridge scheduled event', () => scheduledEvent(clock.now())],
    ["an empty event (EventBridge Scheduler's, without an input)", () => ({})],
  ])('%s collects every portal, unsharded (shard 0 of 1)', async (_name, event) => {
    const env = fleetEnv();
    const summary = await container(env)(event(), lambdaContext(120_000, 'req-all'));
    expect(summary.shard).toBeUndefined();
    expect(summary.portals.map((p) => p.portal).sort()).toEqual([...fleet.names]);
    // A fresh container runs each portal's resolved-alerts pass (no record of one).
    for (const p of summary.portals) expect(p.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
    expect(fleet.overBudget()).toEqual([]);
    const own = (await pushgatewayGroups(pgw.url)).get('shard=0');
    expect(Object.fromEntries(own!.samples.map((x) => [x.name, x.value]))).toEqual({ posture_exporter_shard_ordinal: 0, posture_exporter_total_shards: 1 });
  }, 60_000);

  /** Runs `event` in a fresh container and returns what it threw; asserts nobody was contacted and nothing pushed. */
  async function refused(env: Record<string, string>, event: unknown): Promise<InvocationFailedError> {
    const err = await container(env)(event as Record<string, unknown>, lambdaContext(120_000, 'req-refused')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InvocationFailedError);
    expect((err as Error).message.split('\n')).toHaveLength(1);
    for (const name of fleet.names) expect(fleet.requests(name), name).toEqual([]);
    expect(keyReads).toEqual([]);
    expect(proxy.pushes.size).toBe(0);
    expect((await pushgatewayGroups(pgw.url)).size).toBe(0);
    return err as InvocationFailedError;
  }

  it('refuses a misspelt shard event naming the unknown fields and the forms it takes, contacting nobody', async () => {
    const err = await refused(fleetEnv(), { Shard: 1, TotalShards: 3 });
    expect(err.message).toBe(
      'invalid event: the event has unknown fields "Shard", "TotalShards" (did you mean "shard", "totalShards"?): the handler takes an EventBridge scheduled event or an empty event {} (every portal), or {"shard": i, "totalShards": n} (one shard of a fan-out)',
    );
    expect((err.cause as ConfigError).setting).toBe('event');
  });

  it.each([
    ['an extra field beside the shard', { shard: 1, totalShards: 3, dryRun: true }, /^invalid event: the event has an unknown field "dryRun": the handler takes/],
    ['snake case', { shard: 1, total_shards: 3 }, /^invalid event: the event has an unknown field "total_shards" \(did you mean "totalShards"\?\)/],
    ['a scheduled event carrying a shard', { ...scheduledEvent(Date.UTC(2026, 10, 23)), shard: 1, totalShards: 3 }, /^invalid event: the event has unknown fields "version", "id", "detail-type", "source", "account", and 4 more: the handler takes/],
    ['another service\'s event', { source: 'aws.s3', 'detail-type': 'Object Created', detail: {} }, /^invalid event: the event has unknown fields "source", "detail-type", "detail": the handler takes/],
    ['null', null, /^invalid event: the event null is not an object: the handler takes/],
    ['an array', [{ shard: 1, totalShards: 3 }], /^invalid event: the event \[\{"shard":1,"totalShards":3\}\] is not an object/],
    ['a string', 'shard 1 of 3', /^invalid event: the event "shard 1 of 3" is not an object/],
  ])('refuses %s, contacting nobody', async (_name, event, message) => {
    const err = await refused(fleetEnv(), event);
    expect(err.message).toMatch(message);
  });

  it('refuses a shard given by the event and by the environment, naming both', async () => {
    const err = await refused({ ...fleetEnv(), POSTURE_SHARD: '2', POSTURE_TOTAL_SHARDS: '3' }, { shard: 1, totalShards: 3 });
    expect(err.message).toBe(
      "invalid event: the shard is given twice: the event names shard 1 of 3, and POSTURE_SHARD and POSTURE_TOTAL_SHARDS name shard 2 of 3: give it in one place, the fan-out's event (unset POSTURE_SHARD and POSTURE_TOTAL_SHARDS, and shard and total_shards in the config file) or the settings (invoke with a scheduled event or {})",
    );
    expect((err.cause as ConfigError).setting).toBe('event.shard');
  });

  it('refuses a shard given by the event and by the config file, naming both', async () => {
    const env = fleetEnv();
    const file = env.POSTURE_CONFIG_FILE!;
    const { portals } = JSON.parse(readFileSync(file, 'utf8')) as { portals: unknown[] };
    writeFileSync(file, JSON.stringify({ shard: '0', total_shards: 2, portals }));
    const err = await refused(env, { shard: 0, totalShards: 2 });
    expect(err.message).toMatch(/^invalid event: the shard is given twice: the event names shard 0 of 2, and the config file's shard and total_shards name shard 0 of 2: give it in one place/);
  });

  it('a warm container given another shard drops the previous shard and collects only the new one', async () => {
    const env = fleetEnv();
    const handler = container(env);
    const first = await handler({ shard: 0, totalShards: TOTAL }, lambdaContext(120_000, 'req-warm-0'));
    expect(first.portals.map((p) => p.portal).sort()).toEqual(owned(0));
    const second = await handler({ shard: 1, totalShards: TOTAL }, lambdaContext(120_000, 'req-warm-1'));
    expect(second.portals.map((p) => p.portal).sort()).toEqual(owned(1));
    const lines = logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => typeof l.message === 'string' && l.message.startsWith('a different shard'))).toEqual([
      expect.objectContaining({ level: 'INFO', previous: `0/${TOTAL}`, next: `1/${TOTAL}`, function_request_id: 'req-warm-1' }),
    ]);
    // The same shard again keeps its state: no second drop.
    await handler({ shard: 1, totalShards: TOTAL }, lambdaContext(120_000, 'req-warm-1b'));
    expect(logs.filter((l) => l.includes('a different shard'))).toHaveLength(1);
    expect(fleet.overBudget()).toEqual([]);
  }, 60_000);

  it.each([
    [{ shard: 3, totalShards: 3 }, 'event.shard', /event\.shard: shard 3 is not below event\.totalShards 3/],
    [{ shard: 0 }, 'event.totalShards', /event\.totalShards is missing/],
    [{ totalShards: 3 }, 'event.shard', /event\.shard is missing/],
    [{ shard: 'one', totalShards: 3 }, 'event.shard', /event\.shard: 'one' is not a shard number/],
    [{ shard: 0, totalShards: 0 }, 'event.totalShards', /event\.totalShards: '0' is not a shard count/],
    [{ shard: 1.5, totalShards: 3 }, 'event.shard', /event\.shard: '1\.5' is not a shard number/],
    [{ shard: [0], totalShards: 3 }, 'event.shard', /event\.shard: \[0\] is not a number/],
  ])('a bad shard event %j fails the invocation naming %s, contacting nobody', async (event, field, message) => {
    const env = fleetEnv();
    const err = await container(env)(event as Record<string, unknown>, lambdaContext(120_000, 'req-bad')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InvocationFailedError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message.split('\n')).toHaveLength(1);
    expect((err as InvocationFailedError).cause).toBeInstanceOf(ConfigError);
    expect(((err as InvocationFailedError).cause as ConfigError).setting).toBe(field);
    expect(() => shardOfEvent(event)).toThrow(ConfigError);
    for (const name of fleet.names) expect(fleet.requests(name)).toEqual([]);
    expect(keyReads).toEqual([]);
  });
});
