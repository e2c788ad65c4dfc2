/**
 * A portal's identity: what makes two config entries the same portal, whose budget they share.
 * Pure: no I/O.
 */
import type { PortalConfig } from './types.js';

/**
 * The identity of the portal at `baseUrl`: the base URL normalised (scheme and host in lower case,
 * the default port and trailing slashes dropped), so a Cloud ID with its host and the base URL they
 * make are one portal. Entries with the same identity read one portal with one budget, whatever
 * their keys.
 */
export function portalIdentity(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return baseUrl;
  }
  return url.origin + url.pathname.replace(/\/+$/, '');
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
