/**
 * A certificate this process does not trust, told apart from a network failure: Node's TLS
 * verification codes (OpenSSL's X509_V_ERR names) and the host-name check's. A trust failure is a
 * configuration error (the CA store, or the address), never an outage to retry: sending again meets
 * the same certificate.
 */

/** The codes Node gives a TLS connection whose peer certificate failed verification. */
const UNTRUSTED = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The code of an error, or of the first of an AggregateError's (happy eyeballs tries several addresses). */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const first = err instanceof AggregateError ? (err.errors[0] as { code?: unknown } | undefined)?.code : undefined;
  return typeof first === 'string' ? first : undefined;
}

/** The trust failure's code when `err` (or what caused it, as the AWS SDK and Powertools wrap it) is one, else undefined. */
export function untrustedCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = errorCode(e);
    if (code !== undefined && UNTRUSTED.has(code)) return code;
  }
  return undefined;
}

/**
 * Why a certificate with the trust failure `code` was refused, and what fixes it, as the middle of
 * one line that names the host before it: the CA file (`NODE_EXTRA_CA_CERTS`), the address, or the
 * certificate itself.
 */
export function untrustedReason(code: string): string {
  const ca = 'NODE_EXTRA_CA_CERTS=/path/to/ca.pem (the CA that signed it, PEM; read when the process starts)';
  switch (code) {
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
    case 'HOSTNAME_MISMATCH':
      return `its certificate does not name this host (${code}): check the host in the address; a TLS-inspecting proxy's certificate needs its CA in ${ca}`;
    case 'CERT_HAS_EXPIRED':
    case 'CERT_NOT_YET_VALID':
      return `its certificate is ${code === 'CERT_HAS_EXPIRED' ? 'expired' : 'not valid yet'} (${code}): the server (or a TLS-inspecting proxy) must renew it, or this machine's clock is wrong; NODE_EXTRA_CA_CERTS cannot fix a date`;
    default:
      return `its certificate is signed by a CA this process does not trust (${code}): give that CA in ${ca}`;
  }
}
