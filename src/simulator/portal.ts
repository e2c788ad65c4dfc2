/**
 * What the portal serves: the generated world, or fixtures while set, seen through a key's team
 * scope, filtered by the endpoint's parameters. Lists are lazy (count, then page) so large ones
 * stream without being held in memory.
 */
import type { Integration, World } from './model.js';
import { ACTIVE_DAYS } from './model.js';
import type { AlertRecord, DeviceRecord, VitalsRecord } from './records.js';
import { DAY, parseTimestamp } from './time.js';

/** A Vitals record of a fixture: `tags` (never served) decides membership in a `tag` view. */
export type FixtureVitalsRecord = VitalsRecord & { tags?: string[] };

/** Exact data for tests, replacing the generated data while set. */
export interface PortalFixture {
  /** Served by /vitals; a record's optional `tags` (never served) decides membership in a `tag` view; with no tags anywhere every tag sees the whole list. */
  vitals?: FixtureVitalsRecord[];
  alerts?: AlertRecord[];
  /** Activity from lastOnline vs the clock (30 days). */
  devices?: DeviceRecord[];
  /** Served as they are (any JSON, malformed records included): `/settings/usermanagement/users`, `/roles`, `/teams`, and `/users` (every filter). */
  portalUsers?: unknown[];
  roles?: unknown[];
  teams?: unknown[];
  directoryUsers?: unknown[];
}

/** A key's team scope: only devices (and their alerts) carrying one of these tags. */
export interface Scope {
  readonly tags: readonly string[];
}

/** A lazily evaluated list: `count` the matching records, then produce one page of them. */
export interface ListSource {
  /** Resource word for 'Successfully retrieved <resource>.' */
  readonly resource: string;
  count(): number;
  page(offset: number, limit: number): Iterable<unknown>;
}

/** Builds a list from a generator of cheap candidates and a record builder. */
function lazyList<C>(resource: string, candidates: () => Iterable<C>, build: (c: C) => unknown): ListSource {
  return {
    resource,
    count() {
      let n = 0;
      for (const _ of candidates()) n++;
      return n;
    },
    *page(offset: number, limit: number) {
      let seen = 0;
      let sent = 0;
      for (const c of candidates()) {
        if (seen++ < offset) continue;
        if (limit > 0 && sent >= limit) return;
        sent++;
        yield build(c);
      }
    },
  };
}

/** A list over an array already in memory. */
export function arrayList(resource: string, records: readonly unknown[]): ListSource {
  return {
    resource,
    count: () => records.length,
    page: (offset, limit) => records.slice(offset, limit > 0 ? offset + limit : undefined),
  };
}

export type DeviceFilter = 'active' | 'inactive' | 'all';
export type AlertFilter = 'allunresolved' | 'all' | 'resolved';

const ACTIVE_MS = ACTIVE_DAYS * DAY;

function intersects(a: readonly string[], b: readonly string[]): boolean {
  for (const x of a) if (b.includes(x)) return true;
  return false;
}

/** The integration part of an alert's `product` (before the first comma), lower-cased. */
function productIntegration(product: unknown): string {
  return typeof product === 'string' ? product.split(',')[0]!.trim().toLowerCase() : '';
}

/** The data layer behind the HTTP server and `Simulator.data()`. */
export class Portal {
  fixture: PortalFixture | null = null;
  readonly injected = new Map<string, number>();

  constructor(readonly world: World) {}

  // ------------------------------------------------------------- vitals

  /** Live `/vitals` records at `t` (with injected regressions applied). */
  vitals(t: number, tag?: string): VitalsRecord[] {
    return this.applyInjected(this.rawVitals(t, tag));
  }

  /** Archived `/vitals` for the UTC day starting at `dayStart` (World.archivedVitals, or the fixture), without injected regressions. */
  archivedVitals(dayStart: number, tag?: string): VitalsRecord[] {
    return this.fixture?.vitals ? this.rawVitals(dayStart, tag) : this.world.archivedVitals(dayStart, tag);
  }

  private rawVitals(t: number, tag: string | undefined): VitalsRecord[] {
    const fx = this.fixture?.vitals;
    if (fx) {
      const tagged = fx.some((r) => Array.isArray(r.tags));
      const chosen = tag === undefined || !tagged ? fx : fx.filter((r) => r.tags?.includes(tag));
      return chosen.map(({ tags: _tags, ...rest }) => ({ ...rest }));
    }
    return this.world.vitals(t, tag);
  }

  private applyInjected(records: VitalsRecord[]): VitalsRecord[] {
    if (this.injected.size === 0) return records;
    return records.map((r) => {
      const fraction = this.injected.get(r.key);
      if (fraction === undefined || !r.vitalsEnabled || typeof r.configurationCompliant !== 'number') return r;
      return { ...r, configurationCompliant: Math.round(r.configurationCompliant * (1 - fraction)) };
    });
  }

  /** Vitals keys currently served (fixture or generated), to validate injections. */
  vitalsKeys(): readonly { key: string; name: string; vitalsEnabled: boolean }[] {
    return this.fixture?.vitals ?? this.world.integrations;
  }

  // ------------------------------------------------------------- devices

  /** Whether a device record (fixture) is active at `t`. */
  static fixtureDeviceActive(d: DeviceRecord, t: number): boolean {
    const last = parseTimestamp(String(d.lastOnline));
    return Number.isFinite(last) && t - last <= ACTIVE_MS;
  }

  /** `/devices` as a lazy list. */
  devices(t: number, filter: DeviceFilter, scope: Scope | undefined): ListSource {
    const fx = this.fixture?.devices;
    if (fx) {
      return arrayList('devices', fx.filter((d) => {
        if (scope && !intersects(Array.isArray(d.tags) ? d.tags : [], scope.tags)) return false;
        if (filter === 'all') return true;
        return Portal.fixtureDeviceActive(d, t) === (filter === 'active');
      }));
    }
    const w = this.world;
    return lazyList('devices', function* () {
      for (let i = 0; i < w.deviceCount; i++) {
        if (scope && !intersects(w.deviceCore(i).tags, scope.tags)) continue;
        if (filter !== 'all' && w.deviceActive(i, t) !== (filter === 'active')) continue;
        yield i;
      }
    }, (i) => w.device(i, t));
  }

  /** Every device record at `t`, lazily. */
  *allDevices(t: number): Iterable<DeviceRecord> {
    if (this.fixture?.devices) {
      yield* this.fixture.devices;
      return;
    }
    for (let i = 0; i < this.world.deviceCount; i++) yield this.world.device(i, t);
  }

  /** One device by its GUID or host name (fixtures: host name only), if visible to `scope`. */
  device(t: number, id: string, scope: Scope | undefined): DeviceRecord | undefined {
    const want = id.toLowerCase();
    const fx = this.fixture?.devices;
    if (fx) {
      const d = fx.find((x) => String(x.hostName).toLowerCase() === want);
      return d && (!scope || intersects(d.tags ?? [], scope.tags)) ? d : undefined;
    }
    const w = this.world;
    for (let i = 0; i < w.deviceCount; i++) {
      if (w.deviceId(i) !== want && w.hostName(w.deviceKind(i)).toLowerCase() !== want) continue;
      if (scope && !intersects(w.deviceCore(i).tags, scope.tags)) return undefined;
      return w.device(i, t);
    }
    return undefined;
  }

  // ------------------------------------------------------------- alerts

  /** `/alerts` as a lazy list, newest first. `systemName` blank or undefined = all integrations. */
  alerts(t: number, filter: AlertFilter, systemName: string | undefined, scope: Scope | undefined): ListSource {
    const sys = systemName?.trim() ? systemName.trim().toLowerCase() : undefined;
    const fx = this.fixture?.alerts;
    if (fx) {
      const visibleHosts = scope ? this.scopedHostNames(scope) : undefined;
      const alias = sys === undefined ? undefined : this.world.alertIntegrationNamed(sys)?.name.toLowerCase();
      return arrayList('alerts', fx.filter((a) => {
        if (filter === 'allunresolved' && a.resolved) return false;
        if (filter === 'resolved' && !a.resolved) return false;
        if (sys !== undefined) {
          const p = productIntegration(a.product);
          if (p !== sys && p !== alias) return false;
        }
        if (visibleHosts && a.itemEntityType === 'device' && !visibleHosts.has(String(a.item).toLowerCase())) return false;
        return true;
      }));
    }
    const w = this.world;
    let only: Integration | undefined;
    if (sys !== undefined) {
      only = w.alertIntegrationNamed(sys);
      if (!only) return arrayList('alerts', []);
    }
    const historyStart = t - w.resolvedHistoryMs;
    return lazyList('alerts', function* () {
      for (const k of w.alertIndices(t, filter !== 'allunresolved')) {
        const open = w.alertOpen(k);
        if (open > t) continue;
        const resolveAt = w.alertResolve(k, open);
        const resolved = resolveAt <= t;
        if (resolved ? filter === 'allunresolved' || resolveAt < historyStart : filter === 'resolved') continue;
        if (only && (w.alertIntegration(k) !== only || w.alertProductIsOdd(k))) continue;
        if (scope) {
          const core = w.alertCore(k);
          if (core.entity === 'device' && !intersects(w.deviceCore(core.target).tags, scope.tags)) continue;
        }
        yield k;
      }
    }, (k) => w.alert(w.alertCore(k), t));
  }

  /** Every alert `/alerts?filter=all` serves at `t`, lazily. */
  *allAlerts(t: number): Iterable<AlertRecord> {
    yield* this.alerts(t, 'all', undefined, undefined).page(0, 0) as Iterable<AlertRecord>;
  }

  private scopedHostNames(scope: Scope): Set<string> {
    const out = new Set<string>();
    if (this.fixture?.devices) {
      for (const d of this.fixture.devices) if (intersects(d.tags ?? [], scope.tags)) out.add(String(d.hostName).toLowerCase());
      return out;
    }
    const w = this.world;
    for (let i = 0; i < w.deviceCount; i++) {
      if (intersects(w.deviceCore(i).tags, scope.tags)) out.add(w.hostName(w.deviceKind(i)).toLowerCase());
    }
    return out;
  }

  // ------------------------------------------------------------- directory users and inventory

  /** `/users` as a lazy list; `filter` all, active or inactive (lastActivity within 30 days). */
  users(t: number, filter: 'all' | 'active' | 'inactive', scope: Scope | undefined): ListSource {
    const w = this.world;
    return lazyList('users', function* () {
      for (let u = 0; u < w.userCount; u++) {
        if (scope && !intersects(w.userTags(u), scope.tags)) continue;
        if (filter !== 'all' && w.userActive(u, t) !== (filter === 'active')) continue;
        yield u;
      }
    }, (u) => w.user(u, t));
  }

  /** One directory user by GUID or email. */
  user(t: number, id: string, scope: Scope | undefined): unknown {
    const w = this.world;
    const want = id.toLowerCase();
    for (let u = 0; u < w.userCount; u++) {
      if (w.userId(u) !== want && w.userCore(u).email.toLowerCase() !== want) continue;
      if (scope && !intersects(w.userTags(u), scope.tags)) return undefined;
      return w.user(u, t);
    }
    return undefined;
  }

  /** `/inventory` for one integration and type (`workstations`/`devices` or `users`). */
  inventory(t: number, integ: Integration, type: 'workstations' | 'users', scope: Scope | undefined): ListSource {
    const w = this.world;
    if (type === 'users') {
      if (integ.kind !== 'idp') return arrayList('inventory', []);
      return lazyList('inventory', function* () {
        for (let u = 0; u < w.userCount; u++) {
          if (scope && !intersects(w.userTags(u), scope.tags)) continue;
          yield u;
        }
      }, (u) => w.userItem(integ, u, t));
    }
    if (integ.kind === 'idp') return arrayList('inventory', []);
    return lazyList('inventory', function* () {
      for (let i = 0; i < w.deviceCount; i++) {
        if (!w.covers(integ, w.deviceKind(i))) continue;
        if (scope && !intersects(w.deviceCore(i).tags, scope.tags)) continue;
        yield i;
      }
    }, (i) => w.workstationItem(integ, i, t));
  }
}
