/**
 * The fold of the directory source: directory users counted by how long ago they were last active
 * (for each threshold of days) and whether they failed to log in lately, against the wall time at
 * the read's start, in constant memory whatever the size of the directory. A record whose times
 * cannot be read is counted, logged by field name (never a value: a user record carries a person's
 * name and email) and skipped. Pure: records in, counts out.
 */
import type { Logger } from '../../core/log.js';
import { parseApiTimestamp } from '../../upstream/timestamps.js';
import { fieldsOf, typeProblem } from '../fields.js';
import { InvalidRecords } from '../invalid.js';

/** The `window` label values of the failed logins and their seconds: a time counts when it is later than the read's start minus it. */
export const FAILED_LOGIN_WINDOWS = [
  ['1d', 86_400],
  ['7d', 7 * 86_400],
] as const;

const DAY_SECONDS = 86_400;

/** What one read of the directory counted. */
export interface DirectoryAggregate {
  /** Users counted (invalid records aside). */
  readonly users: number;
  /** Per threshold of days, ascending: users unset or last active more than that many days before the read. */
  readonly inactive: ReadonlyArray<readonly [days: number, users: number]>;
  /** Per FAILED_LOGIN_WINDOWS entry: users whose last failed login lies in it. */
  readonly failedLogin: readonly number[];
  readonly invalid: number;
}

/** A timestamp field (spec 2.2): Unix seconds, null when unset, or why it cannot be read. */
function timeOf(v: unknown, field: string): number | null | string {
  const kind = typeProblem({ [field]: v }, field, 'string');
  if (kind) return kind;
  const t = parseApiTimestamp(v as string);
  return t === undefined ? `${field}: not an API timestamp` : t;
}

/** One page (one attempt of one request): its counts, before the tally adds them. */
export class DirectoryPage {
  users = 0;
  readonly inactive: number[];
  readonly failedLogin = FAILED_LOGIN_WINDOWS.map(() => 0);
  private readonly invalidRecords: InvalidRecords;
  private seen = 0;

  constructor(
    private readonly tally: Pick<DirectoryTally, 'nowSeconds' | 'days'>,
    logger?: Logger,
    private readonly offset = 0,
  ) {
    this.inactive = tally.days.map(() => 0);
    this.invalidRecords = new InvalidRecords('directory', logger);
  }

  get invalid(): number {
    return this.invalidRecords.count;
  }

  record(raw: unknown): void {
    const index = this.offset + this.seen++;
    const r = fieldsOf(raw);
    if (typeof r === 'string') return this.invalidRecords.add(index, r);
    const active = timeOf(r.lastActivity, 'lastActivity');
    if (typeof active === 'string') return this.invalidRecords.add(index, active);
    // No lastFailedLogin at all: no failed login, as an unset time says.
    const failed = r.lastFailedLogin === undefined || r.lastFailedLogin === null ? null : failedLoginOf(r.lastFailedLogin);
    if (typeof failed === 'string') return this.invalidRecords.add(index, failed);
    const now = this.tally.nowSeconds;
    this.users++;
    this.tally.days.forEach((days, i) => {
      // Unset: never active, so inactive for every threshold; exactly `days` before is not yet more than it.
      if (active === null || active < now - days * DAY_SECONDS) this.inactive[i]!++;
    });
    FAILED_LOGIN_WINDOWS.forEach(([, seconds], w) => {
      if (failed !== null && failed > now - seconds) this.failedLogin[w]!++;
    });
  }

  finish(): DirectoryPage {
    return this;
  }
}

/** The time of `lastFailedLogin` (an object with `lastLoginTime`), null when unset, or why it cannot be read. */
function failedLoginOf(v: unknown): number | null | string {
  const o = fieldsOf(v);
  if (typeof o === 'string') return `lastFailedLogin: ${o.replace('(record): ', '')}`;
  return timeOf(o.lastLoginTime, 'lastFailedLogin.lastLoginTime');
}

/** The pages of one read, added as each is read (a page read again is a new DirectoryPage: nothing counts twice). */
export class DirectoryTally {
  private users = 0;
  private readonly inactive: number[];
  private readonly failedLogin = FAILED_LOGIN_WINDOWS.map(() => 0);
  private invalid = 0;

  /** `nowSeconds`: the read's wall time at its start (Unix s); `days`: the thresholds, ascending. */
  constructor(
    readonly nowSeconds: number,
    readonly days: readonly number[],
  ) {
    this.inactive = days.map(() => 0);
  }

  sink(logger?: Logger, offset = 0): DirectoryPage {
    return new DirectoryPage(this, logger, offset);
  }

  add(page: DirectoryPage): void {
    this.users += page.users;
    page.inactive.forEach((n, i) => (this.inactive[i]! += n));
    page.failedLogin.forEach((n, w) => (this.failedLogin[w]! += n));
    this.invalid += page.invalid;
  }

  finish(): DirectoryAggregate {
    return { users: this.users, inactive: this.days.map((d, i) => [d, this.inactive[i]!] as const), failedLogin: [...this.failedLogin], invalid: this.invalid };
  }
}
