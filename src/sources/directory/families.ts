/**
 * The families of the directory source: how many directory users there are, how many have gone
 * quiet for each threshold of days, and how many failed to log in lately. Counts only: no user is
 * ever a label value.
 */
import type { MetricDef } from '../../metrics/definition.js';
import { CACHED } from '../source.js';

/** The source's own note: read on its own interval, not on the live sources'. */
const READ = ' Read from /users?filter=all (POSTURE_DIRECTORY_INTERVAL_SECONDS), against the read\'s start.';

/** The families fed by the directory source, in catalogue order. */
export const DIRECTORY_FAMILIES = [
  {
    name: 'posture_directory_users',
    help: 'Users of the directory (identity providers and directory services, /users?filter=all) read and counted.' + READ + CACHED,
    type: 'gauge', unit: '{user}', labels: [], origin: 'directory',
    doc: 'Users of `/users?filter=all` (the directory, not the portal\'s own accounts) that were counted: the invalid records (`posture_collection_invalid_records{source="directory"}`) aside. See [docs/metrics.md](docs/metrics.md#access).',
  },
  {
    name: 'posture_directory_users_inactive',
    help: 'Directory users whose lastActivity is unset (the minimum date) or more than days days before the read, for each threshold of POSTURE_DIRECTORY_INACTIVE_DAYS (days = 45, 90 by default); a lastActivity exactly that many days before still counts as active.' + READ + CACHED,
    type: 'gauge', unit: '{user}', labels: ['days'], origin: 'directory',
    doc: 'Users whose `lastActivity` is unset (`0001-01-01T00:00:00.0000000`) or earlier than the read\'s start minus `days` days (exactly `days` days before is not inactive), for each threshold of `POSTURE_DIRECTORY_INACTIVE_DAYS` (default `45`, `90`; `days` is the number). A share: divide by `posture_directory_users`.',
  },
  {
    name: 'posture_directory_users_failed_login',
    help: 'Directory users whose last failed login (lastFailedLogin.lastLoginTime) is later than the read\'s start minus window (window = 1d, 7d); an unset time (the minimum date) is no failed login.' + READ + CACHED,
    type: 'gauge', unit: '{user}', labels: ['window'], origin: 'directory',
    doc: 'Users whose `lastFailedLogin.lastLoginTime` is later than the read\'s start minus `window` (`1d`, `7d`; exactly a window before is outside it, a time after the start inside); an unset time, or no `lastFailedLogin`, is never in a window.',
  },
] as const satisfies readonly (MetricDef & { readonly origin: 'directory' })[];

/** The name of a directory family. */
export type DirectoryFamily = (typeof DIRECTORY_FAMILIES)[number]['name'];
