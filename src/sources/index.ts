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

/** Each source's module. */
export const SOURCE_MODULES = { vitals, alerts, devices } as const satisfies { readonly [S in Source]: { readonly name: S } };

/** The value a run of source `S` yields. */
export type SourceValue<S extends Source> = Awaited<ReturnType<(typeof SOURCE_MODULES)[S]['run']>>;

/** A family fed by a source, with its literal name. */
export type SourceFamilyOf<S extends Source = Source> = (typeof SOURCE_MODULES)[S]['families'][number];

/** Each job's module: the sources', and the resolved-alerts pass's. */
const JOB_MODULES = { ...SOURCE_MODULES, resolved } as const;

/** The value a run of job `J` yields. */
export type JobValue<J extends Job> = Awaited<ReturnType<(typeof JOB_MODULES)[J]['run']>>;

/** The module of a source (or of the resolved-alerts pass), typed by its value. */
export function moduleOf<S extends Job>(source: S): SourceModule<S, JobValue<S>> {
  return JOB_MODULES[source] as unknown as SourceModule<S, JobValue<S>>;
}
