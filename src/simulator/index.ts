/**
 * The simulated Security Posture portal: a spec-faithful HTTP server on loopback with generated,
 * moving, deterministic data, for demos, contract tests and dashboard sandboxes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../core/clock.js';
import { World } from './model.js';
import { Portal, type PortalFixture } from './portal.js';
import { hexString, mix32 } from './prng.js';
import type { AlertRecord, DeviceRecord, VitalsRecord } from './records.js';
import { BASE_PATH, SimServer } from './server.js';
import type { Fault, SimRequest, SimulatorKey } from './types.js';

export type { AlertRecord, DeviceRecord, VitalsRecord } from './records.js';
export type { Fault, SimRequest, SimulatorKey } from './types.js';

/** Options of `startSimulator`. */
export interface SimulatorOptions {
  /** @default 1 */
  seed?: number;
  /** Total devices (most active, some inactive). @default 250 */
  devices?: number;
  /** About this many alerts are unresolved at any time (resolved history exists too). @default 120 */
  alerts?: number;
  /** Vitals records (a mix of vitalsEnabled true/false). @default 8 */
  integrations?: number;
  /** Drives data movement and the rate limit. @default systemClock */
  clock?: Clock;
  /** Portal-wide sliding window across keys, or false for none. @default { requests: 10, windowMs: 60_000 } */
  rateLimit?: { requests: number; windowMs: number } | false;
  /** @default one full key, deterministic from the seed ('sim-' + 24 hex chars) */
  keys?: SimulatorKey[];
  /** @default '127.0.0.1' */
  host?: string;
  /** @default 0 (a random free port) */
  port?: number;
  /** Data moves with clock time; false = frozen at the start time. @default true */
  moving?: boolean;
  /** Most records one list answer carries whatever `limit` asks (0, omitted or larger gives the cap); the envelope's `limit` says it. @default no cap */
  maxPageSize?: number;
  /** Distinct integrations (the part of `product` before the comma) alerts spread over, round-robin; beyond `integrations` the catalogue repeats with numbered names. @default alerts drawn from `integrations` */
  alertIntegrations?: number;
  /** How many days resolved alerts stay in `filter=all` and `filter=resolved` (35 fills the 30-day response window with a margin). @default 35 */
  resolvedHistoryDays?: number;
}

/** Injects `fault` into the next `times` (default 1) requests to `path` (undefined = any path). */
export interface FaultRule {
  path?: string;
  times?: number;
  fault: Fault;
}

/** Exact data for tests, replacing the generated data while set. */
export type Fixture = PortalFixture;

/** A running simulated portal. */
export interface Simulator {
  /** 'http://127.0.0.1:<port>/public-api/v1' */
  readonly baseUrl: string;
  /** The first key. */
  readonly apiKey: string;
  /** Every request received, in order (including 401/403/404/429). */
  readonly requests: SimRequest[];
  addFault(rule: FaultRule): void;
  clearFaults(): void;
  setFixture(fixture: Fixture | null): void;
  /** The data the portal serves at `at` (default now), for tests computing expected values independently. */
  data(at?: number): { vitals(tag?: string): VitalsRecord[]; alerts(): Iterable<AlertRecord>; devices(): Iterable<DeviceRecord> };
  /** Inject a Vitals regression now (configurationCompliant drops by `fraction`, default 0.3, for `integration` (key or name), or the first enabled one) that lasts until cleared. */
  injectRegression(opts?: { integration?: string; fraction?: number }): void;
  clearRegression(): void;
  /** Records `n` requests from another client in the portal-wide rate-limit window at the current clock time (throws without a rate limit). */
  spend(n: number): void;
  close(): Promise<void>;
}

function validate(options: SimulatorOptions): void {
  for (const name of ['devices', 'alerts', 'integrations', 'maxPageSize', 'alertIntegrations', 'resolvedHistoryDays'] as const) {
    const v = options[name];
    if (v !== undefined && (!Number.isInteger(v) || v < 0)) throw new RangeError(`startSimulator: '${name}' must be a non-negative integer`);
  }
  if (options.maxPageSize === 0) throw new RangeError("startSimulator: 'maxPageSize' must be at least 1 (omit it for no cap)");
  if (options.alertIntegrations === 0) throw new RangeError("startSimulator: 'alertIntegrations' must be at least 1 (use alerts: 0 for no alerts)");
  const rl = options.rateLimit;
  if (rl && (!Number.isInteger(rl.requests) || rl.requests < 1 || !(rl.windowMs > 0))) {
    throw new RangeError("startSimulator: 'rateLimit' needs requests >= 1 and windowMs > 0");
  }
  if (options.keys) {
    if (options.keys.length === 0) throw new RangeError("startSimulator: 'keys' must not be empty");
    const seen = new Set<string>();
    for (const k of options.keys) {
      // Never put the key itself in the message.
      if (typeof k.key !== 'string' || k.key.length === 0) throw new TypeError('startSimulator: every key needs a non-empty string `key`');
      if (seen.has(k.key)) throw new RangeError('startSimulator: keys must be unique');
      seen.add(k.key);
    }
  }
}

/** One portal without its HTTP server: the request handler and the controls of `Simulator`. */
export interface PortalInstance {
  /** Entry point for `http.createServer`; the request URL must start with the base path. */
  readonly handle: SimServer['handle'];
  readonly keys: readonly SimulatorKey[];
  readonly control: Omit<Simulator, 'baseUrl' | 'apiKey' | 'close'>;
  /** Cancels pending latency and drip timers (on close). */
  cancelTimers(): void;
}

/** Builds one simulated portal (data, auth, rate limit, faults) without listening; `startSimulator` and the fleet serve it. */
export function createPortal(options: Omit<SimulatorOptions, 'host' | 'port'> = {}): PortalInstance {
  validate(options);
  const seed = options.seed ?? 1;
  const clock = options.clock ?? systemClock;
  const moving = options.moving ?? true;
  const startTime = clock.now();
  const world = new World({ seed, devices: options.devices ?? 250, alerts: options.alerts ?? 120, integrations: options.integrations ?? 8, alertIntegrations: options.alertIntegrations, resolvedHistoryDays: options.resolvedHistoryDays });
  const portal = new Portal(world);
  const keys: SimulatorKey[] = options.keys?.map((k) => ({ ...k })) ?? [{ key: 'sim-' + hexString(24, world.seed, mix32(0x4b4559)) }];
  const requests: SimRequest[] = [];
  const dataTime = (now: number) => (moving ? now : startTime);
  const handler = new SimServer({
    portal,
    clock,
    dataTime,
    keys,
    rateLimit: options.rateLimit === undefined ? { requests: 10, windowMs: 60_000 } : options.rateLimit,
    requests,
    maxPageSize: options.maxPageSize,
  });
  return {
    handle: handler.handle,
    keys,
    cancelTimers: () => handler.cancelTimers(),
    control: {
      requests,
      addFault(rule) {
        const times = rule.times ?? 1;
        if (!(times >= 1)) throw new RangeError('addFault: times must be >= 1 (or Infinity)');
        if (rule.fault.kind === 'drip' && rule.fault.intervalMs !== undefined && !(rule.fault.intervalMs >= 0 && Number.isFinite(rule.fault.intervalMs))) {
          throw new RangeError('addFault: drip intervalMs must be a finite number >= 0');
        }
        handler.addFault(rule.path, times, rule.fault);
      },
      clearFaults() {
        handler.clearFaults();
      },
      setFixture(fixture) {
        portal.fixture = fixture ? { ...fixture } : null;
      },
      data(at) {
        const t = dataTime(at ?? clock.now());
        return {
          vitals: (tag) => portal.vitals(t, tag),
          alerts: () => portal.allAlerts(t),
          devices: () => portal.allDevices(t),
        };
      },
      injectRegression(opts = {}) {
        const fraction = opts.fraction ?? 0.3;
        if (!(fraction > 0 && fraction <= 1)) throw new RangeError('injectRegression: fraction must be in (0, 1]');
        const candidates = portal.vitalsKeys();
        const want = opts.integration?.toLowerCase();
        const target = want === undefined
          ? candidates.find((c) => c.vitalsEnabled)
          : candidates.find((c) => c.key.toLowerCase() === want || c.name.toLowerCase() === want);
        if (!target) throw new RangeError(`injectRegression: no ${want === undefined ? 'Vitals-enabled integration' : `integration '${opts.integration}'`}`);
        if (!target.vitalsEnabled) throw new RangeError(`injectRegression: integration '${target.key}' has Vitals disabled`);
        portal.injected.set(target.key, fraction);
      },
      clearRegression() {
        portal.injected.clear();
      },
      spend(n) {
        if (!Number.isInteger(n) || n < 0) throw new RangeError('spend: n must be a non-negative integer');
        handler.spend(n);
      },
    },
  };
}

/** An HTTP server listening, with its origin (`http://host:port`) and a close that also drops open connections. */
export interface Listening {
  readonly origin: string;
  /** Idempotent: the first call runs `before` (timers to cancel), then closes. */
  close(before: () => void): Promise<void>;
}

/** Serves `handle` on `host:port` (0 = any free port) and resolves once it listens; used by one portal and by a fleet. */
export async function listen(handle: (req: IncomingMessage, res: ServerResponse) => void, host: string, port = 0): Promise<Listening> {
  const server: Server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closed: Promise<void> | undefined;
  return {
    origin: `http://${urlHost}:${address.port}`,
    close(before) {
      closed ??= new Promise<void>((resolve) => {
        before();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/** Starts a simulated portal on loopback (by default) and resolves once it listens. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const instance = createPortal(options);
  const server = await listen(instance.handle, options.host ?? '127.0.0.1', options.port ?? 0);
  return {
    ...instance.control,
    baseUrl: `${server.origin}${BASE_PATH}`,
    apiKey: instance.keys[0]!.key,
    close: () => server.close(() => instance.cancelTimers()),
  };
}
