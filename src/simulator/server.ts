/**
 * The HTTP face of the simulated portal: base path, auth, rate limit, fault injection, routing,
 * parameter validation, and list bodies streamed in chunks that honour backpressure.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../core/clock.js';
import type { AlertFilter, DeviceFilter, ListSource, Portal, Scope } from './portal.js';
import { arrayList } from './portal.js';
import type { Fault, SimRequest, SimulatorKey } from './types.js';
import type { TeamRecord } from './records.js';
import { totalJson, vitalsJson } from './odd.js';
import { DAY, formatTimestamp, parseDay } from './time.js';

/** Base path of every endpoint (spec 9). */
export const BASE_PATH = '/public-api/v1';

interface ActiveRule {
  path: string | undefined;
  remaining: number;
  fault: Fault;
}

/** Everything the request handler needs. */
export interface ServerContext {
  portal: Portal;
  clock: Clock;
  /** Time the data is served at, for a clock reading (frozen when not moving). */
  dataTime: (now: number) => number;
  keys: readonly SimulatorKey[];
  rateLimit: { requests: number; windowMs: number } | false;
  requests: SimRequest[];
  /** Most records one list answer carries, whatever `limit` asks (undefined: no cap). */
  maxPageSize?: number | undefined;
}

const JSON_TYPE = 'application/json; charset=utf-8';
/** Stands in for the huge string while the rest of the record is serialized. */
const HUGE_MARK = '\u0000huge-string\u0000';
/** One piece of the huge string (ASCII, no escapes): 64 KiB of a repeated sentence. */
const HUGE_PIECE = 'The quick brown fox jumps over the lazy dog. '.repeat(1457).slice(0, 64 * 1024);
const CHUNK_CHARS = 64 * 1024;
/** Whitespace an endless body streams when it has no records to repeat (still valid JSON). */
const PADDING = ' '.repeat(4096);
/** Default pause between the bytes of a `drip` body. */
const DRIP_INTERVAL_MS = 1000;

type Cut = { afterBytes: number; mode: 'truncate' | 'stall' };

function cutOf(fault: Fault | undefined): Cut | undefined {
  if (fault?.kind === 'truncate') return { afterBytes: fault.afterBytes, mode: 'truncate' };
  if (fault?.kind === 'stall') return { afterBytes: fault.afterBytes, mode: 'stall' };
  return undefined;
}

/** A complete body that never ends: everything but its closing character, then whitespace forever. */
function* endlessBody(body: string): Generator<string> {
  yield body.slice(0, -1);
  for (;;) yield PADDING;
}

const REASONS: Record<number, string> = {
  400: 'Bad request.',
  401: 'Invalid or missing API key.',
  403: 'The API key does not have permission to access this resource.',
  404: 'Resource not found.',
  405: 'Method not allowed.',
  429: 'Rate limit exceeded.',
  500: 'An internal server error occurred.',
  502: 'Bad gateway.',
  503: 'Service unavailable.',
};

function errorEnvelope(status: number, message: string, offset = 0, limit = 0): string {
  return JSON.stringify({ offset, limit, total: 0, data: [], success: false, statusCode: status, message });
}

/** Strips the base path and a trailing slash; undefined when outside the base path. */
function relativePath(pathname: string): string | undefined {
  if (pathname !== BASE_PATH && !pathname.startsWith(BASE_PATH + '/')) return undefined;
  const rel = pathname.slice(BASE_PATH.length);
  if (rel === '' || rel === '/') return '/';
  return rel.endsWith('/') ? rel.slice(0, -1) : rel;
}

class HttpProblem {
  constructor(readonly status: number, readonly message: string) {}
}

function parseCount(query: Record<string, string>, name: 'offset' | 'limit'): number {
  const raw = query[name];
  if (raw === undefined || raw === '') return 0;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new HttpProblem(400, `Invalid '${name}': expected a non-negative integer.`);
  }
  return Number(raw);
}

function choice<T extends string>(query: Record<string, string>, name: string, allowed: readonly T[], fallback?: T): T {
  const raw = query[name];
  if (raw === undefined || raw === '') {
    if (fallback !== undefined) return fallback;
    throw new HttpProblem(400, `The '${name}' parameter is required: ${allowed.join(', ')}.`);
  }
  const v = raw.toLowerCase() as T;
  if (!allowed.includes(v)) throw new HttpProblem(400, `Invalid '${name}': expected one of ${allowed.join(', ')}.`);
  return v;
}

/** Writes a body in chunks, waiting for 'drain'; optionally cuts it after N bytes (truncate or stall). */
class BodyWriter {
  private buf = '';
  private sent = 0;
  private stopped = false;
  private wake: (() => void) | undefined;

  constructor(private readonly res: ServerResponse, private readonly cut: Cut | undefined) {
    res.on('close', () => {
      this.stopped = true;
      this.wake?.();
    });
    res.on('drain', () => this.wake?.());
  }

  /** Adds text; false (or a promise of false, when a chunk was flushed) once the client is gone or the body was cut. */
  push(text: string): boolean | Promise<boolean> {
    if (this.stopped) return false;
    this.buf += text;
    if (this.buf.length < CHUNK_CHARS) return true;
    return this.flush().then(() => !this.stopped);
  }

  async end(): Promise<void> {
    await this.flush();
    if (this.stopped) return;
    if (this.cut) this.cutNow();
    else this.res.end();
  }

  private async flush(): Promise<void> {
    if (this.stopped || this.buf === '') return;
    const text = this.buf;
    this.buf = '';
    if (!this.cut) return this.write(text);
    let data = Buffer.from(text);
    const room = this.cut.afterBytes - this.sent;
    if (data.length >= room) {
      data = data.subarray(0, Math.max(0, room));
      if (data.length) this.res.write(data);
      this.sent += data.length;
      this.cutNow();
      return;
    }
    this.sent += data.length;
    return this.write(data);
  }

  private async write(data: string | Buffer): Promise<void> {
    if (this.res.write(data)) return;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
    });
    this.wake = undefined;
  }

  private cutNow(): void {
    this.stopped = true;
    // truncate: ending the socket flushes what was written, then closes without the final chunk.
    if (this.cut?.mode === 'truncate') this.res.socket?.end();
  }
}

const BAD_FIELDS: Record<string, { field: string; wrong: unknown }> = {
  alerts: { field: 'state', wrong: 7 },
  devices: { field: 'lastOnline', wrong: 1_700_000_000 },
  users: { field: 'email', wrong: 42 },
  inventory: { field: 'name', wrong: 42 },
  'portal users': { field: 'username', wrong: 42 },
  roles: { field: 'id', wrong: 42 },
  teams: { field: 'id', wrong: 42 },
  integrations: { field: 'key', wrong: 42 },
};

/** Damages one record for the `bad-records` fault: drops a field clients use, or gives it a wrong type. */
function damage(resource: string, record: unknown, how: 'missing' | 'mistyped'): unknown {
  if (record === null || typeof record !== 'object') return how === 'missing' ? null : 42;
  const copy: Record<string, unknown> = { ...(record as Record<string, unknown>) };
  let field: string;
  let wrong: unknown;
  if (resource === 'vitals') {
    field = copy.vitalsEnabled === true ? 'agentDeployedCompliant' : 'activeAgents';
    wrong = String(copy[field] ?? 12);
  } else {
    const spec = BAD_FIELDS[resource] ?? { field: Object.keys(copy)[0] ?? 'id', wrong: 42 };
    field = spec.field;
    wrong = spec.wrong;
  }
  if (how === 'missing') delete copy[field];
  else copy[field] = wrong;
  return copy;
}

/** Handles the HTTP requests of one simulated portal. */
export class SimServer {
  private readonly served: number[] = [];
  private rules: ActiveRule[] = [];
  private readonly timers = new Map<NodeJS.Timeout, () => void>();
  private readonly keyIndex = new Map<string, number>();

  constructor(private readonly ctx: ServerContext) {
    ctx.keys.forEach((k, i) => this.keyIndex.set(k.key, i));
  }

  addFault(path: string | undefined, times: number, fault: Fault): void {
    const p = path === undefined ? undefined : relativePath(path) ?? path;
    this.rules.push({ path: p, remaining: times, fault });
  }

  clearFaults(): void {
    this.rules = [];
  }

  /** Cancels pending latency and drip timers (on close), letting their waits return. */
  cancelTimers(): void {
    const wakes = [...this.timers];
    this.timers.clear();
    for (const [t, wake] of wakes) {
      clearTimeout(t);
      wake();
    }
  }

  /** Records `n` requests from another client in the portal-wide window at the current clock time. */
  spend(n: number): void {
    if (!this.ctx.rateLimit) throw new RangeError('spend: the simulator has no rate limit (rateLimit: false)');
    const now = this.ctx.clock.now();
    for (let i = 0; i < n; i++) this.served.push(now);
  }

  /** Waits `ms` real milliseconds, or less if the response closes or the simulator shuts down. */
  private sleep(ms: number, res: ServerResponse): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.timers.delete(t);
        res.off('close', done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.timers.set(t, done);
      res.on('close', done);
    });
  }

  private takeFault(path: string): Fault | undefined {
    const i = this.rules.findIndex((r) => r.remaining > 0 && (r.path === undefined || r.path === path));
    if (i < 0) return undefined;
    const rule = this.rules[i]!;
    rule.remaining -= 1;
    if (rule.remaining <= 0) this.rules.splice(i, 1);
    return rule.fault;
  }

  /** Entry point for `http.createServer`. */
  handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.serve(req, res).catch(() => {
      if (!res.headersSent) this.sendError(res, undefined, 500, REASONS[500]!);
      else res.destroy();
    });
  };

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { clock } = this.ctx;
    const now = clock.now();
    const url = new URL(req.url ?? '/', 'http://simulator.invalid');
    const rel = relativePath(url.pathname);
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) query[k] = v;
    const headerKey = req.headers['x-service-apikey'];
    const key = Array.isArray(headerKey) ? headerKey[0] : headerKey;
    const keyIdx = key === undefined ? undefined : this.keyIndex.get(key);
    const entry: SimRequest = { time: now, path: rel ?? url.pathname, query, status: 0, keyIndex: keyIdx ?? null };
    this.ctx.requests.push(entry);

    // Portal-wide budget: every served request counts (401/404 too); 429 answers do not.
    const limit = this.ctx.rateLimit;
    if (limit) {
      while (this.served.length && this.served[0]! <= now - limit.windowMs) this.served.shift();
      if (this.served.length >= limit.requests) {
        const waitS = Math.max(1, Math.ceil((this.served[0]! + limit.windowMs - now) / 1000));
        return this.sendError(res, entry, 429, `Rate limit exceeded: at most ${limit.requests} requests per ${limit.windowMs / 1000} seconds. Retry after ${waitS} seconds.`, { 'Retry-After': String(waitS) });
      }
      this.served.push(now);
    }
    if (req.method !== 'GET') return this.sendError(res, entry, 405, REASONS[405]!, { Allow: 'GET' });
    if (keyIdx === undefined) return this.sendError(res, entry, 401, REASONS[401]!);
    const keyCfg = this.ctx.keys[keyIdx]!;
    const path = entry.path;
    if (!this.permitted(keyCfg, path)) return this.sendError(res, entry, 403, REASONS[403]!);

    const fault = this.takeFault(path);
    if (fault?.kind === 'latency') {
      await this.sleep(fault.ms, res);
      if (res.destroyed || res.writableEnded) return;
    }
    switch (fault?.kind) {
      case 'reset':
        entry.status = 0;
        req.socket.resetAndDestroy();
        return;
      case 'status': {
        const headers: Record<string, string> = {};
        if (fault.retryAfter !== undefined) headers['Retry-After'] = fault.retryAfter;
        if (fault.body !== undefined) return this.sendRaw(res, entry, fault.status, fault.body, headers);
        return this.sendError(res, entry, fault.status, REASONS[fault.status] ?? `HTTP ${fault.status}.`, headers);
      }
      case 'malformed':
        return this.sendRaw(res, entry, 200, '<!DOCTYPE html><html><head><title>Maintenance</title></head><body><h1>We will be back soon</h1></body></html>');
      case 'success-false':
        return this.sendRaw(res, entry, 200, errorEnvelope(500, fault.message ?? 'An error occurred while processing the request.'));
      default:
        break;
    }

    if (rel === undefined) return this.sendError(res, entry, 404, REASONS[404]!, {}, fault);
    const scope: Scope | undefined = keyCfg.team ? { tags: keyCfg.team.tags } : undefined;
    let result: { list: ListSource } | { object: unknown; resource: string };
    let offset: number;
    let limitN: number;
    try {
      const found = this.route(path, query, this.ctx.dataTime(now), scope);
      if (!found) return this.sendError(res, entry, 404, REASONS[404]!, {}, fault);
      result = found;
      offset = parseCount(query, 'offset');
      limitN = parseCount(query, 'limit');
    } catch (err) {
      if (err instanceof HttpProblem) return this.sendError(res, entry, err.status, err.message, {}, fault);
      throw err;
    }
    if ('list' in result) return this.sendList(res, entry, result.list, offset, limitN, fault);
    const body = JSON.stringify({ data: result.object, success: true, statusCode: 200, message: `Successfully retrieved ${result.resource}.` });
    return this.sendBody(res, entry, 200, body, {}, fault);
  }

  private permitted(key: SimulatorKey, path: string): boolean {
    const p = key.permissions ?? 'full';
    if (p === 'full') return true;
    if (p === 'none') return false;
    return !p.deny.some((d) => {
      const rel = relativePath(d) ?? d;
      return path === rel || path.startsWith(rel.endsWith('/') ? rel : rel + '/');
    });
  }

  private route(path: string, query: Record<string, string>, t: number, scope: Scope | undefined): { list: ListSource } | { object: unknown; resource: string } | undefined {
    const { portal } = this.ctx;
    const world = portal.world;
    const seg = path.split('/').slice(1);
    switch (path) {
      case '/devices':
        return { list: portal.devices(t, choice<DeviceFilter>(query, 'filter', ['active', 'inactive', 'all']), scope) };
      case '/alerts':
        return { list: portal.alerts(t, choice<AlertFilter>(query, 'filter', ['allunresolved', 'all', 'resolved']), query.systemName, scope) };
      case '/vitals':
      case '/vitals/integrations':
        return { list: this.vitals(query, t) };
      case '/users':
        if (portal.fixture?.directoryUsers) return { list: arrayList('users', portal.fixture.directoryUsers) };
        return { list: portal.users(t, choice(query, 'filter', ['all', 'active', 'inactive'] as const, 'all'), scope) };
      case '/inventory': {
        const name = query.systemName?.trim();
        if (!name) throw new HttpProblem(400, "The 'systemName' parameter is required: an integration name from /settings/integrations.");
        const integ = world.integration(name);
        if (!integ) throw new HttpProblem(400, "Unknown 'systemName': use an integration name from /settings/integrations.");
        const type = choice(query, 'type', ['workstations', 'devices', 'users'] as const, integ.kind === 'idp' ? 'users' : 'workstations');
        return { list: portal.inventory(t, integ, type === 'users' ? 'users' : 'workstations', scope) };
      }
      case '/inventory/devices':
      case '/inventory/software':
        return { list: arrayList('inventory', []) };
      case '/issues':
        return { list: arrayList('issues', []) };
      case '/vitals/devices':
        return { list: arrayList('vitals', []) };
      case '/settings/usermanagement/users':
        return { list: arrayList('portal users', portal.fixture?.portalUsers ?? world.portalUsers) };
      case '/settings/usermanagement/roles':
        return { list: arrayList('roles', portal.fixture?.roles ?? world.roles) };
      case '/settings/usermanagement/teams':
        return { list: arrayList('teams', portal.fixture?.teams ?? this.teams()) };
      case '/settings/tags':
        return { list: arrayList('tags', world.tags) };
      case '/settings/integrations':
        return {
          list: arrayList('integrations', world.integrations.map((x) => ({
            id: x.id, key: x.key, name: x.name, category: x.kind, vitalsEnabled: x.vitalsEnabled, connected: true,
            lastSync: formatTimestamp(Math.floor(t / (15 * 60_000)) * 15 * 60_000),
          }))),
        };
      default:
        break;
    }
    if (seg.length === 2 && seg[0] === 'devices' && seg[1]) {
      const d = portal.device(t, decodeURIComponent(seg[1]), scope);
      return d ? { object: d, resource: 'device' } : undefined;
    }
    if (seg.length === 2 && seg[0] === 'users' && seg[1]) {
      const u = portal.user(t, decodeURIComponent(seg[1]), scope);
      return u ? { object: u, resource: 'user' } : undefined;
    }
    return undefined;
  }

  private vitals(query: Record<string, string>, t: number): ListSource {
    const { portal } = this.ctx;
    const tag = query.tag?.trim() ? query.tag.trim() : undefined;
    const archive = query.archiveDate?.trim();
    if (archive) {
      const day = parseDay(archive);
      if (day === undefined) throw new HttpProblem(400, "Invalid 'archiveDate': expected a date as yyyyMMdd.");
      // Today is archived only at the end of the day; today and later have no archive yet.
      if (day >= Math.floor(t / DAY) * DAY) return arrayList('vitals', []);
      return arrayList('vitals', portal.archivedVitals(day, tag));
    }
    return arrayList('vitals', portal.vitals(t, tag));
  }

  private teams(): TeamRecord[] {
    const teams = [...this.ctx.portal.world.teams];
    for (const k of this.ctx.keys) {
      if (k.team && !teams.some((t) => t.name === k.team!.name)) {
        teams.push({ id: `00000000-0000-4000-8000-${String(teams.length).padStart(12, '0')}`, name: k.team.name, members: [] });
      }
    }
    return teams;
  }

  // ------------------------------------------------------------- writing

  private sendError(res: ServerResponse, entry: SimRequest | undefined, status: number, message: string, headers: Record<string, string> = {}, fault?: Fault): void {
    void this.sendBody(res, entry, status, errorEnvelope(status, message), headers, fault);
  }

  private sendRaw(res: ServerResponse, entry: SimRequest, status: number, body: string, headers: Record<string, string> = {}): void {
    entry.status = status;
    res.writeHead(status, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(body), ...headers });
    res.end(body);
  }

  private async sendBody(res: ServerResponse, entry: SimRequest | undefined, status: number, body: string, headers: Record<string, string>, fault: Fault | undefined): Promise<void> {
    if (entry) entry.status = status;
    if (fault?.kind === 'endless' || fault?.kind === 'drip' || cutOf(fault)) {
      res.writeHead(status, { 'Content-Type': JSON_TYPE, ...headers });
      res.flushHeaders();
      return this.stream(res, fault?.kind === 'endless' ? endlessBody(body) : [body], fault);
    }
    res.writeHead(status, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(body), ...headers });
    res.end(body);
  }

  private async sendList(res: ServerResponse, entry: SimRequest, list: ListSource, offset: number, asked: number, fault: Fault | undefined): Promise<void> {
    const cap = this.ctx.maxPageSize;
    const limit = cap !== undefined && (asked === 0 || asked > cap) ? cap : asked;
    let total = list.count();
    if (fault?.kind === 'total-mismatch') total = Math.max(0, total + fault.delta);
    entry.status = 200;
    res.writeHead(200, { 'Content-Type': JSON_TYPE });
    if (fault?.kind === 'endless' || fault?.kind === 'drip' || cutOf(fault)) res.flushHeaders();
    const head = `{"offset":${offset},"limit":${limit},"total":${totalJson(list.resource, total)},"data":[`;
    const tail = `],"success":true,"statusCode":200,"message":${JSON.stringify(`Successfully retrieved ${list.resource}.`)}}`;
    const pieces = fault?.kind === 'endless' ? endlessList(head, list) : (function* () {
      yield head;
      let n = 0;
      for (let record of list.page(offset, limit)) {
        if (fault?.kind === 'bad-records' && n < fault.count) record = damage(list.resource, record, fault.how);
        if (fault?.kind === 'huge-string' && n === 0) {
          n++;
          yield* hugeRecord(record, fault.field, fault.bytes);
          continue;
        }
        yield (n ? ',' : '') + (list.resource === 'vitals' ? vitalsJson(record, n) : JSON.stringify(record));
        n++;
      }
      yield tail;
    })();
    return this.stream(res, pieces, fault);
  }

  /** Writes the pieces of a body: in chunks honouring backpressure (cut when the fault says so), or a byte at a time for `drip`. */
  private async stream(res: ServerResponse, pieces: Iterable<string>, fault: Fault | undefined): Promise<void> {
    if (fault?.kind === 'drip') return this.drip(res, pieces, fault.intervalMs ?? DRIP_INTERVAL_MS);
    const w = new BodyWriter(res, cutOf(fault));
    for (const piece of pieces) {
      let more = w.push(piece);
      // Await only when a chunk went out: one microtask per record would slow big lists down.
      if (more !== true && more !== false) more = await more;
      if (!more) return;
    }
    await w.end();
  }

  private async drip(res: ServerResponse, pieces: Iterable<string>, intervalMs: number): Promise<void> {
    for (const piece of pieces) {
      const bytes = Buffer.from(piece);
      for (let i = 0; i < bytes.length; i++) {
        await this.sleep(intervalMs, res);
        if (res.destroyed || !this.writable(res)) return;
        res.write(bytes.subarray(i, i + 1));
      }
    }
    res.end();
  }

  /** False once the response is gone (client left or the simulator closed). */
  private writable(res: ServerResponse): boolean {
    return !res.writableEnded && !res.destroyed && res.socket !== null && !res.socket.destroyed;
  }
}

/** A record with `field` set to a string of `bytes` ASCII characters, in pieces so the simulator never holds it. */
function* hugeRecord(record: unknown, field: string, bytes: number): Generator<string> {
  const base = record !== null && typeof record === 'object' ? (record as Record<string, unknown>) : {};
  const mark = JSON.stringify(HUGE_MARK);
  const text = JSON.stringify({ ...base, [field]: HUGE_MARK });
  const at = text.indexOf(mark);
  yield text.slice(0, at) + '"';
  for (let sent = 0; sent < bytes; sent += HUGE_PIECE.length) yield bytes - sent >= HUGE_PIECE.length ? HUGE_PIECE : HUGE_PIECE.slice(0, bytes - sent);
  yield '"' + text.slice(at + mark.length);
}

/** An endless list body: the envelope's head, then the list's records over and over (whitespace if it has none). */
function* endlessList(head: string, list: ListSource): Generator<string> {
  yield head;
  let n = 0;
  for (;;) {
    let any = false;
    for (const record of list.page(0, 0)) {
      any = true;
      yield (n++ ? ',' : '') + JSON.stringify(record);
    }
    if (!any) yield PADDING;
  }
}
