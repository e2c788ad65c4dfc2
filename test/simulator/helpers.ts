/** Shared helpers for the simulator tests: real HTTP on loopback through undici. */
import { Agent, request } from 'undici';
import type { Simulator } from '../../src/simulator/index.js';

export const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);
export const GUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const TS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}$/;
export const MIN_TS = '0001-01-01T00:00:00.0000000';

/** A dispatcher without keep-alive reuse surprises between fault tests. */
export const agent = new Agent({ keepAliveTimeout: 1_000, connections: 8 });

export interface GetOptions {
  /** `null` sends no key; default the simulator's first key. */
  key?: string | null;
  query?: Record<string, string | number>;
  method?: 'GET' | 'POST' | 'DELETE' | 'HEAD';
  headerName?: string;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** GETs `path` (relative to baseUrl unless absolute) and parses the JSON body when it is JSON. */
export async function get(sim: Simulator, path: string, options: GetOptions = {}): Promise<Reply> {
  const url = new URL(path.startsWith('http') ? path : sim.baseUrl + path);
  for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { accept: 'application/json' };
  const key = options.key === undefined ? sim.apiKey : options.key;
  if (key !== null) headers[options.headerName ?? 'X-Service-ApiKey'] = key;
  const res = await request(url, { method: options.method ?? 'GET', headers, dispatcher: agent });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}
