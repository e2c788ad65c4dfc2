/**
 * Posture objectives (SLOs over the Vitals funnel): the config file's `objectives` list, checked
 * once with the other settings. `posture-exporter rules` turns them into Prometheus rules.
 */
import '../core/zod.js';
import * as z from 'zod/mini';
import type { Problems } from './problems.js';
import { re2Refusal } from './re2.js';

/** The Vitals funnel stages an objective can be set on (the `stage` label of the funnel families). */
export const OBJECTIVE_STAGES = ['deployment', 'function', 'configuration'] as const;

/** One objective: `target` of the devices eligible at `stage` are compliant there, over `window`. */
export interface Objective {
  /** The `objective` label: `[a-z0-9-]+`, unique. */
  readonly name: string;
  /** A regular expression (RE2, as Prometheus reads it) matched against the whole integration key; undefined: every integration. */
  readonly integration?: string;
  readonly stage: (typeof OBJECTIVE_STAGES)[number];
  /** 0 < target < 1: the share of eligible devices that should be compliant. */
  readonly target: number;
  /** A Prometheus duration, as written (it names the `rate<window>` recording). */
  readonly window: string;
}

/** The config file key and its meaning, for the README's configuration table (config file only). */
export const OBJECTIVES_SETTING = {
  key: 'objectives',
  default: 'one: `configuration`, configuration stage of every integration, 0.95 over 28d',
  doc: 'Config file only: a list of posture objectives (SLOs over the Vitals funnel), each with `name` (`[a-z0-9-]+`, unique), `integration` (a regular expression in Prometheus\'s syntax, RE2, matched against the whole integration key; one Prometheus would refuse is refused with its reason; default every integration), `stage` (`deployment`, `function` or `configuration`; default `configuration`), `target` (0 < target < 1) and `window` (a Prometheus duration, at least 1d; default `28d`). `posture-exporter rules` writes their Prometheus rules; `check-config` prints each with its error budget and its burn-rate windows and thresholds. See [docs/objectives.md](docs/objectives.md).',
} as const;

const DEFAULT_STAGE = 'configuration';
const DEFAULT_WINDOW = '28d';
/** The objectives when the config file has no `objectives` key (what infra/prometheus/rules/posture-objectives.rules.yml is generated from). */
export const DEFAULT_OBJECTIVES: readonly Objective[] = [{ name: 'configuration', stage: DEFAULT_STAGE, target: 0.95, window: DEFAULT_WINDOW }];

const NAME = /^[a-z0-9-]+$/;
/** A Prometheus duration (model.ParseDuration): units from largest to smallest, each at most once. */
const DURATION = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;
const UNIT_MS = [365 * 86_400_000, 7 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1000, 1] as const;
const DAY_MS = 86_400_000;

/** Milliseconds of a Prometheus duration (`28d`, `1w`, `1h30m`); undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  const m = text === '' ? null : DURATION.exec(text);
  if (!m) return undefined;
  return UNIT_MS.reduce((ms, unit, i) => ms + Number(m[i + 1] ?? 0) * unit, 0);
}

/** One entry of the list: known keys only, each value checked. */
const Entry = z.strictObject({
  name: z.string().check(z.regex(NAME)),
  integration: z.optional(z.string().check(z.minLength(1), z.refine((p) => re2Refusal(p) === undefined))),
  stage: z.optional(z.enum(OBJECTIVE_STAGES)),
  target: z.number().check(z.gt(0), z.lt(1)),
  window: z.optional(z.string().check(z.refine((w) => (durationMs(w) ?? 0) >= DAY_MS))),
});
type Field = keyof z.infer<typeof Entry>;

/** The fix each field's message gives. */
const FIX: Readonly<Record<Field, string>> = {
  name: 'give a name of lower-case letters, digits and hyphens (it becomes the `objective` label)',
  integration: 'give a regular expression in Prometheus\'s syntax (RE2, as Go reads it) matched against the whole integration key (e.g. "crowdstrike|sentinelone"), or leave it out for every integration',
  stage: `use one of ${OBJECTIVE_STAGES.join(', ')} (default ${DEFAULT_STAGE})`,
  target: 'give a number between 0 and 1, both excluded (0.95 for 95 % of devices)',
  window: `give a Prometheus duration of at least 1d, such as 7d, 28d or 4w (default ${DEFAULT_WINDOW})`,
};
const FIELDS = Object.keys(FIX) as Field[];

function show(value: unknown): string {
  const s = JSON.stringify(value) ?? String(value);
  return s.length > 80 ? s.slice(0, 77) + '...' : s;
}

/**
 * The `objectives` list of a config file, checked: one problem per invalid value, naming
 * `objectives[i].field` and the fix. Undefined (no `objectives` key): the default objective.
 */
export function parseObjectives(value: unknown, where: string, problems: Problems): readonly Objective[] {
  if (value === undefined) return DEFAULT_OBJECTIVES;
  const bad = (at: string, message: string) => problems.add('objectives', `${where}: ${at}${message}`);
  if (!Array.isArray(value)) {
    bad('objectives', ' must be a list of objectives (each a mapping with name, target and optionally integration, stage, window), or [] for none.');
    return [];
  }
  const out: Objective[] = [];
  const names = new Set<string>();
  value.forEach((raw: unknown, i) => {
    const at = `objectives[${i}]`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      bad(at, ` must be a mapping with name, target and optionally integration, stage, window (got ${show(raw)}).`);
      return;
    }
    const parsed = Entry.safeParse(raw);
    if (!parsed.success) {
      const fields = new Set<Field>();
      for (const issue of parsed.error.issues) {
        if (issue.code === 'unrecognized_keys') for (const key of issue.keys) bad(at, ` has an unknown key \`${key}\`: use ${FIELDS.join(', ')}.`);
        else fields.add(issue.path[0] as Field);
      }
      // One line per field, however many of its checks failed.
      for (const f of FIELDS.filter((f) => fields.has(f))) {
        const v = (raw as Record<string, unknown>)[f];
        // A pattern Prometheus would refuse: its reason, as Prometheus would give it when loading the rules.
        const refused = f === 'integration' && typeof v === 'string' && v !== '' ? re2Refusal(v) : undefined;
        bad(`${at}.${f}`, `${v === undefined ? ' is missing' : `=${show(v)} is not valid${refused === undefined ? '' : ` (Prometheus refuses it: ${refused})`}`}: ${FIX[f]}.`);
      }
      return;
    }
    const { name, integration, stage = DEFAULT_STAGE, target, window = DEFAULT_WINDOW } = parsed.data;
    if (names.has(name)) {
      bad(`${at}.name`, `=${show(name)} repeats an earlier objective's name: give each objective a distinct name.`);
      return;
    }
    names.add(name);
    out.push({ name, ...(integration !== undefined ? { integration } : {}), stage, target, window });
  });
  return out;
}

/** A share as a percentage without float noise (0.05 → "5"). */
export function percent(share: number): string {
  return String(Number((share * 100).toPrecision(10)));
}

/** The error budget: the share of eligible devices that may be non-compliant (1 - target), without float noise. */
export function errorBudget(o: Pick<Objective, 'target'>): number {
  return Number((1 - o.target).toPrecision(12));
}

/** One line for `check-config`: the objective and its error budget ("5 % of devices over 28d"). */
export function describeObjective(o: Objective): string {
  const scope = o.integration === undefined ? 'every integration' : `integrations matching /${o.integration}/`;
  return `objective ${o.name}: ${o.stage} stage of ${scope}, target ${percent(o.target)} %: error budget ${percent(errorBudget(o))} % of devices over ${o.window}`;
}
