/** The plan in words, for `check-config`: one block per portal, one line per source. */
import type { Config, PortalConfig } from '../config/load.js';
import { entriesByPortal, portalIdentity } from '../config/identity.js';
import { formatChange, lateWhy, planOf, runsOf } from './fit.js';
import { alertsPagesAllowed, portalOneShotSeconds, servePlan } from './plan.js';

/** Lines explaining each portal's budget: requests per run and per hour for each source, against the share. */
export function explainPlan(config: Config): string[] {
  const lines: string[] = [];
  const byPortal = entriesByPortal(config.portals);
  for (const p of config.portals) {
    const plan = planOf(p);
    const per = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));
    // Every portal is in a group of its identity, itself at least.
    const entries = byPortal.get(portalIdentity(p.baseUrl))!;
    const others = entries.filter((q) => q !== p).map((q) => q.name);
    const shared = others.length ? `, shared with ${others.join(', ')} (the same portal)` : '';
    lines.push(`portal ${p.name} (${p.baseUrl}, key from ${p.key.kind}): share ${p.requestsPerMinute} requests per 60 s (${plan.capacityPerHour} per hour)${shared}`);
    // The open alerts' pages in one window, and in a once/Lambda run that leaves the resolved-alerts pass a request.
    const pages = alertsPagesAllowed(p);
    const pagesWithPass = alertsPagesAllowed(p, true);
    for (const s of plan.sources) {
      const what =
        s.source === 'vitals'
          ? `whole portal${p.vitalsTags.length ? ` + ${p.vitalsTags.length} tag(s)` : ''}`
          : s.source === 'devices'
            ? 'active and inactive totals'
            : s.source === 'resolved'
              ? 'the resolved-alerts pass: /alerts?filter=resolved paged as /alerts, 1 while its total is unknown'
              : `page ${p.pageSize}, grown so one run uses at most ${pages} request(s) once the total is known${pagesWithPass < pages ? `, ${pagesWithPass} in a once/Lambda run that makes the resolved-alerts pass` : ''}`;
      lines.push(`  ${s.source.padEnd(7)} every ${String(s.intervalSeconds).padStart(5)} s: ${s.requestsPerRun} request(s) per run (${what}), ${per(s.requestsPerHour)} per hour`);
    }
    // The longest one-shot run: one with the resolved-alerts pass.
    const oneShot = portalOneShotSeconds(entries.map((e) => ({ ...e, withPass: true })), config.maxRetries, config.maxRetryAfterSeconds);
    const capped = config.cycleTimeoutSeconds !== undefined ? ` (capped by POSTURE_CYCLE_TIMEOUT_SECONDS at ${config.cycleTimeoutSeconds} s)` : '';
    const together = others.length ? entries.reduce((n, q) => n + planOf(q).requestsPerHour, 0) : undefined;
    const withOthers = together !== undefined ? ` (${per(together)} with ${others.join(', ')}${together > plan.capacityPerHour ? ' — together they do NOT fit' : ''})` : '';
    lines.push(
      `  serve: ${per(plan.requestsPerHour)}${withOthers} of ${plan.capacityPerHour} requests per hour${plan.fits ? '' : ' — does NOT fit'}; once/Lambda: one run of every source and the resolved-alerts pass with ${config.maxRetries} retries takes up to ${oneShot} s${capped} (give the Lambda a timeout of at least ${oneShot + config.lambdaMarginSeconds} s)`,
    );
    lines.push(`  ${minuteByMinute(entries)}`);
    // Set only when the plan does not fit.
    if (plan.suggested) {
      // Each interval set for its source, so the line applied alone fits whatever else is set.
      const change = formatChange(config, p, { sources: plan.suggested }).split('\n');
      lines.push(...(change.length === 1 ? [`  smallest intervals that fit: ${change[0]}`] : ['  smallest intervals that fit:', ...change.map((l) => `    ${l}`)]));
    }
  }
  return lines;
}

/** The plan minute by minute as serve runs it: each source's first run (its phase), the busiest 60 s, and a run that would be late. */
function minuteByMinute(entries: readonly PortalConfig[]): string {
  const { sources, timeline } = servePlan(entries.map((e) => runsOf(e)), entries[0]!.requestsPerMinute);
  const starts = sources.every((s) => s.phaseMs === 0) ? 'every source at once' : `first runs at ${sources.map((s) => `${s.name} +${s.phaseMs / 1000} s`).join(', ')}`;
  const late = timeline.late[0];
  return `serve minute by minute: ${starts}; busiest 60 s: ${timeline.busiest.requests} of ${entries[0]!.requestsPerMinute} requests${late ? ` — NOT on time: ${lateWhy(late, entries[0]!.requestsPerMinute)}` : ''}`;
}
