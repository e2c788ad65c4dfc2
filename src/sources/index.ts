/**
 * The registry of sources: every Source of the domain has its module here, and the exporter,
 * the samples and the catalogue go through it instead of naming a source.
 */
import type { Job, SlowJob, Source } from '../domain.js';
import { alerts } from './alerts/index.js';
import { devices } from './devices.js';
import type { SourceModule } from './source.js';
import { vitals } from './vitals.js';

import { access } from './access/index.js';
import { directory } from './directory/index.js';
import { resolved } from './resolved/index.js';
import { withOpenAlerts } from './resolved/fold.js';

/** Each source's module. */
export const SOURCE_MODULES = { vitals, alerts, devices } as const satisfies { readonly [S in Source]: { readonly name: S } };

/** The value a run of source `S` yields. */
export type SourceValue<S extends Source> = Awaited<ReturnType<(typeof SOURCE_MODULES)[S]['run']>>;

/** A family fed by a source, with its literal name. */
export type SourceFamilyOf<S extends Source = Source> = (typeof SOURCE_MODULES)[S]['families'][number];

/**
 * Each slow job's module (its own interval, below the live sources): the resolved-alerts pass
 * (`/alerts?filter=resolved`, docs/metrics.md#response-times), the access settings and the
 * directory (docs/metrics.md#access).
 */
export const SLOW_MODULES = { resolved, access, directory } as const satisfies { readonly [J in SlowJob]: { readonly name: J } };

/** A family fed by a slow job, with its literal name. */
export type SlowFamilyOf<J extends SlowJob = SlowJob> = (typeof SLOW_MODULES)[J]['families'][number];

/** The endpoints a job reads: its source's; /alerts for the resolved-alerts pass; the settings' lists for access; /users for the directory. */
const ENDPOINTS: { readonly [J in Job]: readonly string[] } = {
  vitals: ['/vitals'],
  alerts: ['/alerts'],
  devices: ['/devices'],
  resolved: ['/alerts'],
  access: ['/settings/usermanagement/users', '/settings/usermanagement/roles', '/settings/usermanagement/teams'],
  directory: ['/users'],
};

/** The endpoints a job reads. */
export function endpointsOf(job: Job): readonly string[] {
  return ENDPOINTS[job];
}

/** Each pass with the open alerts it was last joined with, and the join (worked out once per pair, not per scrape). */
const joins = new WeakMap<JobValue<'resolved'>, { readonly open: SourceValue<'alerts'>; readonly value: JobValue<'resolved'> }>();

/**
 * The pass as served beside the sources' values: its acknowledgement families joined with the open
 * alerts' (withOpenAlerts); without open alerts to join, the pass alone (no acknowledgement families).
 */
export function passBeside(pass: JobValue<'resolved'> | undefined, values: { readonly [S in Source]?: SourceValue<S> }): JobValue<'resolved'> | undefined {
  const open = values.alerts;
  if (!pass || !open) return pass;
  let joined = joins.get(pass);
  if (joined?.open !== open) joins.set(pass, (joined = { open, value: withOpenAlerts(pass, open) }));
  return joined.value;
}

/** Each job's module: the live sources', then the slow jobs'. */
const JOB_MODULES = { ...SOURCE_MODULES, ...SLOW_MODULES } as const;

/** The value a run of job `J` yields. */
export type JobValue<J extends Job> = Awaited<ReturnType<(typeof JOB_MODULES)[J]['run']>>;

/** The module of a job, typed by its value. */
export function moduleOf<S extends Job>(source: S): SourceModule<S, JobValue<S>> {
  return JOB_MODULES[source] as unknown as SourceModule<S, JobValue<S>>;
}
