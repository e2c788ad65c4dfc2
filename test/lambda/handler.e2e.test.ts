/**
 * The Lambda handler invoked in-process, as Lambda invokes it (an EventBridge scheduled event and a
 * context whose remaining time the test sets), against the simulated portal, pushing to Debian's
 * Pushgateway. Key stores are a loopback fake at the AWS SDK's edge.
 */
import snappy from 'snappyjs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, ConfigErrors } from '../../src/errors.js';
import { createHandler, InvocationFailedError, type HandlerDeps } from '../../src/runtime/lambda.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { freePort, startPushgateway, type Peer } from '../support/peers.js';
import { decodeWriteRequest } from '../sinks/decode.js';
import { startReceiver, type Receiver } from '../sinks/receiver.js';
import { startAwsFake, type AwsFake } from './aws-fake.js';
import { FakeClock } from '../../src/core/clock.js';
import { CHECKED, expectedFromPortal, familiesOf, lambdaContext, pushgatewayGroups, scheduledEvent, valueIn } from './support.js';
import { followRealTime } from '../support/real-time.js';

const KEY = 'sim-lambda-key-0123456789abcdef';
const SOURCES = ['vitals', 'alerts', 'devices'] as const;

let pgw: Peer;
let clock: FakeClock;
let sims: Simulator[] = [];
let fakes: Array<AwsFake | Receiver> = [];
/** Every log line written in the current test, and the secrets none of them may contain. */
let logs: string[] = [];
let secrets: string[] = [];

beforeAll(async () => {
  pgw = await startPushgateway();
});
afterAll(async () => {
  await pgw?.stop();
});
beforeEach(() => {
  // Time moves only when a test says so, or when the code under test sleeps.
  clock = new FakeClock(Date.UTC(2026, 10, 22, 12, 0, 0), { autoAdvance: true });
  logs = [];
  secrets = [KEY];
});
afterEach(async () => {
  const text = logs.join('\n');
  for (const s of secrets) expect(text).not.toContain(s);
  await Promise.all([...sims, ...fakes].map((x) => x.close()));
  sims = [];
  fakes = [];
});

async function portal(opts: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startSimulator({ clock, keys: [{ key: KEY }], ...opts });
  sims.push(sim);
  return sim;
}

/** A loopback AWS key-store fake holding `store`, closed after the test. */
async function awsFake(store?: Parameters<typeof startAwsFake>[0]): Promise<AwsFake> {
  const aws = await startAwsFake(store);
  fakes.push(aws);
  return aws;
}

/** One container: a handler built once, invoked as often as the test likes (`req-1`, `req-2`, …). */
function lambda(env: Record<string, string | undefined>, deps: Partial<HandlerDeps> = {}) {
  const lines: string[] = [];
  const handler = createHandler({
    env,
    clock,
    write: (line) => {
      lines.push(line);
      logs.push(line);
    },
    ...deps,
  });
  let n = 0;
  const invoke = (remainingMs = 60_000) => handler(scheduledEvent(clock.now()), lambdaContext(remainingMs, `req-${++n}`));
  const failure = (remainingMs?: number) =>
    invoke(remainingMs).then(
      (summary) => {
        throw new Error(`expected the invocation to fail, it returned ${JSON.stringify(summary)}`);
      },
      (err: unknown) => err as InvocationFailedError,
    );
  return { invoke, failure, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

function envFor(sim: Simulator, portalName: string, more: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return { POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: portalName, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: pgw.url, ...more };
}

/** `posture_collection_success` of a portal's exporter group, by source. */
function successOf(groups: Awaited<ReturnType<typeof pushgatewayGroups>>, portalName: string): Record<string, number | undefined> {
  const group = groups.get(`portal=${portalName}`);
  return Object.fromEntries(SOURCES.map((source) => [source, valueIn(group?.samples, 'posture_collection_success', { source })]));
}

function sourceGroups(groups: Awaited<ReturnType<typeof pushgatewayGroups>>, portalName: string): string[] {
  return [...groups.keys()].filter((k) => k.startsWith(`portal=${portalName},source=`)).sort();
}

describe('Lambda handler, in-process, against the simulated portal and a real Pushgateway', () => {
  it('collects every source and pushes exactly what the portal holds', async () => {
    const sim = await portal({ alerts: 300, devices: 2_000 });
    const { invoke, records } = lambda(envFor(sim, 'full'));
    const at = clock.now();
    const summary = await invoke();

    expect(summary).toEqual({
      // A cold container has no record of a resolved-alerts pass: it runs one, one request more (300 alerts in one page).
      portals: [{ portal: 'full', sources: { vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' }, requests: 5, durationMs: expect.any(Number) }],
      sinks: [{ sink: 'pushgateway', ok: true, durationMs: expect.any(Number) }],
    });
    expect(sim.requests.map((r) => `${r.path}?${r.query.filter ?? ''} ${r.status}`)).toEqual(['/vitals? 200', '/devices?active 200', '/devices?inactive 200', '/alerts?allunresolved 200', '/alerts?resolved 200']);

    const groups = await pushgatewayGroups(pgw.url);
    const expected = expectedFromPortal(sim, at);
    expect(expected.alerts.get('posture_alerts_open{severity="red"}')).toBeGreaterThan(0);
    expect(expected.vitals.size).toBeGreaterThan(20);
    for (const source of SOURCES) {
      expect(familiesOf(groups.get(`portal=full,source=${source}`)?.samples, CHECKED[source]), source).toEqual(expected[source]);
    }
    const own = groups.get('portal=full')!;
    expect(successOf(groups, 'full')).toEqual({ vitals: 1, alerts: 1, devices: 1 });
    expect(valueIn(own.samples, 'posture_collection_api_requests', { endpoint: '/devices', code: '200' })).toBe(2);
    expect(own.samples.filter((s) => s.name === 'posture_exporter_build_info').map((s) => s.labels.runtime)).toEqual(['lambda']);
    // Nothing was pushed before, so there is no previous push to report yet.
    expect(own.samples.filter((s) => s.name.startsWith('posture_push_'))).toEqual([]);

    // Structured JSON lines in Powertools' shape, each with the request id.
    const lines = records();
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) {
      expect(line).toMatchObject({ level: expect.stringMatching(/^(DEBUG|INFO|WARN|ERROR)$/), message: expect.any(String), timestamp: new Date(at).toISOString(), service: 'posture-exporter', function_request_id: 'req-1', cold_start: true });
    }
    expect(lines.map((l) => l.message)).toEqual(expect.arrayContaining(['collection finished', 'push succeeded', 'invocation finished']));
  });

  it('runs with a minimal context (no remaining-time clock, no request id), as a local invoke may pass', async () => {
    const sim = await portal({ alerts: 50, devices: 100 });
    const handler = createHandler({ env: envFor(sim, 'bare'), clock, write: (line) => logs.push(line) });
    const summary = await handler(scheduledEvent(clock.now()), {});
    // A cold container runs the resolved-alerts pass (no record of one).
    expect(summary.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
    expect(summary.sinks[0]!.ok).toBe(true);
    expect((await handler({})).portals[0]!.sources.vitals).toBe('ok');
  });

  it('reports a failing source without throwing, and the Pushgateway keeps its last values while the others move on', async () => {
    const sim = await portal();
    // The resolved-alerts pass (it reads /alerts too) runs in the first invocation only: its interval of a day has not passed by the second.
    const { invoke } = lambda(envFor(sim, 'partial', { POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS: '86400' }));
    const at1 = clock.now();
    await invoke();
    const before = await pushgatewayGroups(pgw.url);

    sim.addFault({ path: '/alerts', times: Infinity, fault: { kind: 'status', status: 500 } });
    clock.advance(6 * 3_600_000);
    const at2 = clock.now();
    const summary = await invoke();
    expect(summary.portals[0]!.sources).toEqual({ vitals: 'ok', devices: 'ok', alerts: expect.stringContaining('server error (500)') });
    expect(summary.sinks).toEqual([{ sink: 'pushgateway', ok: true, durationMs: expect.any(Number) }]);

    const after = await pushgatewayGroups(pgw.url);
    const [e1, e2] = [expectedFromPortal(sim, at1), expectedFromPortal(sim, at2)];
    // The portal's data did move in six hours, so "kept" and "moved on" can be told apart.
    expect(e2.alerts).not.toEqual(e1.alerts);
    expect(e2.vitals).not.toEqual(e1.vitals);

    const alertsGroup = 'portal=partial,source=alerts';
    expect(familiesOf(after.get(alertsGroup)?.samples, CHECKED.alerts)).toEqual(e1.alerts);
    expect(after.get(alertsGroup)!.pushTime).toBe(before.get(alertsGroup)!.pushTime);
    for (const source of ['vitals', 'devices'] as const) {
      const key = `portal=partial,source=${source}`;
      expect(familiesOf(after.get(key)?.samples, CHECKED[source])).toEqual(e2[source]);
      expect(after.get(key)!.pushTime).toBeGreaterThan(before.get(key)!.pushTime);
    }
    expect(successOf(after, 'partial')).toEqual({ vitals: 1, alerts: 0, devices: 1 });
  });

  it('completes three tags and two 429s across budget windows within the invocation, pushing exact values', async () => {
    const sim = await portal({ alerts: 300, devices: 2_000, moving: false });
    sim.addFault({ path: '/devices', times: 1, fault: { kind: 'status', status: 429, retryAfter: '2' } });
    sim.addFault({ path: '/alerts', times: 1, fault: { kind: 'status', status: 429, retryAfter: '2' } });
    const { invoke } = lambda(envFor(sim, 'windows', { POSTURE_VITALS_TAGS: 'laptops,servers,cloud' }));
    const at = clock.now();
    const summary = await invoke(300_000);
    expect(summary.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
    // 4 Vitals + 2 device totals + 1 /alerts + 2 retries + 1 resolved-alerts pass (a cold container's), more than one window of 5 could hold.
    expect(summary.portals[0]!.requests).toBe(10);
    const starts = sim.requests.map((r) => r.time);
    for (let i = 5; i < starts.length; i++) expect(starts[i]! - starts[i - 5]!).toBeGreaterThanOrEqual(60_000);
    expect(clock.now() - at).toBeGreaterThan(60_000);
    const groups = await pushgatewayGroups(pgw.url);
    const expected = expectedFromPortal(sim, at);
    for (const source of ['alerts', 'devices'] as const) {
      expect(familiesOf(groups.get(`portal=windows,source=${source}`)?.samples, CHECKED[source]), source).toEqual(expected[source]);
    }
    expect(successOf(groups, 'windows')).toEqual({ vitals: 1, alerts: 1, devices: 1 });
  });

  it('pushes what was collected when the deadline comes, cutting the request in flight, and reports the rest as failed', async () => {
    const sim = await portal();
    // The first /devices answer would take 8 s; the invocation has 12 s left and keeps 10 s for the push.
    sim.addFault({ path: '/devices', fault: { kind: 'latency', ms: 8_000 } });
    const { invoke } = lambda(envFor(sim, 'deadline', { POSTURE_LAMBDA_MARGIN_SECONDS: '10' }));
    const at = clock.now();
    const started = performance.now();
    // The slow answer takes real time: the fake clock follows it, so the invocation's deadline comes.
    const stop = followRealTime(clock);
    const summary = await invoke(12_000).finally(stop);
    const elapsed = performance.now() - started;

    expect(elapsed).toBeGreaterThanOrEqual(1_900);
    expect(elapsed).toBeLessThan(6_000);
    expect(summary.portals[0]!.sources).toEqual({
      vitals: 'ok',
      devices: expect.stringContaining('/devices is late'),
      alerts: expect.stringContaining('/alerts is late'),
      // Due in a cold container, the resolved-alerts pass had no time left either.
      resolved: expect.stringContaining('/alerts?filter=resolved is late'),
    });
    expect(summary.sinks).toEqual([{ sink: 'pushgateway', ok: true, durationMs: expect.any(Number) }]);
    // /alerts was never asked: there was no time left for it.
    expect(sim.requests.map((r) => r.path)).toEqual(['/vitals', '/devices']);

    const groups = await pushgatewayGroups(pgw.url);
    expect(sourceGroups(groups, 'deadline')).toEqual(['portal=deadline,source=vitals']);
    expect(familiesOf(groups.get('portal=deadline,source=vitals')?.samples, CHECKED.vitals)).toEqual(expectedFromPortal(sim, at).vitals);
    expect(successOf(groups, 'deadline')).toEqual({ vitals: 1, alerts: 0, devices: 0 });
  });

  it('fails at once, asking nothing of the portal, when the invocation has no more time than the margin', async () => {
    const sim = await portal();
    const { failure } = lambda(envFor(sim, 'no-time', { POSTURE_LAMBDA_MARGIN_SECONDS: '10' }));
    const err = await failure(9_000);
    expect(err).toBeInstanceOf(InvocationFailedError);
    expect(err.message).toBe('no time to collect: the invocation had 9000 ms left and POSTURE_LAMBDA_MARGIN_SECONDS is 10: give the function a timeout well above the margin.');
    expect(sim.requests).toEqual([]);
  });

  it('throws InvocationFailedError when nothing could be collected (the portal rejects the key), after pushing the failure', async () => {
    const sim = await portal();
    const wrong = 'wrong-key-for-lambda-0000000000';
    secrets.push(wrong);
    const { failure } = lambda(envFor(sim, 'rejected', { POSTURE_API_KEY: wrong }));
    const err = await failure();
    expect(err).toBeInstanceOf(InvocationFailedError);
    // The resolved-alerts pass was due (a cold container) and fails alike.
    expect(err.message).toMatch(/^nothing could be collected \(vitals, alerts, devices, resolved\): The portal rejected the API key \(401\) on \/vitals/);
    expect(err.message).not.toContain('\n');
    expect(err.summary!.portals[0]!.sources).toEqual({ vitals: expect.stringContaining('(401)'), alerts: expect.stringContaining('(401)'), devices: expect.stringContaining('(401)'), resolved: expect.stringContaining('(401)') });
    // One rejected request is proof enough; no budget is spent on the other sources.
    expect(sim.requests.map((r) => r.status)).toEqual([401]);
    const groups = await pushgatewayGroups(pgw.url);
    expect(sourceGroups(groups, 'rejected')).toEqual([]);
    expect(successOf(groups, 'rejected')).toEqual({ vitals: 0, alerts: 0, devices: 0 });
  });

  it('throws InvocationFailedError when every sink fails', async () => {
    const sim = await portal();
    const closed = await freePort();
    const { failure } = lambda(envFor(sim, 'unpushed', { POSTURE_PUSHGATEWAY_URL: `http://127.0.0.1:${closed}` }));
    const err = await failure();
    expect(err).toBeInstanceOf(InvocationFailedError);
    // Five groups of the portal (three sources, the resolved-alerts pass of a cold container, its own) and the shard's own (0 of 1 unsharded).
    expect(err.message).toMatch(/^nothing could be pushed: pushgateway: 0 of 6 Pushgateway groups pushed; 6 failed, first: PUT http:\/\/127\.0\.0\.1:\d+\/metrics\/job\/posture-exporter\//);
    expect(err.summary!.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
    expect(err.summary!.sinks).toEqual([{ sink: 'pushgateway', ok: false, durationMs: expect.any(Number), error: expect.stringContaining('ECONNREFUSED') }]);
  });

  it('returns the summary when a push fails only in part, saying how many of how many groups got through', async () => {
    const sim = await portal();
    const receiver = await startReceiver((req) => (req.url.endsWith('/source/alerts') ? { status: 400, body: 'pushed metrics are invalid' } : { status: 200 }));
    fakes.push(receiver);
    const { invoke, records } = lambda(envFor(sim, 'half', { POSTURE_PUSHGATEWAY_URL: receiver.url, POSTURE_PUSH_MAX_RETRIES: '0' }));
    const summary = await invoke();
    // Three source groups, the resolved-alerts pass's (a cold container runs it), the portal's own and the shard's: one refused.
    expect(summary.sinks).toEqual([{ sink: 'pushgateway', ok: false, durationMs: expect.any(Number), pushed: 5, total: 6, error: expect.stringMatching(/^5 of 6 Pushgateway groups pushed; 1 failed, first: PUT \S+\/source\/alerts: HTTP 400: pushed metrics are invalid$/) }]);
    expect(receiver.requests).toHaveLength(6);
    expect(records().filter((l) => l.message === 'push failed in part')).toEqual([expect.objectContaining({ level: 'ERROR', sink: 'pushgateway', pushed: 5, total: 6 })]);
    expect(records().some((l) => l.message === 'invocation failed')).toBe(false);
  });

  describe('bad settings fail the invocation with one line naming the setting, and the key is never logged', () => {
    const cases: Array<[string, Record<string, string | undefined>, string[], string]> = [
      ['no sink', { POSTURE_PUSH: '' }, ['POSTURE_PUSH'], 'POSTURE_PUSH is empty: the Lambda pushes its metrics, set it to any of otlp, remote_write, pushgateway.'],
      ['an unknown sink', { POSTURE_PUSH: 'pushgateway,graphite' }, ['POSTURE_PUSH'], 'POSTURE_PUSH (--push)="pushgateway,graphite" is not valid: use a comma-separated subset of otlp, remote_write, pushgateway.'],
      ['a sink without its URL', { POSTURE_PUSHGATEWAY_URL: undefined }, ['POSTURE_PUSHGATEWAY_URL'], "POSTURE_PUSH includes pushgateway but POSTURE_PUSHGATEWAY_URL is not set: give the Pushgateway's base URL."],
      ['a margin of 0', { POSTURE_LAMBDA_MARGIN_SECONDS: '0' }, ['POSTURE_LAMBDA_MARGIN_SECONDS'], 'POSTURE_LAMBDA_MARGIN_SECONDS="0" is not valid: set a whole number from 1 to 300 (default 10).'],
      ['two key sources', { POSTURE_API_KEY_SSM_PARAMETER: '/posture/key' }, ['POSTURE_API_KEY'], 'more than one API key source is set (value, ssm): keep exactly one of POSTURE_API_KEY, POSTURE_API_KEY_FILE, POSTURE_API_KEY_SSM_PARAMETER, POSTURE_API_KEY_SECRET_ID.'],
      [
        'two problems at once',
        { POSTURE_REQUESTS_PER_MINUTE: '11', POSTURE_REMOTE_WRITE_PASSWORD: 'rw-password-secret-42' },
        ['POSTURE_REQUESTS_PER_MINUTE', 'POSTURE_REMOTE_WRITE_USERNAME'],
        'POSTURE_REQUESTS_PER_MINUTE (--requests-per-minute)="11" is not valid: set a whole number from 1 to 10 (default 5). | POSTURE_REMOTE_WRITE_USERNAME and POSTURE_REMOTE_WRITE_PASSWORD go together: set both for basic auth.',
      ],
    ];
    it.each(cases)('%s', async (_name, change, settings, message) => {
      secrets.push('rw-password-secret-42');
      const env = { POSTURE_BASE_URL: 'http://127.0.0.1:9/public-api/v1', POSTURE_API_KEY: KEY, POSTURE_PUSH: 'pushgateway', POSTURE_PUSHGATEWAY_URL: pgw.url, ...change };
      const { failure, records } = lambda(env);
      const err = await failure();
      expect(err).toBeInstanceOf(InvocationFailedError);
      expect(err.message).toBe(`invalid settings: ${message}`);
      expect(err.message).not.toContain('\n');
      const cause = err.cause;
      const problems = cause instanceof ConfigErrors ? cause.problems : cause instanceof ConfigError ? [cause] : [];
      expect(problems.map((p) => p.setting)).toEqual(settings);
      expect(records()).toEqual([expect.objectContaining({ level: 'ERROR', message: 'invalid settings', settings, service: 'posture-exporter', function_request_id: 'req-1' })]);
    });
  });

  it('reuses the parsed settings on a warm start and sends the previous push’s outcome with the next push', async () => {
    const sim = await portal();
    const closed = await freePort();
    const env = envFor(sim, 'warm', { POSTURE_PUSH: 'pushgateway,remote_write', POSTURE_REMOTE_WRITE_URL: `http://127.0.0.1:${closed}/api/v1/write`, POSTURE_LOG_LEVEL: 'debug' });
    const { invoke, records } = lambda(env);
    const first = await invoke();
    // One sink failed, one worked: not an invocation failure.
    expect(first.sinks).toEqual([
      { sink: 'pushgateway', ok: true, durationMs: expect.any(Number) },
      { sink: 'remote_write', ok: false, durationMs: expect.any(Number), error: expect.stringContaining('ECONNREFUSED') },
    ]);
    const firstLines = records().length;
    const g1 = await pushgatewayGroups(pgw.url);
    expect(g1.get('portal=warm')!.samples.filter((s) => s.name.startsWith('posture_push_'))).toEqual([]);

    // Lambda never changes a container's environment; if it did, a warm start would not notice.
    Object.assign(env, { POSTURE_PORTAL: 'renamed', POSTURE_PUSH: '', POSTURE_PUSHGATEWAY_URL: 'http://127.0.0.1:9' });
    clock.advance(300_000);
    const second = await invoke();
    expect(second.portals.map((p) => p.portal)).toEqual(['warm']);
    expect(second.sinks.map((s) => s.sink)).toEqual(['pushgateway', 'remote_write']);

    const g2 = await pushgatewayGroups(pgw.url);
    expect([...g2.keys()].filter((k) => k.includes('renamed'))).toEqual([]);
    const own = g2.get('portal=warm')!.samples;
    expect(familiesOf(own, ['posture_push_success'])).toEqual(new Map([
      ['posture_push_success{sink="pushgateway"}', 1],
      ['posture_push_success{sink="remote_write"}', 0],
    ]));
    // Remote write retried with backoff (on the test clock) before giving up: a duration worth reporting.
    expect(first.sinks[1]!.durationMs).toBeGreaterThan(0);
    expect(familiesOf(own, ['posture_push_duration_seconds'])).toEqual(new Map([
      ['posture_push_duration_seconds{sink="pushgateway"}', first.sinks[0]!.durationMs / 1000],
      ['posture_push_duration_seconds{sink="remote_write"}', first.sinks[1]!.durationMs / 1000],
    ]));

    // Every line of each invocation carries its own request id, the collectors' and sinks' lines included.
    const lines = records();
    expect(new Set(lines.slice(0, firstLines).map((l) => `${String(l.function_request_id)} ${String(l.cold_start)}`))).toEqual(new Set(['req-1 true']));
    expect(new Set(lines.slice(firstLines).map((l) => `${String(l.function_request_id)} ${String(l.cold_start)}`))).toEqual(new Set(['req-2 false']));
    expect(lines.slice(firstLines).map((l) => l.message)).toEqual(expect.arrayContaining(['upstream request', 'collection finished', 'push succeeded', 'push failed', 'invocation finished']));
  });

  describe('API key from a key store (a loopback fake of the AWS JSON protocol)', () => {
    it('reads an SSM SecureString once with decryption, and again after the portal rejects the key (rotation)', async () => {
      const rotated = 'sim-rotated-key-fedcba9876543210';
      secrets.push(rotated);
      const sim = await portal({ keys: [{ key: KEY }, { key: rotated }] });
      const aws = await awsFake({ parameters: { '/posture/lambda-test/ssm': KEY } });
      const env = envFor(sim, 'ssm', { POSTURE_API_KEY: undefined, POSTURE_API_KEY_SSM_PARAMETER: '/posture/lambda-test/ssm' });
      const { invoke, failure } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });

      const first = await invoke();
      clock.advance(300_000);
      const second = await invoke();
      // The resolved-alerts pass runs in the cold container only: 300 s later its hour has not passed.
      expect(first.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
      expect(second.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok' });
      expect(aws.calls).toEqual([{ target: 'AmazonSSM.GetParameter', body: { Name: '/posture/lambda-test/ssm', WithDecryption: true }, signed: true }]);
      expect(sim.requests.every((r) => r.keyIndex === 0)).toBe(true);

      // The key is rotated in the store; the portal rejects the old one once.
      aws.parameters.set('/posture/lambda-test/ssm', rotated);
      sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 401 } });
      clock.advance(300_000);
      const rejected = await failure();
      expect(rejected.message).toMatch(/\(401\)/);
      expect(aws.calls).toHaveLength(1);

      clock.advance(300_000);
      const seen = sim.requests.length;
      await invoke();
      clock.advance(300_000);
      await invoke();
      expect(aws.calls.map((c) => c.target)).toEqual(['AmazonSSM.GetParameter', 'AmazonSSM.GetParameter']);
      expect(sim.requests.slice(seen).map((r) => `${r.keyIndex} ${r.status}`)).toEqual(Array(8).fill('1 200'));
    });

    it('reads a Secrets Manager secret once across invocations, and again after a 401', async () => {
      const sim = await portal();
      const aws = await awsFake({ secrets: { 'posture/lambda-test/secret': `${KEY}\n` } });
      const env = envFor(sim, 'secret', { POSTURE_API_KEY: undefined, POSTURE_API_KEY_SECRET_ID: 'posture/lambda-test/secret' });
      const { invoke, failure } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });

      await invoke();
      clock.advance(300_000);
      await invoke();
      expect(aws.calls).toEqual([{ target: 'secretsmanager.GetSecretValue', body: { SecretId: 'posture/lambda-test/secret' }, signed: true }]);

      sim.addFault({ path: '/vitals', fault: { kind: 'status', status: 401 } });
      clock.advance(300_000);
      await failure();
      clock.advance(300_000);
      const after = await invoke();
      expect(after.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok' });
      expect(aws.calls.map((c) => c.target)).toEqual(['secretsmanager.GetSecretValue', 'secretsmanager.GetSecretValue']);
    });

    it('fails the invocation when the parameter cannot be read, and tries the store again next time', async () => {
      const sim = await portal();
      const aws = await awsFake();
      const env = envFor(sim, 'ssm-missing', { POSTURE_API_KEY: undefined, POSTURE_API_KEY_SSM_PARAMETER: '/posture/lambda-test/missing' });
      const { invoke, failure } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });
      const err = await failure();
      expect(err).toBeInstanceOf(InvocationFailedError);
      expect(err.message).toBe(
        'nothing could be collected (vitals, alerts, devices, resolved): cannot read the API key from SSM parameter /posture/lambda-test/missing (ParameterNotFound: Parameter /posture/lambda-test/missing not found.): check it exists and the process may read it (IAM: ssm:GetParameter / secretsmanager:GetSecretValue and kms:Decrypt).',
      );
      expect(sim.requests).toEqual([]);

      aws.parameters.set('/posture/lambda-test/missing', KEY);
      clock.advance(300_000);
      const summary = await invoke();
      // The failed pass was not remembered: it runs now.
      expect(summary.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
      expect(aws.calls).toHaveLength(2);
    });
  });

  describe('remote-write credential from a key store (the loopback fake), pushed to a receiver that checks it', () => {
    const USER = '1234567';
    const basic = (password: string) => `Basic ${Buffer.from(`${USER}:${password}`).toString('base64')}`;

    /** A remote-write receiver that answers 204 only to `accepted()` in Authorization, else 401 as Grafana Cloud does. */
    async function receiver(accepted: () => string): Promise<Receiver> {
      const rw = await startReceiver((req) => (req.headers.authorization === accepted() ? { status: 204 } : { status: 401, body: 'authentication error: invalid token' }));
      fakes.push(rw);
      return rw;
    }

    /** Pushgateway and remote write, the latter with basic auth whose password is the SSM parameter `parameter`. */
    const bothSinksWithStoredPassword = (rw: Receiver, parameter: string) => ({
      POSTURE_PUSH: 'pushgateway,remote_write',
      POSTURE_REMOTE_WRITE_URL: `${rw.url}/api/prom/push`,
      POSTURE_REMOTE_WRITE_USERNAME: USER,
      POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER: parameter,
    });

    /** `posture_*` series of one remote-write request, as `name{labels}` (portal left out) → value. */
    function pushed(rw: Receiver, index: number): Map<string, number> {
      const request = decodeWriteRequest(snappy.uncompress(new Uint8Array(rw.requests[index]!.body)));
      return familiesOf(
        request.timeseries.map((t) => {
          const { __name__: name = '', ...labels } = Object.fromEntries(t.labels);
          return { name, labels, value: t.samples[0]!.value };
        }),
        ['posture_collection_success', 'posture_push_success'],
      );
    }

    const cases: Array<{ what: string; credential: string; store: Parameters<typeof startAwsFake>[0]; env: Record<string, string>; call: unknown; authorization: string }> = [
      {
        what: 'the basic-auth password from an SSM SecureString',
        credential: 'glc_rw-password-from-ssm-0123456789',
        store: { parameters: { '/posture/lambda-test/rw-password': 'glc_rw-password-from-ssm-0123456789' } },
        env: { POSTURE_REMOTE_WRITE_USERNAME: USER, POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER: '/posture/lambda-test/rw-password' },
        call: { target: 'AmazonSSM.GetParameter', body: { Name: '/posture/lambda-test/rw-password', WithDecryption: true }, signed: true },
        authorization: basic('glc_rw-password-from-ssm-0123456789'),
      },
      {
        what: 'the basic-auth password from a Secrets Manager secret',
        credential: 'glc_rw-password-from-secret-abcdef',
        store: { secrets: { 'posture/lambda-test/rw-password': 'glc_rw-password-from-secret-abcdef\n' } },
        env: { POSTURE_REMOTE_WRITE_USERNAME: USER, POSTURE_REMOTE_WRITE_PASSWORD_SECRET_ID: 'posture/lambda-test/rw-password' },
        call: { target: 'secretsmanager.GetSecretValue', body: { SecretId: 'posture/lambda-test/rw-password' }, signed: true },
        authorization: basic('glc_rw-password-from-secret-abcdef'),
      },
      {
        what: 'the bearer token from an SSM SecureString',
        credential: 'mimir-rw-token-from-ssm-fedcba',
        store: { parameters: { '/posture/lambda-test/rw-token': 'mimir-rw-token-from-ssm-fedcba' } },
        env: { POSTURE_REMOTE_WRITE_BEARER_TOKEN_SSM_PARAMETER: '/posture/lambda-test/rw-token' },
        call: { target: 'AmazonSSM.GetParameter', body: { Name: '/posture/lambda-test/rw-token', WithDecryption: true }, signed: true },
        authorization: 'Bearer mimir-rw-token-from-ssm-fedcba',
      },
    ];
    it.each(cases)('reads $what once per container, pushes with it, and never shows it', async ({ credential, store, env: credentialEnv, call, authorization }) => {
      secrets.push(credential, authorization.replace(/^\w+ /, ''));
      const sim = await portal();
      const aws = await awsFake(store);
      const rw = await receiver(() => authorization);
      const env = envFor(sim, 'rw-store', { POSTURE_PUSH: 'remote_write', POSTURE_REMOTE_WRITE_URL: `${rw.url}/api/prom/push`, ...credentialEnv });
      const { invoke, records } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });

      const first = await invoke();
      clock.advance(300_000);
      const second = await invoke();
      for (const summary of [first, second]) {
        // The resolved-alerts pass runs in the cold container only: 300 s later its hour has not passed.
        expect(summary.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', ...(summary === first ? { resolved: 'ok' } : {}) });
        expect(summary.sinks).toEqual([{ sink: 'remote_write', ok: true, durationMs: expect.any(Number) }]);
      }
      // One read for the container; the API key is a plain value here, so that is the only call.
      expect(aws.calls).toEqual([call]);
      expect(rw.requests.map((r) => [r.url, r.headers.authorization === authorization])).toEqual([
        ['/api/prom/push', true],
        ['/api/prom/push', true],
      ]);
      // The receiver got the collection, and with the second push the first push's outcome.
      expect(pushed(rw, 0)).toEqual(new Map([...SOURCES, 'resolved'].map((source) => [`posture_collection_success{source="${source}"}`, 1])));
      expect(pushed(rw, 1).get('posture_push_success{sink="remote_write"}')).toBe(1);
      expect(records().filter((l) => l.message === 'push succeeded').map((l) => l.sink)).toEqual(['remote_write', 'remote_write']);
      expect(JSON.stringify([first, second])).not.toContain(credential);
    });

    it('reads the password again after the receiver rejects it (rotated in the store)', async () => {
      const [old, rotated] = ['glc_rw-password-before-rotation-01', 'glc_rw-password-after-rotation-002'];
      secrets.push(old, rotated);
      const sim = await portal();
      const aws = await awsFake({ parameters: { '/posture/lambda-test/rw-rotated': old } });
      let accepted = old;
      const rw = await receiver(() => basic(accepted));
      const env = envFor(sim, 'rw-rotated', bothSinksWithStoredPassword(rw, '/posture/lambda-test/rw-rotated'));
      const { invoke } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });
      expect((await invoke()).sinks.map((s) => s.ok)).toEqual([true, true]);

      aws.parameters.set('/posture/lambda-test/rw-rotated', rotated);
      accepted = rotated;
      clock.advance(300_000);
      const rejected = await invoke();
      expect(rejected.sinks).toEqual([
        { sink: 'pushgateway', ok: true, durationMs: expect.any(Number) },
        { sink: 'remote_write', ok: false, durationMs: expect.any(Number), error: expect.stringContaining('401') },
      ]);
      expect(aws.calls).toHaveLength(1);

      clock.advance(300_000);
      expect((await invoke()).sinks.map((s) => s.ok)).toEqual([true, true]);
      expect(aws.calls.map((c) => c.target)).toEqual(['AmazonSSM.GetParameter', 'AmazonSSM.GetParameter']);
      expect(rw.requests.map((r) => r.headers.authorization)).toEqual([basic(old), basic(old), basic(rotated)]);
    });

    it('fails only the remote-write sink when its password cannot be read, and reads the store again next time', async () => {
      const password = 'glc_rw-password-stored-late-4567';
      secrets.push(password);
      const sim = await portal();
      const aws = await awsFake();
      const rw = await receiver(() => basic(password));
      const env = envFor(sim, 'rw-missing', bothSinksWithStoredPassword(rw, '/posture/lambda-test/rw-missing'));
      const { invoke, records } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });

      // Not thrown: the collection worked and the Pushgateway took it.
      const first = await invoke();
      expect(first.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
      expect(first.sinks).toEqual([
        { sink: 'pushgateway', ok: true, durationMs: expect.any(Number) },
        {
          sink: 'remote_write',
          ok: false,
          durationMs: expect.any(Number),
          error:
            'cannot read the remote-write password from SSM parameter /posture/lambda-test/rw-missing (ParameterNotFound: Parameter /posture/lambda-test/rw-missing not found.): check it exists and the process may read it (IAM: ssm:GetParameter / secretsmanager:GetSecretValue and kms:Decrypt).',
        },
      ]);
      expect(rw.requests).toEqual([]);
      expect(records().filter((l) => l.message === 'push failed').map((l) => l.sink)).toEqual(['remote_write']);
      const g1 = await pushgatewayGroups(pgw.url);
      expect(successOf(g1, 'rw-missing')).toEqual({ vitals: 1, alerts: 1, devices: 1 });
      expect(sourceGroups(g1, 'rw-missing')).toEqual(['portal=rw-missing,source=alerts', 'portal=rw-missing,source=devices', 'portal=rw-missing,source=resolved', 'portal=rw-missing,source=vitals']);

      aws.parameters.set('/posture/lambda-test/rw-missing', password);
      clock.advance(300_000);
      const second = await invoke();
      expect(second.sinks.map((s) => [s.sink, s.ok])).toEqual([
        ['pushgateway', true],
        ['remote_write', true],
      ]);
      expect(aws.calls.map((c) => c.target)).toEqual(['AmazonSSM.GetParameter', 'AmazonSSM.GetParameter']);
      expect(rw.requests.map((r) => r.headers.authorization === basic(password))).toEqual([true]);
      // The failed read went out with this push as the remote-write sink's outcome.
      const g2 = await pushgatewayGroups(pgw.url);
      expect(familiesOf(g2.get('portal=rw-missing')!.samples, ['posture_push_success'])).toEqual(new Map([
        ['posture_push_success{sink="pushgateway"}', 1],
        ['posture_push_success{sink="remote_write"}', 0],
      ]));
      expect(pushed(rw, 0).get('posture_push_success{sink="remote_write"}')).toBe(0);
    });

    it('throws when remote write is the only sink and its token cannot be read', async () => {
      const sim = await portal();
      const aws = await awsFake();
      const rw = await receiver(() => 'Bearer never-read');
      const env = envFor(sim, 'rw-only', { POSTURE_PUSH: 'remote_write', POSTURE_REMOTE_WRITE_URL: `${rw.url}/api/v1/push`, POSTURE_REMOTE_WRITE_BEARER_TOKEN_SECRET_ID: 'posture/lambda-test/rw-absent' });
      const { failure } = lambda(env, { keyStore: { clientConfig: aws.clientConfig } });
      const err = await failure();
      expect(err).toBeInstanceOf(InvocationFailedError);
      expect(err.message).toBe(
        "nothing could be pushed: remote_write: cannot read the remote-write bearer token from secret posture/lambda-test/rw-absent (ResourceNotFoundException: Secrets Manager can't find the specified secret.): check it exists and the process may read it (IAM: ssm:GetParameter / secretsmanager:GetSecretValue and kms:Decrypt).",
      );
      expect(err.summary!.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
      expect(rw.requests).toEqual([]);
    });
  });

  it('collects several portals from POSTURE_CONFIG, each within its own budget, one failing without touching the other', async () => {
    // The good portal allows 4 requests a minute and holds 2,000 alerts: pages of 100 would need 20.
    const good = await portal({ alerts: 2_000, rateLimit: { requests: 4, windowMs: 60_000 } });
    const bad = await portal();
    const wrong = 'wrong-key-for-multi-000000000000';
    secrets.push(wrong);
    const config = {
      push: 'pushgateway',
      pushgateway_url: pgw.url,
      portals: [
        { portal: 'multi-good', base_url: good.baseUrl, api_key: KEY, requests_per_minute: 4, page_size: 100 },
        { portal: 'multi-bad', base_url: bad.baseUrl, api_key: wrong, requests_per_minute: 4 },
      ],
    };
    const { invoke } = lambda({ POSTURE_CONFIG: JSON.stringify(config) });
    const at = clock.now();
    const summary = await invoke();

    expect(summary.portals).toEqual([
      // The sources' 4 requests fill the good portal's share of 4; the resolved-alerts pass (due in a cold container) comes last
      // and its request would start in the next window, after the invocation's deadline (60 s less the 10 s margin): late, unsent.
      { portal: 'multi-good', sources: { vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: expect.stringMatching(/^\/alerts is late: its next request could start at .* after its deadline/) }, requests: 4, durationMs: expect.any(Number) },
      { portal: 'multi-bad', sources: { vitals: expect.stringContaining('(401)'), alerts: expect.stringContaining('(401)'), devices: expect.stringContaining('(401)'), resolved: expect.stringContaining('(401)') }, requests: 1, durationMs: expect.any(Number) },
    ]);
    // Each portal spent only its own budget: no 429, no wait for a slot (the clock never moved).
    expect(good.requests.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(good.requests.every((r) => r.time === at)).toBe(true);
    expect(bad.requests.map((r) => r.status)).toEqual([401]);

    const groups = await pushgatewayGroups(pgw.url);
    const expected = expectedFromPortal(good, at);
    for (const source of SOURCES) {
      expect(familiesOf(groups.get(`portal=multi-good,source=${source}`)?.samples, CHECKED[source]), source).toEqual(expected[source]);
    }
    expect(valueIn(groups.get('portal=multi-good')?.samples, 'posture_collection_alerts_page_size', {})).toBe(0);
    expect(successOf(groups, 'multi-good')).toEqual({ vitals: 1, alerts: 1, devices: 1 });
    expect(sourceGroups(groups, 'multi-bad')).toEqual([]);
    expect(successOf(groups, 'multi-bad')).toEqual({ vitals: 0, alerts: 0, devices: 0 });
  });
});
