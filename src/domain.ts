/**
 * The domain's words, shared by config, schedule, collect, the sources and the renderers: which
 * sources a portal has, the alert severities and the Vitals funnel stages.
 */

/** Sources collected from the portal. */
export const SOURCES = ['vitals', 'alerts', 'devices'] as const;
export type Source = (typeof SOURCES)[number];

/** The three severities that are always present on the alert families. */
export const SEVERITIES = ['red', 'amber', 'green'] as const;

/** Vitals funnel stages, in order, with the API fields behind them. */
export const STAGES = [
  { stage: 'deployment', eligible: 'agentDeployedPossibleCompliant', compliant: 'agentDeployedCompliant' },
  { stage: 'function', eligible: 'agentFunctioningPossibleCompliant', compliant: 'agentFunctioningCompliant' },
  { stage: 'configuration', eligible: 'configurationPossibleCompliant', compliant: 'configurationCompliant' },
] as const;
