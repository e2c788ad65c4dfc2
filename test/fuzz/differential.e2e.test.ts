// Differential fuzz through the built CLI (`npm run build` first): random valid bodies for /alerts,
// /vitals and /devices (every JSON escape, surrogate pairs and lone surrogates, control characters,
// non-ASCII, numbers in every notation, whitespace anywhere, unknown members with nested values),
// served from a tiny HTTP server on 127.0.0.1 in random chunks (1 byte to 64 KiB, with pauses).
// `node dist/cli.js once --format json` must export exactly what JSON.parse of the bodies served
// gives, computed here independently: label values are the strings JSON.parse yields as UTF-8
// writes them (the JSON renderer escapes a NUL or control character, and JSON.parse of its output
// gives it back whole; a lone surrogate has no UTF-8 form and is written U+FFFD, so text written
// alike is one series, its counts added up), one series per label set. The cases mix in what the
// spec allows and is easy to get wrong: unset creation times (the minimum date), products and
// Vitals keys that differ only in lone surrogates, blank products.
// The portal answers /alerts by its filter (spec: `filter=resolved` returns resolved alerts): the
// open list to the open alerts, a list of resolved alerts of its own to the resolved-alerts pass,
// which every run here makes (each has a state directory of its own, so none has a record of one).
// Their resolution times lie 0 to 40 days before the case was made, never within 10 minutes of a
// whole day before it (so of a window's edge, however long the run takes up to then); a few are unset.
// Seeded: FUZZ_SEED replays a run; a failure names the seed of its case. FUZZ_CASES sets the count.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBuiltCli } from '../support/cli.js';
import { VITALS_FAMILIES } from '../support/families.js';
import { Rng, anyValue, chunks, envelope, int, object, str, text, withUnknown } from './json-gen.js';
import type { AlertRecord as Alert } from '../../src/upstream/schemas.js';

const BASE_SEED = Number(process.env.FUZZ_SEED ?? 7_2026_11);
const CASES = Number(process.env.FUZZ_CASES ?? 24);
const KEY = 'fuzz-key-0123456789abcdef0123';
const encoder = new TextEncoder();

// ------------------------------------------------------------------ the portal's data for one case

type Vitals = { key: string; name: string; vitalsEnabled: true; funnel: number[] } | { key: string; name: string; vitalsEnabled: false; activeAgents: number };
const FUNNEL = ['agentDeployedPossibleCompliant', 'agentDeployedCompliant', 'agentFunctioningPossibleCompliant', 'agentFunctioningCompliant', 'configurationPossibleCompliant', 'configurationCompliant'] as const;

/** A record of `/alerts?filter=resolved`: an alert with its acknowledgement and resolution times (spec 2.6). */
type ResolvedAlert = Alert & { acknowledgedTime: string; resolvedTime: string };

interface Case {
  alerts: Alert[];
  /** What `/alerts?filter=resolved` lists. */
  resolved: ResolvedAlert[];
  vitals: Vitals[];
  devices: { active: number; inactive: number };
}

/** Text with a chance of padding, commas and case changes that the label rules trim or fold. */
const messy = (rng: Rng, base: string) => rng.pick(['', ' ', '\t', '\n']) + (rng.chance(0.5) ? base.toUpperCase() : base) + rng.pick(['', ' ', '\r\n', '\u0000', '\u001f']);

function timestamp(rng: Rng, year: number): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${year}-${two(rng.int(1, 12))}-${two(rng.int(1, 28))}T${two(rng.int(0, 23))}:${two(rng.int(0, 59))}:${two(rng.int(0, 59))}${rng.pick(['', '.0', '.000', '.0000000'])}`;
}

/** The unset timestamp (spec 2.2) as the portal writes it, and as a lenient reader must also take it. */
const UNSET = ['0001-01-01T00:00:00.0000000', '0001-01-01T00:00:00', '0001-01-01T00:00:00.000Z'];

/** The API timestamp (UTC, no zone) of `ms`, a whole second, with a zero fraction or none. */
const apiTime = (rng: Rng, ms: number) => new Date(ms).toISOString().slice(0, 19) + rng.pick(['', '.0', '.000', '.0000000']);

/** Text that differs from `base` only in a lone surrogate: written alike in UTF-8. */
const twin = (rng: Rng, base: string) => base + rng.pick(['\ud800', '\ud801', '\udbff', '\udc00', '\udfff']);

/** `at`: when the case is made (a whole second); the resolved alerts' times are placed before it. */
function makeCase(rng: Rng, at: number): Case {
  const products = Array.from({ length: rng.int(1, 8) }, () => text(rng, 16) + (rng.chance(0.5) ? `, ${text(rng, 6)}` : ''));
  if (rng.chance(0.6)) {
    const base = text(rng, 8);
    products.push(`${twin(rng, base)}, ${text(rng, 4)}`, `${twin(rng, base)}, ${text(rng, 4)}`);
  }
  if (rng.chance(0.4)) products.push(rng.pick(['', ' ', '\t\n', '\u00a0, x', ' , y']));
  const alerts = Array.from({ length: rng.int(0, 180) }, (): Alert => ({
    state: rng.chance(0.8) ? messy(rng, rng.pick(['red', 'amber', 'green'])) : text(rng, 6),
    product: rng.pick(products),
    status: rng.chance(0.8) ? messy(rng, rng.pick(['incident', 'warning', 'info'])) : text(rng, 6),
    ownerName: rng.chance(0.5) ? '' : text(rng, 10) || 'x',
    timestamp: rng.chance(0.1) ? rng.pick(UNSET) : timestamp(rng, rng.int(2020, 2026)),
    resolved: rng.chance(0.1),
    acknowledged: rng.chance(0.3),
    inactiveUntil: rng.pick(['0001-01-01T00:00:00.0000000', timestamp(rng, 2001), timestamp(rng, 2099)]),
  }));
  const keys = new Set<string>();
  while (keys.size < rng.int(0, 12)) keys.add(text(rng, 12) || 'k');
  if (rng.chance(0.5)) {
    const base = text(rng, 6);
    keys.add(twin(rng, base)).add(twin(rng, base));
  }
  const vitals = [...keys].map((key): Vitals => {
    const name = text(rng, 20);
    if (rng.chance(0.3)) return { key, name, vitalsEnabled: false, activeAgents: rng.int(0, 50_000) };
    const funnel = FUNNEL.map(() => rng.int(0, 100_000));
    if (rng.chance(0.5)) {
      // A consistent funnel: each stage's eligible is the previous stage's compliant.
      funnel[1] = Math.min(funnel[1]!, funnel[0]!);
      funnel[2] = funnel[1]!;
      funnel[3] = Math.min(funnel[3]!, funnel[2]!);
      funnel[4] = funnel[3]!;
      funnel[5] = Math.min(funnel[5]!, funnel[4]!);
    }
    return { key, name, vitalsEnabled: true, funnel };
  });
  const devices = { active: rng.int(0, 1_000_000), inactive: rng.int(0, 1_000_000) };
  const resolved = Array.from({ length: rng.int(0, 120) }, (): ResolvedAlert => {
    // Whole days back and at least 10 minutes more, or less: every window (1d, 7d, 30d) is whole days.
    const resolvedAt = at - (rng.int(0, 39) * 86_400 + rng.int(600, 86_400 - 600)) * 1000;
    const created = resolvedAt - rng.int(0, 20 * 86_400) * 1000;
    return {
      state: rng.chance(0.8) ? messy(rng, rng.pick(['red', 'amber', 'green'])) : text(rng, 6),
      product: rng.pick(products),
      status: rng.chance(0.8) ? messy(rng, rng.pick(['incident', 'warning', 'info'])) : text(rng, 6),
      ownerName: rng.chance(0.5) ? '' : text(rng, 10) || 'x',
      timestamp: rng.chance(0.1) ? rng.pick(UNSET) : apiTime(rng, created),
      resolved: true,
      acknowledged: rng.chance(0.5),
      inactiveUntil: rng.pick(['0001-01-01T00:00:00.0000000', timestamp(rng, 2001)]),
      acknowledgedTime: rng.chance(0.5) ? apiTime(rng, created + rng.int(0, (resolvedAt - created) / 1000) * 1000) : rng.pick(UNSET),
      // Resolved, yet with the minimum date: an invalid record (counted, skipped).
      resolvedTime: rng.chance(0.1) ? rng.pick(UNSET) : apiTime(rng, resolvedAt),
    };
  });
  return { alerts, resolved, vitals, devices };
}

// ------------------------------------------------------------------ bodies, written at random

function alertText(rng: Rng, a: Alert | ResolvedAlert, id: number): string {
  const members: Array<readonly [string, string]> = [
    ['state', str(rng, a.state)],
    ['product', str(rng, a.product)],
    ['status', str(rng, a.status)],
    ['ownerName', str(rng, a.ownerName)],
    ['timestamp', str(rng, a.timestamp)],
    ['resolved', String(a.resolved)],
    ['acknowledged', String(a.acknowledged)],
    ['inactiveUntil', str(rng, a.inactiveUntil)],
    ['id', int(rng, id)],
    ['issue', str(rng, text(rng, 40))],
  ];
  if ('resolvedTime' in a) members.push(['acknowledgedTime', str(rng, a.acknowledgedTime)], ['resolvedTime', str(rng, a.resolvedTime)]);
  return object(rng, withUnknown(rng, members, members.map(([k]) => k)));
}

function vitalsText(rng: Rng, v: Vitals): string {
  const members: Array<readonly [string, string]> = [
    ['key', str(rng, v.key)],
    ['name', str(rng, v.name)],
    ['vitalsEnabled', String(v.vitalsEnabled)],
  ];
  if (v.vitalsEnabled) FUNNEL.forEach((f, k) => members.push([f, int(rng, v.funnel[k]!)]));
  else members.push(['activeAgents', int(rng, v.activeAgents)]);
  return object(rng, withUnknown(rng, members, members.map(([k]) => k)));
}

/** The body for one request, written afresh with its own random escapes, spacing and member order. */
function bodyFor(rng: Rng, c: Case, path: string, q: URLSearchParams): string {
  if (path === '/alerts') {
    const offset = Number(q.get('offset') ?? 0);
    const limit = Number(q.get('limit') ?? 0);
    const list = q.get('filter') === 'resolved' ? c.resolved : c.alerts;
    const page = list.slice(offset, limit > 0 ? offset + limit : undefined);
    return envelope(rng, page.map((a, k) => alertText(rng, a, offset + k)), { offset, limit, total: list.length });
  }
  if (path === '/vitals') return envelope(rng, c.vitals.map((v) => vitalsText(rng, v)), { offset: 0, limit: 0, total: c.vitals.length });
  if (path === '/devices') {
    const total = q.get('filter') === 'inactive' ? c.devices.inactive : c.devices.active;
    return envelope(rng, total > 0 ? [anyValue(rng, 3)] : [], { offset: 0, limit: 1, total });
  }
  throw new Error(`unexpected request ${path}`);
}

// ------------------------------------------------------------------ the server

interface Served {
  path: string;
  query: string;
  body: string;
}

let server: Server;
let current: { c: Case; at: number; seed: number; served: Served[] } | undefined;

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const path = url.pathname.replace(/^\/public-api\/v1/, '');
  if (!current || req.headers['x-service-apikey'] !== KEY) {
    res.writeHead(401).end();
    return;
  }
  // Each request has its own stream of randomness, so a case replays whatever order requests come in.
  const rng = new Rng(current.seed ^ hash(path + url.search));
  const body = bodyFor(rng, current.c, path, url.searchParams);
  current.served.push({ path, query: url.search, body });
  const bytes = encoder.encode(body);
  res.socket?.setNoDelay(true);
  res.writeHead(200, { 'content-type': 'application/json', ...(rng.chance(0.5) ? { 'content-length': String(bytes.length) } : {}) });
  for (const piece of chunks(rng, bytes, rng.pick([64, 4096, 64 * 1024]))) {
    if (!res.write(piece)) await new Promise((r) => res.once('drain', r));
    if (rng.chance(0.3)) await new Promise((r) => setTimeout(r, rng.int(0, 3)));
  }
  res.end();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    serve(req, res).catch((err: unknown) => res.destroy(err as Error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

// ------------------------------------------------------------------ what JSON.parse says

type Family = Map<string, number>;
const labelKey = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).filter(([k]) => k !== 'portal').sort(([a], [b]) => (a < b ? -1 : 1)));

/** A string as UTF-8 carries it: encoded and decoded by Node's own codec. */
const written = (s: string) => Buffer.from(s, 'utf8').toString('utf8');
/** The label rules (docs/metrics.md), written again here: severity and type from a fixed vocabulary, integration before the first comma. */
const severity = (state: string) => (['red', 'amber', 'green'].includes(state.trim().toLowerCase()) ? state.trim().toLowerCase() : 'unknown');
const type = (status: string) => (['incident', 'warning', 'info'].includes(status.trim().toLowerCase()) ? status.trim().toLowerCase() : 'unknown');
const integration = (product: string) => written(product.split(',')[0]!.trim()) || 'unknown';
/** Unix seconds of a timestamp; null for the unset minimum date (year 1). */
const seconds = (ts: string) => (ts.startsWith('0001-') ? null : Date.parse(ts.replace(/Z$/, '').replace(/\.0*$/, '') + 'Z') / 1000);

const DATA_FAMILIES = [
  'posture_alerts_open',
  'posture_alerts_unacknowledged',
  'posture_alerts_unassigned',
  'posture_alerts_snoozed',
  'posture_alerts_open_by_integration',
  'posture_alerts_oldest_open_timestamp_seconds',
  'posture_alerts_open_older_than',
  'posture_alerts_over_sla',
  'posture_alerts_oldest_unacknowledged_timestamp_seconds',
  'posture_alerts_resolved',
  ...VITALS_FAMILIES,
  'posture_devices',
];

/** `at`: when the case was made; the resolved-alerts pass ran after it, within far less than 10 minutes. */
function expected(served: readonly Served[], at: number): Map<string, Family> {
  // Every data family is checked, also when it should have no series at all.
  const out = new Map<string, Family>(DATA_FAMILIES.map((name) => [name, new Map()]));
  const set = (name: string, labels: Record<string, string>, v: number) => {
    let f = out.get(name);
    if (!f) out.set(name, (f = new Map()));
    // JSON.parse gives -0 for "-0"; the exported JSON writes it as 0.
    f.set(labelKey(labels), v === 0 ? 0 : v);
  };
  const last = (path: string, filter?: string) => served.filter((s) => s.path === path && (filter === undefined || s.query.includes(`filter=${filter}`))).at(-1)!;
  const parse = (s: Served) => JSON.parse(s.body) as { total: number; data: Array<Record<string, unknown>> };

  const isResolvedList = (s: Served) => new URLSearchParams(s.query).get('filter') === 'resolved';
  // /alerts: every page of the open list served, in offset order.
  const pages = served.filter((s) => s.path === '/alerts' && !isResolvedList(s)).map(parse);
  const alerts = pages.flatMap((p) => p.data as unknown as Alert[]).filter((a) => !a.resolved);
  const counts = { open: {} as Record<string, number>, unacknowledged: {} as Record<string, number>, unassigned: {} as Record<string, number>, snoozed: {} as Record<string, number> };
  const oldest: Record<string, number> = {};
  const oldestUnacknowledged: Record<string, number> = {};
  // Ages as docs/metrics.md defines them: strictly older than each age; the SLAs' defaults; snoozed alerts never over.
  const ages = [['1h', 3600], ['1d', 86_400], ['7d', 7 * 86_400], ['30d', 30 * 86_400], ['90d', 90 * 86_400]] as const;
  const slas: Record<string, number> = { red: 86_400, amber: 7 * 86_400, green: 30 * 86_400 };
  const olderThan: Record<string, number[]> = {};
  const overSla: Record<string, number> = { red: 0, amber: 0, green: 0 };
  const now = Date.now() / 1000;
  for (const a of alerts) {
    const sev = severity(a.state);
    const bump = (m: Record<string, number>) => (m[sev] = (m[sev] ?? 0) + 1);
    bump(counts.open);
    if (!a.acknowledged) bump(counts.unacknowledged);
    if (a.ownerName === '') bump(counts.unassigned);
    const until = seconds(a.inactiveUntil);
    if (until !== null && until > now) bump(counts.snoozed);
    // An unset creation time counts everywhere but here: it has no age.
    const created = seconds(a.timestamp);
    if (created !== null) {
      oldest[sev] = Math.min(oldest[sev] ?? Infinity, created);
      if (!a.acknowledged) oldestUnacknowledged[sev] = Math.min(oldestUnacknowledged[sev] ?? Infinity, created);
      olderThan[sev] ??= ages.map(() => 0);
      ages.forEach(([, s], i) => now - created > s && olderThan[sev]![i]!++);
      if (slas[sev] !== undefined && now - created > slas[sev] && !(until !== null && until > now)) overSla[sev]!++;
    }
    const labels = { integration: integration(a.product), severity: sev, type: type(a.status) };
    const f = out.get('posture_alerts_open_by_integration')?.get(labelKey(labels)) ?? 0;
    set('posture_alerts_open_by_integration', labels, f + 1);
  }
  for (const [name, m] of Object.entries(counts)) {
    for (const sev of ['red', 'amber', 'green', ...Object.keys(m).filter((s) => !['red', 'amber', 'green'].includes(s)).sort()]) set(`posture_alerts_${name}`, { severity: sev }, m[sev] ?? 0);
  }
  for (const [sev, t] of Object.entries(oldest)) set('posture_alerts_oldest_open_timestamp_seconds', { severity: sev }, t);
  for (const [sev, t] of Object.entries(oldestUnacknowledged)) set('posture_alerts_oldest_unacknowledged_timestamp_seconds', { severity: sev }, t);
  for (const sev of ['red', 'amber', 'green', ...Object.keys(counts.open).filter((s) => !['red', 'amber', 'green'].includes(s))]) {
    ages.forEach(([age], i) => set('posture_alerts_open_older_than', { severity: sev, age }, olderThan[sev]?.[i] ?? 0));
  }
  for (const [sev, n] of Object.entries(overSla)) set('posture_alerts_over_sla', { severity: sev }, n);

  // /alerts?filter=resolved: resolved alerts by their resolvedTime, later than the pass less each window
  // (docs/metrics.md); red, amber and green always, unknown when it has one; an unset resolvedTime is invalid.
  const windows = [['1d', 86_400], ['7d', 7 * 86_400], ['30d', 30 * 86_400]] as const;
  const resolvedIn: Record<string, number[]> = { red: [0, 0, 0], amber: [0, 0, 0], green: [0, 0, 0] };
  let unsetResolution = 0;
  for (const a of served.filter((s) => s.path === '/alerts' && isResolvedList(s)).flatMap((s) => parse(s).data as unknown as ResolvedAlert[])) {
    const t = seconds(a.resolvedTime);
    if (t === null) {
      unsetResolution++;
      continue;
    }
    windows.forEach(([, w], i) => {
      if (t > at / 1000 - w) (resolvedIn[severity(a.state)] ??= [0, 0, 0])[i]!++;
    });
  }
  for (const [sev, n] of Object.entries(resolvedIn)) windows.forEach(([window], i) => set('posture_alerts_resolved', { severity: sev, window }, n[i]!));

  // Vitals records by their key as written: keys written alike are one integration, counted together.
  type Record_ = Record<string, number> & { key: string; name: string; vitalsEnabled: boolean };
  const byKey = new Map<string, Record_[]>();
  for (const r of parse(last('/vitals')).data as unknown as Record_[]) byKey.set(written(r.key), [...(byKey.get(written(r.key)) ?? []), r]);
  for (const [key, group] of byKey) {
    const i = { integration: key };
    for (const r of group) set('posture_vitals_integration_info', { ...i, name: written(r.name), vitals_enabled: String(r.vitalsEnabled) }, 1);
    const off = group.filter((r) => !r.vitalsEnabled);
    if (off.length > 0) set('posture_vitals_active_agents', i, off.reduce((n, r) => n + r.activeAgents!, 0));
    const on = group.filter((r) => r.vitalsEnabled);
    if (on.length === 0) continue;
    const sum = (f: (typeof FUNNEL)[number]) => on.reduce((n, r) => n + r[f]!, 0);
    const [dp, dc, fp, fc, cp, cc] = FUNNEL.map(sum) as [number, number, number, number, number, number];
    for (const [stage, e, c] of [['deployment', dp, dc], ['function', fp, fc], ['configuration', cp, cc]] as const) {
      set('posture_vitals_eligible_devices', { ...i, stage }, e);
      set('posture_vitals_compliant_devices', { ...i, stage }, c);
    }
    if (dp > 0) set('posture_vitals_health_ratio', i, cc / dp);
    const consistent = (r: Record_) => r[FUNNEL[2]] === r[FUNNEL[1]] && r[FUNNEL[4]] === r[FUNNEL[3]] && r[FUNNEL[1]]! <= r[FUNNEL[0]]! && r[FUNNEL[3]]! <= r[FUNNEL[2]]! && r[FUNNEL[5]]! <= r[FUNNEL[4]]!;
    set('posture_vitals_funnel_consistent', i, on.every(consistent) ? 1 : 0);
  }
  set('posture_devices', { activity: 'active' }, parse(last('/devices', 'active')).total);
  set('posture_devices', { activity: 'inactive' }, parse(last('/devices', 'inactive')).total);
  for (const source of ['vitals', 'alerts', 'devices', 'resolved']) {
    set('posture_collection_success', { source }, 1);
    set('posture_collection_invalid_records', { source }, source === 'resolved' ? unsetResolution : 0);
  }
  return out;
}

// ------------------------------------------------------------------ the runs

describe('once --format json against random bodies in random chunks', () => {
  it(`exports exactly what JSON.parse of the bodies gives (${CASES} seeded cases)`, async () => {
    for (let k = 0; k < CASES; k++) {
      const seed = BASE_SEED + k;
      const at = Math.floor(Date.now() / 1000) * 1000;
      current = { c: makeCase(new Rng(seed), at), at, seed, served: [] };
      const port = (server.address() as AddressInfo).port;
      const r = await runBuiltCli(['once', '--format', 'json'], {
        POSTURE_BASE_URL: `http://127.0.0.1:${port}/public-api/v1`,
        POSTURE_API_KEY: KEY,
        POSTURE_LOG_LEVEL: 'warn',
        POSTURE_MAX_SERIES_PER_FAMILY: '1000000',
      });
      const replay = `FUZZ_SEED=${seed} FUZZ_CASES=1 npx vitest run test/fuzz/differential.e2e.test.ts`;
      expect(r.code, `${replay}\n${r.stderr.slice(0, 2000)}`).toBe(0);
      const want = expected(current.served, current.at);
      const got = new Map<string, Family>();
      for (const s of (JSON.parse(r.stdout) as { samples: Array<{ name: string; labels: Record<string, string>; value: number }> }).samples) {
        if (!want.has(s.name)) continue;
        let f = got.get(s.name);
        if (!f) got.set(s.name, (f = new Map()));
        expect(f.has(labelKey(s.labels)), `${replay}: ${s.name} has two series ${labelKey(s.labels)}`).toBe(false);
        f.set(labelKey(s.labels), s.value);
      }
      for (const [name, family] of want) expect(got.get(name) ?? new Map(), `${replay}: ${name}`).toEqual(family);
    }
  }, 120_000);
});
