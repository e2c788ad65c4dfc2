import { ConfigError } from '../errors.js';
import { envName, SETTING_BY_KEY, SINK_NAMES, type SettingKey } from './settings.js';
import type { Problems } from './problems.js';
import type { Config, KeySource } from './types.js';
import { defaultValue, type Get } from './values.js';

/** An HTTP header name (RFC 9110 token). */
export const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The settings of one remote-write credential: the plain value, its SSM parameter, its secret. */
type CredentialKeys = readonly [value: SettingKey, ssm: SettingKey, secret: SettingKey];
const BEARER_TOKEN_KEYS: CredentialKeys = ['remote_write_bearer_token', 'remote_write_bearer_token_ssm_parameter', 'remote_write_bearer_token_secret_id'];
const PASSWORD_KEYS: CredentialKeys = ['remote_write_password', 'remote_write_password_ssm_parameter', 'remote_write_password_secret_id'];
const PUSHGATEWAY_PASSWORD_KEYS: CredentialKeys = ['pushgateway_password', 'pushgateway_password_ssm_parameter', 'pushgateway_password_secret_id'];

/** The environment name of the setting a credential came from (the plain one when unset). */
function credentialSetting(keys: CredentialKeys, source: KeySource | undefined): string {
  const key = source?.kind === 'ssm' ? keys[1] : source?.kind === 'secret' ? keys[2] : keys[0];
  return envName(SETTING_BY_KEY[key]);
}

/**
 * One remote-write credential's source. More than one is a problem; the first is still returned,
 * so the auth rules below do not report the same mistake twice.
 */
function credentialSource(get: Get, problems: Problems, what: string, keys: CredentialKeys): KeySource | undefined {
  const sources: KeySource[] = [];
  const [value, ssm, secretId] = keys.map((k) => get(k) as string | undefined);
  if (value !== undefined) sources.push({ kind: 'value', value });
  if (ssm !== undefined) sources.push({ kind: 'ssm', name: ssm });
  if (secretId !== undefined) sources.push({ kind: 'secret', id: secretId });
  if (sources.length > 1) {
    const names = keys.map((k) => envName(SETTING_BY_KEY[k]));
    problems.add(names[0]!, `more than one ${what} source is set (${sources.map((k) => k.kind).join(', ')}): keep exactly one of ${names.join(', ')}.`);
  }
  return sources[0];
}

/** The push settings (sinks, receivers, credentials, headers), each problem reported. */
export function buildPush(get: Get, problems: Problems): Config['push'] {
  const sinks = get('push') ?? [];
  const push = {
    sinks,
    remoteWriteUrl: get('remote_write_url'),
    remoteWriteSigv4Region: get('remote_write_sigv4_region'),
    remoteWriteBearerToken: credentialSource(get, problems, 'remote-write bearer token', BEARER_TOKEN_KEYS),
    remoteWriteUsername: get('remote_write_username'),
    remoteWritePassword: credentialSource(get, problems, 'remote-write password', PASSWORD_KEYS),
    remoteWriteHeaders: parseHeaders(get('remote_write_headers'), problems),
    pushgatewayUrl: get('pushgateway_url'),
    pushgatewayJob: get('pushgateway_job') ?? defaultValue('pushgateway_job'),
    pushgatewayUsername: get('pushgateway_username'),
    pushgatewayPassword: credentialSource(get, problems, 'Pushgateway password', PUSHGATEWAY_PASSWORD_KEYS),
    timeoutSeconds: get('push_timeout_seconds'),
    maxRetries: get('push_max_retries') ?? defaultValue('push_max_retries'),
    concurrency: get('push_concurrency') ?? defaultValue('push_concurrency'),
  };
  const checkUrl = (setting: string, value: string | undefined) => {
    if (value === undefined) return;
    try {
      const u = new URL(value);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('scheme');
    } catch {
      problems.add(setting, `${setting}=${JSON.stringify(value)} is not an http(s) URL: give the receiver's full URL.`);
    }
  };
  checkUrl('POSTURE_REMOTE_WRITE_URL', push.remoteWriteUrl);
  checkUrl('POSTURE_PUSHGATEWAY_URL', push.pushgatewayUrl);
  if (sinks.includes('remote_write') && !push.remoteWriteUrl) problems.add('POSTURE_REMOTE_WRITE_URL', 'POSTURE_PUSH includes remote_write but POSTURE_REMOTE_WRITE_URL is not set: give the receiver\'s remote-write URL.');
  if (sinks.includes('pushgateway') && !push.pushgatewayUrl) problems.add('POSTURE_PUSHGATEWAY_URL', 'POSTURE_PUSH includes pushgateway but POSTURE_PUSHGATEWAY_URL is not set: give the Pushgateway\'s base URL.');
  // The messages name the setting each credential came from (the plain one when it is unset).
  const bearerSetting = credentialSetting(BEARER_TOKEN_KEYS, push.remoteWriteBearerToken);
  const passwordSetting = credentialSetting(PASSWORD_KEYS, push.remoteWritePassword);
  const auths = [push.remoteWriteSigv4Region && 'sigv4', push.remoteWriteBearerToken && 'bearer', (push.remoteWriteUsername || push.remoteWritePassword) && 'basic'].filter(Boolean);
  if (auths.length > 1) problems.add('POSTURE_REMOTE_WRITE_SIGV4_REGION', `remote write has more than one auth method set (${auths.join(', ')}): keep one of POSTURE_REMOTE_WRITE_SIGV4_REGION, ${bearerSetting}, POSTURE_REMOTE_WRITE_USERNAME+${passwordSetting.slice('POSTURE_REMOTE_WRITE_'.length)}.`);
  if (Boolean(push.remoteWriteUsername) !== Boolean(push.remoteWritePassword)) problems.add('POSTURE_REMOTE_WRITE_USERNAME', `POSTURE_REMOTE_WRITE_USERNAME and ${passwordSetting} go together: set both for basic auth.`);
  if (Boolean(push.pushgatewayUsername) !== Boolean(push.pushgatewayPassword)) {
    const pushgatewayPasswordSetting = credentialSetting(PUSHGATEWAY_PASSWORD_KEYS, push.pushgatewayPassword);
    problems.add('POSTURE_PUSHGATEWAY_USERNAME', `POSTURE_PUSHGATEWAY_USERNAME and ${pushgatewayPasswordSetting} go together: set both for basic auth.`);
  }
  return push;
}

/**
 * The Lambda's own rule beside the settings' (check-config --lambda applies it too, and so the
 * packaging): it pushes what it collects, so without a sink every invocation would be for nothing.
 */
export function pushRequiredProblem(push: Config['push']): ConfigError | undefined {
  return push.sinks.length === 0 ? new ConfigError('POSTURE_PUSH', `POSTURE_PUSH is empty: the Lambda pushes its metrics, set it to any of ${SINK_NAMES.join(', ')}.`) : undefined;
}

/** Headers the remote-write sink sets itself, or that the auth settings own. */
const RESERVED_HEADERS: ReadonlySet<string> = new Set(['authorization', 'content-type', 'content-encoding', 'content-length', 'host', 'user-agent', 'x-prometheus-remote-write-version']);

/**
 * POSTURE_REMOTE_WRITE_HEADERS: `Name=value,Name2=value2`, values percent-decoded (as in
 * OTEL_EXPORTER_OTLP_HEADERS). Problems name the header, never its value (it may be a credential).
 */
function parseHeaders(raw: string | undefined, problems: Problems): Record<string, string> {
  const headers: Record<string, string> = {};
  if (raw === undefined) return headers;
  const setting = 'POSTURE_REMOTE_WRITE_HEADERS';
  raw.split(',').forEach((entry, i) => {
    if (entry.trim() === '') return;
    const eq = entry.indexOf('=');
    const name = (eq < 0 ? entry : entry.slice(0, eq)).trim();
    if (eq < 0 || !HEADER_NAME.test(name)) {
      problems.add(setting, `${setting}: entry ${i + 1} is not Name=value with a valid header name: give e.g. X-Scope-OrgID=tenant-1,Name2=value2.`);
      return;
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      problems.add(setting, `${setting}: the ${name} header is set by the exporter itself${name.toLowerCase() === 'authorization' ? ' (use the remote-write bearer token, basic-auth or SigV4 settings)' : ''}: remove it.`);
      return;
    }
    if (Object.keys(headers).some((k) => k.toLowerCase() === name.toLowerCase())) {
      problems.add(setting, `${setting}: the ${name} header is given more than once: keep one.`);
      return;
    }
    try {
      headers[name] = decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      problems.add(setting, `${setting}: the value of ${name} has an invalid percent-escape: write a literal % as %25.`);
    }
  });
  return headers;
}
