import { readFile } from 'node:fs/promises';
import type { KeySource } from './load.js';
import { ConfigError, UntrustedCertificateError } from '../errors.js';
import { awsRequestHandler } from '../net/agents.js';
import { untrustedCode, untrustedReason } from '../net/trust.js';

/** AWS client settings for the key stores (tests point `endpoint` at a loopback fake). */
export interface KeyStoreOptions {
  /** Passed to the SSM / Secrets Manager SDK clients (region, endpoint, credentials); the request handler is the process's (src/net/agents.ts) unless given. */
  clientConfig?: Record<string, unknown>;
  readFile?: (path: string) => Promise<string>;
}

/** Which secret a source holds, so errors name it and the setting it came from. */
export interface SecretKind {
  /** How messages name it: `the API key`. */
  readonly noun: string;
  /** What belongs in the store: `the portal's API key`. */
  readonly stored: string;
  /** The plain setting's environment name; its sources append `_FILE`, `_SSM_PARAMETER`, `_SECRET_ID`. */
  readonly setting: string;
}

/** The portal's API key (what `resolveSecret` resolves unless told otherwise). */
const API_KEY: SecretKind = { noun: 'the API key', stored: "the portal's API key", setting: 'POSTURE_API_KEY' };
/** The remote-write bearer token. */
export const REMOTE_WRITE_BEARER_TOKEN: SecretKind = { noun: 'the remote-write bearer token', stored: 'the remote-write bearer token', setting: 'POSTURE_REMOTE_WRITE_BEARER_TOKEN' };
/** The remote-write basic-auth password. */
export const REMOTE_WRITE_PASSWORD: SecretKind = { noun: 'the remote-write password', stored: 'the remote-write password', setting: 'POSTURE_REMOTE_WRITE_PASSWORD' };
/** The Pushgateway basic-auth password. */
export const PUSHGATEWAY_PASSWORD: SecretKind = { noun: 'the Pushgateway password', stored: 'the Pushgateway password', setting: 'POSTURE_PUSHGATEWAY_PASSWORD' };

const cache = new Map<string, Promise<string>>();

function cacheKey(source: KeySource, kind: SecretKind): string {
  // Per secret kind too, so a failure names the setting of whoever asked.
  switch (source.kind) {
    case 'value':
      return `${kind.setting}:value`;
    case 'file':
      return `${kind.setting}:file:${source.path}`;
    case 'ssm':
      return `${kind.setting}:ssm:${source.name}`;
    case 'secret':
      return `${kind.setting}:secret:${source.id}`;
  }
}

/**
 * Resolves a secret (by default the API key) once and caches it for the life of the process (warm
 * Lambda invocations reuse it). SSM and Secrets Manager go through Powertools for AWS Lambda's
 * parameters utility; the AWS SDK it uses is loaded only when one of them is configured.
 */
export function resolveSecret(source: KeySource, options: KeyStoreOptions = {}, kind: SecretKind = API_KEY): Promise<string> {
  if (source.kind === 'value') return Promise.resolve(source.value);
  const key = cacheKey(source, kind);
  let pending = cache.get(key);
  if (!pending) {
    pending = fetchKey(source, options, kind).then((value) => {
      const trimmed = value.trim();
      if (trimmed === '') throw new ConfigError(settingOf(source, kind), `${describe(source, kind)} is empty: store ${kind.stored} there.`);
      return trimmed;
    });
    // A failed fetch is not cached, so the next invocation tries again.
    pending.catch(() => cache.delete(key));
    cache.set(key, pending);
  }
  return pending;
}

/** Forgets a cached secret (after it was rejected, so a rotated one is fetched again). */
export function forgetSecret(source: KeySource, kind: SecretKind = API_KEY): void {
  cache.delete(cacheKey(source, kind));
}

function settingOf(source: KeySource, kind: SecretKind): string {
  // A key file named in a config file (a portal's api_key_file) or by a flag is named as it was set.
  if (source.kind === 'file' && source.setting !== undefined) return source.setting;
  return kind.setting + { value: '', file: '_FILE', ssm: '_SSM_PARAMETER', secret: '_SECRET_ID' }[source.kind];
}

function describe(source: KeySource, kind: SecretKind): string {
  switch (source.kind) {
    case 'value':
      return kind.setting;
    case 'file':
      return `${settingOf(source, kind)} (${source.path})`;
    case 'ssm':
      return `SSM parameter ${source.name}`;
    case 'secret':
      return `secret ${source.id}`;
  }
}

async function fetchKey(source: Exclude<KeySource, { kind: 'value' }>, options: KeyStoreOptions, kind: SecretKind): Promise<string> {
  try {
    switch (source.kind) {
      case 'file':
        return await (options.readFile ?? ((p: string) => readFile(p, 'utf8')))(source.path);
      case 'ssm': {
        const { SSMProvider } = await import('@aws-lambda-powertools/parameters/ssm');
        const provider = new SSMProvider({ clientConfig: { requestHandler: awsRequestHandler(), ...options.clientConfig } });
        const value = await provider.get(source.name, { decrypt: true, maxAge: Number.MAX_SAFE_INTEGER / 1000 });
        if (typeof value !== 'string') throw new Error('the parameter has no string value');
        return value;
      }
      case 'secret': {
        const { SecretsProvider } = await import('@aws-lambda-powertools/parameters/secrets');
        const provider = new SecretsProvider({ clientConfig: { requestHandler: awsRequestHandler(), ...options.clientConfig } });
        const value = await provider.get(source.id, { maxAge: Number.MAX_SAFE_INTEGER / 1000 });
        if (typeof value !== 'string') throw new Error('the secret has no string value');
        return value;
      }
    }
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    // Powertools wraps the SDK's error in a GetParameterError; the SDK's name (ParameterNotFound,
    // AccessDeniedException, ...) is the one that tells the operator what to fix.
    const root = err instanceof Error && err.cause instanceof Error ? err.cause : (err as Error);
    // An errno code says it all (ENOENT, EACCES); a certificate not trusted (a TLS-inspecting proxy) says how to trust it; otherwise the SDK's error name and first line.
    const untrusted = untrustedCode(err);
    if (untrusted !== undefined) {
      // A configuration error like any certificate not trusted: the run ends with exit 2, the Lambda's invocation fails.
      throw new UntrustedCertificateError('AWS', untrusted, `cannot read ${kind.noun} from ${describe(source, kind)} (the TLS connection to AWS failed: ${untrustedReason(untrusted)}).`, { cause: err });
    }
    const why = code ?? `${root.name ?? 'error'}: ${root.message?.split('\n')[0] ?? ''}`;
    throw new ConfigError(settingOf(source, kind), `cannot read ${kind.noun} from ${describe(source, kind)} (${why}): check it exists and the process may read it${source.kind === 'file' ? '' : ' (IAM: ssm:GetParameter / secretsmanager:GetSecretValue and kms:Decrypt)'}.`, { cause: err });
  }
}
