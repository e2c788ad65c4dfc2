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

/**
 * The slow jobs: each on its own interval (hourly, daily), below every live source in priority, run
 * by `once` and the Lambda only when its interval has passed since its last run (remembered in the
 * state directory or table): the resolved-alerts pass, the portal's access settings (its accounts,
 * roles and teams) and the directory's users.
 */
export const SLOW_JOBS = [RESOLVED, 'access', 'directory'] as const;
export type SlowJob = (typeof SLOW_JOBS)[number];

/** What runs for a portal: each source, and each slow job. */
export type Job = Source | SlowJob;

/** Every job, the slow ones last. */
export const JOBS: readonly Job[] = [...SOURCES, ...SLOW_JOBS];

/** What each slow job's run reads, as messages name it (a live source is named by its endpoint, `/vitals`). */
export const SLOW_RUN_NAMES: Readonly<Record<SlowJob, { readonly run: string; readonly reads: string }>> = {
  resolved: { run: 'resolved-alerts pass', reads: '/alerts?filter=resolved' },
  access: { run: 'access settings', reads: '/settings/usermanagement/users, /roles, /teams' },
  directory: { run: 'directory', reads: '/users?filter=all' },
};

/** Whether a job is a slow one (its own interval, below the live sources). */
export function isSlowJob(job: Job): job is SlowJob {
  return (SLOW_JOBS as readonly string[]).includes(job);
}

/** The three severities that are always present on the alert families. */
export const SEVERITIES = ['red', 'amber', 'green'] as const;

/** Vitals funnel stages, in order, with the API fields behind them. */
export const STAGES = [
  { stage: 'deployment', eligible: 'agentDeployedPossibleCompliant', compliant: 'agentDeployedCompliant' },
  { stage: 'function', eligible: 'agentFunctioningPossibleCompliant', compliant: 'agentFunctioningCompliant' },
  { stage: 'configuration', eligible: 'configurationPossibleCompliant', compliant: 'configurationCompliant' },
] as const;
