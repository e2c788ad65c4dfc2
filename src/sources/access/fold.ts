/**
 * The fold of the access source: the portal's accounts counted by role and state, its roles with
 * their permissions, and its teams' sizes, from the records of three lists read page by page. A
 * record a family cannot use is counted, logged by field name (never a value: an account carries a
 * person's name and email) and skipped. Pure: records in, counts out.
 */
import type { Logger } from '../../core/log.js';
import { fieldsOf, reasonOf, typeProblem, wordProblem } from '../fields.js';
import { InvalidRecords } from '../invalid.js';
import { kindOf } from '../../upstream/schemas.js';

/** The three lists the source reads (spec 4.6 to 4.8), in the order it reads them. */
export const ACCESS_LISTS = [
  { list: 'users', endpoint: '/settings/usermanagement/users' },
  { list: 'roles', endpoint: '/settings/usermanagement/roles' },
  { list: 'teams', endpoint: '/settings/usermanagement/teams' },
] as const;
export type AccessList = (typeof ACCESS_LISTS)[number]['list'];

/** The labels an account is counted under, with how many accounts carry them. */
export interface AccountCount {
  readonly role: string;
  readonly enabled: 'true' | 'false';
  readonly mfa: string;
  readonly sso: string;
  readonly accounts: number;
}

/** A role as its families need it: its id, name, whether built in, and each permission with its level. */
export interface RoleRow {
  readonly id: string;
  readonly name: string;
  readonly default: boolean;
  readonly permissions: ReadonlyArray<readonly [permission: string, level: string]>;
}

/** What one run of the access source read. */
export interface AccessAggregate {
  /** Accounts by their labels, in the order each combination was first seen. */
  readonly accounts: readonly AccountCount[];
  /** Roles in the order read, each id once. */
  readonly roles: readonly RoleRow[];
  /** Members by team name (teams of one name add up), in the order first seen. */
  readonly teams: ReadonlyMap<string, number>;
  /** Records skipped, all three lists together. */
  readonly invalid: number;
}

/** Why an account cannot be counted, or the account's labels. */
function accountOf(raw: unknown): Omit<AccountCount, 'accounts'> | string {
  const r = fieldsOf(raw);
  if (typeof r === 'string') return r;
  const why = reasonOf([wordProblem(r, 'roleid'), typeProblem(r, 'enabled', 'boolean'), wordProblem(r, 'mfastatus'), wordProblem(r, 'ssostatus')]);
  if (why) return why;
  return { role: r.roleid as string, enabled: r.enabled ? 'true' : 'false', mfa: r.mfastatus as string, sso: r.ssostatus as string };
}

/** Why a role cannot be used, or the role. */
function roleOf(raw: unknown): RoleRow | string {
  const r = fieldsOf(raw);
  if (typeof r === 'string') return r;
  const why = reasonOf([wordProblem(r, 'id'), typeProblem(r, 'name', 'string'), typeProblem(r, 'default', 'boolean'), typeProblem(r, 'permissions', 'object')]);
  if (why) return why;
  const entries = Object.entries(r.permissions as Record<string, unknown>);
  const bad = entries.find(([, level]) => typeof level !== 'string' || level.trim() === '');
  // The permission's name is the portal's word, never personal data; its level is named by kind only.
  if (bad) return `permissions.${bad[0]}: expected a level word, received ${typeof bad[1] === 'string' ? 'an empty string' : kindOf(bad[1])}`;
  return { id: r.id as string, name: r.name as string, default: r.default as boolean, permissions: entries as Array<[string, string]> };
}

/** Why a team cannot be counted, or its name and member count. */
function teamOf(raw: unknown): { readonly name: string; readonly members: number } | string {
  const r = fieldsOf(raw);
  if (typeof r === 'string') return r;
  const why = reasonOf([wordProblem(r, 'name'), typeProblem(r, 'members', 'array')]);
  if (why) return why;
  return { name: r.name as string, members: (r.members as unknown[]).length };
}

/** One page of one list (one attempt of one request): what its records say, before the tally adds it. */
export class AccessPage {
  readonly accounts = new Map<string, AccountCount>();
  readonly roles: Array<{ readonly index: number; readonly role: RoleRow }> = [];
  readonly teams = new Map<string, number>();
  private readonly invalidRecords: InvalidRecords;
  private seen = 0;

  constructor(
    readonly list: AccessList,
    logger?: Logger,
    private readonly offset = 0,
  ) {
    this.invalidRecords = new InvalidRecords(`access (${list})`, logger);
  }

  get invalid(): number {
    return this.invalidRecords.count;
  }

  record(raw: unknown): void {
    const index = this.offset + this.seen++;
    if (this.list === 'users') {
      const a = accountOf(raw);
      if (typeof a === 'string') return this.invalidRecords.add(index, a);
      const key = JSON.stringify([a.role, a.enabled, a.mfa, a.sso]);
      this.accounts.set(key, { ...a, accounts: (this.accounts.get(key)?.accounts ?? 0) + 1 });
    } else if (this.list === 'roles') {
      const role = roleOf(raw);
      if (typeof role === 'string') return this.invalidRecords.add(index, role);
      this.roles.push({ index, role });
    } else {
      const team = teamOf(raw);
      if (typeof team === 'string') return this.invalidRecords.add(index, team);
      this.teams.set(team.name, (this.teams.get(team.name) ?? 0) + team.members);
    }
  }

  finish(): AccessPage {
    return this;
  }
}

/** The pages of the three lists, added as each is read (a page read again is a new AccessPage: nothing counts twice). */
export class AccessTally {
  private readonly accounts = new Map<string, AccountCount>();
  private readonly roles = new Map<string, RoleRow>();
  private readonly teams = new Map<string, number>();
  private readonly repeated: InvalidRecords;
  private invalid = 0;

  constructor(private readonly logger?: Logger) {
    this.repeated = new InvalidRecords('access (roles)', logger);
  }

  /** The sink of the page of `list` starting at `offset`. */
  sink(list: AccessList, offset = 0): AccessPage {
    return new AccessPage(list, this.logger, offset);
  }

  add(page: AccessPage): void {
    for (const [key, a] of page.accounts) this.accounts.set(key, { ...a, accounts: (this.accounts.get(key)?.accounts ?? 0) + a.accounts });
    for (const { index, role } of page.roles) {
      // Two records of one role would make duplicate series; the first is kept.
      if (this.roles.has(role.id)) this.repeated.add(index, 'id: repeated (another role of the list has it)');
      else this.roles.set(role.id, role);
    }
    for (const [name, n] of page.teams) this.teams.set(name, (this.teams.get(name) ?? 0) + n);
    this.invalid += page.invalid;
  }

  finish(): AccessAggregate {
    return { accounts: [...this.accounts.values()], roles: [...this.roles.values()], teams: this.teams, invalid: this.invalid + this.repeated.count };
  }
}
