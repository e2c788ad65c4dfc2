/**
 * The table as the ledger of `once`, `check-config` and the Lambda handler (in this process),
 * against dynalite and the simulated portal: a table that works holds every request the run sent;
 * a table that does not exist fails the run with one cause naming it, and no request reaches the
 * portal.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { portalIdentity } from '../../src/config/identity.js';
import { systemClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { createHandler, InvocationFailedError } from '../../src/runtime/lambda.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { openTable } from '../../src/state/table.js';
import { lambdaContext, scheduledEvent } from '../lambda/support.js';
import { startReceiver, type Receiver } from '../sinks/receiver.js';
import { runMain } from '../support/cli.js';
import { useDynalite } from '../support/dynalite.js';

const KEY = 'sim-table-runs-key-0123456789';
/** What the run's last line says when the table does not exist (the CLI's summary; the Lambda's error). */
const MISSING =
  'the DynamoDB table no-such-ledger (POSTURE_STATE_TABLE) does not exist in us-east-1: create it with the two commands of docs/serverless.md, "Creating the ledger table" (aws dynamodb create-table, then update-time-to-live), or correct POSTURE_STATE_TABLE or the region (AWS_REGION); no request goes to the portal while its share cannot be counted';

const tables = useDynalite('posture-exporter-test-ledger');
let sim: Simulator;
let receiver: Receiver;
let dir: string;

beforeEach(async () => {
  // A week of resolved history, which the pass reads in one request: a run's sources and the pass fit one window of 10.
  sim = await startSimulator({ keys: [{ key: KEY }], moving: false, resolvedHistoryDays: 7 });
  receiver = await startReceiver();
  dir = mkdtempSync(join(tmpdir(), 'table-runs-'));
});
afterEach(async () => {
  await sim.close();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The requests of the resolved-alerts pass the portal received. */
const passRequests = () => sim.requests.filter((r) => r.path === '/alerts' && r.query.filter === 'resolved');

const portalEnv = () => ({ POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_STATE_DIR: join(dir, 'state') });

/** The requests of the other slow sources (the access settings, the directory) the portal received. */
const accessOrDirectoryRequests = () => sim.requests.filter((r) => r.path.startsWith('/settings/usermanagement/') || r.path === '/users');

/** The entry the two runs below read (POSTURE_PORTAL), so that its slow jobs' records can be named. */
const ENTRY = 'acme';

/**
 * Records in the table, through its own pass ledger and as a run of entry `ENTRY` claims them, that
 * the access settings (hourly) and the directory (daily), at their default intervals, ran a moment
 * ago: the runs below then owe neither, and the pass alone joins the live sources.
 */
async function accessAndDirectoryJustRan(): Promise<void> {
  const { passes } = tables.open(openTable(tables.table, memoryLogger(), systemClock));
  // An entry's slow job other than the pass is remembered as the entry's name and the job's, NUL between.
  for (const [job, intervalMs] of [['access', 3_600_000], ['directory', 86_400_000]] as const) {
    expect((await passes.claim(portalIdentity(sim.baseUrl), `${ENTRY}\u0000${job}`, intervalMs)).due).toBe(true);
  }
}

describe('once with POSTURE_STATE_TABLE', () => {
  it('records its requests in the table, not in the state directory', async () => {
    const ran = await runMain(['once'], { env: { ...portalEnv(), POSTURE_STATE_TABLE: tables.table } });
    expect(ran.code).toBe(0);
    // The three sources' 4 requests and the resolved-alerts pass's (the table holds no pass of this portal yet).
    expect(sim.requests).toHaveLength(5);
    const items = await tables.db.items(tables.table, portalIdentity(sim.baseUrl));
    expect(items.map((i) => i.n)).toEqual([1, 2, 3, 4, 5]);
    expect(existsSync(join(dir, 'state'))).toBe(false);
  });

  it('remembers the resolved-alerts pass in the table: the next once within its interval skips it', async () => {
    // A share of 10: both runs' requests fit one window (the table counts the first run's against the second):
    // the access settings and the directory ran a moment ago, so the first run sends the sources' 4 and the pass's 1.
    await accessAndDirectoryJustRan();
    const env = { ...portalEnv(), POSTURE_STATE_TABLE: tables.table, POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_PORTAL: ENTRY };
    const first = await runMain(['once'], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('source="resolved"} 1');
    const [sent, passed] = [sim.requests.length, passRequests().length];
    expect([sent, passed]).toEqual([5, 1]);
    // Another process, nothing in common with the first but the table: the sources' 4 requests, no pass.
    const second = await runMain(['once'], { env });
    expect(second.code, second.stderr).toBe(0);
    expect(sim.requests).toHaveLength(sent + 4);
    expect(passRequests()).toHaveLength(passed);
    // No pass: of its series only its configured interval.
    expect(second.stdout).not.toMatch(/^posture_collection_success\{[^}]*source="resolved"/m);
    expect(accessOrDirectoryRequests()).toEqual([]);
    expect(existsSync(join(dir, 'state'))).toBe(false);
  });

  it('fails on a table that does not exist, naming it, before any request reaches the portal', async () => {
    const ran = await runMain(['once'], { env: { ...portalEnv(), POSTURE_STATE_TABLE: 'no-such-ledger' } });
    expect(ran.code).toBe(1);
    expect(sim.requests).toEqual([]);
    const lines = ran.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toBe(`posture-exporter: collection failed for: vitals, alerts, devices, resolved: ${MISSING}`);
    // One error line for the portal, with the reason `ledger` and the table named; nothing else went wrong.
    const records = lines.slice(0, -1).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.filter((r) => r.level === 'error').map((r) => [r.portal, r.reason, r.msg])).toEqual([['127.0.0.1', 'ledger', `collecting failed before any request: ${MISSING}`]]);
    expect(records.filter((r) => r.level === 'warn')).toEqual([]);
  });

  it('is named by check-config, and the state directory it does not use is not', async () => {
    const ran = await runMain(['check-config'], { env: { ...portalEnv(), POSTURE_STATE_TABLE: tables.table } });
    expect(ran.code).toBe(0);
    const lines = ran.stdout.split('\n');
    expect(lines).toContain(`requests recorded in the DynamoDB table ${tables.table} (POSTURE_STATE_TABLE), shared by every process that uses it, with each entry's resolved-alerts passes (no state directory is used for them)`);
    // Not the state directory, which these runs do not use.
    expect(lines.filter((l) => l.startsWith('state directory:'))).toEqual([]);
  });
});

describe('the Lambda handler with POSTURE_STATE_TABLE', () => {
  const handlerWith = (table: string, more: Record<string, string> = {}) =>
    createHandler({ env: { ...portalEnv(), POSTURE_STATE_TABLE: table, POSTURE_PUSH: 'remote_write', POSTURE_REMOTE_WRITE_URL: `${receiver.url}/api/v1/write`, ...more }, write: () => undefined });

  it('records its requests in the table', async () => {
    await handlerWith(tables.table)(scheduledEvent(Date.now()), lambdaContext(120_000, 'req-table-1'));
    // The sources' 4 and the resolved-alerts pass's (the table holds no pass of this portal yet).
    expect(sim.requests).toHaveLength(5);
    const items = await tables.db.items(tables.table, portalIdentity(sim.baseUrl));
    expect(items.filter((i) => i.at! >= sim.requests[0]!.time - 1_000)).toHaveLength(5);
    expect(existsSync(join(dir, 'state'))).toBe(false);
  });

  it('remembers the resolved-alerts pass in the table: a cold container within its interval skips it', async () => {
    // A share of 10: both invocations' requests fit one window (the table counts the first's against the second):
    // the access settings and the directory ran a moment ago, so the first sends the sources' 4 and the pass's 1.
    await accessAndDirectoryJustRan();
    const share = { POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_PORTAL: ENTRY };
    const first = await handlerWith(tables.table, share)(scheduledEvent(Date.now()), lambdaContext(120_000, 'req-table-3'));
    expect(first.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok', resolved: 'ok' });
    const [sent, passed] = [sim.requests.length, passRequests().length];
    expect([sent, passed]).toEqual([5, 1]);
    // A second container (a handler of its own): it shares only the table with the first. The sources' 4 requests, no slow job.
    const second = await handlerWith(tables.table, share)(scheduledEvent(Date.now()), lambdaContext(120_000, 'req-table-4'));
    expect(second.portals[0]!.sources).toEqual({ vitals: 'ok', alerts: 'ok', devices: 'ok' });
    expect(sim.requests).toHaveLength(sent + 4);
    expect(passRequests()).toHaveLength(passed);
    expect(accessOrDirectoryRequests()).toEqual([]);
  });

  it('fails on a table that does not exist, naming it, before any request reaches the portal', async () => {
    const err = await handlerWith('no-such-ledger')(scheduledEvent(Date.now()), lambdaContext(120_000, 'req-table-2')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InvocationFailedError);
    expect((err as Error).message).toBe(`nothing could be collected (vitals, alerts, devices, resolved): ${MISSING}`);
    expect(sim.requests).toEqual([]);
  });
});
