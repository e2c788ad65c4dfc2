/**
 * The domain's words, shared by config, schedule, collect, the sources and the renderers: which
 * sources a portal has, the alert severities and the Vitals funnel stages.
 */

/** Sources collected from the portal. */
export const SOURCES = ['vitals', 'alerts', 'devices'] as const;
export type Source = (typeof SOURCES)[number];

/**
 * The resolved-alerts pass (`/alerts?filter=resolved`): a job of every portal beside the sources,
 * on its own interval and below them in priority; not a Source, so what lists the sources is unchanged.
 */
export const RESOLVED = 'resolved';

/** What runs for a portal: each source, and the resolved-alerts pass. */
export type Job = Source | typeof RESOLVED;

/** Every job, the pass last. */
export const JOBS: readonly Job[] = [...SOURCES, RESOLVED];

/** The three severities that are always present on the alert families. */
export const SEVERITIES = ['red', 'amber', 'green'] as const;

/** Vitals funnel stages, in order, with the API fields behind them. */
export const STAGES = [
  { stage: 'deployment', eligible: 'agentDeployedPossibleCompliant', compliant: 'agentDeployedCompliant' },
  { stage: 'function', eligible: 'agentFunctioningPossibleCompliant', compliant: 'agentFunctioningCompliant' },
  { stage: 'configuration', eligible: 'configurationPossibleCompliant', compliant: 'configurationCompliant' },
] as const;
