/**
 * A portal's address: its base URL (POSTURE_BASE_URL), or its Cloud ID and API host, checked: https
 * (plain http on loopback only), nothing but origin and path, ending in the API root.
 */
import { isIP } from 'node:net';
import type { Problems } from './problems.js';
import { SETTING_BY_KEY, envName, type SettingKey } from './settings.js';
import type { Get } from './values.js';

/** How a message names a setting: the variable for the one portal, the key inside a `portals` entry. */
export type NameOf = (key: SettingKey) => string;

/** A portal's checked address; `host` names it in messages, `cloudId` labels it when given. */
export interface PortalAddress {
  readonly baseUrl: string;
  readonly host: string;
  readonly cloudId?: string;
}

function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** The portal's address: a base URL, or a Cloud ID and API host; undefined (with a problem) when missing or invalid. */
export function portalAddress(get: Get, problems: Problems, at: string, index: number | null, n: NameOf): PortalAddress | undefined {
  const baseUrlRaw = get('base_url');
  const cloudId = get('cloud_id');
  const apiHost = get('api_host');
  if (baseUrlRaw !== undefined && (cloudId !== undefined || apiHost !== undefined)) {
    problems.add('POSTURE_BASE_URL', `${at}${n('base_url')} and ${n('cloud_id')}/${n('api_host')} are both set: give either the base URL or the Cloud ID and host.`);
    return undefined;
  }
  if (baseUrlRaw !== undefined) return baseUrlAddress(baseUrlRaw, problems, at, n('base_url'));
  if (cloudId === undefined && apiHost === undefined) {
    problems.add('POSTURE_BASE_URL', `${at}no portal is configured: set ${n('base_url')}, or ${n('cloud_id')} and ${n('api_host')}${index === null ? ' (or run `npm start` for the simulated portal)' : ''}.`);
    return undefined;
  }
  if (cloudId === undefined || apiHost === undefined) {
    const missing: SettingKey = cloudId === undefined ? 'cloud_id' : 'api_host';
    problems.add(envName(SETTING_BY_KEY[missing]), `${at}${n(missing)} is missing: the Cloud ID and the API host go together (or give ${n('base_url')}).`);
    return undefined;
  }
  if (!DNS_LABEL.test(cloudId)) {
    problems.add('POSTURE_CLOUD_ID', `${at}${n('cloud_id')}=${JSON.stringify(cloudId)} is not a valid DNS label: use letters, digits and inner hyphens, at most 63 characters.`);
    return undefined;
  }
  if (!HOSTNAME.test(apiHost)) {
    problems.add('POSTURE_API_HOST', `${at}${n('api_host')}=${JSON.stringify(apiHost)} is not a host name: give e.g. example.com, without scheme or path.`);
    return undefined;
  }
  return { baseUrl: `https://${cloudId.toLowerCase()}.${apiHost.toLowerCase()}/public-api/v1`, host: `${cloudId}.${apiHost}`, cloudId };
}

/** The API root every portal serves; anything else answers 404 on every endpoint. */
const API_PATH = '/public-api/v1';

/** POSTURE_BASE_URL checked: a URL, https (plain http on loopback only), nothing but origin and path. */
function baseUrlAddress(raw: string, problems: Problems, at: string, name: string): PortalAddress | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problems.add('POSTURE_BASE_URL', `${at}${name}=${JSON.stringify(raw)} is not a URL: give the full https://<cloud_id>.<host>/public-api/v1.`);
    return undefined;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    problems.add('POSTURE_BASE_URL', `${at}${name} must use https (plain http only for loopback addresses): got ${url.protocol}//${url.host}.`);
    return undefined;
  }
  if (url.username || url.password || url.search || url.hash) {
    problems.add('POSTURE_BASE_URL', `${at}${name} must not carry credentials, a query or a fragment: give only https://<cloud_id>.<host>/public-api/v1.`);
    return undefined;
  }
  const baseUrl = url.origin + url.pathname.replace(/\/+$/, '');
  // Every endpoint lives under the API root: anywhere else each request would answer 404.
  if (!baseUrl.endsWith(API_PATH)) {
    problems.add('POSTURE_BASE_URL', `${at}${name}=${JSON.stringify(baseUrl)} does not end in ${API_PATH}: give https://<cloud_id>.<host>${API_PATH} (the portal answers 404 elsewhere).`);
    return undefined;
  }
  return { baseUrl, host: url.hostname };
}
