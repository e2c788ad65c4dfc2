import { SEVERITIES } from '../../domain.js';
import { bySize, keptGroups, OTHER } from '../cap.js';
import type { Add } from '../source.js';
import { ALERT_AGES, type AlertsAggregate } from './fold.js';
import type { AlertsFamily } from './families.js';

/** Severities to emit for a counted family: red, amber, green always, others when non-zero. */
function severitiesOf(counts: Record<string, number>): string[] {
  const extra = Object.keys(counts).filter((k) => !(SEVERITIES as readonly string[]).includes(k) && counts[k]! > 0).sort();
  return [...SEVERITIES, ...extra];
}

const byString = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

/** One series of posture_alerts_open_by_integration. */
interface IntegrationRow {
  readonly integration: string;
  readonly severity: string;
  readonly type: string;
  readonly n: number;
}

/** The non-zero series of an aggregate, by integration, severity, then type. */
function integrationRows(counts: AlertsAggregate['byIntegration']): IntegrationRow[] {
  const rows: IntegrationRow[] = [];
  for (const [integration, bySeverity] of counts) {
    for (const [severity, types] of bySeverity) {
      for (const [type, n] of types) if (n !== 0) rows.push({ integration, severity, type, n });
    }
  }
  return rows.sort((x, y) => byString(x.integration, y.integration) || byString(x.severity, y.severity) || byString(x.type, y.type));
}

/** Adds `n` to (severity, type) of a nested count map. */
function addTo(counts: Map<string, Map<string, number>>, severity: string, type: string, n: number): void {
  let types = counts.get(severity);
  if (!types) counts.set(severity, (types = new Map()));
  types.set(type, (types.get(type) ?? 0) + n);
}

/**
 * Which integrations posture_alerts_open_by_integration keeps: the largest (open alerts) first,
 * as many as keep the family, fold series included, within `cap`. Undefined: keep all.
 */
function alertsKept(rows: readonly IntegrationRow[], cap: number): Set<string> | undefined {
  const sizes = new Map<string, number>();
  // integration → severity → type → series (1 each): the severity x type combinations it has.
  const combos = new Map<string, Map<string, Map<string, number>>>();
  for (const r of rows) {
    sizes.set(r.integration, (sizes.get(r.integration) ?? 0) + r.n);
    let own = combos.get(r.integration);
    if (!own) combos.set(r.integration, (own = new Map()));
    addTo(own, r.severity, r.type, 1);
  }
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a shortcut: when every series fits, keptGroups below keeps every integration too.
  if (!sizes.has(OTHER) && rows.length <= cap) return undefined;
  const order = bySize(sizes);
  const n = order.length;
  const comboCount = (c: Map<string, Map<string, number>>) => [...c.values()].reduce((sum, types) => sum + types.size, 0);
  // Stryker disable next-line ArithmeticOperator: shorter, kept[n] (all kept) is NaN; keptGroups reaches k = n only when the shortcut above failed, where all kept does not fit anyway (n >= 1 here).
  const kept = new Array<number>(n + 1).fill(0);
  for (let k = 0; k < n; k++) kept[k + 1] = kept[k]! + comboCount(combos.get(order[k]!)!);
  // other[k]: distinct severity x type of the integrations from k on (one fold series each).
  // Stryker disable next-line ArrayDeclaration,ArithmeticOperator: only other[n] (nothing folded) is left unset, read only where all kept does not fit (see above).
  const other = new Array<number>(n + 1).fill(0);
  const seen = new Map<string, Map<string, number>>();
  let distinct = 0;
  // Stryker disable next-line EqualityOperator: other[0] (all folded) is never read: keptGroups asks for one kept at least.
  for (let k = n - 1; k >= 0; k--) {
    for (const [severity, types] of combos.get(order[k]!)!) {
      for (const type of types.keys()) {
        if (seen.get(severity)?.has(type)) continue;
        addTo(seen, severity, type, 1);
        distinct++;
      }
    }
    other[k] = distinct;
  }
  return keptGroups(order, 1, (_f, j) => kept[j]!, (_f, j) => other[j]!, cap);
}

/** The alert samples of an aggregate, with the series cap on posture_alerts_open_by_integration. */
export function alertsSamples(a: AlertsAggregate, add: Add<AlertsFamily>, cap: number, folded: Map<string, number>): void {
  const families = [
    ['posture_alerts_open', a.open],
    ['posture_alerts_unacknowledged', a.unacknowledged],
    ['posture_alerts_unassigned', a.unassigned],
    ['posture_alerts_snoozed', a.snoozed],
  ] as const;
  for (const [name, counts] of families) {
    for (const severity of severitiesOf(counts)) add(name, { severity }, counts[severity] ?? 0);
  }
  const rows = integrationRows(a.byIntegration);
  const keep = alertsKept(rows, cap);
  // severity → type → open alerts of the folded integrations.
  const rest = new Map<string, Map<string, number>>();
  let foldedSeries = 0;
  for (const { integration, severity, type, n } of rows) {
    if (keep && !keep.has(integration)) {
      foldedSeries++;
      addTo(rest, severity, type, n);
      continue;
    }
    add('posture_alerts_open_by_integration', { integration, severity, type }, n);
  }
  for (const [severity, types] of [...rest].sort(([x], [y]) => byString(x, y))) {
    for (const [type, n] of [...types].sort(([x], [y]) => byString(x, y))) add('posture_alerts_open_by_integration', { integration: OTHER, severity, type }, n);
  }
  folded.set('posture_alerts_open_by_integration', foldedSeries);
  for (const severity of severitiesOf(a.open)) {
    const t = a.oldest[severity];
    if (t !== undefined) add('posture_alerts_oldest_open_timestamp_seconds', { severity }, t);
  }
  for (const severity of severitiesOf(a.open)) {
    ALERT_AGES.forEach(([age], i) => add('posture_alerts_open_older_than', { severity, age }, a.olderThan[severity]?.[i] ?? 0));
  }
  // Only the severities that have an SLA: an unrecognised state has none.
  for (const severity of SEVERITIES) add('posture_alerts_over_sla', { severity }, a.overSla[severity] ?? 0);
  for (const severity of severitiesOf(a.open)) {
    const t = a.oldestUnacknowledged[severity];
    if (t !== undefined) add('posture_alerts_oldest_unacknowledged_timestamp_seconds', { severity }, t);
  }
}
