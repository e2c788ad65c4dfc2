import { readFile } from 'node:fs/promises';
import type { KeySource } from '../config/load.js';
import { ConfigError } from '../errors.js';

/** AWS client settings for the key stores (tests point `endpoint` at a loopback fake). */
export interface KeyStoreOptions {
  /** Passed to the SSM / Secrets Manager SDK clients (region, endpoint, credentials). */
  clientConfig?: Record<string, unknown>;
  readFile?: (path: string) => Promise<string>;
}

const cache = new Map<string, Promise<string>>();

function cacheKey(source: KeySource): string {
  switch (source.kind) {
    case 'value':
      return 'value';
    case 'file':
      return `file:${source.path}`;
    case 'ssm':
      return `ssm:${source.name}`;
    case 'secret':
      return `secret:${source.id}`;
  }
}

/**
 * Resolves the API key once and caches it for the life of the process (warm Lambda
 * invocations reuse it). SSM and Secrets Manager go through Powertools for AWS Lambda's
 * parameters utility; the AWS SDK it uses is loaded only when one of them is configured.
 */
export function resolveApiKey(source: KeySource, options: KeyStoreOptions = {}): Promise<string> {
  if (source.kind === 'value') return Promise.resolve(source.value);
  const key = cacheKey(source);
  let pending = cache.get(key);
  if (!pending) {
    pending = fetchKey(source, options).then((value) => {
      const trimmed = value.trim();
      if (trimmed === '') throw new ConfigError(settingOf(source), `${describe(source)} is empty: store the portal's API key there.`);
      return trimmed;
    });
    // A failed fetch is not cached, so the next invocation tries again.
    pending.catch(() => cache.delete(key));
    cache.set(key, pending);
  }
  return pending;
}

/** Forgets a cached key (after the portal rejected it, so a rotated key is fetched again). */
export function forgetApiKey(source: KeySource): void {
  cache.delete(cacheKey(source));
}

function settingOf(source: KeySource): string {
  return { value: 'POSTURE_API_KEY', file: 'POSTURE_API_KEY_FILE', ssm: 'POSTURE_API_KEY_SSM_PARAMETER', secret: 'POSTURE_API_KEY_SECRET_ID' }[source.kind];
}

function describe(source: KeySource): string {
  switch (source.kind) {
    case 'value':
      return 'POSTURE_API_KEY';
    case 'file':
      return `POSTURE_API_KEY_FILE (${source.path})`;
    case 'ssm':
      return `SSM parameter ${source.name}`;
    case 'secret':
      return `secret ${source.id}`;
  }
}

async function fetchKey(source: Exclude<KeySource, { kind: 'value' }>, options: KeyStoreOptions): Promise<string> {
  try {
    switch (source.kind) {
      case 'file':
        return await (options.readFile ?? ((p: string) => readFile(p, 'utf8')))(source.path);
      case 'ssm': {
        const { SSMProvider } = await import('@aws-lambda-powertools/parameters/ssm');
        const provider = new SSMProvider({ clientConfig: options.clientConfig ?? {} });
        const value = await provider.get(source.name, { decrypt: true, maxAge: Number.MAX_SAFE_INTEGER / 1000 });
        if (typeof value !== 'string') throw new Error('the parameter has no string value');
        return value;
      }
      case 'secret': {
        const { SecretsProvider } = await import('@aws-lambda-powertools/parameters/secrets');
        const provider = new SecretsProvider({ clientConfig: options.clientConfig ?? {} });
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
    // An errno code says it all (ENOENT, EACCES); otherwise the SDK's error name and first line.
    const why = code ?? `${root.name ?? 'error'}: ${root.message?.split('\n')[0] ?? ''}`;
    throw new ConfigError(settingOf(source), `cannot read the API key from ${describe(source)} (${why}): check it exists and the process may read it${source.kind === 'file' ? '' : ' (IAM: ssm:GetParameter / secretsmanager:GetSecretValue and kms:Decrypt)'}.`, { cause: err });
  }
}
