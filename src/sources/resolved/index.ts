/** The resolved-alerts pass: its run (paging as /alerts does), fold, families and samples. */
import type { SourceModule } from '../source.js';
import { RESOLVED_FAMILIES } from './families.js';
import type { ResolvedAggregate } from './fold.js';
import { runResolvedAlerts } from './run.js';
import { resolvedSamples } from './samples.js';

/**
 * The resolved-alerts pass as a source module. Its value is what one pass read; the
 * acknowledgement families appear once withOpenAlerts (./fold.js) has added the open alerts.
 */
export const resolved = {
  name: 'resolved',
  families: RESOLVED_FAMILIES,
  // The page size gauge speaks of the open alerts' run, so the pass does not report its own.
  run: (ctx, _hooks) => runResolvedAlerts(ctx),
  samples: resolvedSamples,
  invalidOf: (a) => a.invalid,
} as const satisfies SourceModule<'resolved', ResolvedAggregate, typeof RESOLVED_FAMILIES>;
