/** The directory source: the directory's users by inactivity and failed logins; its run, fold, families and samples. */
import type { Add, SourceModule } from '../source.js';
import { DIRECTORY_FAMILIES, type DirectoryFamily } from './families.js';
import { FAILED_LOGIN_WINDOWS, type DirectoryAggregate } from './fold.js';
import { runDirectory } from './run.js';

/** The samples of one read: the users, each threshold's inactive users, each window's failed logins. */
function directorySamples(a: DirectoryAggregate, add: Add<DirectoryFamily>): void {
  add('posture_directory_users', {}, a.users);
  for (const [days, users] of a.inactive) add('posture_directory_users_inactive', { days: String(days) }, users);
  FAILED_LOGIN_WINDOWS.forEach(([window], w) => add('posture_directory_users_failed_login', { window }, a.failedLogin[w]!));
}

/** The directory source (a slow job: its own interval, POSTURE_DIRECTORY_INTERVAL_SECONDS). */
export const directory = {
  name: 'directory',
  families: DIRECTORY_FAMILIES,
  run: (ctx) => runDirectory(ctx),
  samples: directorySamples,
  invalidOf: (a) => a.invalid,
} as const satisfies SourceModule<'directory', DirectoryAggregate, typeof DIRECTORY_FAMILIES>;
