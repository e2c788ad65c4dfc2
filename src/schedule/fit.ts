/**
 * Whether each portal's configuration fits its budget, in the words a user sets: the plan of a
 * portal's settings (with what its runs taught, once they have), the staleness limits, `serve`'s
 * check with the change that fits, and the plan `serve` keeps as it learns (PortalPlanner).
 */
import type { Config, PortalConfig, SettingRef } from '../config/types.js';
import { entriesByPortal } from '../config/identity.js';
import { SETTING_BY_KEY } from '../config/settings.js';
import type { Logger } from '../core/log.js';
import { isSlowJob, JOBS, RESOLVED, SLOW_RUN_NAMES, SOURCES, type Job, type SlowJob, type Source } from '../domain.js';
import { ConfigError } from '../errors.js';
import { alertsRequests, DEVICES_REQUESTS, entryRuns, MAX_INTERVAL_SECONDS, plannedPages, planPortal, portalFits, runSeconds, servePlan, type EntryInput, type IntervalChange, type PlannedPages, type PlanInput, type PortalPlan, type SlowSource, slowRequests, vitalsRequests } from './plan.js';
import type { OneShotInput } from './one-shot.js';
import type { PortalMemory } from './request.js';
import type { LateRun } from './timeline.js';
import { HEADROOM_MS } from './yield.js';

/** The largest share a setting takes (requests_per_minute): the portal's own limit. */
const MAX_SHARE = SETTING_BY_KEY.requests_per_minute.max!;

/** A setting with a value, as a user would write it: `--x=1`, `POSTURE_X=1`, `x: 1 in file.yaml`, or `x: 1 (a new key) in file.yaml`. */
function formatSetting(ref: SettingRef, value: number | string): string {
  return ref.kind === 'file' ? `${ref.name}: ${value}${ref.absent ? ' (a new key)' : ''} in ${ref.file}` : `${ref.name}=${value}`;
}

/** A setting named as a user sets it: `--x`, `POSTURE_X`, `x in file.yaml`, or `x (a new key) in file.yaml`. */
function formatName(ref: SettingRef): string {
  return ref.kind === 'file' ? `${ref.name}${ref.absent ? ' (a new key)' : ''} in ${ref.file}` : ref.name;
}

/** `raise X to N`, the key of a config file with its file: `raise x to N (a new key) in file.yaml`. */
function raiseTo(ref: SettingRef, value: number): string {
  return ref.kind === 'file' ? `raise ${ref.name} to ${value}${ref.absent ? ' (a new key)' : ''} in ${ref.file}` : `raise ${ref.name} to ${value}`;
}

/** What the plan learned of a portal entry from its runs (PortalMemory): its lists' totals and the portal's page cap. */
export type Learned = Readonly<Pick<PortalMemory, 'alertsTotal' | 'pageCap' | 'resolvedAlertsTotal' | 'accessTotals' | 'directoryUsersTotal'>>;

/** A list paged by the plan, with its total when learned. */
const paged = (total: number | undefined) => ({ paged: true as const, ...(total !== undefined && { total }) });

/**
 * The slow sources of an entry (each on its own interval, below the live sources), counted with
 * what was learned: the resolved-alerts pass, a list paged as /alerts; the access settings, three
 * lists read whole; the directory's users, a list paged as /alerts. A new source of its own
 * interval is planned, phased and queued by adding it here.
 */
function slowSourcesOf(portal: PortalConfig, learned: Learned = {}): SlowSource[] {
  const { users, roles, teams } = learned.accessTotals ?? {};
  return [
    { job: RESOLVED, intervalSeconds: portal.slowIntervals.resolved, requests: paged(learned.resolvedAlertsTotal) },
    { job: 'access', intervalSeconds: portal.slowIntervals.access, requests: { whole: [users, roles, teams] } },
    { job: 'directory', intervalSeconds: portal.slowIntervals.directory, requests: paged(learned.directoryUsersTotal) },
  ];
}

/** The plan input of an entry with what was learned, at `share` (default: as configured). */
function inputOf(portal: PortalConfig, learned: Learned = {}, share = portal.requestsPerMinute): EntryInput {
  const { alertsTotal, pageCap } = learned;
  return {
    name: portal.name,
    requestsPerMinute: share,
    pageSize: portal.pageSize,
    vitalsTags: portal.vitalsTags,
    intervals: portal.intervals,
    ...(alertsTotal !== undefined && { alertsTotal }),
    ...(pageCap !== undefined && { pageCap }),
    slow: slowSourcesOf(portal, learned),
  };
}

/**
 * The plan of an entry for `serve` (and `check-config`), with what the last runs taught when known;
 * `pages` when the lists' pages are decided for every entry of the portal together.
 */
export function planOf(portal: PortalConfig, learned: Learned = {}, pages?: PlannedPages): PortalPlan {
  const inherited = SOURCES.filter((s) => !portal.intervalSettings?.[s].explicit);
  const input: PlanInput = { ...inputOf(portal, learned), inherited, ...(pages && { pages }) };
  return planPortal(input);
}

/** The pages the lists of every entry of one portal may use in a run of `serve` (plannedPages), as configured. */
export function pagesOf(entries: readonly PortalConfig[]): PlannedPages {
  return plannedPages(entries.map((e) => inputOf(e)), entries[0]!.requestsPerMinute);
}

/** When each source (and each slow source) of each entry starts in `serve`, ms after its portal's start: the phases the timeline checked. */
export function phasesOf(config: Pick<Config, 'portals'>): Map<PortalConfig, Record<Job, number>> {
  const out = new Map<PortalConfig, Record<Job, number>>();
  for (const entries of entriesByPortal(config.portals).values()) {
    // Planned with the fewest pages of each list: the pages served are fitted to the phases chosen here (plannedPages).
    const { sources } = servePlan(entries.map((e) => entryRuns(inputOf(e))), entries[0]!.requestsPerMinute);
    entries.forEach((e, i) => out.set(e, Object.fromEntries(sources.filter((s) => s.entry === i).map((s) => [s.job, s.phaseMs])) as Record<Job, number>));
  }
  return out;
}

/**
 * How `serve` runs the entries of one portal when the lists may use `pages` pages: the sources at
 * the phases chosen with the fewest (phasesOf), and the timeline.
 */
export function servedTimeline(entries: readonly PortalConfig[], pages: PlannedPages): ReturnType<typeof servePlan> {
  const share = entries[0]!.requestsPerMinute;
  const { phased } = servePlan(entries.map((e) => entryRuns(inputOf(e))), share);
  return servePlan(entries.map((e) => entryRuns(inputOf(e), pages)), share, phased);
}

/** Why a plan whose hourly average fits still does not run: its first late run in serve, in words. */
export function lateWhy(late: LateRun, share: number): string {
  const at = (ms: number) => `+${Math.round(ms / 1000)} s`;
  const last = Number.isFinite(late.lastAt) ? `could send its last request only at ${at(late.lastAt)}, less than ${HEADROOM_MS / 1000} s before its deadline ${at(late.deadline)}` : `could not send all its requests before its deadline ${at(late.deadline)}`;
  const slash = late.name.indexOf('/');
  const job = late.name.slice(slash + 1);
  // A source is named by its endpoint; a slow job by what it is and its lists.
  const slow = SLOW_RUN_NAMES[job as SlowJob] as (typeof SLOW_RUN_NAMES)[SlowJob] | undefined;
  const run = slow ? `${slow.run} (${slow.reads})` : `/${job}`;
  const what = slash < 0 ? (slow ? `the ${run}` : run) : `${late.name.slice(0, slash)}'s ${run}`;
  return `serve would run ${what} late: its run that starts at ${at(late.startsAt)} ${last} at ${share}/min`;
}

/** The interval of a job (a source, or a slow job), in seconds. */
export function intervalOf(portal: PortalConfig, job: Job): number {
  return isSlowJob(job) ? portal.slowIntervals[job] : portal.intervals[job];
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

/** The smallest share above the configured one, up to the portal's 10, at which the entries of one portal fit their intervals as set; undefined when none does. */
function shareThatFits(entries: readonly PortalConfig[], learned: (entry: PortalConfig) => Learned = () => ({})): number | undefined {
  for (let share = entries[0]!.requestsPerMinute + 1; share <= MAX_SHARE; share++) if (portalFits(entries.map((e) => inputOf(e, learned(e))), share).fits) return share;
  return undefined;
}

/**
 * Why an entry's plan does not fit, and every way out that applied alone fits (its intervals, or
 * POSTURE_INTERVAL_SECONDS, or the share raised to what fits), in a user's words; the setting the
 * problem is reported under. `plan` is planOf(p, learned).
 */
function refusal(config: Pick<Config, 'intervalSetting'> & { readonly portals: readonly PortalConfig[] }, p: PortalConfig, plan: PortalPlan, learned: Learned = {}): { setting: string; message: string } {
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
  const fitting = shareThatFits([p], () => learned);
  if (!change) {
    const ways = fitting !== undefined ? `${raiseTo(share, fitting)} or give fewer ${formatName(tags)}` : `give fewer ${formatName(tags)} (no share up to ${MAX_SHARE}/min fits these intervals)`;
    return { setting: 'POSTURE_REQUESTS_PER_MINUTE', message: `${at}${why}, and no interval up to ${MAX_INTERVAL_SECONDS} s fits: ${ways}.` };
  }
  const alone = plan.intervalAlone !== undefined && change.interval === undefined ? { sources: {}, interval: plan.intervalAlone } : undefined;
  const first = SOURCES.find((s) => change.sources[s] !== undefined);
  const named = [...changeSettings(config, p, change), ...(alone ? changeSettings(config, p, alone) : []), [share]];
  let ways: string;
  if (!named.some(([ref]) => ref.kind === 'file')) {
    ways = `: set ${formatChange(config, p, change)}${alone ? ` (or ${formatChange(config, p, alone)})` : ''}${fitting !== undefined ? `, or ${raiseTo(share, fitting)}` : ''}.`;
  } else {
    // A config file's keys each on a line of its own, every way out too.
    const set = formatChange(config, p, change).split('\n');
    const setLines = set.length === 1 ? [`set ${set[0]}`] : ['set, together:', ...set.map((l) => `  ${l}`)];
    const lines = [...setLines, ...(alone ? [`or set ${formatChange(config, p, alone)}`] : []), ...(fitting !== undefined ? [`or ${raiseTo(share, fitting)}`] : [])];
    ways = `; any one of these fits:\n${lines.map((l) => `    ${l}`).join('\n')}`;
  }
  return { setting: first ? `POSTURE_${first.toUpperCase()}_INTERVAL_SECONDS` : 'POSTURE_INTERVAL_SECONDS', message: `${at}${why}${ways}` };
}

/** How to raise the share of the entries of one portal to `value`: each entry's setting, once. */
function raiseShares(entries: readonly PortalConfig[], value: number): string {
  const refs = [...new Map(entries.map((e) => shareSettings(e).share).map((ref) => [formatName(ref), ref])).values()];
  return refs.map((ref) => raiseTo(ref, value)).join(' and ');
}

/**
 * Checks `serve`-only constraints: each portal's intervals must fit its share; returns problems
 * (empty when fine). Each names the change that changes least, POSTURE_INTERVAL_SECONDS when it
 * alone also fixes it, and the share that fits (up to the portal's 10); each of them, applied
 * alone, makes the plan fit.
 */
export function checkServeConfig(config: Config): ConfigError[] {
  const out: ConfigError[] = [];
  // Whether each entry fits alone: the plan with its suggestions only for those that do not.
  const alone = new Map(config.portals.map((p) => [p, portalFits([inputOf(p)], p.requestsPerMinute).fits]));
  for (const p of config.portals) {
    if (alone.get(p)) continue;
    const { setting, message } = refusal(config, p, planOf(p));
    out.push(new ConfigError(setting, message));
  }
  // Entries of one portal (one key each) spend one share: each may fit alone and not together (a
  // portal of one entry that fits is within its share).
  for (const [identity, entries] of entriesByPortal(config.portals)) {
    if (entries.length === 1 || !entries.every((e) => alone.get(e))) continue;
    const share = entries[0]!.requestsPerMinute;
    const together = portalFits(entries.map((e) => inputOf(e)), share);
    if (together.fits) continue;
    const names = entries.map((e) => e.name).join(', ');
    const fitting = shareThatFits(entries);
    const orShare = fitting !== undefined ? `, or ${raiseShares(entries, fitting)}` : '';
    const why =
      together.requestsPerHour > together.capacityPerHour
        ? `their intervals need ${Math.ceil(together.requestsPerHour)} requests per hour together but the share allows ${together.capacityPerHour} (${share}/min): lengthen their intervals about ${Math.ceil((together.requestsPerHour / together.capacityPerHour) * 10) / 10} times`
        : `${lateWhy(together.late!, share)}: lengthen their intervals`;
    out.push(new ConfigError('POSTURE_INTERVAL_SECONDS', `portals ${names} read one portal (${identity}) with one share: ${why}${orShare}, or read the portal with fewer keys.`));
  }
  return out;
}

/**
 * What a one-shot run (`once`, Lambda) of an entry plans with: what its runs taught, at the share
 * in force, and its slow sources that the run includes (`slowDue`: those due; `all`: every one, the
 * longest run).
 */
export function oneShotInputOf(portal: PortalConfig, learned: Learned, share: number, slowDue: ReadonlySet<string> | 'all'): OneShotInput {
  const { slow, ...input } = inputOf(portal, learned, share);
  return { ...input, slow: (slow ?? []).filter((s) => slowDue === 'all' || slowDue.has(s.job)) };
}

/**
 * The slow jobs of a one-shot run (`once`, Lambda) among those due: in SLOW_JOBS order, each whose
 * requests still fit the window beside the live sources (whose open alerts leave a request), so the
 * run stays in one window; the first due always runs, so none waits forever. The others are given
 * back and run in a later run, within their intervals (a Lambda every 5 minutes reads them in turn).
 */
export function slowJobsThatFit(portal: PortalConfig, learned: Learned, share: number, due: readonly SlowJob[]): SlowJob[] {
  const input = inputOf(portal, learned, share);
  let room = share - vitalsRequests(portal.vitalsTags) - DEVICES_REQUESTS - alertsRequests(input, learned.alertsTotal, true);
  const out: SlowJob[] = [];
  for (const job of due) {
    const source = (input.slow ?? []).find((s) => s.job === job);
    const requests = source ? slowRequests(input, source) : 1;
    if (out.length > 0 && requests > room) continue;
    out.push(job);
    room -= requests;
  }
  return out;
}

/** An entry of a portal as `serve` runs it: its settings, and what its runs taught (read as it changes). */
export interface PlannedEntry {
  readonly config: PortalConfig;
  readonly memory: Learned;
}

/**
 * The plan `serve` keeps of one portal (every entry that reads it, one share) as its runs teach it
 * (a list's total, the portal's page cap): the pages each list may use in a run, and one warning
 * when what was learned makes the plan no longer run on time, with the change that fits.
 */
export class PortalPlanner {
  /** Whether `serve` staggers the sources' first runs (the phases it started with: phasesOf), once asked. */
  private started: boolean | undefined;
  private last: { readonly key: string; readonly pages: PlannedPages } | undefined;
  /** Whether what was learned makes the plan no longer fit (warned once until it fits again). */
  private late = false;

  constructor(
    private readonly entries: readonly PlannedEntry[],
    private readonly config: Pick<Config, 'intervalSetting' | 'portals'>,
    private readonly logger: Logger,
  ) {}

  /** Whether `serve` staggers the sources' first runs: worked out when first needed (a one-shot run never needs it). */
  private get phased(): boolean {
    const configs = this.entries.map((e) => e.config);
    return (this.started ??= servePlan(configs.map((e) => entryRuns(inputOf(e))), configs[0]!.requestsPerMinute).phased);
  }

  /** The pages the lists of every entry may use in one run at `share` (the share in force): plannedPages with what was learned. */
  pages(share: number): PlannedPages {
    const key = [share, ...this.entries.flatMap(({ memory: m }) => [m.alertsTotal, m.pageCap, m.resolvedAlertsTotal, m.accessTotals?.users, m.accessTotals?.roles, m.accessTotals?.teams, m.directoryUsersTotal])].join();
    if (this.last?.key === key) return this.last.pages;
    const inputs = this.entries.map((e) => inputOf(e.config, e.memory, share));
    // Said only of what was learned: a plan that does not fit as configured is refused at start, and a lowered share is said where it is lowered.
    const late = !portalFits(inputs, share, this.phased).fits && portalFits(this.entries.map((e) => inputOf(e.config, {}, share)), share, this.phased).fits;
    if (late && !this.late) this.warn(share);
    else if (!late && this.late) this.logger.info('the plan runs on time again with what the portal\'s answers taught', { share });
    this.late = late;
    const pages = plannedPages(inputs, share, this.phased);
    this.last = { key, pages };
    return pages;
  }

  /** Requests a run of live source `source` of `entry` sends at `share` (the share in force), its lists at the pages planned: what a slow request leaves it (./yield.ts). */
  liveRequests(entry: PortalConfig, source: Source, share: number): number {
    const e = this.entries.find((x) => x.config === entry);
    return e ? entryRuns(inputOf(e.config, e.memory, share), this.pages(share)).perRun[source] : 0;
  }

  /** Warns that what the runs taught makes the plan late, naming it and what fits (as check-config would, with what was learned). */
  private warn(share: number): void {
    const learned = this.entries.map((e) => ({ portal: e.config.name, ...e.memory }));
    const single = this.entries.length === 1 ? this.entries[0]! : undefined;
    // As check-config would say it with what was learned, at the share in force.
    const config = single && { ...single.config, requestsPerMinute: share };
    const plan = config && planOf(config, single.memory);
    const why = config && plan && !plan.fits ? refusal({ ...this.config, portals: [config] }, config, plan, single.memory).message : 'the entries of this portal no longer run on time together: lengthen their intervals, or read the portal with fewer keys';
    this.logger.warn(`what the portal's answers taught (its lists' totals, its page cap) makes the plan run late: ${why}`, { share, learned });
  }
}
