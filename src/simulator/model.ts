/**
 * The generated portal: every record is a pure function of (seed, sizes, index, time), generated
 * lazily by index so lists of any size can be counted and streamed without being held in memory.
 */
import {
  ALERT_TEMPLATES, DEPARTMENTS, DEVICE_FORMS, FIRST_NAMES, HARDWARE, INTEGRATIONS, LAST_NAMES, OS_VERSIONS,
  PLACES, SERVER_ROLES, SYSTEM_TEMPLATES, TAG_POOL, VITALS_KINDS, asciiSlug,
  type Department, type DeviceForm, type IntegrationKind, type Place,
} from './catalog.js';
import { Permutation, guid, hash, hexString, intIn, mix32, pick, scramble32, unit, weighted } from './prng.js';
import type {
  AlertRecord, DeviceRecord, MemberRef, PortalUserRecord, RoleRecord, TeamRecord, UserRecord, VitalsRecord,
  WorkstationInventoryItem, InventoryItem,
} from './records.js';
import { oddProduct, unsetCreated } from './odd.js';
import { DAY, HOUR, MIN_TIMESTAMP, MINUTE, formatTimestamp, formatWarranty } from './time.js';

/** Sizes and seed of a generated portal. */
export interface ModelOptions {
  seed: number;
  devices: number;
  alerts: number;
  integrations: number;
  /** Distinct integrations alerts come from (the first ones are `integrations`, then the catalogue repeats); undefined: alerts draw from `integrations` by hash. */
  alertIntegrations?: number;
  /** How many days resolved alerts stay in `filter=all|resolved`. @default RESOLVED_HISTORY_DAYS */
  resolvedHistoryDays?: number;
}

/** An integration of the generated portal. */
export interface Integration {
  readonly index: number;
  readonly key: string;
  readonly name: string;
  readonly kind: IntegrationKind;
  readonly vitalsEnabled: boolean;
  readonly os: readonly string[] | undefined;
  /** Share of eligible devices the integration covers. */
  readonly coverage: number;
  readonly id: string;
}

/** The time-independent facts of one device, cheap enough to compute for filtering. */
export interface DeviceCore {
  readonly index: number;
  readonly form: DeviceForm;
  readonly os: string;
  readonly user: number;
  readonly tags: readonly string[];
  readonly place: Place;
}

/** The time-independent facts of one directory user. */
export interface UserCore {
  readonly index: number;
  readonly first: string;
  readonly last: string;
  readonly name: string;
  readonly email: string;
  readonly department: Department;
  readonly place: Place;
  readonly tags: readonly string[];
}

/** The facts of one alert that filtering needs. */
export interface AlertCore {
  readonly index: number;
  readonly open: number;
  readonly resolveAt: number;
  readonly integration: Integration;
  readonly entity: 'device' | 'user' | 'system';
  /** Device or user index (-1 for system alerts). */
  readonly target: number;
}

/** Days of the activity threshold (spec 3). */
export const ACTIVE_DAYS = 30;
const ACTIVE_MS = ACTIVE_DAYS * DAY;

/** Alerts are laid out on a time line starting here (index 0). */
const ALERT_EPOCH = Date.UTC(2020, 0, 1);
/**
 * Shortest and longest time an alert stays open, but the long-lived ones (alertLife). The shortest
 * is above MEAN_LIFE / 5: with `alerts` at least 5 × the integrations they go round-robin over,
 * each integration gets a new alert more often than one closes, so every one has an open alert.
 */
const ALERT_MIN_OPEN = 8 * HOUR;
const ALERT_MAX_OPEN = 70 * HOUR;
/**
 * One alert in LONG_EVERY (index ≡ LONG_AT) stays open longer when it is amber (3.5 to 9 days) or
 * green (8 to 20 days), so the alerts older than the SLAs of docs/objectives.md (amber 3d, green 7d)
 * and the defaults (amber 7d) exist. Picked by index, not by hash, so the lists find them without
 * looking at every older index (alertIndices).
 */
const LONG_EVERY = 40;
const LONG_AT = 19;
const LONG_AMBER = [3.5 * DAY, 9 * DAY] as const;
const LONG_GREEN = [8 * DAY, 20 * DAY] as const;
const LONG_MAX_OPEN = LONG_GREEN[1];
/**
 * The mean time an alert stays open, worked out from alertLife's table and the severities' shares
 * (red 24.75 %, amber 43.75 %, green 31.5 %): red 21.2 h, amber 41.8 h, green 46.4 h. Alerts open
 * every MEAN_LIFE / `alerts`, so about `alerts` are open at any time.
 */
const MEAN_LIFE = 38 * HOUR;
/**
 * How many days resolved alerts stay in `filter=all|resolved` by default: 35, so the 30-day
 * response window is full (and differs from the 7-day one) with some margin, and a pass at any
 * time of day sees a month of history. At the default 120 alerts that is about 2,650 resolved
 * alerts, about 1.7 MB of JSON a pass; a test that wants short lists of every alert asks for fewer
 * (`resolvedHistoryDays`).
 */
const RESOLVED_HISTORY_DAYS = 35;
/** Vitals numbers change in steps of this bucket. */
const VITALS_BUCKET_MS = 5 * MINUTE;
/** Automatic regressions are planned per block of this length. */
const REGRESSION_BLOCK_MS = 6 * HOUR;

// Stream identifiers keep the hash sequences of different things apart.
const S_INTEG = 1, S_DEV = 2, S_USER = 3, S_ALERT = 4, S_VITALS = 5, S_PORTAL = 6, S_COVER = 7, S_FUNNEL = 8,
  S_REGR = 9, S_TEAM = 10, S_INV = 11, S_ARCH = 12;

const COMPANIES = ['Acme Corp', 'Globex', 'Initech', 'Umbrella Health', 'Stark Logistics', 'Wayne Retail', 'Hooli', 'Vandelay Industries'];

const FORM_TABLE = DEVICE_FORMS.map((f) => [f, f.weight] as const);
const DEPT_TABLE = DEPARTMENTS.map((d) => [d, d.weight] as const);
const PLACE_TABLE = PLACES.map((pl) => [pl, pl.weight] as const);
const SERVER_PLACE_TABLE = PLACES.map((pl) => [pl, pl.region === 'us' ? 3 : pl.region === 'emea' ? 2 : 1] as const);

const STATUS_TABLE = [['Incident', 25], ['Warning', 45], ['Info', 30]] as const;
const STAGE_TABLE = [['configuration', 60], ['function', 25], ['deployment', 15]] as const;
const STAGES = ['deployment', 'function', 'configuration'] as const;

const HEX_UPPER = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0').toUpperCase());
const B36 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Seven upper-case base-36 digits of a 32-bit number. */
function base36(n: number): string {
  let out = '';
  for (let i = 0; i < 7; i++) {
    out = B36[n % 36]! + out;
    n = Math.floor(n / 36);
  }
  return out;
}

function mod(a: number, m: number): number {
  return ((a % m) + m) % m;
}

/** A deterministic automatic Vitals dip. */
export interface Regression {
  readonly integration: string;
  readonly stage: 'deployment' | 'function' | 'configuration';
  readonly start: number;
  readonly end: number;
  /** Fraction by which the stage's pass rate drops. */
  readonly depth: number;
}

/** Counts of one funnel. */
interface FunnelCounts {
  eligible: number;
  deployed: number;
  functioning: number;
  configured: number;
}

/** The generated portal for one (seed, sizes). */
export class World {
  readonly seed: number;
  readonly deviceCount: number;
  readonly userCount: number;
  readonly alertTarget: number;
  readonly integrations: readonly Integration[];
  /** The integrations alerts come from: `integrations`, or a longer list when `alertIntegrations` is larger. */
  readonly alertIntegrations: readonly Integration[];
  /** Whether alerts go round-robin over `alertIntegrations` (set explicitly) rather than by hash. */
  private readonly alertRoundRobin: boolean;
  private alertIntegrationIndex: Map<string, Integration> | undefined;
  readonly company: string;
  readonly domain: string;
  readonly portalUsers: readonly PortalUserRecord[];
  readonly roles: readonly RoleRecord[];
  readonly teams: readonly TeamRecord[];
  readonly tags: readonly string[] = TAG_POOL;
  private readonly owners: readonly string[];
  private readonly alertSpacing: number;
  /** How long resolved alerts stay in `filter=all|resolved` (ms). */
  readonly resolvedHistoryMs: number;
  private readonly devicePerm: Permutation;
  private readonly userPerm: Permutation;
  private readonly nameSpace: number;
  private readonly tokenKey: number;
  private readonly funnelCache = new Map<string, FunnelCounts[]>();

  constructor(options: ModelOptions) {
    this.seed = mix32(Math.floor(options.seed) >>> 0) ^ Math.floor(options.seed / 4294967296);
    this.deviceCount = Math.max(0, Math.floor(options.devices));
    this.userCount = Math.max(10, Math.round(this.deviceCount * 0.8));
    this.alertTarget = Math.max(0, Math.floor(options.alerts));
    this.alertSpacing = this.alertTarget > 0 ? MEAN_LIFE / this.alertTarget : Infinity;
    this.resolvedHistoryMs = (options.resolvedHistoryDays ?? RESOLVED_HISTORY_DAYS) * DAY;
    this.devicePerm = new Permutation(Math.max(1, this.deviceCount), hash(this.seed, S_DEV, 0xfeed));
    const names = FIRST_NAMES.length * LAST_NAMES.length;
    this.nameSpace = names * Math.ceil(this.userCount / names);
    this.userPerm = new Permutation(this.nameSpace, hash(this.seed, S_USER, 0xfeed));
    this.tokenKey = hash(this.seed, S_DEV, 0x70c);
    this.company = pick(COMPANIES, this.seed, 0xc0);
    this.domain = asciiSlug(this.company) + '.example';
    this.integrations = this.makeIntegrations(Math.max(0, Math.floor(options.integrations)));
    const wanted = options.alertIntegrations;
    this.alertRoundRobin = wanted !== undefined;
    if (wanted === undefined) this.alertIntegrations = this.integrations;
    else if (wanted <= this.integrations.length) this.alertIntegrations = this.integrations.slice(0, Math.max(0, Math.floor(wanted)));
    else this.alertIntegrations = [...this.integrations, ...this.makeIntegrations(Math.floor(wanted)).slice(this.integrations.length)];
    const { portalUsers, roles, teams } = this.makeSettings();
    this.portalUsers = portalUsers;
    this.roles = roles;
    this.teams = teams;
    this.owners = portalUsers.filter((p) => p.enabled).map((p) => `${p.name} ${p.surname}`);
  }

  // ---------------------------------------------------------------- integrations

  private makeIntegrations(n: number): Integration[] {
    const out: Integration[] = [];
    const seenKind = new Map<IntegrationKind, number>();
    for (let i = 0; i < n; i++) {
      const def = INTEGRATIONS[i % INTEGRATIONS.length]!;
      const round = Math.floor(i / INTEGRATIONS.length);
      const nth = seenKind.get(def.kind) ?? 0;
      seenKind.set(def.kind, nth + 1);
      const u = unit(this.seed, S_INTEG, i, 1);
      // The first agent of a kind covers most devices; further ones (a second EDR) fewer.
      const coverage = def.kind === 'vuln' ? 0.75 + 0.2 * u
        : nth === 0 ? 0.85 + 0.12 * u
        : 0.35 + 0.35 * u;
      out.push({
        index: i,
        key: round ? `${def.key}-${round + 1}` : def.key,
        name: round ? `${def.name} ${round + 1}` : def.name,
        kind: def.kind,
        vitalsEnabled: VITALS_KINDS.has(def.kind),
        os: def.os,
        coverage,
        id: guid(this.seed, S_INTEG, i),
      });
    }
    return out;
  }

  /** The integration whose key or name is `name` (case-insensitive). */
  integration(name: string): Integration | undefined {
    const n = name.trim().toLowerCase();
    return this.integrations.find((x) => x.key.toLowerCase() === n || x.name.toLowerCase() === n);
  }

  /** The integration alerts name `name` (key or name, case-insensitive): one of `alertIntegrations`. */
  alertIntegrationNamed(name: string): Integration | undefined {
    if (this.alertIntegrations === this.integrations) return this.integration(name);
    if (!this.alertIntegrationIndex) {
      this.alertIntegrationIndex = new Map();
      for (const x of this.alertIntegrations) {
        this.alertIntegrationIndex.set(x.key.toLowerCase(), x);
        this.alertIntegrationIndex.set(x.name.toLowerCase(), x);
      }
    }
    return this.alertIntegrationIndex.get(name.trim().toLowerCase());
  }

  /** Whether device `d` carries integration `integ`'s agent / is present in it. */
  covers(integ: Integration, d: { index: number; form: DeviceForm; os: string }): boolean {
    if (integ.kind === 'idp') return false;
    if (integ.os && !integ.os.includes(d.os)) return false;
    // Vulnerability scanners do not scan phones.
    if (integ.kind === 'vuln' && d.form.form === 'phone') return false;
    return unit(this.seed, S_COVER, d.index, integ.index) < integ.coverage;
  }

  // ---------------------------------------------------------------- users

  /** The time-independent facts of directory user `u`. */
  userCore(u: number): UserCore {
    const p = this.userPerm.forward(u);
    const first = FIRST_NAMES[p % FIRST_NAMES.length]!;
    const last = LAST_NAMES[Math.floor(p / FIRST_NAMES.length) % LAST_NAMES.length]!;
    const n = Math.floor(p / (FIRST_NAMES.length * LAST_NAMES.length));
    const department = this.userDepartment(u);
    const place = this.userPlace(u);
    return {
      index: u,
      first,
      last,
      name: `${first} ${last}`,
      email: `${asciiSlug(first)}.${asciiSlug(last)}${n ? n + 1 : ''}@${this.domain}`,
      department,
      place,
      tags: [department.tag, place.region],
    };
  }

  private userDepartment(u: number): Department {
    return weighted(DEPT_TABLE, unit(this.seed, S_USER, u, 1));
  }

  private userPlace(u: number): Place {
    return weighted(PLACE_TABLE, unit(this.seed, S_USER, u, 2));
  }

  /** The tags of directory user `u` (department and region). */
  userTags(u: number): string[] {
    return [this.userDepartment(u).tag, this.userPlace(u).region];
  }

  /** Device indices whose last user is `u`. */
  devicesOfUser(u: number): number[] {
    const out: number[] = [];
    for (let p = u; p < this.deviceCount; p += this.userCount) out.push(this.devicePerm.inverse(p));
    return out;
  }

  /** Stable GUID of user `u` (used by user alerts' itemId and `/users/{id}`). */
  userId(u: number): string {
    return guid(this.seed, S_USER, u);
  }

  /**
   * When directory user `u` was last active at `at`, NaN for one never active (its times unset, spec 2.2): 3% never,
   * 12% dormant for 5 to 12 months (an account left behind), the rest by the device-like cycle (10% of them away for
   * 40 to 150 days at a time), so the last activities spread over a year.
   */
  private userLastActivity(u: number, at: number): number {
    const kind = unit(this.seed, S_USER, u, 30);
    if (kind < 0.03) return NaN;
    if (kind < 0.15) return at - intIn(150 * DAY, 365 * DAY, this.seed, S_USER, u, 31);
    return this.lastSeen(S_USER, u, at, 0.1, 1 * HOUR, 2 * DAY);
  }

  /** A directory user record at time `at`. */
  user(u: number, at: number): UserRecord {
    const c = this.userCore(u);
    const lastActivity = this.userLastActivity(u, at);
    const never = Number.isNaN(lastActivity);
    const loginAt = lastActivity - intIn(0, 3 * HOUR, this.seed, S_USER, u, 3);
    const hasFailed = !never && unit(this.seed, S_USER, u, 4) < 0.4;
    const failedAt = loginAt - intIn(HOUR, 20 * DAY, this.seed, S_USER, u, 5);
    const failedPlace = unit(this.seed, S_USER, u, 6) < 0.8 ? c.place : pick(PLACES, this.seed, S_USER, u, 7);
    const devices = this.devicesOfUser(u);
    return {
      name: c.name,
      email: c.email,
      jobTitle: pick(c.department.titles, this.seed, S_USER, u, 8),
      department: c.department.name,
      tags: [...c.tags],
      lastActivity: never ? MIN_TIMESTAMP : formatTimestamp(lastActivity, hash(lastActivity, u) % 10000),
      lastSuccessLogin: {
        lastLoginTime: never ? MIN_TIMESTAMP : formatTimestamp(loginAt, hash(loginAt, u) % 10000),
        lastLoginLocation: { ip: `${c.place.ipPrefix}.${1 + (hash(this.seed, S_USER, u, 9) % 254)}`, countryCode: c.place.countryCode, country: c.place.country, city: c.place.city },
      },
      lastFailedLogin: hasFailed
        ? {
            lastLoginTime: formatTimestamp(failedAt, hash(failedAt, u) % 10000),
            lastLoginLocation: { ip: `${failedPlace.ipPrefix}.${1 + (hash(this.seed, S_USER, u, 10) % 254)}`, countryCode: failedPlace.countryCode, country: failedPlace.country, city: failedPlace.city },
          }
        : { lastLoginTime: MIN_TIMESTAMP, lastLoginLocation: { ip: '', countryCode: '', country: '', city: '' } },
      recentDevices: devices.map((d) => ({
        itemId: this.deviceId(d),
        name: this.hostName(this.deviceKind(d)),
        multiple: devices.length > 1,
        isInactive: !this.deviceActive(d, at),
      })),
    };
  }

  /** Whether user `u` was active (lastActivity within 30 days) at `at`. */
  userActive(u: number, at: number): boolean {
    // NaN (never active) compares false.
    return at - this.userLastActivity(u, at) <= ACTIVE_MS;
  }

  // ---------------------------------------------------------------- devices

  /** The time-independent facts of device `i`. */
  deviceCore(i: number): DeviceCore {
    const { form, os } = this.deviceKind(i);
    const user = this.devicePerm.forward(i) % this.userCount;
    let place: Place;
    const tags: string[] = [form.tag];
    if (form.form === 'server') {
      place = weighted(SERVER_PLACE_TABLE, unit(this.seed, S_DEV, i, 3));
      tags.push(unit(this.seed, S_DEV, i, 4) < 0.6 ? 'production' : 'staging');
    } else {
      place = this.userPlace(user);
      tags.push(this.userDepartment(user).tag);
    }
    tags.push(place.region);
    return { index: i, form, os, user, tags, place };
  }

  /** Form factor and OS of device `i` (enough to decide coverage). */
  deviceKind(i: number): { index: number; form: DeviceForm; os: string } {
    const form = weighted(FORM_TABLE, unit(this.seed, S_DEV, i, 1));
    return { index: i, form, os: weighted(form.os, unit(this.seed, S_DEV, i, 2)) };
  }

  /** Stable GUID of device `i` (alerts' itemId, users' recentDevices, `/devices/{id}`). */
  deviceId(i: number): string {
    return guid(this.seed, S_DEV, i);
  }

  /** Unique host name of a device. */
  hostName(c: { index: number; form: DeviceForm; os: string }): string {
    const token = base36(scramble32(c.index, this.tokenKey));
    switch (c.form.form) {
      case 'laptop': return c.os === 'macOS' ? `MBP-${token}` : `LT-${token}`;
      case 'desktop': return c.os === 'macOS' ? `MAC-${token}` : c.os === 'Linux' ? `ws-${token.toLowerCase()}` : `DESKTOP-${token}`;
      case 'server': return `srv-${pick(SERVER_ROLES, this.seed, S_DEV, c.index, 5)}-${token.toLowerCase()}`;
      case 'phone': return c.os === 'iOS' ? `iPhone-${token}` : `Android-${token}`;
    }
  }

  /**
   * When the device was last online at `at`. Each device lives in a cycle of 120–240 days with an
   * offline stretch at its end (a few days for most, 40–150 days for about a third), and checks
   * in on a fixed interval while online; so devices turn inactive and come back slowly.
   */
  deviceLastOnline(i: number, at: number): number {
    const form = weighted(FORM_TABLE, unit(this.seed, S_DEV, i, 1)).form;
    const [minCi, maxCi] = form === 'server' ? [5 * MINUTE, 15 * MINUTE] : form === 'phone' ? [HOUR, 6 * HOUR] : [15 * MINUTE, 4 * HOUR];
    return this.lastSeen(S_DEV, i, at, 0.35, minCi, maxCi);
  }

  /** Whether device `i` is active (online within 30 days) at `at`. */
  deviceActive(i: number, at: number): boolean {
    return at - this.deviceLastOnline(i, at) <= ACTIVE_MS;
  }

  private lastSeen(stream: number, i: number, at: number, longShare: number, minCheckIn: number, maxCheckIn: number): number {
    const period = intIn(120 * DAY, 240 * DAY, this.seed, stream, i, 20);
    const long = unit(this.seed, stream, i, 21) < longShare;
    const offline = long ? intIn(40 * DAY, 150 * DAY, this.seed, stream, i, 22) : intIn(0, 6 * DAY, this.seed, stream, i, 22);
    const phase = intIn(0, period - 1, this.seed, stream, i, 23);
    const pos = mod(at + phase, period);
    const online = period - offline;
    if (pos >= online) return at - (pos - online);
    const interval = intIn(minCheckIn, maxCheckIn, this.seed, stream, i, 24);
    const ciPhase = intIn(0, interval - 1, this.seed, stream, i, 25);
    return Math.max(at - mod(at + ciPhase, interval), at - pos);
  }

  /** A device record at time `at`. */
  device(i: number, at: number): DeviceRecord {
    const c = this.deviceCore(i);
    const s = this.seed;
    const lastOnline = this.deviceLastOnline(i, at);
    const active = at - lastOnline <= ACTIVE_MS;
    const lastLogin = lastOnline - intIn(0, 8 * HOUR, s, S_DEV, i, Math.floor(lastOnline / HOUR));
    const user = this.userCore(c.user);
    const form = c.form.form;
    const isMac = c.os === 'macOS';
    const hw = pick(HARDWARE[form === 'laptop' || form === 'desktop' ? (isMac ? form + 'Mac' : form) : form]!, s, S_DEV, i, 6);
    const osVersion = pick(OS_VERSIONS[form === 'server' && c.os === 'Windows' ? 'WindowsServer' : c.os]!, s, S_DEV, i, 7);
    const disk = form === 'server' ? pick([500, 1000, 2000], s, S_DEV, i, 8) : form === 'phone' ? pick([128, 256], s, S_DEV, i, 8) : pick([256, 512, 1024], s, S_DEV, i, 8);
    const free = Math.round(disk * (0.1 + 0.7 * unit(s, S_DEV, i, 9)));
    const memory = form === 'server' ? pick([32, 64, 128], s, S_DEV, i, 10) : form === 'phone' ? pick([6, 8], s, S_DEV, i, 10) : pick([8, 16, 32], s, S_DEV, i, 10);
    const purchased = Date.UTC(2021, 0, 1) + Math.floor(unit(s, S_DEV, i, 11) * 5 * 365) * DAY + intIn(8, 17, s, S_DEV, i, 12) * HOUR;
    let mac = '';
    for (let k = 0; k < 6; k++) mac += (k ? ':' : '') + HEX_UPPER[hash(s, S_DEV, i, 30 + k) & 0xff];
    const securityTools: DeviceRecord['securityTools'] = [];
    const connectedSystems: DeviceRecord['connectedSystems'] = [];
    for (const integ of this.integrations) {
      if (!this.covers(integ, c)) continue;
      connectedSystems.push({
        name: integ.name,
        isConnected: unit(s, S_DEV, i, 100 + integ.index) < 0.96,
        isActive: active && unit(s, S_DEV, i, 200 + integ.index) < 0.97,
      });
      if (integ.kind === 'edr') {
        securityTools.push({
          name: integ.name,
          redAlerts: unit(s, S_DEV, i, 300 + integ.index) < 0.85 ? 0 : intIn(1, 2, s, S_DEV, i, 400 + integ.index),
          amberAlerts: intIn(0, 3, s, S_DEV, i, 500 + integ.index) === 3 ? intIn(1, 4, s, S_DEV, i, 600 + integ.index) : 0,
        });
      }
    }
    return {
      hostName: this.hostName(c),
      os: c.os,
      osVersion,
      lastOnline: formatTimestamp(lastOnline, hash(s, lastOnline, i) % 10000),
      location: { countryCode: c.place.countryCode, country: c.place.country, city: c.place.city },
      tags: [...c.tags],
      metadata: {
        serial_number: hexString(10, s, S_DEV, i).toUpperCase(),
        manufacturer: hw[0],
        model: hw[1],
        total_disk_storage: `${disk} GB`,
        free_disk_storage: `${free} GB`,
        total_memory: `${memory} GB`,
        cpu_speed: `${(1.8 + 1.8 * unit(s, S_DEV, i, 13)).toFixed(1)} GHz`,
        warranty_expiry: formatWarranty(purchased + 3 * 365 * DAY),
      },
      lastUser: { name: user.name, email: user.email },
      lastLogin: formatTimestamp(lastLogin, hash(s, lastLogin, i) % 10000),
      publicIp: `${c.place.ipPrefix}.${1 + (hash(s, S_DEV, i, 14) % 254)}`,
      privateIp: `10.${hash(s, S_DEV, i, 15) % 256}.${hash(s, S_DEV, i, 16) % 256}.${1 + (hash(s, S_DEV, i, 17) % 254)}`,
      macAddress: mac,
      securityTools,
      connectedSystems,
    };
  }

  /** A workstation inventory item of `integ` for device `i` at `at` (fields of the 2.5 sample). */
  workstationItem(integ: Integration, i: number, at: number): WorkstationInventoryItem {
    const c = this.deviceCore(i);
    const s = this.seed;
    const x = integ.index;
    const lastOnline = this.deviceLastOnline(i, at);
    const refresh = lastOnline - intIn(0, 30 * MINUTE, s, S_INV, i, x);
    const created = Date.UTC(2021, 0, 1) + Math.floor(unit(s, S_INV, i, 1000 + x) * 4 * 365 * DAY);
    const pending = unit(s, S_INV, i, 2000 + x) < 0.7 ? 0 : intIn(1, 12, s, S_INV, i, 3000 + x);
    const uptimeMin = intIn(5, 30 * 24 * 60, s, S_INV, i, 4000 + x);
    const user = this.userCore(c.user);
    const host = this.hostName(c);
    const osName = c.os === 'Windows' ? (c.form.form === 'server' ? 'Microsoft Windows Server 2022 Standard' : 'Microsoft Windows 11 Enterprise')
      : c.os === 'macOS' ? 'macOS' : c.os === 'Linux' ? 'Linux' : c.os;
    return {
      name: host,
      tenantId: guid(s, S_INV, x),
      tenantName: this.company,
      patches: intIn(20, 400, s, S_INV, i, 5000 + x),
      pendingPatches: pending,
      nextPatchTime: formatTimestamp(Math.ceil(at / DAY) * DAY + 2 * HOUR),
      lastUpdateTime: formatTimestamp(refresh - HOUR),
      lastRefreshTime: formatTimestamp(refresh),
      uptimeDisplay: `${Math.floor(uptimeMin / 1440)}d ${Math.floor((uptimeMin % 1440) / 60)}h ${uptimeMin % 60}m`,
      needsReboot: pending > 0 && unit(s, S_INV, i, 6000 + x) < 0.5,
      osFamily: c.os,
      osName,
      createTime: formatTimestamp(created),
      osVersion: pick(OS_VERSIONS[c.os]!, s, S_DEV, i, 7),
      ipAddresses: [`10.${hash(s, S_DEV, i, 15) % 256}.${hash(s, S_DEV, i, 16) % 256}.${1 + (hash(s, S_DEV, i, 17) % 254)}`],
      agentVersion: Number((6 + unit(s, S_INV, x, 7) * 2 + intIn(0, 9, s, S_INV, i, 7000 + x) / 100).toFixed(2)),
      customName: '',
      totalCount: 1,
      displayName: host,
      connected: this.deviceActive(i, at) && unit(s, S_DEV, i, 100 + x) < 0.96,
      lastLoggedInUser: user.email,
      lastLoggedInTime: formatTimestamp(lastOnline - HOUR),
      uuid: guid(s, S_INV, i * 64 + x),
      risk: pending > 6 ? 'Red' : pending > 0 ? 'Amber' : 'Green',
      itemId: this.deviceId(i),
    };
  }

  /** A user inventory item of an identity integration for directory user `u`. */
  userItem(integ: Integration, u: number, at: number): InventoryItem {
    const c = this.userCore(u);
    const last = this.userLastActivity(u, at);
    return {
      name: c.name,
      email: c.email,
      displayName: c.name,
      department: c.department.name,
      // NaN (never active): not enabled, and no login.
      enabled: at - last <= 90 * DAY,
      mfaEnrolled: unit(this.seed, S_INV, u, 8000 + integ.index) < 0.9,
      lastLoginTime: Number.isNaN(last) ? MIN_TIMESTAMP : formatTimestamp(last),
      createTime: formatTimestamp(Date.UTC(2020, 0, 1) + Math.floor(unit(this.seed, S_INV, u, 9000) * 5 * 365 * DAY)),
      uuid: guid(this.seed, S_INV, 1_000_000 + u * 64 + integ.index),
      itemId: this.userId(u),
    };
  }

  // ---------------------------------------------------------------- alerts

  /**
   * The indices of the alerts that can be open at `at` (or, `withHistory`, resolved within
   * resolvedHistoryMs of it), newest first: every alert opened within the usual longest life
   * (and the history) before `at`, then, further back, only the long-lived ones (LONG_EVERY).
   */
  *alertIndices(at: number, withHistory: boolean): Generator<number> {
    if (!Number.isFinite(this.alertSpacing) || this.alertIntegrations.length === 0) return;
    const history = withHistory ? this.resolvedHistoryMs : 0;
    const hi = Math.floor((at - ALERT_EPOCH) / this.alertSpacing);
    const lowest = (back: number) => Math.max(0, Math.floor((at - back - ALERT_EPOCH) / this.alertSpacing) - 1);
    const usual = lowest(ALERT_MAX_OPEN + history);
    for (let k = hi; k >= usual; k--) yield k;
    const longest = lowest(LONG_MAX_OPEN + history);
    for (let k = usual - 1 - mod(usual - 1 - LONG_AT, LONG_EVERY); k >= longest; k -= LONG_EVERY) yield k;
  }

  /** When alert `k` opens. */
  alertOpen(k: number): number {
    return Math.floor(ALERT_EPOCH + (k + unit(this.seed, S_ALERT, k, 1)) * this.alertSpacing);
  }

  /** Alert `k`'s type (`status`). */
  private alertStatus(k: number): string {
    return weighted(STATUS_TABLE, unit(this.seed, S_ALERT, k, 10));
  }

  /** Alert `k`'s severity (`state`), from its type: it keeps it when resolved. */
  private alertState(k: number): 'Red' | 'Amber' | 'Green' {
    const status = this.alertStatus(k);
    const v = unit(this.seed, S_ALERT, k, 11);
    return status === 'Incident' ? (v < 0.9 ? 'Red' : 'Amber') : status === 'Warning' ? (v < 0.85 ? 'Amber' : v < 0.9 ? 'Red' : 'Green') : v < 0.9 ? 'Green' : 'Amber';
  }

  /**
   * How long alert `k` stays open: red mostly 8 to 22 h, one in five 26 to 66 h (past a 1d SLA);
   * amber and green 8 to 70 h, or days for the long-lived ones (LONG_EVERY).
   */
  private alertLife(k: number): number {
    const s = this.seed;
    const u = unit(s, S_ALERT, k, 2);
    const state = this.alertState(k);
    const long = k % LONG_EVERY === LONG_AT;
    if (long && state === 'Amber') return LONG_AMBER[0] + u * (LONG_AMBER[1] - LONG_AMBER[0]);
    if (long && state === 'Green') return LONG_GREEN[0] + u * (LONG_GREEN[1] - LONG_GREEN[0]);
    if (state === 'Red') return unit(s, S_ALERT, k, 40) < 0.2 ? 26 * HOUR + u * 40 * HOUR : ALERT_MIN_OPEN + u * (22 * HOUR - ALERT_MIN_OPEN);
    return ALERT_MIN_OPEN + u * (ALERT_MAX_OPEN - ALERT_MIN_OPEN);
  }

  /** When alert `k` resolves. */
  alertResolve(k: number, open: number): number {
    return Math.floor(open + this.alertLife(k));
  }

  /**
   * How long after its creation alert `k` is acknowledged (Infinity: never), by severity: red 90 %
   * of them, mostly within the hour, one in seven 3 to 12 h late; amber 70 %, mostly within 6 h, one
   * in seven a day or two late; green half, 1 h to 2 days. Never after its resolution.
   */
  private alertAckDelay(k: number, state: string, life: number): number {
    const s = this.seed;
    const acked = unit(s, S_ALERT, k, 13);
    const d = unit(s, S_ALERT, k, 14);
    const late = unit(s, S_ALERT, k, 41) < 1 / 7;
    let delay: number;
    if (state === 'Red') delay = acked >= 0.9 ? Infinity : late ? 3 * HOUR + d * 9 * HOUR : 5 * MINUTE + d * 55 * MINUTE;
    else if (state === 'Amber') delay = acked >= 0.7 ? Infinity : late ? DAY + d * DAY : 15 * MINUTE + d * (6 * HOUR - 15 * MINUTE);
    else delay = acked >= 0.5 ? Infinity : HOUR + d * 47 * HOUR;
    return delay === Infinity ? Infinity : Math.min(delay, 0.95 * life);
  }

  /** Whether alert `k`'s product is one of simulator/odd.ts's, naming no integration of the portal (no systemName selects it). */
  alertProductIsOdd(k: number): boolean {
    return !this.alertRoundRobin && oddProduct(k, '') !== undefined;
  }

  /** The integration alert `k` comes from. */
  alertIntegration(k: number): Integration {
    const list = this.alertIntegrations;
    // Round-robin when the count was asked for: any n consecutive alerts cover all n integrations.
    return list[this.alertRoundRobin ? k % list.length : hash(this.seed, S_ALERT, k, 3) % list.length]!;
  }

  /** The facts of alert `k` that filtering needs. */
  alertCore(k: number): AlertCore {
    const s = this.seed;
    const open = this.alertOpen(k);
    const resolveAt = this.alertResolve(k, open);
    const integration = this.alertIntegration(k);
    const u = unit(s, S_ALERT, k, 4);
    let entity: AlertCore['entity'];
    let target = -1;
    if (integration.kind === 'idp') {
      entity = u < 0.85 ? 'user' : 'system';
      if (entity === 'user') target = hash(s, S_ALERT, k, 5) % this.userCount;
    } else {
      entity = u < 0.88 && this.deviceCount > 0 ? 'device' : 'system';
      if (entity === 'device') {
        // Prefer a device the integration actually covers.
        for (let t = 0; t < 4; t++) {
          target = hash(s, S_ALERT, k, 6 + t) % this.deviceCount;
          if (this.covers(integration, this.deviceKind(target))) break;
        }
      }
    }
    return { index: k, open, resolveAt, integration, entity, target };
  }

  /** The alert record of `core` as seen at `at`. */
  alert(core: AlertCore, at: number): AlertRecord {
    const s = this.seed;
    const k = core.index;
    const life = core.resolveAt - core.open;
    const resolved = at >= core.resolveAt;
    const status = this.alertStatus(k);
    // A resolved alert keeps its severity, so response times can be told per severity.
    const state = this.alertState(k);
    const template = core.entity === 'system'
      ? pick(SYSTEM_TEMPLATES, s, S_ALERT, k, 12)
      : pick(ALERT_TEMPLATES[core.integration.kind], s, S_ALERT, k, 12);
    let item: string;
    let itemId: string;
    let linked: boolean;
    if (core.entity === 'device') {
      item = this.hostName(this.deviceKind(core.target));
      itemId = this.deviceId(core.target);
      linked = true;
    } else if (core.entity === 'user') {
      item = this.userCore(core.target).name;
      itemId = this.userId(core.target);
      linked = core.target < this.deviceCount; // the user has at least one device
    } else {
      item = core.integration.name;
      itemId = core.integration.id;
      linked = false;
    }
    const ackAt = core.open + this.alertAckDelay(k, state, life);
    const assignAt = unit(s, S_ALERT, k, 15) < 0.55 ? core.open + life * (0.02 + 0.48 * unit(s, S_ALERT, k, 16)) : Infinity;
    const snoozeAt = unit(s, S_ALERT, k, 17) < 0.18 ? core.open + life * (0.05 + 0.35 * unit(s, S_ALERT, k, 18)) : Infinity;
    const ownerName = this.owners[hash(s, S_ALERT, k, 19) % this.owners.length]!;
    const acknowledged = at >= ackAt;
    const assigned = at >= assignAt;
    const snoozed = at >= snoozeAt;
    const snoozeUntil = snoozeAt + intIn(2 * HOUR, 5 * DAY, s, S_ALERT, k, 20);
    let resolvedBy = '';
    if (resolved) resolvedBy = assigned ? ownerName : unit(s, S_ALERT, k, 21) < 0.6 ? 'Automation' : ownerName;
    return {
      state,
      product: (this.alertProductIsOdd(k) ? oddProduct(k, template.category) : undefined) ?? `${core.integration.name}, ${template.category}`,
      status,
      item,
      issue: template.issue,
      details: template.details.replace('{item}', item),
      itemEntityType: core.entity,
      ownerName: assigned ? ownerName : '',
      timestamp: unsetCreated(k) ? MIN_TIMESTAMP : formatTimestamp(core.open, hash(s, S_ALERT, k, 30) % 10000),
      acknowledgedTime: acknowledged ? formatTimestamp(ackAt, hash(s, S_ALERT, k, 31) % 10000) : MIN_TIMESTAMP,
      assignedTime: assigned ? formatTimestamp(assignAt, hash(s, S_ALERT, k, 32) % 10000) : MIN_TIMESTAMP,
      resolved,
      acknowledged,
      resolvedBy,
      resolvedTime: resolved ? formatTimestamp(core.resolveAt, hash(s, S_ALERT, k, 33) % 10000) : MIN_TIMESTAMP,
      itemId,
      inactiveUntil: snoozed ? formatTimestamp(snoozeUntil, hash(s, S_ALERT, k, 34) % 10000) : MIN_TIMESTAMP,
      hasLinkedDevice: linked,
    };
  }

  // ---------------------------------------------------------------- vitals

  /** The automatic regression active at `t`, if any (at most one per 6-hour block), 45–75 minutes long. */
  regressionAt(t: number): Regression | undefined {
    const enabled = this.integrations.filter((x) => x.vitalsEnabled);
    if (enabled.length === 0) return undefined;
    const block = Math.floor(t / REGRESSION_BLOCK_MS);
    if (unit(this.seed, S_REGR, block, 1) >= 0.75) return undefined;
    const duration = intIn(45 * MINUTE, 75 * MINUTE, this.seed, S_REGR, block, 2);
    const start = block * REGRESSION_BLOCK_MS + Math.floor(unit(this.seed, S_REGR, block, 3) * (REGRESSION_BLOCK_MS - duration));
    if (t < start || t >= start + duration) return undefined;
    const integ = enabled[hash(this.seed, S_REGR, block, 4) % enabled.length]!;
    const stage = weighted(STAGE_TABLE, unit(this.seed, S_REGR, block, 5));
    // 10–14 % down: about what the stage-regression alert asks (10 %), never a page of the default objective (error ratio 0.3).
    return { integration: integ.key, stage, start, end: start + duration, depth: 0.1 + 0.04 * unit(this.seed, S_REGR, block, 6) };
  }

  /**
   * The regression an archived day ended with, if any: about one day in eight, one enabled
   * integration's deployment, function or (mostly) configuration pass rate is 10–30 % down in that
   * day's archive. Archives only: live dips are the hour-long ones above, which an end-of-day
   * snapshot would almost never catch, and a backfill needs days that regressed.
   */
  archiveRegression(dayStart: number): Regression | undefined {
    const enabled = this.integrations.filter((x) => x.vitalsEnabled);
    if (enabled.length === 0) return undefined;
    const day = Math.floor(dayStart / DAY);
    if (unit(this.seed, S_ARCH, day, 1) >= 0.125) return undefined;
    const integ = enabled[hash(this.seed, S_ARCH, day, 2) % enabled.length]!;
    const stage = weighted(STAGE_TABLE, unit(this.seed, S_ARCH, day, 3));
    return { integration: integ.key, stage, start: day * DAY, end: (day + 1) * DAY, depth: 0.1 + 0.2 * unit(this.seed, S_ARCH, day, 4) };
  }

  /** The archived `/vitals` of the UTC day starting at `dayStart`: the snapshot at 23:59, with the day's archive regression if it has one. */
  archivedVitals(dayStart: number, tag?: string): VitalsRecord[] {
    return this.vitals(dayStart + DAY - MINUTE, tag, this.archiveRegression(dayStart));
  }

  /**
   * Pass rate of a funnel stage at `t`: a base, a slow sinusoid, noise per 5-minute bucket, and any
   * regression. Configuration passes 98–99.5 % (±0.6 %) at rest, as a managed policy does: the
   * default objective (95 %) holds in steady state, and a regression is what burns its budget.
   */
  private rate(integ: Integration, stage: 0 | 1 | 2, t: number, regression: Regression | undefined): number {
    const s = this.seed;
    const x = integ.index * 4 + stage;
    const base = stage === 0 ? 0.9 + 0.08 * unit(s, S_VITALS, x, 1) : stage === 1 ? 0.88 + 0.1 * unit(s, S_VITALS, x, 1) : 0.98 + 0.015 * unit(s, S_VITALS, x, 1);
    const period = intIn(1 * DAY, 3 * DAY, s, S_VITALS, x, 2);
    const phase = unit(s, S_VITALS, x, 3) * 2 * Math.PI;
    const bucket = Math.floor(t / VITALS_BUCKET_MS);
    const noise = (unit(s, S_VITALS, x, bucket) - 0.5) * 0.008;
    const swing = stage === 2 ? 0.006 : 0.02;
    let r = base + swing * Math.sin((2 * Math.PI * t) / period + phase) + noise;
    if (regression && regression.integration === integ.key && STAGES[stage] === regression.stage) {
      r *= 1 - regression.depth;
    }
    return Math.min(1, Math.max(0, r));
  }

  /**
   * Counts every integration's funnel over the devices (with `tag` when given) at the start of
   * `t`'s 5-minute bucket: a device is eligible when it is active and covered, and passes each
   * stage when its own fixed draw is under the stage's current pass rate, so the funnel rule
   * holds by construction and tag views are true subsets.
   */
  private funnels(t: number, tag: string | undefined, override?: Regression): FunnelCounts[] {
    const bucketStart = Math.floor(t / VITALS_BUCKET_MS) * VITALS_BUCKET_MS;
    const cacheKey = `${bucketStart}|${tag ?? ''}|${override ? `${override.integration}/${override.stage}` : ''}`;
    const cached = this.funnelCache.get(cacheKey);
    if (cached) return cached;
    const regression = override ?? this.regressionAt(bucketStart);
    const rates = this.integrations.map((integ) => [0, 1, 2].map((st) => this.rate(integ, st as 0 | 1 | 2, bucketStart, regression)));
    const counts: FunnelCounts[] = this.integrations.map(() => ({ eligible: 0, deployed: 0, functioning: 0, configured: 0 }));
    const s = this.seed;
    for (let i = 0; i < this.deviceCount; i++) {
      const core = tag === undefined ? this.deviceKind(i) : this.deviceCore(i);
      if (tag !== undefined && !(core as DeviceCore).tags.includes(tag)) continue;
      if (!this.deviceActive(i, bucketStart)) continue;
      for (const integ of this.integrations) {
        if (!this.covers(integ, core)) continue;
        const c = counts[integ.index]!;
        const r = rates[integ.index]!;
        c.eligible++;
        if (unit(s, S_FUNNEL, i, integ.index * 4) >= r[0]!) continue;
        c.deployed++;
        if (unit(s, S_FUNNEL, i, integ.index * 4 + 1) >= r[1]!) continue;
        c.functioning++;
        if (unit(s, S_FUNNEL, i, integ.index * 4 + 2) >= r[2]!) continue;
        c.configured++;
      }
    }
    if (this.funnelCache.size >= 64) this.funnelCache.delete(this.funnelCache.keys().next().value!);
    this.funnelCache.set(cacheKey, counts);
    return counts;
  }

  /** The `/vitals` records at `t` (optionally for devices carrying `tag`; `regression` in place of the live one). */
  vitals(t: number, tag?: string, regression?: Regression): VitalsRecord[] {
    const counts = this.funnels(t, tag, regression);
    return this.integrations.map((integ) => {
      const c = counts[integ.index]!;
      // Identity providers have no device agents: count their active users instead.
      const idpAgents = integ.kind === 'idp' ? this.idpActiveUsers(integ, t, tag) : 0;
      if (!integ.vitalsEnabled) return { key: integ.key, name: integ.name, vitalsEnabled: false, activeAgents: integ.kind === 'idp' ? idpAgents : c.eligible };
      return {
        key: integ.key,
        name: integ.name,
        vitalsEnabled: true,
        agentDeployedPossibleCompliant: c.eligible,
        agentDeployedCompliant: c.deployed,
        agentFunctioningPossibleCompliant: c.deployed,
        agentFunctioningCompliant: c.functioning,
        configurationPossibleCompliant: c.functioning,
        configurationCompliant: c.configured,
      };
    });
  }

  private idpActiveUsers(integ: Integration, t: number, tag: string | undefined): number {
    // Modelled rather than counted: users are not scanned per request.
    const share = tag === undefined ? 1 : this.userTagShare(tag);
    const base = this.userCount * (0.85 + 0.1 * unit(this.seed, S_VITALS, integ.index, 99));
    const drift = 1 + 0.01 * Math.sin((2 * Math.PI * t) / (7 * DAY) + integ.index);
    return Math.round(base * share * drift);
  }

  private readonly tagShares = new Map<string, number>();
  private userTagShare(tag: string): number {
    let share = this.tagShares.get(tag);
    if (share === undefined) {
      const n = Math.min(this.userCount, 2000);
      let hits = 0;
      for (let u = 0; u < n; u++) if (this.userTags(u).includes(tag)) hits++;
      share = hits / n;
      this.tagShares.set(tag, share);
    }
    return share;
  }

  // ---------------------------------------------------------------- settings

  private makeSettings(): { portalUsers: PortalUserRecord[]; roles: RoleRecord[]; teams: TeamRecord[] } {
    const s = this.seed;
    const teamDefs: { name: string }[] = [{ name: 'Finance IT' }, { name: 'Server Operations' }, { name: 'Endpoint Engineering' }, { name: 'EMEA Service Desk' }];
    const teams: TeamRecord[] = teamDefs.map((t, i) => ({ id: guid(s, S_TEAM, i), name: t.name, members: [] }));
    const roleDefs: { id: string; name: string; description: string; builtin: boolean; visibility: string; level: string }[] = [
      { id: 'superAdmin', name: 'Super Admin', description: 'Full access to every feature and setting.', builtin: true, visibility: 'All', level: 'Manage' },
      { id: 'analyst', name: 'Analyst', description: 'Investigates and actions alerts; reads all data.', builtin: true, visibility: 'All', level: 'Action' },
      { id: 'viewer', name: 'Viewer', description: 'Read-only access to dashboards and reports.', builtin: true, visibility: 'All', level: 'Export' },
      { id: guid(s, S_PORTAL, 900), name: 'Team Analyst', description: 'Analyst limited to the devices of their teams.', builtin: false, visibility: 'Team', level: 'Action' },
      { id: guid(s, S_PORTAL, 901), name: 'Vitals Reader', description: 'Reads Vitals and reports only.', builtin: false, visibility: 'None', level: 'Download' },
    ];
    const permissionNames = ['deviceVisibility', 'userVisibility', 'integrations', 'alertNotes', 'deviceNotes', 'userNotes', 'globalTags', 'apiKeys', 'miscellaneous', 'reports', 'scheduledReports', 'previousReports', 'browserExtensionAccess', 'vitals', 'workflowAutomation', 'vitalsAlerts', 'users', 'roles', 'teams', 'ssoSetup'];
    const roles: RoleRecord[] = roleDefs.map((r) => {
      const permissions: Record<string, string> = {};
      for (const p of permissionNames) {
        if (p === 'deviceVisibility' || p === 'userVisibility') permissions[p] = r.visibility;
        else if (p === 'browserExtensionAccess') permissions[p] = 'Login';
        else if (r.id === 'superAdmin') permissions[p] = 'Manage';
        else if (['users', 'roles', 'teams', 'ssoSetup', 'apiKeys'].includes(p)) permissions[p] = 'None';
        else if (p.startsWith('vitals')) permissions[p] = r.level === 'Download' ? 'Manage' : r.level;
        else permissions[p] = r.level;
      }
      return { id: r.id, name: r.name, description: r.description, default: r.builtin, permissions, users: [] };
    });
    const portalUsers: PortalUserRecord[] = [];
    const used = new Set<string>();
    for (let i = 0; portalUsers.length < 12; i++) {
      const first = pick(FIRST_NAMES, s, S_PORTAL, i, 1);
      const last = pick(LAST_NAMES, s, S_PORTAL, i, 2);
      const username = `${asciiSlug(first)}.${asciiSlug(last)}@${this.domain}`;
      if (used.has(username)) continue;
      used.add(username);
      const n = portalUsers.length;
      const role = roles[n === 0 ? 0 : n < 3 ? 1 : weighted([[0, 1], [1, 4], [2, 3], [3, 2], [4, 1]] as const, unit(s, S_PORTAL, i, 3))]!;
      const currentteams = teams.filter((_, t) => role.permissions.deviceVisibility === 'Team' ? t === n % teams.length : unit(s, S_PORTAL, i, 10 + t) < 0.2)
        .map((t) => ({ id: t.id, name: t.name }));
      const user: PortalUserRecord = {
        username,
        name: first,
        surname: last,
        roleid: role.id,
        // Some accounts without MFA (the fifth and ninth always), a few disabled (the seventh and twelfth always).
        mfastatus: n !== 4 && n !== 8 && unit(s, S_PORTAL, i, 4) < 0.85 ? 'enabled' : 'disabled',
        enabled: n !== 6 && n !== 11 && (n < 3 || unit(s, S_PORTAL, i, 5) < 0.9),
        ssostatus: unit(s, S_PORTAL, i, 6) < 0.6 ? 'enabled' : 'disabled',
        currentteams,
      };
      portalUsers.push(user);
      const ref: MemberRef = { username, name: first, surname: last };
      role.users.push(ref);
      for (const t of currentteams) teams.find((x) => x.id === t.id)!.members.push(ref);
    }
    return { portalUsers, roles, teams };
  }
}
