/**
 * Checks of the fields of a record that may hold personal data (portal accounts, directory users):
 * each problem names the field and the kind of value found, never the value.
 */
import { OversizedValue } from '../upstream/limits.js';
import { kindOf } from '../upstream/schemas.js';

/** A record as an object of fields, or why it is not one. */
export function fieldsOf(raw: unknown): Readonly<Record<string, unknown>> | string {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || raw instanceof OversizedValue) return `(record): expected object, received ${kindOf(raw)}`;
  return raw as Record<string, unknown>;
}

/** A word the record must carry: a string with something besides whitespace. */
export function wordProblem(r: Readonly<Record<string, unknown>>, field: string): string | undefined {
  const v = r[field];
  if (typeof v !== 'string') return `${field}: expected string, received ${v === undefined ? 'nothing' : kindOf(v)}`;
  return v.trim() === '' ? `${field}: empty` : undefined;
}

/** A field of JSON kind `kind`: `object` a mapping (not null, not an array). */
export function typeProblem(r: Readonly<Record<string, unknown>>, field: string, kind: 'boolean' | 'string' | 'object' | 'array'): string | undefined {
  const v = r[field];
  const found = v === undefined ? 'nothing' : kindOf(v);
  return found === kind ? undefined : `${field}: expected ${kind}, received ${found}`;
}

/** The problems found, at most three, as one reason; undefined when there is none. */
export function reasonOf(problems: ReadonlyArray<string | undefined>): string | undefined {
  const found = problems.filter((p): p is string => p !== undefined);
  return found.length ? found.slice(0, 3).join('; ') : undefined;
}
