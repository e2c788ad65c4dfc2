import { SOURCES, type Source } from '../metrics/catalogue.js';
import type { CycleResult, SourceResult } from './cycle.js';
import type { CycleFacts, PortalView, SourceView } from './samples.js';

interface Kept {
  value?: unknown;
  lastSuccessAt?: number;
  success: boolean;
  invalid?: number;
}

/**
 * What `serve` remembers of one portal between cycles: the last good value of each source, kept
 * for at most `maxStalenessMs` after its last success, so a failing source keeps serving its
 * last values for a while (never zeros) and then disappears.
 */
export class PortalState {
  private readonly sources: Record<Source, Kept> = { vitals: { success: false }, alerts: { success: false }, devices: { success: false } };
  private cycle: CycleFacts | undefined;

  constructor(readonly portal: string) {}

  /** Takes in a cycle's results. */
  record(result: CycleResult): void {
    const at = result.finishedAt;
    for (const source of SOURCES) {
      const r = result[source] as SourceResult<unknown>;
      const kept = this.sources[source];
      kept.invalid = r.invalid;
      if (r.ok) {
        kept.value = r.value;
        kept.lastSuccessAt = at;
        kept.success = true;
      } else {
        kept.success = false;
      }
    }
    this.cycle = { durationMs: result.finishedAt - result.startedAt, requests: result.requests, alertsPageSize: result.alertsPageSize };
  }

  /** The view to render at `now`: stale values (older than `maxStalenessMs`) are left out. */
  view(now: number, maxStalenessMs: number): PortalView {
    const viewOf = <T>(source: Source): SourceView<T> => {
      const k = this.sources[source];
      const fresh = k.lastSuccessAt !== undefined && now - k.lastSuccessAt <= maxStalenessMs;
      return { value: fresh ? (k.value as T) : undefined, success: k.success, lastSuccessAt: k.lastSuccessAt, invalid: k.invalid };
    };
    return { portal: this.portal, vitals: viewOf('vitals'), alerts: viewOf('alerts'), devices: viewOf('devices'), cycle: this.cycle };
  }

  /** Whether any cycle has been recorded. */
  get collected(): boolean {
    return this.cycle !== undefined;
  }
}

/** The view of a single cycle on its own (no memory): `once` and Lambda. */
export function viewOfCycle(result: CycleResult): PortalView {
  const state = new PortalState(result.portal);
  state.record(result);
  return state.view(result.finishedAt, 0);
}
