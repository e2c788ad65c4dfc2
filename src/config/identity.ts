/**
 * A portal's identity: what makes two config entries the same portal, whose budget they share.
 * Pure: no I/O.
 */
import type { PortalConfig } from './types.js';

/**
 * The identity of the portal at `baseUrl`: the base URL normalised so that every spelling of one
 * portal is one identity (RFC 3986, 6.2.2): scheme and host in lower case, the default port, a
 * trailing dot of the host (a fully qualified name), dot segments, repeated and trailing slashes
 * dropped, percent-encoded unreserved characters decoded and other escapes in upper case. So a
 * Cloud ID with its host and the base URL they make are one portal. Entries with the same identity
 * read one portal with one budget, whatever their keys.
 */
export function portalIdentity(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return baseUrl;
  }
  const host = url.host.replace(/\.(?=:\d+$|$)/, '');
  const path = url.pathname
    .replace(/%[0-9a-fA-F]{2}/g, (escape) => {
      const c = String.fromCharCode(parseInt(escape.slice(1), 16));
      return /[A-Za-z0-9\-._~]/.test(c) ? c : escape.toUpperCase();
    })
    .replace(/\/{2,}/g, '/')
    .replace(/\/+$/, '');
  return `${url.protocol}//${host}${path}`;
}

/** The entries of each portal (by identity), in the order of their first entry. */
export function entriesByPortal<P extends Pick<PortalConfig, 'baseUrl'>>(portals: readonly P[]): Map<string, P[]> {
  const out = new Map<string, P[]>();
  for (const p of portals) {
    const id = portalIdentity(p.baseUrl);
    const list = out.get(id);
    if (list) list.push(p);
    else out.set(id, [p]);
  }
  return out;
}
