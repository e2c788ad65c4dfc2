/**
 * The Lambda handler invoked in-process, as Lambda invokes it (an EventBridge scheduled event and a
 * context whose remaining time the test sets), against the simulated portal, pushing to Debian's
 * Pushgateway: what it collects and pushes, failing sources and sinks, the deadline, warm starts
 * and several portals. Its settings and key stores: handler-settings.e2e.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createHandler, InvocationFailedError } from '../../src/runtime/lambda.js';
import { freePort } from '../support/peers.js';
import { startReceiver } from '../sinks/receiver.js';
import { CHECKED, expectedFromPortal, familiesOf, pushgatewayGroups, scheduledEvent, valueIn } from './support.js';
import { followRealTime } from '../support/real-time.js';
import { clock, envFor, fakes, handlerPerTest, KEY, lambda, logs, pgw, portal, secrets, SOURCES, sourceGroups, successOf } from './handler-harness.js';

handlerPerTest();

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
    const { invoke, records } = lambda({ POSTURE_CONFIG: JSON.stringify(config) });
    const at = clock.now();
    const summary = await invoke();

    // A cold container has no record of any slow source, so all three are due. In each portal's window of 4 the live
    // sources take 1 (Vitals) + 2 (devices) + 1 (/alerts) = 4, leaving 0: the access settings (3 requests) and the
    // directory (1) do not fit and are given back. The first due, the resolved-alerts pass, would run, but its request
    // is the 5th at 4 a minute, in the next window, after the invocation's 60 s less the 10 s margin: it is given back
    // before any request too, with one warning per portal. So each summary holds the live sources only.
    expect(summary.portals).toEqual([
      { portal: 'multi-good', sources: { vitals: 'ok', alerts: 'ok', devices: 'ok' }, requests: 4, durationMs: expect.any(Number) },
      { portal: 'multi-bad', sources: { vitals: expect.stringContaining('(401)'), alerts: expect.stringContaining('(401)'), devices: expect.stringContaining('(401)') }, requests: 1, durationMs: expect.any(Number) },
    ]);
    const givenBack = records().filter((l) => String(l.message).includes('does not fit this run\'s time'));
    expect(givenBack.map((l) => [l.portal, l.source, l.level])).toEqual([
      ['multi-good', 'resolved', 'WARN'],
      ['multi-bad', 'resolved', 'WARN'],
    ]);
    expect([...good.requests, ...bad.requests].filter((r) => r.path !== '/vitals' && r.path !== '/devices' && !(r.path === '/alerts' && r.query.filter === 'allunresolved'))).toEqual([]);
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
