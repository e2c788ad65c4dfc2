/**
 * The Vitals source: /vitals of the whole portal, then of each tag (total checked per list), its
 * fold (validated records, one per integration), its families and their samples with the series cap.
 */
import type { Logger } from '../core/log.js';
import { STAGES } from '../domain.js';
import { ListMismatchError } from '../errors.js';
import { asWritten } from '../core/utf8.js';
import { request, type RunContext } from '../schedule/request.js';
import { PRIORITY } from '../schedule/scheduler.js';
import { describeIssues, VitalsRecordSchema, type VitalsRecord } from '../upstream/schemas.js';
import { bySize, keptGroups, OTHER } from './cap.js';
import { InvalidRecords } from './invalid.js';
import { CACHED, type Add, type SourceFamily, type SourceModule } from './source.js';

/** The Vitals of one request: the whole portal (`tag` undefined) or one tag. */
export interface VitalsList {
  readonly tag: string | undefined;
  readonly records: readonly VitalsRecord[];
  readonly invalid: number;
}

/** Collects a /vitals response: validates each record, skips malformed ones and repeated keys. */
class VitalsSink {
  private readonly records: VitalsRecord[] = [];
  private readonly keys = new Set<string>();
  private readonly invalid: InvalidRecords;
  private index = 0;

  constructor(
    private readonly tag: string | undefined,
    logger?: Logger,
  ) {
    this.invalid = new InvalidRecords(tag === undefined ? 'vitals' : `vitals (tag ${tag})`, logger);
  }

  record(raw: unknown): void {
    const i = this.index++;
    const parsed = VitalsRecordSchema.safeParse(raw);
    if (!parsed.success) return this.invalid.add(i, describeIssues(parsed.error, raw));
    // Two records for one integration would make duplicate series; keep the first.
    if (this.keys.has(parsed.data.key)) return this.invalid.add(i, `repeated integration key ${JSON.stringify(parsed.data.key)}`);
    this.keys.add(parsed.data.key);
    this.records.push(parsed.data);
  }

  finish(): VitalsList {
    return { tag: this.tag, records: this.records, invalid: this.invalid.count };
  }
}

/** Folds plain records (tests, fixtures) as the sink does. */
export function foldVitals(records: Iterable<unknown>, tag?: string, logger?: Logger): VitalsList {
  const sink = new VitalsSink(tag, logger);
  for (const r of records) sink.record(r);
  return sink.finish();
}

/** The funnel rule: each stage's eligible equals the previous stage's compliant, and no compliant exceeds its eligible. */
function funnelConsistent(r: Extract<VitalsRecord, { vitalsEnabled: true }>): boolean {
  return (
    r.agentFunctioningPossibleCompliant === r.agentDeployedCompliant &&
    r.configurationPossibleCompliant === r.agentFunctioningCompliant &&
    r.agentDeployedCompliant <= r.agentDeployedPossibleCompliant &&
    r.agentFunctioningCompliant <= r.agentFunctioningPossibleCompliant &&
    r.configurationCompliant <= r.configurationPossibleCompliant
  );
}

/** The families fed by vitals, in catalogue order. */
export const VITALS_FAMILIES = [
  {
    name: 'posture_vitals_integration_info',
    help: 'Integrations reported by /vitals (value is always 1).' + CACHED,
    type: 'gauge', unit: '1', labels: ['integration', 'name', 'vitals_enabled'], optionalLabels: ['tag'], origin: 'vitals', combine: 'max',
    doc: '1 per integration in `/vitals` (integration = `key`, name = `name`).',
  },
  {
    name: 'posture_vitals_eligible_devices',
    help: 'Vitals funnel: devices eligible for a stage (agentDeployedPossibleCompliant, agentFunctioningPossibleCompliant, configurationPossibleCompliant).' + CACHED,
    type: 'gauge', unit: '{device}', labels: ['integration', 'stage'], optionalLabels: ['tag'], origin: 'vitals',
    doc: 'Devices eligible at `stage` ∈ deployment, function, configuration (`agentDeployedPossibleCompliant`, `agentFunctioningPossibleCompliant`, `configurationPossibleCompliant`).',
  },
  {
    name: 'posture_vitals_compliant_devices',
    help: 'Vitals funnel: devices compliant at a stage (agentDeployedCompliant, agentFunctioningCompliant, configurationCompliant).' + CACHED,
    type: 'gauge', unit: '{device}', labels: ['integration', 'stage'], optionalLabels: ['tag'], origin: 'vitals',
    doc: 'Devices compliant at `stage` (`agentDeployedCompliant`, `agentFunctioningCompliant`, `configurationCompliant`).',
  },
  {
    name: 'posture_vitals_health_ratio',
    help: 'Vitals overall health: configurationCompliant / agentDeployedPossibleCompliant; absent when the denominator is 0.' + CACHED,
    type: 'gauge', unit: '1', labels: ['integration'], optionalLabels: ['tag'], origin: 'vitals', combine: 'min',
    doc: '`configurationCompliant / agentDeployedPossibleCompliant`; absent when the denominator is 0.',
  },
  {
    name: 'posture_vitals_funnel_consistent',
    help: 'Vitals funnel rule holds: 1 when each stage\'s eligible equals the previous stage\'s compliant and no compliant exceeds its eligible, else 0.' + CACHED,
    type: 'gauge', unit: '1', labels: ['integration'], optionalLabels: ['tag'], origin: 'vitals', combine: 'min',
    doc: '1 when each stage\'s eligible equals the previous stage\'s compliant and no compliant exceeds its eligible, else 0.',
  },
  {
    name: 'posture_vitals_active_agents',
    help: 'Devices with the integration (activeAgents), for integrations whose Vitals monitoring is disabled.' + CACHED,
    type: 'gauge', unit: '{device}', labels: ['integration'], optionalLabels: ['tag'], origin: 'vitals',
    doc: '`activeAgents`, for integrations with `vitalsEnabled` false.',
  },
] as const satisfies readonly SourceFamily<'vitals'>[];

// ------------------------------------------------------------------ run

/** One /vitals list (whole portal or one tag, live or one archived day), complete or a ListMismatchError. */
async function vitalsList(ctx: RunContext, tag: string | undefined, archiveDate: string | undefined, priority: number): Promise<VitalsList> {
  const res = await request(ctx, () => ({ endpoint: '/vitals', query: archiveDate === undefined ? { tag } : { archiveDate, tag } }), () => new VitalsSink(tag, ctx.logger), priority);
  if (res.received !== res.total) {
    const what = `/vitals${archiveDate === undefined ? '' : `?archiveDate=${archiveDate}`}${tag === undefined ? '' : ` (tag ${tag})`}`;
    throw new ListMismatchError('/vitals', res.total, res.received, `${what} returned ${res.received} records but its total says ${res.total}: the list is incomplete.`);
  }
  return res.result;
}

/** Vitals: the whole portal, then each tag. */
async function runVitals(ctx: RunContext): Promise<VitalsList[]> {
  const lists: VitalsList[] = [];
  const tags = [undefined, ...ctx.portal.vitalsTags];
  for (const [i, tag] of tags.entries()) lists.push(await vitalsList(ctx, tag, undefined, i === 0 ? PRIORITY.vitals : PRIORITY.continuation));
  return lists;
}

/** One day of the Vitals archive (`archiveDate`, spec 4.5), whole portal or one tag: backfill's job. */
export function fetchArchive(ctx: RunContext, day: string, tag: string | undefined): Promise<VitalsList> {
  return vitalsList(ctx, tag, day, PRIORITY.backfill);
}

// ------------------------------------------------------------------ samples

type Enabled = Extract<VitalsRecord, { vitalsEnabled: true }>;
type Disabled = Extract<VitalsRecord, { vitalsEnabled: false }>;
type VitalsFamily = (typeof VITALS_FAMILIES)[number]['name'];

/**
 * A list's records by integration label: `key` as UTF-8 writes it (a lone surrogate becomes
 * U+FFFD), in first-seen order. Distinct keys written alike are distinct integrations the
 * output cannot tell apart: their counts are added up as one integration's, as a fold is.
 */
function byIntegration(list: VitalsList): Map<string, VitalsRecord[]> {
  const out = new Map<string, VitalsRecord[]>();
  for (const r of list.records) {
    const key = asWritten(r.key);
    const group = out.get(key);
    if (group) group.push(r);
    else out.set(key, [r]);
  }
  return out;
}

/** Series one integration (its records in one list) has in each Vitals family, in VITALS_FAMILIES order. */
function vitalsSeriesOf(group: readonly VitalsRecord[]): number[] {
  const info = new Set(group.map((r) => `${r.vitalsEnabled}\u0000${asWritten(r.name)}`)).size;
  let enabled = false;
  let disabled = false;
  let denominator = 0;
  for (const r of group) {
    if (r.vitalsEnabled) {
      enabled = true;
      denominator += r.agentDeployedPossibleCompliant;
    } else disabled = true;
  }
  return [info, enabled ? 3 : 0, enabled ? 3 : 0, denominator > 0 ? 1 : 0, enabled ? 1 : 0, disabled ? 1 : 0];
}

/** What the fold series of one list need: whether it folded enabled / disabled records, and the health denominator. */
interface VitalsFoldState {
  enabled: boolean;
  disabled: boolean;
  denominator: number;
}

/** Fold series of one list in each Vitals family (info has none: info series are dropped). */
function vitalsOtherOf(st: VitalsFoldState): number[] {
  return [
    0, st.enabled ? 3 : 0, st.enabled ? 3 : 0,
    // Stryker disable next-line ConditionalExpression,EqualityOperator: health is never more series than the funnel (1 per enabled), kept or folded, so the funnel's check decides; any change here only lowers it.
    st.denominator > 0 ? 1 : 0,
    st.enabled ? 1 : 0, st.disabled ? 1 : 0,
  ];
}

/**
 * Which integrations the Vitals families keep: one set for all of them (so they stay joinable),
 * the largest (eligible devices, or active agents when Vitals is disabled; the largest over the
 * tag views) first, as many as keep every family within `cap`. Undefined: keep all.
 */
function vitalsKept(groups: ReadonlyArray<ReadonlyMap<string, readonly VitalsRecord[]>>, cap: number): Set<string> | undefined {
  const sizes = new Map<string, number>();
  const perKey = new Map<string, number[]>();
  // Stryker disable next-line ArrayDeclaration: totals feed only the shortcut below; without it keptGroups keeps every integration too.
  const totals = [0, 0, 0, 0, 0, 0];
  for (const list of groups) {
    for (const [key, group] of list) {
      const size = group.reduce((n, r) => n + (r.vitalsEnabled ? r.agentDeployedPossibleCompliant : r.activeAgents), 0);
      sizes.set(key, Math.max(sizes.get(key) ?? 0, size));
      const series = vitalsSeriesOf(group);
      const acc = perKey.get(key) ?? [0, 0, 0, 0, 0, 0];
      series.forEach((n, f) => {
        acc[f]! += n;
        totals[f]! += n;
      });
      perKey.set(key, acc);
    }
  }
  // Stryker disable next-line ConditionalExpression,EqualityOperator,ArrowFunction: a shortcut: when every family fits, keptGroups below keeps every integration too.
  if (!sizes.has(OTHER) && totals.every((n) => n <= cap)) return undefined;
  const order = bySize(sizes);
  const n = order.length;
  // kept[f][k]: series of the first k integrations; other[f][k]: fold series of the rest.
  // Stryker disable next-line ArithmeticOperator: shorter, kept[f][n] (all kept) is NaN; keptGroups reaches k = n only when the shortcut above failed, where all kept does not fit anyway (n >= 1 here).
  const kept = VITALS_FAMILIES.map(() => new Array<number>(n + 1).fill(0));
  for (let k = 0; k < n; k++) perKey.get(order[k]!)!.forEach((c, f) => (kept[f]![k + 1] = kept[f]![k]! + c));
  // Stryker disable next-line ArrayDeclaration,ArithmeticOperator: only other[f][n] (nothing folded) is left unset, read only where all kept does not fit (see above).
  const other = VITALS_FAMILIES.map(() => new Array<number>(n + 1).fill(0));
  // Stryker disable next-line ObjectLiteral: undefined flags are as false; an undefined denominator only lowers the fold's health count, which the funnel's bounds.
  const states: VitalsFoldState[] = groups.map(() => ({ enabled: false, disabled: false, denominator: 0 }));
  const current = [0, 0, 0, 0, 0, 0];
  // Stryker disable next-line EqualityOperator,ArithmeticOperator: other[f][0] (all folded) is never read: keptGroups asks for one kept at least; starting at n + 1 visits no integration and writes other[f][n] its fill value 0.
  for (let k = n - 1; k >= 0; k--) {
    groups.forEach((list, i) => {
      const group = list.get(order[k]!);
      if (!group) return;
      const st = states[i]!;
      const before = vitalsOtherOf(st);
      for (const r of group) {
        if (r.vitalsEnabled) {
          st.enabled = true;
          // Stryker disable next-line AssignmentOperator: a lower denominator only lowers the fold's health count, which the funnel's bounds.
          st.denominator += r.agentDeployedPossibleCompliant;
        } else st.disabled = true;
      }
      vitalsOtherOf(st).forEach((c, f) => (current[f]! += c - before[f]!));
    });
    current.forEach((c, f) => (other[f]![k] = c));
  }
  return keptGroups(order, VITALS_FAMILIES.length, (f, j) => kept[f]![j]!, (f, j) => other[f]![j]!, cap);
}

/** The Vitals samples of a run's lists, with the series cap (one set of integrations kept for all the families). */
function vitalsSamples(lists: readonly VitalsList[], add: Add<VitalsFamily>, cap: number, folded: Map<string, number>): void {
  const groups = lists.map(byIntegration);
  const keep = vitalsKept(groups, cap);
  // Original series left out, per family: folded into OTHER, or (info) dropped.
  const left = [0, 0, 0, 0, 0, 0];
  lists.forEach((list, i) => {
    const tag: Record<string, string> = list.tag === undefined ? {} : { tag: list.tag };
    const rest: VitalsRecord[] = [];
    for (const [integration, group] of groups[i]!) {
      if (keep && !keep.has(integration)) {
        rest.push(...group);
        vitalsSeriesOf(group).forEach((c, f) => (left[f]! += c));
      } else {
        for (const r of group) add('posture_vitals_integration_info', { integration, name: r.name, vitals_enabled: String(r.vitalsEnabled), ...tag }, 1);
        vitalsSumSamples(group, integration, tag, add);
      }
    }
    // With nothing folded (rest empty) it adds no series.
    vitalsSumSamples(rest, OTHER, tag, add);
  });
  VITALS_FAMILIES.forEach((family, f) => folded.set(family.name, left[f]!));
}

/**
 * The series of the records of one integration (usually one; several for the fold into OTHER or
 * keys written alike): counts summed; the health ratio computed from the summed counts;
 * funnel_consistent 1 only when every funnel is consistent; no info series.
 */
function vitalsSumSamples(records: readonly VitalsRecord[], integration: string, tag: Record<string, string>, add: Add<VitalsFamily>): void {
  const enabled = records.filter((r): r is Enabled => r.vitalsEnabled);
  const disabled = records.filter((r): r is Disabled => !r.vitalsEnabled);
  if (enabled.length > 0) {
    const sum = (field: keyof Enabled) => enabled.reduce((n, r) => n + (r[field] as number), 0);
    for (const st of STAGES) add('posture_vitals_eligible_devices', { integration, stage: st.stage, ...tag }, sum(st.eligible));
    for (const st of STAGES) add('posture_vitals_compliant_devices', { integration, stage: st.stage, ...tag }, sum(st.compliant));
    const denominator = sum('agentDeployedPossibleCompliant');
    if (denominator > 0) add('posture_vitals_health_ratio', { integration, ...tag }, sum('configurationCompliant') / denominator);
    add('posture_vitals_funnel_consistent', { integration, ...tag }, enabled.every(funnelConsistent) ? 1 : 0);
  }
  if (disabled.length > 0) {
    add('posture_vitals_active_agents', { integration, ...tag }, disabled.reduce((n, r) => n + r.activeAgents, 0));
  }
}

/** The Vitals source. */
export const vitals = {
  name: 'vitals',
  families: VITALS_FAMILIES,
  capped: VITALS_FAMILIES.map((f) => f.name),
  run: (ctx): Promise<readonly VitalsList[]> => runVitals(ctx),
  samples: vitalsSamples,
  invalidOf: (lists) => lists.reduce((n, l) => n + l.invalid, 0),
} as const satisfies SourceModule<'vitals', readonly VitalsList[], typeof VITALS_FAMILIES>;
