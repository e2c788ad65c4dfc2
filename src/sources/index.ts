/**
 * The registry of sources: every Source of the domain has its module here, and the exporter,
 * the samples and the catalogue go through it instead of naming a source.
 */
import type { Job, Source } from '../domain.js';
import { alerts } from './alerts/index.js';
import { devices } from './devices.js';
import type { SourceModule } from './source.js';
import { vitals } from './vitals.js';

/**
 * The resolved-alerts pass (`/alerts?filter=resolved`): its families are in the catalogue, and it
 * joins SOURCE_MODULES when the scheduler plans it (docs/metrics.md#response-times).
 */
export { resolved } from './resolved/index.js';
import { resolved } from './resolved/index.js';
import { withOpenAlerts } from './resolved/fold.js';

/** Each source's module. */
export const SOURCE_MODULES = { vitals, alerts, devices } as const satisfies { readonly [S in Source]: { readonly name: S } };

/** The value a run of source `S` yields. */
export type SourceValue<S extends Source> = Awaited<ReturnType<(typeof SOURCE_MODULES)[S]['run']>>;

/** A family fed by a source, with its literal name. */
export type SourceFamilyOf<S extends Source = Source> = (typeof SOURCE_MODULES)[S]['families'][number];

/** The endpoint a job reads: its source's, and /alerts for the resolved-alerts pass. */
export function endpointOf(job: Job): string {
  return job === 'resolved' ? '/alerts' : `/${job}`;
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

/** Each job's module: the sources', and the resolved-alerts pass's. */
const JOB_MODULES = { ...SOURCE_MODULES, resolved } as const;

/** The value a run of job `J` yields. */
export type JobValue<J extends Job> = Awaited<ReturnType<(typeof JOB_MODULES)[J]['run']>>;

/** The module of a source (or of the resolved-alerts pass), typed by its value. */
export function moduleOf<S extends Job>(source: S): SourceModule<S, JobValue<S>> {
  return JOB_MODULES[source] as unknown as SourceModule<S, JobValue<S>>;
}
