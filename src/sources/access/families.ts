/**
 * The families of the access source: the portal's own accounts by role and state, its roles and
 * their permissions, and its teams' sizes. No username, name, surname or email is a label value:
 * a role is its `id` (and its `name`, a role's name), a team its name.
 */
import type { MetricDef } from '../../metrics/definition.js';
import { CACHED } from '../source.js';

/** The source's own note: read on its own interval, not on the live sources'. */
const READ = ' Read from the portal\'s settings (POSTURE_ACCESS_INTERVAL_SECONDS).';

/** The families fed by the access source, in catalogue order. */
export const ACCESS_FAMILIES = [
  {
    name: 'posture_portal_users',
    help: 'Accounts of the portal itself (/settings/usermanagement/users), by role (roleid), enabled (true or false), mfa (mfastatus) and sso (ssostatus) as read; only combinations that occur.' + READ + CACHED,
    type: 'gauge', unit: '{account}', labels: ['role', 'enabled', 'mfa', 'sso'], origin: 'access',
    doc: 'Accounts of `/settings/usermanagement/users` by `role` (their `roleid`), `enabled` (`true`/`false`), `mfa` (`mfastatus`) and `sso` (`ssostatus`), each word as the portal writes it (`enabled`, `disabled`, or any other); only the combinations present. An account with an empty or missing `roleid`, `mfastatus` or `ssostatus`, or no boolean `enabled`, is an invalid record. See [docs/metrics.md](docs/metrics.md#access).',
  },
  {
    name: 'posture_portal_role_info',
    help: 'Roles of the portal (/settings/usermanagement/roles): role (id), name (the role\'s name) and default (true for built-in roles); the value is always 1.' + READ + CACHED,
    type: 'gauge', unit: '1', labels: ['role', 'name', 'default'], origin: 'access', combine: 'max',
    doc: '1 per role of `/settings/usermanagement/roles`: `role` = its `id`, `name` = its name, `default` = `true` for a built-in role. Join on `role` to name the roles of `posture_portal_users`.',
  },
  {
    name: 'posture_portal_role_permission',
    help: 'Each permission a role holds and its level as read (e.g. Manage, Action, All); the value is always 1.' + READ + CACHED,
    type: 'gauge', unit: '1', labels: ['role', 'permission', 'level'], origin: 'access', combine: 'max',
    doc: '1 per entry of a role\'s `permissions` map: `permission` (e.g. `apiKeys`, `users`) and its `level` (e.g. `Manage`, `None`) as the portal writes them. Joined with `posture_portal_users` on `role`: the accounts whose role may manage API keys without MFA, and the like (docs/metrics.md#access).',
  },
  {
    name: 'posture_portal_team_members',
    help: 'Members of each team of the portal (/settings/usermanagement/teams), by team name; capped per portal (POSTURE_MAX_SERIES_PER_FAMILY), the smallest teams folded into the team __other__.' + READ + CACHED,
    type: 'gauge', unit: '{account}', labels: ['team'], origin: 'access',
    doc: 'Members of each team of `/settings/usermanagement/teams` by `team` (its name; teams of one name add up); 0 for a team without members. Capped per portal by `POSTURE_MAX_SERIES_PER_FAMILY`: the smallest teams fold into `team="__other__"`, which `posture_series_folded` counts.',
  },
] as const satisfies readonly (MetricDef & { readonly origin: 'access' })[];

/** The name of an access family. */
export type AccessFamily = (typeof ACCESS_FAMILIES)[number]['name'];
