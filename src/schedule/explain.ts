/** The plan in words, for `check-config`: one block per portal, one line per source. */
import type { Config, PortalConfig } from '../config/load.js';
import { entriesByPortal, portalIdentity } from '../config/identity.js';
import { RESOLVED } from '../domain.js';
import { formatChange, lateWhy, oneShotInputOf, pagesOf, planOf, servedTimeline } from './fit.js';
import { portalOneShotSeconds } from './one-shot.js';
import { alertsPagesAllowed, type PlannedPages, type SourcePlan } from './plan.js';

/** What a run of a source reads, for its line. */
function whatOf(p: PortalConfig, s: SourcePlan, pagesWithPass: number): string {
  const job = s.source;
  if (job === 'vitals') return `whole portal${p.vitalsTags.length ? ` + ${p.vitalsTags.length} tag(s)` : ''}`;
  if (job === 'devices') return 'active and inactive totals';
  if (job === 'alerts') {
    // serve's pages are fitted to the plan; a once/Lambda run's to one window.
    const window = alertsPagesAllowed(p);
    const withPass = pagesWithPass < window ? ` that runs a slow source (the resolved-alerts pass, access, directory)` : '';
    const oneShot = window !== s.requestsPerRun ? `, ${window} in a once/Lambda run${withPass ? ` (${pagesWithPass} in one${withPass})` : ''}` : withPass ? `, ${pagesWithPass} in a once/Lambda run${withPass}` : '';
    return `page ${p.pageSize}, grown so one run uses at most ${s.requestsPerRun} request(s) once the total is known${oneShot}`;
  }
  const below = 'below every live source';
  if (job === RESOLVED) return `the resolved-alerts pass: /alerts?filter=resolved paged as /alerts, 1 while its total is unknown, ${below}`;
  if (job === 'access') return `the portal's accounts, roles and teams: /settings/usermanagement/users, /roles and /teams, 1 each (more when the portal caps pages), ${below}`;
  if (job === 'directory') return `the directory's users: /users?filter=all paged as /alerts, 1 while its total is unknown, ${below}`;
  return `its own interval, ${below}`;
}

/** Lines explaining each portal's budget: requests per run and per hour for each source, against the share. */
export function explainPlan(config: Config): string[] {
  const lines: string[] = [];
  const byPortal = entriesByPortal(config.portals);
  for (const p of config.portals) {
    // Every portal is in a group of its identity, itself at least.
    const entries = byPortal.get(portalIdentity(p.baseUrl))!;
    // The lists' pages are fitted to every entry of the portal together.
    const pages = pagesOf(entries);
    const plan = planOf(p, {}, pages);
    const per = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(n < 0.1 ? 2 : 1));
    const others = entries.filter((q) => q !== p).map((q) => q.name);
    const shared = others.length ? `, shared with ${others.join(', ')} (the same portal)` : '';
    lines.push(`portal ${p.name} (${p.baseUrl}, key from ${p.key.kind}): share ${p.requestsPerMinute} requests per 60 s (${plan.capacityPerHour} per hour)${shared}`);
    // The open alerts' pages in a once/Lambda run that leaves its slow sources a request.
    const pagesWithPass = alertsPagesAllowed(p, true);
    for (const s of plan.sources) {
      lines.push(`  ${s.source.padEnd(7)} every ${String(s.intervalSeconds).padStart(5)} s: ${s.requestsPerRun} request(s) per run (${whatOf(p, s, pagesWithPass)}), ${per(s.requestsPerHour)} per hour`);
    }
    // The longest one-shot run: one with every slow source (a first run).
    const oneShot = portalOneShotSeconds(entries.map((e) => oneShotInputOf(e, {}, e.requestsPerMinute, 'all')), config.maxRetries, config.maxRetryAfterSeconds);
    const capped = config.cycleTimeoutSeconds !== undefined ? ` (capped by POSTURE_CYCLE_TIMEOUT_SECONDS at ${config.cycleTimeoutSeconds} s)` : '';
    const together = others.length ? entries.reduce((n, q) => n + planOf(q, {}, pages).requestsPerHour, 0) : undefined;
    const withOthers = together !== undefined ? ` (${per(together)} with ${others.join(', ')}${together > plan.capacityPerHour ? ' — together they do NOT fit' : ''})` : '';
    lines.push(
      `  serve: ${per(plan.requestsPerHour)}${withOthers} of ${plan.capacityPerHour} requests per hour${plan.fits ? '' : ' — does NOT fit'}; once/Lambda: one run of every source and every slow one with ${config.maxRetries} retries takes up to ${oneShot} s${capped} (give the Lambda a timeout of at least ${oneShot + config.lambdaMarginSeconds} s)`,
    );
    lines.push(`  ${minuteByMinute(entries, pages)}`);
    // Set only when the plan does not fit.
    if (plan.suggested) {
      // Each interval set for its source, so the line applied alone fits whatever else is set.
      const change = formatChange(config, p, { sources: plan.suggested }).split('\n');
      lines.push(...(change.length === 1 ? [`  smallest intervals that fit: ${change[0]}`] : ['  smallest intervals that fit:', ...change.map((l) => `    ${l}`)]));
    }
  }
  return lines;
}

/** The plan minute by minute as serve runs it (the lists at `pages`): each source's first run (its phase), the busiest 60 s, and a run that would be late. */
function minuteByMinute(entries: readonly PortalConfig[], pages: PlannedPages): string {
  const { sources, timeline } = servedTimeline(entries, pages);
  const starts = sources.every((s) => s.phaseMs === 0) ? 'every source at once' : `first runs at ${sources.map((s) => `${s.name} +${s.phaseMs / 1000} s`).join(', ')}`;
  const late = timeline.late[0];
  return `serve minute by minute: ${starts}; busiest 60 s: ${timeline.busiest.requests} of ${entries[0]!.requestsPerMinute} requests${late ? ` — NOT on time: ${lateWhy(late, entries[0]!.requestsPerMinute)}` : ''}`;
}
