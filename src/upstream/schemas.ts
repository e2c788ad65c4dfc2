import '../core/zod.js';
import * as z from 'zod/mini';
import { OversizedValue } from './limits.js';

/**
 * Response record schemas: lenient to unknown fields (the portal may add some), strict on the
 * fields the exporter uses. A record that fails is counted and skipped by the collector.
 */

const count = z.number().check(z.int(), z.nonnegative());
/**
 * A used string field. Its length limit is the reader's (src/upstream/limits.ts, in bytes as
 * received, the same whatever the chunking): a longer string arrives as an OversizedValue, which
 * is not a string, so the record is invalid; a kept one is never longer, so no count here.
 */
const text = z.string();

/** A Vitals record (spec 2.7); the funnel numbers are required when `vitalsEnabled` is true. */
export const VitalsRecordSchema = z.discriminatedUnion('vitalsEnabled', [
  z.looseObject({
    key: text.check(z.minLength(1)),
    name: text,
    vitalsEnabled: z.literal(true),
    agentDeployedPossibleCompliant: count,
    agentDeployedCompliant: count,
    agentFunctioningPossibleCompliant: count,
    agentFunctioningCompliant: count,
    configurationPossibleCompliant: count,
    configurationCompliant: count,
  }),
  z.looseObject({
    key: text.check(z.minLength(1)),
    name: text,
    vitalsEnabled: z.literal(false),
    activeAgents: count,
  }),
]);
export type VitalsRecord = z.infer<typeof VitalsRecordSchema>;

/** The alert fields the folds read (spec 2.6), with their JSON types: the one list the type and the check come from. */
const ALERT_FIELDS = [
  ['state', 'string'],
  ['product', 'string'],
  ['status', 'string'],
  ['ownerName', 'string'],
  ['timestamp', 'string'],
  ['resolved', 'boolean'],
  ['acknowledged', 'boolean'],
  ['inactiveUntil', 'string'],
] as const;

/** An alert record as the folds read it (other fields are not kept). */
export type AlertRecord = { readonly [F in (typeof ALERT_FIELDS)[number] as F[0]]: F[1] extends 'string' ? string : boolean };

/** The JSON kind of a value for a log line (never the value itself): `null`, `array`, `string`, a value too large to keep… */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (v instanceof OversizedValue) return v.describe();
  return typeof v;
}

/**
 * The fields of ALERT_FIELDS checked by hand: it runs once per alert, and a generic validator copying
 * every unknown field costs more than reading the whole record. Returns the record typed, or why
 * it is invalid in describeIssues' words (at most three fields).
 */
export function checkAlertRecord(raw: unknown): AlertRecord | string {
  if (!isRecord(raw)) return recordProblems(raw, ALERT_FIELDS);
  const r = raw;
  // The usual case, every field of ALERT_FIELDS of its type, read by name: a read by a computed
  // name (r[field] in a loop) is a dictionary lookup each, which made this check half the fold's CPU.
  if (
    typeof r.state === 'string' &&
    typeof r.product === 'string' &&
    typeof r.status === 'string' &&
    typeof r.ownerName === 'string' &&
    typeof r.timestamp === 'string' &&
    typeof r.resolved === 'boolean' &&
    typeof r.acknowledged === 'boolean' &&
    typeof r.inactiveUntil === 'string'
  ) {
    return r as AlertRecord;
  }
  return recordProblems(raw, ALERT_FIELDS);
}

/** Whether a value read from JSON is an object of fields: not null, an array or a value too large to keep. */
export function isRecord(raw: unknown): raw is Readonly<Record<string, unknown>> {
  return raw !== null && typeof raw === 'object' && !Array.isArray(raw) && !(raw instanceof OversizedValue);
}

/**
 * Why a value is not a record of `fields` (each a name and its JSON type), in describeIssues' words:
 * not an object, or its first three fields missing or of another type. The slow half of a check made
 * by hand (checkAlertRecord), once the usual case has failed.
 */
export function recordProblems(raw: unknown, fields: ReadonlyArray<readonly [string, 'string' | 'boolean']>): string {
  if (!isRecord(raw)) return `(record): expected object, received ${kindOf(raw)}`;
  const problems: string[] = [];
  for (const [field, type] of fields) {
    const v = raw[field];
    if (problems.length === 3) break;
    if (typeof v !== type) problems.push(`${field}: expected ${type}, received ${kindOf(v)}`);
  }
  return problems.join('; ');
}

/** Describes why a record failed, in a few words, for the log (never the whole record); `raw` lets it name a value too large to keep. */
export function describeIssues(error: z.core.$ZodError, raw?: unknown): string {
  if (raw instanceof OversizedValue) return `(record): ${raw.describe()}`;
  return error.issues
    .slice(0, 3)
    .map((i) => {
      const at = `${i.path.join('.') || '(record)'}`;
      const value = valueAt(raw, i.path);
      return value instanceof OversizedValue ? `${at}: ${value.describe()}` : `${at}: ${i.message}`;
    })
    .join('; ');
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v = raw;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}
