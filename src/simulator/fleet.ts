/**
 * Many simulated portals behind one loopback HTTP server, for sharding tests: each portal has its
 * own base URL (`http://127.0.0.1:PORT/p/<name>/public-api/v1`, no DNS needed), its own
 * deterministic data, its own API key and its own rate limit, and records its own requests.
 * Portals are built on their first request (or first use of `portal(name)`), so a fleet of
 * 10,000 names costs little until they are called; a built portal with the default sizes holds
 * about 20 KB of heap (10,000 built: about 200 MB, measured), mostly its generated settings.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { systemClock } from '../core/clock.js';
import { createPortal, listen, type PortalInstance, type Simulator, type SimulatorOptions, type SimRequest } from './index.js';
import { hash, hexString } from './prng.js';
import { BASE_PATH } from './server.js';

/**
 * Options of `startFleet`: those of `startSimulator` for every portal (each portal's own rate
 * limit), smaller by default: 20 devices, about 10 unresolved alerts and 4 Vitals records a portal.
 */
export interface FleetOptions extends Pick<SimulatorOptions, 'seed' | 'devices' | 'alerts' | 'integrations' | 'clock' | 'rateLimit' | 'moving' | 'host' | 'port'> {
  /** How many portals (named `portal-00000`, `portal-00001`, …), or their names. */
  portals: number | readonly string[];
}

/** A running fleet of simulated portals. */
export interface Fleet {
  /** The portal names, in order. */
  readonly names: readonly string[];
  /** 'http://127.0.0.1:<port>/p/<name>/public-api/v1' */
  baseUrl(name: string): string;
  /** The portal's only key (another portal's key gets 401 here). */
  apiKey(name: string): string;
  /** Requests the portal received, in order, including 401/429 (never the key); empty before the first. */
  requests(name: string): readonly SimRequest[];
  /** The portal's controls (faults, fixtures, data, spend), building it if needed. */
  portal(name: string): Omit<Simulator, 'baseUrl' | 'apiKey' | 'close'>;
  /** Names of the portals that answered at least one 429 (a client went over the portal's budget). */
  overBudget(): string[];
  /** How many portals have been built (called at least once). */
  built(): number;
  close(): Promise<void>;
}

const PREFIX = '/p/';

/** FNV-1a over the name's UTF-16 code units: a stable 32-bit number per portal name. */
function nameHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

function notFound(res: ServerResponse, message: string): void {
  const body = JSON.stringify({ offset: 0, limit: 0, total: 0, data: [], success: false, statusCode: 404, message });
  res.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Starts one loopback server serving `portals` independent simulated portals. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const names: readonly string[] = typeof options.portals === 'number'
    ? Array.from({ length: options.portals }, (_, i) => `portal-${String(i).padStart(5, '0')}`)
    : [...options.portals];
  if (typeof options.portals === 'number' && !(Number.isInteger(options.portals) && options.portals >= 1)) throw new RangeError("startFleet: 'portals' must be a positive integer");
  const index = new Map<string, number>();
  for (const [i, name] of names.entries()) {
    if (name === '' || name.includes('/')) throw new RangeError(`startFleet: portal name #${i} must be non-empty without '/'`);
    if (index.has(name)) throw new RangeError(`startFleet: portal names must be unique ('${name}' repeats)`);
    index.set(name, i);
  }
  const fleetSeed = options.seed ?? 1;
  const clock = options.clock ?? systemClock;
  const built = new Map<string, PortalInstance>();

  const seedOf = (name: string) => hash(fleetSeed >>> 0, nameHash(name), 0x666c6565);
  const keyOf = (name: string) => 'sim-' + hexString(24, seedOf(name), nameHash(name), 0x4b4559);
  const known = (name: string) => {
    if (!index.has(name)) throw new RangeError(`startFleet: no portal named '${name}'`);
  };
  const instance = (name: string): PortalInstance => {
    let p = built.get(name);
    if (!p) {
      p = createPortal({
        seed: seedOf(name),
        devices: options.devices ?? 20,
        alerts: options.alerts ?? 10,
        integrations: options.integrations ?? 4,
        clock,
        rateLimit: options.rateLimit,
        moving: options.moving,
        keys: [{ key: keyOf(name) }],
      });
      built.set(name, p);
    }
    return p;
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    const m = url.startsWith(PREFIX) ? /^\/p\/([^/?]+)(.*)$/s.exec(url) : null;
    let name: string | undefined;
    try {
      name = m ? decodeURIComponent(m[1]!) : undefined;
    } catch {
      name = undefined;
    }
    if (!m || name === undefined || !index.has(name)) return notFound(res, 'No such portal: use /p/<name>/public-api/v1.');
    // The portal sees its own base path, as if it had a host of its own.
    req.url = m[2]!.startsWith('/') ? m[2]! : '/' + m[2]!;
    instance(name).handle(req, res);
  };

  const server = await listen(handle, options.host ?? '127.0.0.1', options.port ?? 0);
  const origin = server.origin;

  return {
    names,
    baseUrl(name) {
      known(name);
      return `${origin}${PREFIX}${encodeURIComponent(name)}${BASE_PATH}`;
    },
    apiKey(name) {
      known(name);
      return keyOf(name);
    },
    requests(name) {
      known(name);
      return built.get(name)?.control.requests ?? [];
    },
    portal(name) {
      known(name);
      return instance(name).control;
    },
    overBudget() {
      return names.filter((n) => built.get(n)?.control.requests.some((r) => r.status === 429));
    },
    built: () => built.size,
    close: () =>
      server.close(() => {
        for (const p of built.values()) p.cancelTimers();
      }),
  };
}
