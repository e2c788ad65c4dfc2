/** The alerts source: its run (paging, total checks, memory), fold, families and samples. */
import type { SourceModule } from '../source.js';
import { ALERTS_FAMILIES } from './families.js';
import type { AlertsAggregate } from './fold.js';
import { runAlerts } from './run.js';
import { alertsSamples } from './samples.js';

/** The alerts source. */
export const alerts = {
  name: 'alerts',
  families: ALERTS_FAMILIES,
  capped: ['posture_alerts_open_by_integration'],
  run: (ctx, hooks) => runAlerts(ctx, (limit) => hooks.onPageSize(limit)),
  samples: alertsSamples,
  invalidOf: (a) => a.invalid,
} as const satisfies SourceModule<'alerts', AlertsAggregate, typeof ALERTS_FAMILIES>;
