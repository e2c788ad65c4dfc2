/** The access source: the portal's own accounts, roles and teams; its run, fold, families and samples. */
import type { SourceModule } from '../source.js';
import { ACCESS_FAMILIES } from './families.js';
import type { AccessAggregate } from './fold.js';
import { runAccess } from './run.js';
import { accessSamples, TEAM_FAMILY } from './samples.js';

/** The access source (a slow job: its own interval, POSTURE_ACCESS_INTERVAL_SECONDS). */
export const access = {
  name: 'access',
  families: ACCESS_FAMILIES,
  capped: [TEAM_FAMILY],
  run: (ctx) => runAccess(ctx),
  samples: accessSamples,
  invalidOf: (a) => a.invalid,
} as const satisfies SourceModule<'access', AccessAggregate, typeof ACCESS_FAMILIES>;
