/**
 * Chooses the `limit` of the next /alerts request so that the list fits the rate budget and the
 * cycle's deadline: the configured page size while the pages fit, a larger page when they would
 * not, and everything that is left (`limit=0`) when only one request remains.
 */
export function planAlertsLimit(args: {
  /** The configured page size. */
  pageSize: number;
  /** Records still to fetch; undefined before the first page (the total is not known yet). */
  remaining: number | undefined;
  /** Requests that can still start before the deadline, this one included. */
  available: number;
}): number {
  const { pageSize, remaining, available } = args;
  if (remaining !== undefined && remaining <= pageSize) return pageSize;
  if (available <= 1) return 0;
  if (remaining === undefined) return pageSize;
  const pagesNeeded = Math.ceil(remaining / pageSize);
  if (pagesNeeded <= available) return pageSize;
  return Math.ceil(remaining / available);
}
