import { bySize, keptGroups, OTHER } from '../cap.js';
import type { Add } from '../source.js';
import type { AccessFamily } from './families.js';
import type { AccessAggregate } from './fold.js';

/** The family capped per portal: one series per team. */
export const TEAM_FAMILY = 'posture_portal_team_members';

/**
 * The samples of one read of the access settings: accounts by their labels, each role's info and
 * permissions, and the teams' members with the series cap (the smallest teams folded into OTHER).
 */
export function accessSamples(a: AccessAggregate, add: Add<AccessFamily>, cap: number, folded: Map<string, number>): void {
  for (const { role, enabled, mfa, sso, accounts } of a.accounts) add('posture_portal_users', { role, enabled, mfa, sso }, accounts);
  for (const r of a.roles) add('posture_portal_role_info', { role: r.id, name: r.name, default: String(r.default) }, 1);
  for (const r of a.roles) for (const [permission, level] of r.permissions) add('posture_portal_role_permission', { role: r.id, permission, level }, 1);
  // One series per team, the fold one more: keep the largest teams that leave room for it.
  const order = bySize(a.teams);
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a shortcut: when every team fits, keptGroups below keeps every one too.
  const keep = !a.teams.has(OTHER) && a.teams.size <= cap ? undefined : keptGroups(order, 1, (_f, k) => k, (_f, k) => (k < order.length ? 1 : 0), cap);
  let rest = 0;
  let foldedSeries = 0;
  for (const team of order) {
    const n = a.teams.get(team)!;
    if (keep && !keep.has(team)) {
      rest += n;
      foldedSeries++;
    } else add(TEAM_FAMILY, { team }, n);
  }
  if (foldedSeries > 0) add(TEAM_FAMILY, { team: OTHER }, rest);
  folded.set(TEAM_FAMILY, foldedSeries);
}
