/**
 * What a failed connection's error says: its code (ECONNREFUSED, a certificate's, undici's).
 */

/** The code of an error, or of the first of an AggregateError's (happy eyeballs tries several addresses). */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const first = err instanceof AggregateError ? (err.errors[0] as { code?: unknown } | undefined)?.code : undefined;
  return typeof first === 'string' ? first : undefined;
}
