// The access settings and the directory as the user runs them (`once`, on a FakeClock): every family exact
// against a naive count of the same JSON the simulated portal serves (made here, not by the fold), with
// several roles of different permissions, accounts in every state and unknown words, invalid records,
// teams past the series cap, 20,000 directory users with unset times and times on both sides of every
// threshold, and a portal that caps its pages at 200. A 403 on the settings leaves every other source
// exact, and no username, name, surname or email appears in anything the run wrote.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { FakeClock } from '../../src/core/clock.js';
import { memoryLogger } from '../../src/core/log.js';
import { Exporter } from '../../src/exporter/exporter.js';
import { PassMemory } from '../../src/schedule/passes.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { runMain } from '../support/cli.js';

const KEY = 'sim-access-directory-key-0123456789';
const T0 = Date.UTC(2026, 10, 22, 12);
const DAY_MS = 86_400_000;
const UNSET = '0001-01-01T00:00:00.0000000';

/** A time `ms` before the run's start (T0), as the API writes it (seven fractional digits, no zone). */
const before = (ms: number) => `${new Date(T0 - ms).toISOString().slice(0, 23)}0000`;

/** A small deterministic generator, so the data is many-sided but the same on every run. */
function rng(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s >>> 8) % n;
  };
}

/** Personal words of the data: none of them may appear in anything the run wrote. */
const PERSONAL: string[] = [];
const person = (i: number) => {
  const p = { username: `zq${i}.personal@secret-mail.example`, name: `Zephyrine${i}`, surname: `Quillfeather${i}` };
  PERSONAL.push(p.username, p.name, p.surname);
  return p;
};

const PERMISSIONS = ['deviceVisibility', 'userVisibility', 'integrations', 'apiKeys', 'users', 'roles', 'teams', 'ssoSetup', 'vitals'];
const ROLES: unknown[] = [
  { id: 'superAdmin', name: 'Super Admin', description: 'all', default: true, permissions: Object.fromEntries(PERMISSIONS.map((p) => [p, p.endsWith('Visibility') ? 'All' : 'Manage'])), users: [person(9001)] },
  { id: 'analyst', name: 'Analyst', description: 'x', default: true, permissions: { deviceVisibility: 'All', userVisibility: 'All', integrations: 'Action', apiKeys: 'None', users: 'None' }, users: [] },
  { id: 'viewer', name: 'Viewer', description: 'x', default: true, permissions: { deviceVisibility: 'Team', apiKeys: 'None', vitals: 'Export' }, users: [] },
  { id: '6a1c5e0e-2f8b-4d5a-9a57-0d1c2b3a4f50', name: 'Key Keeper', description: 'x', default: false, permissions: { apiKeys: 'Manage', deviceVisibility: 'None', ssoSetup: 'Manage' }, users: [person(9002)] },
  { id: '7b2d6f1f-3a9c-4e6b-8b68-1e2d3c4b5a61', name: 'Auditor', description: 'x', default: false, permissions: {}, users: [] },
  // Invalid: a level that is not a word, and a role with no id; and the same id twice (the first is kept).
  { id: 'broken', name: 'Broken', description: 'x', default: false, permissions: { apiKeys: 7 }, users: [] },
  { name: 'No Id', description: 'x', default: false, permissions: {}, users: [] },
  { id: 'analyst', name: 'Analyst again', description: 'x', default: true, permissions: { users: 'Manage' }, users: [] },
];
const ROLE_IDS = ['superAdmin', 'analyst', 'viewer', '6a1c5e0e-2f8b-4d5a-9a57-0d1c2b3a4f50', '7b2d6f1f-3a9c-4e6b-8b68-1e2d3c4b5a61', 'retiredRole'];
const STATUS = ['enabled', 'disabled', 'pending'];

/** 90 accounts in every state (an unknown role id and the word `pending` among them), and 5 invalid ones. */
function accounts(): unknown[] {
  const r = rng(7);
  const out: unknown[] = Array.from({ length: 90 }, (_, i) => ({ ...person(i), roleid: ROLE_IDS[r(ROLE_IDS.length)], mfastatus: STATUS[r(3)], enabled: r(4) !== 0, ssostatus: STATUS[r(3)], currentteams: [] }));
  out.push({ ...person(100), roleid: '', mfastatus: 'enabled', enabled: true, ssostatus: 'enabled', currentteams: [] });
  out.push({ ...person(101), roleid: 'analyst', mfastatus: ' ', enabled: true, ssostatus: 'enabled', currentteams: [] });
  out.push({ ...person(102), roleid: 'analyst', mfastatus: 'enabled', enabled: 'yes', ssostatus: 'enabled', currentteams: [] });
  out.push({ ...person(103), roleid: 'analyst', mfastatus: 'enabled', enabled: true, currentteams: [] });
  out.push(null);
  return out;
}

/** 15 teams of 0 to 14 members (two share a name and add up), and one invalid (no name). */
function teams(): unknown[] {
  const out: unknown[] = Array.from({ length: 15 }, (_, i) => ({ id: `t-${i}`, name: i === 14 ? 'Team 3' : `Team ${i}`, members: Array.from({ length: i }, (_, k) => person(1000 + i * 20 + k)) }));
  out.push({ id: 't-x', name: '', members: [person(2000)] });
  return out;
}

/**
 * 20,000 directory users: unset activity, activity exactly 45 and 90 days before the start and a second either
 * side, failed logins exactly 1 and 7 days before, a second inside, after the start, unset or missing, and the
 * rest spread over a year; 3 invalid records.
 */
function directory(): unknown[] {
  const r = rng(11);
  const edges = [45, 90].flatMap((d) => [d * DAY_MS - 1000, d * DAY_MS, d * DAY_MS + 1000]);
  const fails = [1, 7].flatMap((d) => [d * DAY_MS - 1000, d * DAY_MS, d * DAY_MS + 1000]).concat([-5000]);
  const out: unknown[] = Array.from({ length: 19_997 }, (_, i) => {
    const activity = i % 10 === 0 ? UNSET : before(i < 90 ? edges[i % edges.length]! : r(400) * DAY_MS + r(DAY_MS));
    const failedKind = r(5);
    const failed = failedKind === 0 ? undefined : failedKind === 1 ? { lastLoginTime: UNSET, lastLoginLocation: {} } : { lastLoginTime: before(i < 200 ? fails[i % fails.length]! : r(10 * DAY_MS)), lastLoginLocation: {} };
    const p = i < 50 ? person(5000 + i) : { name: 'n', email: 'e' };
    return { ...p, lastActivity: activity, lastSuccessLogin: { lastLoginTime: activity }, ...(failed ? { lastFailedLogin: failed } : {}), recentDevices: [] };
  });
  out.push({ ...person(6000), lastActivity: 42 }, { ...person(6001), lastActivity: 'yesterday' }, { ...person(6002), lastActivity: UNSET, lastFailedLogin: { lastLoginTime: 'soon' } });
  return out;
}

// ------------------------------------------------------------------------------ the naive count

/** The Unix ms of an API time, null when unset; undefined when it is not one. */
function timeOf(v: unknown): number | null | undefined {
  if (v === UNSET) return null;
  if (typeof v !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}$/.test(v)) return undefined;
  return Date.parse(`${v.slice(0, 23)}Z`);
}

/** Every series the access and directory families should have, counted plainly from the records. */
function expectedSeries(data: { portalUsers: unknown[]; roles: unknown[]; teams: unknown[]; directoryUsers: unknown[] }, cap: number): Map<string, number> {
  const out = new Map<string, number>();
  const add = (key: string, n: number) => out.set(key, (out.get(key) ?? 0) + n);
  const word = (v: unknown) => typeof v === 'string' && v.trim() !== '';
  for (const a of data.portalUsers as Array<Record<string, unknown> | null>) {
    if (!a || !word(a.roleid) || !word(a.mfastatus) || !word(a.ssostatus) || typeof a.enabled !== 'boolean') continue;
    add(`posture_portal_users{portal="p",role="${a.roleid}",enabled="${a.enabled}",mfa="${a.mfastatus}",sso="${a.ssostatus}"}`, 1);
  }
  const seen = new Set<string>();
  for (const r of data.roles as Array<Record<string, unknown>>) {
    const perms = r.permissions as Record<string, unknown>;
    if (!word(r.id) || Object.values(perms).some((l) => !word(l)) || seen.has(r.id as string)) continue;
    seen.add(r.id as string);
    add(`posture_portal_role_info{portal="p",role="${r.id}",name="${r.name}",default="${r.default}"}`, 1);
    for (const [p, l] of Object.entries(perms)) add(`posture_portal_role_permission{portal="p",role="${r.id}",permission="${p}",level="${l}"}`, 1);
  }
  const members = new Map<string, number>();
  for (const t of data.teams as Array<Record<string, unknown>>) if (word(t.name)) members.set(t.name as string, (members.get(t.name as string) ?? 0) + (t.members as unknown[]).length);
  // The largest cap − 1 teams kept (ties by name), the rest in __other__.
  const bySize = [...members].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const kept = bySize.length <= cap ? bySize : bySize.slice(0, cap - 1);
  for (const [name, n] of kept) add(`posture_portal_team_members{portal="p",team="${name}"}`, n);
  if (kept.length < bySize.length) add('posture_portal_team_members{portal="p",team="__other__"}', bySize.slice(kept.length).reduce((n, [, m]) => n + m, 0));
  add('posture_series_folded{portal="p",family="posture_portal_team_members"}', bySize.length - kept.length);
  let users = 0;
  const inactive = { 45: 0, 90: 0 };
  const failed = { '1d': 0, '7d': 0 };
  for (const u of data.directoryUsers as Array<Record<string, unknown>>) {
    const active = timeOf(u.lastActivity);
    const f = u.lastFailedLogin === undefined ? null : timeOf((u.lastFailedLogin as Record<string, unknown>).lastLoginTime);
    if (active === undefined || f === undefined) continue;
    users++;
    for (const d of [45, 90] as const) if (active === null || T0 - active > d * DAY_MS) inactive[d]++;
    for (const [w, days] of [['1d', 1], ['7d', 7]] as const) if (f !== null && T0 - f < days * DAY_MS) failed[w]++;
  }
  add('posture_directory_users{portal="p"}', users);
  for (const d of [45, 90]) add(`posture_directory_users_inactive{portal="p",days="${d}"}`, inactive[d as 45 | 90]);
  for (const w of ['1d', '7d']) add(`posture_directory_users_failed_login{portal="p",window="${w}"}`, failed[w as '1d' | '7d']);
  return out;
}

/** The series of the access and directory families (and the teams' fold) in a Prometheus text exposition. */
function seriesIn(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!/^posture_(portal_|directory_|series_folded\{portal="p",family="posture_portal_team)/.test(line)) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe('the access settings and the directory in once', () => {
  let sim: Simulator;
  const data = { portalUsers: accounts(), roles: ROLES, teams: teams(), directoryUsers: directory() };
  const env = (more: Record<string, string> = {}) => ({ POSTURE_BASE_URL: sim.baseUrl, POSTURE_API_KEY: KEY, POSTURE_PORTAL: 'p', POSTURE_REQUESTS_PER_MINUTE: '10', POSTURE_MAX_SERIES_PER_FAMILY: '10', ...more });
  beforeAll(async () => {
    sim = await startSimulator({ clock: new FakeClock(T0), keys: [{ key: KEY }], rateLimit: false, moving: false, maxPageSize: 200 });
    sim.setFixture(data);
  });
  afterAll(() => sim.close());

  it('counts every family exactly, with unset times, both sides of every threshold and pages capped at 200, and writes no personal data', async () => {
    // The boundaries are in the data: exactly 45 d before is not inactive, a second more is; exactly 1 d before is not a failed login in 1d.
    const clock = new FakeClock(T0, { autoAdvance: true });
    const from = sim.requests.length;
    const once = await runMain(['once'], { env: env(), clock });
    expect(once.code, once.stderr).toBe(0);
    expect(seriesIn(once.stdout)).toEqual(expectedSeries(data, 10));
    // The invalid records: 5 accounts, 2 roles and the repeated one, 1 team; 3 directory users.
    expect(once.stdout).toContain('posture_collection_invalid_records{portal="p",source="access"} 9');
    expect(once.stdout).toContain('posture_collection_invalid_records{portal="p",source="directory"} 3');
    expect(once.stdout).toContain('posture_collection_success{portal="p",source="access"} 1');
    expect(once.stdout).toContain('posture_collection_success{portal="p",source="directory"} 1');
    // Every directory user read once, in pages of the portal's cap: 20,000 / 200 = 100 requests.
    const users = sim.requests.slice(from).filter((q) => q.path === '/users');
    expect(users.map((q) => q.query.filter)).toEqual(Array(100).fill('all'));
    expect(users.every((q) => q.status === 200)).toBe(true);
    for (const word of PERSONAL) expect(once.stdout + once.stderr, word).not.toContain(word);
  }, 60_000);

  it('a run of capped time (the Lambda\'s) that knows the directory needs 100 pages gives it back, says why once, and reads the rest', async () => {
    const clock = new FakeClock(T0, { autoAdvance: true });
    const logger = memoryLogger({ secrets: [KEY] });
    const exporter = new Exporter(loadConfig({ env: env({ POSTURE_DIRECTORY_INTERVAL_SECONDS: '3600', POSTURE_ACCESS_INTERVAL_SECONDS: '86400', POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS: '86400' }) }), { clock, logger, runtime: 'lambda', passes: new PassMemory(() => clock.monotonic()) });
    // A first run learns the directory's 20,000 users and the cap of 200: 100 pages.
    const [first] = await exporter.collect();
    expect(first!.directory?.ok).toBe(true);
    clock.set(clock.now() + 3_600_000);
    const from = sim.requests.length;
    // An hour on, the directory alone is due again (the other slow jobs are daily here); the run has 150 s, and 100 pages at
    // 10/min need ten windows.
    const [second] = await exporter.collect({ cap: clock.monotonic() + 150_000 });
    expect(sim.requests.slice(from).filter((q) => q.path === '/users')).toEqual([]);
    expect(second!.directory).toBeUndefined();
    expect([second!.vitals.ok, second!.alerts.ok, second!.devices.ok]).toEqual([true, true, true]);
    // Of the warnings (the fixture's invalid records aside), one says why the directory waits.
    const warned = logger.records().filter((r) => r.level === 'warn' && String(r.msg).includes('time'));
    expect(warned.map((r) => [r.source, String(r.msg).replace(/\d+ s/g, 'N s')])).toEqual([
      ['directory', "the directory (/users?filter=all) does not fit this run's time: the run would need at least N s at 10/min and has N s, so it is given back; read it with serve, or give the run more time (the Lambda's timeout, POSTURE_CYCLE_TIMEOUT_SECONDS)"],
    ]);
    // Given back: the next run with the time to read it does.
    const [third] = await exporter.collect();
    expect(third!.directory?.ok).toBe(true);
  }, 60_000);

  it('fails only the access settings on a 403, naming the permission to grant, and leaves every other source exact', async () => {
    // Each run from the same start, so the families of time read the same.
    const base = await runMain(['once'], { env: env(), clock: new FakeClock(T0, { autoAdvance: true }) });
    sim.addFault({ path: '/settings/usermanagement/roles', times: 1, fault: { kind: 'status', status: 403 } });
    const denied = await runMain(['once'], { env: env(), clock: new FakeClock(T0, { autoAdvance: true }) });
    sim.clearFaults();
    expect(denied.code).toBe(1);
    expect(denied.stdout).toContain('posture_collection_success{portal="p",source="access"} 0');
    for (const s of ['vitals', 'alerts', 'devices', 'resolved', 'directory']) expect(denied.stdout).toContain(`posture_collection_success{portal="p",source="${s}"} 1`);
    // One line, naming the permission.
    const lines = denied.stderr.split('\n').filter((l) => l.includes('collecting access failed'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("/settings/usermanagement/roles (403): give the key's role the matching settings permission (users, roles, teams)");
    // The other families as in a run without the fault (the portal's data does not move).
    const others = (t: string) => t.split('\n').filter((l) => /^posture_(vitals|alerts|devices|directory)_/.test(l) && !l.startsWith('posture_alerts_oldest'));
    expect(others(denied.stdout)).toEqual(others(base.stdout));
    expect(denied.stdout).not.toMatch(/^posture_portal_/m);
  }, 60_000);
});
