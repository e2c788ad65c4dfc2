/**
 * Each job's own interval, one row per job of a portal (each source and each slow job).
 * A row is the whole of a per-portal interval setting: its key (so its variable, flag and config
 * key), its default, its line in the settings table and the README, and the portal's value
 * (`PortalConfig.intervals`, or `PortalConfig.slowIntervals`). A new job that the `Job` type gains fails to
 * compile until it has its row here.
 */
import type { Job } from '../domain.js';

/** The bounds of every interval setting, in seconds (POSTURE_INTERVAL_SECONDS's too). */
export const INTERVAL_BOUNDS = { min: 10, max: 86400 } as const;

/** What a row says: the setting's key, then either that it inherits POSTURE_INTERVAL_SECONDS or its own default. */
export type IntervalRow = { readonly key: string; readonly doc: string } & ({ readonly inherits: true } | { readonly inherits: false; readonly default: number });

/** The interval setting of each job. */
export const JOB_INTERVALS = {
  alerts: { key: 'alerts_interval_seconds', inherits: true, doc: '`serve`: seconds between runs of `/alerts` (open alerts change by the minute).' },
  vitals: { key: 'vitals_interval_seconds', inherits: true, doc: '`serve`: seconds between runs of `/vitals` (whole portal and each tag).' },
  devices: { key: 'devices_interval_seconds', inherits: true, doc: '`serve`: seconds between runs of the device totals.' },
  resolved: {
    key: 'resolved_alerts_interval_seconds',
    inherits: false,
    default: 3600,
    doc: 'Seconds between passes over the resolved alerts (`/alerts?filter=resolved`, paged like the open alerts), which feed the response-time families (`posture_alerts_resolved`, `posture_alerts_time_to_resolve_seconds`, …) over the last 1d, 7d and 30d; its own interval, not `POSTURE_INTERVAL_SECONDS`. `serve` runs the pass on this interval; `once` and the Lambda run it when this long has passed since the last pass, which the state directory or `POSTURE_STATE_TABLE` remembers (a first run always does; docs/metrics.md#response-times).',
  },
  access: {
    key: 'access_interval_seconds',
    inherits: false,
    default: 3600,
    doc: 'Seconds between reads of the portal\'s own accounts, roles and teams (`/settings/usermanagement/users`, `/roles`, `/teams`: 3 requests, more only when the portal caps pages), which feed the `posture_portal_*` families; its own interval, below every live source. `serve` reads them on this interval; `once` and the Lambda when this long has passed since the last read, which the state directory or `POSTURE_STATE_TABLE` remembers (docs/metrics.md#access).',
  },
  directory: {
    key: 'directory_interval_seconds',
    inherits: false,
    default: 86400,
    doc: 'Seconds between reads of the directory\'s users (`/users?filter=all`, paged like the open alerts: 20,000 users in pages capped at 200 is 100 requests), which feed the `posture_directory_*` families; its own interval, below every live source. `serve` reads it on this interval; `once` and the Lambda when this long has passed since the last read, which the state directory or `POSTURE_STATE_TABLE` remembers (docs/metrics.md#access).',
  },
} as const satisfies Record<Job, IntervalRow>;

/** The variable a job's interval follows when it inherits one. */
const INHERITED_DEFAULT = 'POSTURE_INTERVAL_SECONDS';

/** The settings-table rows of the interval settings, in the order of JOB_INTERVALS. */
export function intervalSettingDefs() {
  return Object.values(JOB_INTERVALS).map((row) => ({
    key: row.key,
    scope: 'portal' as const,
    kind: 'int' as const,
    default: row.inherits ? INHERITED_DEFAULT : row.default,
    ...INTERVAL_BOUNDS,
    flag: true,
    doc: row.doc,
  }));
}
