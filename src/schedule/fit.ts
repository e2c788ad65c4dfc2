/**
 * Whether each portal's configuration fits its budget, in the words a user sets: the plan of a
 * portal's settings, the staleness limits, and `serve`'s check with the change that fits.
 */
import type { Config, PortalConfig, SettingRef } from '../config/types.js';
import { entriesByPortal } from '../config/identity.js';
import { JOBS, RESOLVED, SOURCES, type Job, type Source } from '../domain.js';
import { ConfigError } from '../errors.js';
import { entryRuns, MAX_INTERVAL_SECONDS, planPortal, runSeconds, servePlan, type IntervalChange, type PortalPlan } from './plan.js';
import { HEADROOM_MS, type LateRun, type Timeline } from './timeline.js';
import { PRIORITY } from './scheduler.js';

/** A setting with a value, as a user would write it: `--x=1`, `POSTURE_X=1`, `x: 1 in file.yaml`, or `x: 1 (a new key) in file.yaml`. */
function formatSetting(ref: SettingRef, value: number | string): string {
  return ref.kind === 'file' ? `${ref.name}: ${value}${ref.absent ? ' (a new key)' : ''} in ${ref.file}` : `${ref.name}=${value}`;
}

/** A setting named as a user sets it: `--x`, `POSTURE_X`, `x in file.yaml`, or `x (a new key) in file.yaml`. */
function formatName(ref: SettingRef): string {
  return ref.kind === 'file' ? `${ref.name}${ref.absent ? ' (a new key)' : ''} in ${ref.file}` : ref.name;
}

/** What the plan learned of a portal from its runs: the list totals and the page cap. */
type Learned = { alertsTotal?: number; pageCap?: number; resolvedAlertsTotal?: number };

/** The plan of a portal for `serve` (and `check-config`), with what the last runs taught when known. */
export function planOf(portal: PortalConfig, learned: Learned = {}): PortalPlan {
  const inherited = SOURCES.filter((s) => !portal.intervalSettings?.[s].explicit);
  return planPortal({ requestsPerMinute: portal.requestsPerMinute, pageSize: portal.pageSize, vitalsTags: portal.vitalsTags, intervals: portal.intervals, inherited, resolvedIntervalSeconds: portal.resolvedAlertsIntervalSeconds, ...learned });
}

/** What `serve` runs of one entry: its sources and its resolved-alerts pass. */
export function runsOf(portal: PortalConfig, learned: Learned = {}): ReturnType<typeof entryRuns> {
  return entryRuns(portal.name, { ...portal, resolvedIntervalSeconds: portal.resolvedAlertsIntervalSeconds, ...learned });
}

/** The timeline of every entry of one portal as `serve` runs them together (see servePlan). */
function portalTimeline(entries: readonly PortalConfig[], learned: Learned = {}): Timeline {
  return servePlan(entries.map((e) => runsOf(e, learned)), entries[0]!.requestsPerMinute).timeline;
}

/** When each source (and the resolved-alerts pass) of each entry starts in `serve`, ms after its portal's start: the phases the timeline checked. */
export function phasesOf(config: Pick<Config, 'portals'>): Map<PortalConfig, Record<Job, number>> {
  const out = new Map<PortalConfig, Record<Job, number>>();
  for (const entries of entriesByPortal(config.portals).values()) {
    const { sources } = servePlan(entries.map((e) => runsOf(e)), entries[0]!.requestsPerMinute);
    const rank = [...SOURCES].sort((a, b) => PRIORITY[a] - PRIORITY[b]);
    entries.forEach((e, i) => {
      // The plan orders the sources by priority, then the entries in order; every entry's pass last.
      const phase = (s: Job) => sources[(s === RESOLVED ? rank.length : rank.indexOf(s)) * entries.length + i]!.phaseMs;
      out.set(e, { vitals: phase('vitals'), alerts: phase('alerts'), devices: phase('devices'), resolved: phase(RESOLVED) });
    });
  }
  return out;
}

/** Why a plan whose hourly average fits still does not run: its first late run in serve, in words. */
export function lateWhy(late: LateRun, share: number): string {
  const at = (ms: number) => `+${Math.round(ms / 1000)} s`;
  const last = Number.isFinite(late.lastAt) ? `could send its last request only at ${at(late.lastAt)}, less than ${HEADROOM_MS / 1000} s before its deadline ${at(late.deadline)}` : `could not send all its requests before its deadline ${at(late.deadline)}`;
  const slash = late.name.indexOf('/');
  const what = slash < 0 ? `/${late.name}` : `${late.name.slice(0, slash)}'s /${late.name.slice(slash + 1)}`;
  return `serve would run ${what} late: its run that starts at ${at(late.startsAt)} ${last} at ${share}/min`;
}

/** The interval of a source, or of the resolved-alerts pass, in seconds. */
export function intervalOf(portal: PortalConfig, job: Job): number {
  return job === RESOLVED ? portal.resolvedAlertsIntervalSeconds : portal.intervals[job];
}

/** Staleness limit of each source (and the pass) in ms: the setting, else two intervals of its own. */
export function stalenessMs(config: Pick<Config, 'maxStalenessSeconds'>, portal: PortalConfig): Record<Job, number> {
  return Object.fromEntries(JOBS.map((j) => [j, (config.maxStalenessSeconds ?? 2 * intervalOf(portal, j)) * 1000])) as Record<Job, number>;
}

/** How to set a source's own interval, as the portal's settings say (the variable when unknown). */
function sourceSetting(portal: PortalConfig, s: Source): SettingRef {
  return portal.intervalSettings?.[s] ?? { kind: 'env', name: `POSTURE_${s.toUpperCase()}_INTERVAL_SECONDS` };
}

/** The settings of an interval change, each with its value: the POSTURE_INTERVAL_SECONDS one first, then each source's. */
function changeSettings(config: Pick<Config, 'intervalSetting'>, portal: PortalConfig, change: Pick<IntervalChange, 'sources' | 'interval'>): Array<readonly [SettingRef, number]> {
  const refs = SOURCES.filter((s) => change.sources[s] !== undefined).map((s) => [sourceSetting(portal, s), change.sources[s]!] as const);
  if (change.interval !== undefined) refs.unshift([config.intervalSetting ?? { kind: 'env', name: 'POSTURE_INTERVAL_SECONDS' }, change.interval]);
  return refs;
}

/**
 * An interval change as the settings a user writes, e.g. `--alerts-interval-seconds=20` or
 * `POSTURE_INTERVAL_SECONDS=50` (several on one line, as a shell takes them); a config file's keys
 * one per line, as the file holds them.
 */
export function formatChange(config: Pick<Config, 'intervalSetting'>, portal: PortalConfig, change: Pick<IntervalChange, 'sources' | 'interval'>): string {
  const refs = changeSettings(config, portal, change);
  return refs.map(([ref, v]) => formatSetting(ref, v)).join(refs.some(([ref]) => ref.kind === 'file') ? '\n' : ' ');
}

/** How the share and the Vitals tags are set, as the portal's settings say (the variables when unknown). */
function shareSettings(p: PortalConfig): { share: SettingRef; tags: SettingRef } {
  return { share: p.requestsPerMinuteSetting ?? { kind: 'env', name: 'POSTURE_REQUESTS_PER_MINUTE' }, tags: p.vitalsTagsSetting ?? { kind: 'env', name: 'POSTURE_VITALS_TAGS' } };
}

/**
 * Checks `serve`-only constraints: each portal's intervals must fit its share; returns problems
 * (empty when fine). Each names the change that changes least, and POSTURE_INTERVAL_SECONDS when it
 * alone also fixes it; each of them, applied alone, makes the plan fit.
 */
export function checkServeConfig(config: Config): ConfigError[] {
  const out: ConfigError[] = [];
  for (const p of config.portals) {
    const plan = planOf(p);
    if (plan.fits) continue;
    const at = config.portals.length > 1 ? `portal ${p.name}: ` : '';
    const long = plan.sources.find((s) => runSeconds(s.requestsPerRun, p.requestsPerMinute) >= s.intervalSeconds);
    const why =
      plan.requestsPerHour > plan.capacityPerHour
        ? `the intervals need ${Math.ceil(plan.requestsPerHour)} requests per hour but the share allows ${plan.capacityPerHour} (${p.requestsPerMinute}/min)`
        : long
          ? `a run of ${long.source} (${long.requestsPerRun} requests at ${p.requestsPerMinute}/min) takes at least ${runSeconds(long.requestsPerRun, p.requestsPerMinute)} s, not less than its interval of ${long.intervalSeconds} s`
          : lateWhy(plan.late!, p.requestsPerMinute);
    const change = plan.change;
    const { share, tags } = shareSettings(p);
    if (!change) {
      out.push(new ConfigError('POSTURE_REQUESTS_PER_MINUTE', `${at}${why}, and no interval up to ${MAX_INTERVAL_SECONDS} s fits: raise ${formatName(share)} or give fewer ${formatName(tags)}.`));
      continue;
    }
    const alone = plan.intervalAlone !== undefined && change.interval === undefined ? { sources: {}, interval: plan.intervalAlone } : undefined;
    const first = SOURCES.find((s) => change.sources[s] !== undefined);
    const named = [...changeSettings(config, p, change), ...(alone ? changeSettings(config, p, alone) : []), [share]];
    let ways: string;
    if (!named.some(([ref]) => ref.kind === 'file')) {
      ways = `: set ${formatChange(config, p, change)}${alone ? ` (or ${formatChange(config, p, alone)})` : ''}, or raise ${formatName(share)}.`;
    } else {
      // A config file's keys each on a line of its own, every way out too.
      const set = formatChange(config, p, change).split('\n');
      const setLines = set.length === 1 ? [`set ${set[0]}`] : ['set, together:', ...set.map((l) => `  ${l}`)];
      const lines = [...setLines, ...(alone ? [`or set ${formatChange(config, p, alone)}`] : []), `or raise ${formatName(share)}`];
      ways = `; any one of these fits:\n${lines.map((l) => `    ${l}`).join('\n')}`;
    }
    out.push(new ConfigError(first ? `POSTURE_${first.toUpperCase()}_INTERVAL_SECONDS` : 'POSTURE_INTERVAL_SECONDS', `${at}${why}${ways}`));
  }
  // Entries of one portal (one key each) spend one share: each may fit alone and not together (a
  // portal of one entry that fits is within its share).
  for (const [identity, entries] of entriesByPortal(config.portals)) {
    const plans = entries.map((e) => planOf(e));
    if (!plans.every((plan) => plan.fits)) continue;
    const together = plans.reduce((n, plan) => n + plan.requestsPerHour, 0);
    const capacity = plans[0]!.capacityPerHour;
    const names = entries.map((e) => e.name).join(', ');
    const share = entries[0]!.requestsPerMinute;
    if (together > capacity) {
      out.push(new ConfigError('POSTURE_INTERVAL_SECONDS', `portals ${names} read one portal (${identity}) with one share: their intervals need ${Math.ceil(together)} requests per hour together but the share allows ${capacity} (${share}/min): lengthen their intervals about ${Math.ceil((together / capacity) * 10) / 10} times, or read the portal with fewer keys.`));
      continue;
    }
    if (entries.length === 1) continue;
    const late = portalTimeline(entries).late[0];
    if (late) out.push(new ConfigError('POSTURE_INTERVAL_SECONDS', `portals ${names} read one portal (${identity}) with one share: ${lateWhy(late, share)}: lengthen their intervals, or read the portal with fewer keys.`));
  }
  return out;
}
