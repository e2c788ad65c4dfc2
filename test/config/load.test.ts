import { describe, expect, it } from 'vitest';
import { loadConfig, type ConfigSources } from '../../src/config/load.js';
import { checkServeConfig, planOf, stalenessMs } from '../../src/schedule/fit.js';
import { ConfigError, ConfigErrors } from '../../src/errors.js';
import { anyThrown } from '../support/errors.js';

const base = { POSTURE_BASE_URL: 'https://acme.example.com/public-api/v1', POSTURE_API_KEY: 'k-secret-value-123' };

function problems(sources: ConfigSources): string[] {
  const err = anyThrown(() => loadConfig(sources));
  expect(err).toBeInstanceOf(ConfigErrors);
  return (err as ConfigErrors).problems.map((p) => p.message);
}

/** Every invalid combination of the remote-write credential sources, with the one line each gives. */
function remoteWriteCredentialCases(): Array<[string, Record<string, string>, string]> {
  const TOKEN = 'POSTURE_REMOTE_WRITE_BEARER_TOKEN';
  const PASSWORD = 'POSTURE_REMOTE_WRITE_PASSWORD';
  const values: Record<string, string> = { value: 'rw-plain-secret-9876', ssm: '/posture/rw-credential', secret: 'posture/rw-credential' };
  const suffix: Record<string, string> = { value: '', ssm: '_SSM_PARAMETER', secret: '_SECRET_ID' };
  const cases: Array<[string, Record<string, string>, string]> = [];
  for (const [what, setting, extra] of [
    ['bearer token', TOKEN, {}],
    // With a username, so only the duplicate source is wrong.
    ['password', PASSWORD, { POSTURE_REMOTE_WRITE_USERNAME: '1234567' }],
  ] as const) {
    for (const kinds of [['value', 'ssm'], ['value', 'secret'], ['ssm', 'secret'], ['value', 'ssm', 'secret']]) {
      const env = { ...base, ...extra, ...Object.fromEntries(kinds.map((k) => [setting + suffix[k], values[k]!])) };
      cases.push([
        `a remote-write ${what} from ${kinds.join(' and ')}`,
        env,
        `more than one remote-write ${what} source is set (${kinds.join(', ')}): keep exactly one of ${setting}, ${setting}_SSM_PARAMETER, ${setting}_SECRET_ID.`,
      ]);
    }
  }
  cases.push(
    [
      'a remote-write password in the config file and in the environment',
      { ...base, POSTURE_REMOTE_WRITE_USERNAME: '1234567', POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER: '/posture/rw', POSTURE_CONFIG: JSON.stringify({ remote_write_password_secret_id: 'posture/rw' }) },
      `more than one remote-write password source is set (ssm, secret): keep exactly one of ${PASSWORD}, ${PASSWORD}_SSM_PARAMETER, ${PASSWORD}_SECRET_ID.`,
    ],
    [
      'SigV4 and a bearer token from SSM',
      { ...base, POSTURE_REMOTE_WRITE_SIGV4_REGION: 'eu-west-1', POSTURE_REMOTE_WRITE_BEARER_TOKEN_SSM_PARAMETER: '/posture/rw-token' },
      'remote write has more than one auth method set (sigv4, bearer): keep one of POSTURE_REMOTE_WRITE_SIGV4_REGION, POSTURE_REMOTE_WRITE_BEARER_TOKEN_SSM_PARAMETER, POSTURE_REMOTE_WRITE_USERNAME+PASSWORD.',
    ],
    [
      'a bearer token from Secrets Manager and basic auth with the password from SSM',
      { ...base, POSTURE_REMOTE_WRITE_BEARER_TOKEN_SECRET_ID: 'posture/rw-token', POSTURE_REMOTE_WRITE_USERNAME: '1234567', POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER: '/posture/rw-password' },
      'remote write has more than one auth method set (bearer, basic): keep one of POSTURE_REMOTE_WRITE_SIGV4_REGION, POSTURE_REMOTE_WRITE_BEARER_TOKEN_SECRET_ID, POSTURE_REMOTE_WRITE_USERNAME+PASSWORD_SSM_PARAMETER.',
    ],
    [
      'SigV4 and a password from Secrets Manager',
      { ...base, POSTURE_REMOTE_WRITE_SIGV4_REGION: 'eu-west-1', POSTURE_REMOTE_WRITE_USERNAME: '1234567', POSTURE_REMOTE_WRITE_PASSWORD_SECRET_ID: 'posture/rw-password' },
      'remote write has more than one auth method set (sigv4, basic): keep one of POSTURE_REMOTE_WRITE_SIGV4_REGION, POSTURE_REMOTE_WRITE_BEARER_TOKEN, POSTURE_REMOTE_WRITE_USERNAME+PASSWORD_SECRET_ID.',
    ],
    ['a password from SSM without a username', { ...base, POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER: '/posture/rw-password' }, 'POSTURE_REMOTE_WRITE_USERNAME and POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER go together: set both for basic auth.'],
    ['a password from Secrets Manager without a username', { ...base, POSTURE_REMOTE_WRITE_PASSWORD_SECRET_ID: 'posture/rw-password' }, 'POSTURE_REMOTE_WRITE_USERNAME and POSTURE_REMOTE_WRITE_PASSWORD_SECRET_ID go together: set both for basic auth.'],
  );
  return cases;
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({ env: base });
    expect(c.portals).toEqual([
      { name: 'acme.example.com', baseUrl: 'https://acme.example.com/public-api/v1', key: { kind: 'value', value: 'k-secret-value-123' }, apiKeyHeader: 'X-Service-ApiKey', requestsPerMinute: 5, pageSize: 500, vitalsTags: [], intervals: { vitals: 300, alerts: 300, devices: 300 }, maxSeriesPerFamily: 1000, alertSlas: { red: 86_400, amber: 604_800, green: 2_592_000 },
        intervalSettings: { vitals: { explicit: false, kind: 'env', name: 'POSTURE_VITALS_INTERVAL_SECONDS' }, alerts: { explicit: false, kind: 'env', name: 'POSTURE_ALERTS_INTERVAL_SECONDS' }, devices: { explicit: false, kind: 'env', name: 'POSTURE_DEVICES_INTERVAL_SECONDS' } },
        requestsPerMinuteSetting: { kind: 'env', name: 'POSTURE_REQUESTS_PER_MINUTE' }, vitalsTagsSetting: { kind: 'env', name: 'POSTURE_VITALS_TAGS' }, slowIntervals: { resolved: 3600, access: 3600, directory: 86400 },
        slowIntervalSettings: {
          resolved: { explicit: false, kind: 'env', name: 'POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS' },
          access: { explicit: false, kind: 'env', name: 'POSTURE_ACCESS_INTERVAL_SECONDS' },
          directory: { explicit: false, kind: 'env', name: 'POSTURE_DIRECTORY_INTERVAL_SECONDS' },
        },
        directoryInactiveDays: [45, 90] },
    ]);
    expect(c.cycleTimeoutSeconds).toBeUndefined();
    // The resolved-alerts pass and the access settings: two of their 3600 s; the directory two of its 86400 s.
    expect(stalenessMs(c, c.portals[0]!)).toEqual({ vitals: 600_000, alerts: 600_000, devices: 600_000, resolved: 7_200_000, access: 7_200_000, directory: 172_800_000 });
    expect(c.portals[0]!.intervals).toEqual({ vitals: 300, alerts: 300, devices: 300 });
    expect(c).toMatchObject({ intervalSeconds: 300, maxRetryAfterSeconds: 120, maxRetries: 3, listen: { host: '0.0.0.0', port: 9877 }, logLevel: 'info', format: 'prometheus' });
    expect(c.secrets).toContain('k-secret-value-123');
  });

  it('builds the base URL from the Cloud ID and host, and names the portal after the Cloud ID', () => {
    const c = loadConfig({ env: { POSTURE_CLOUD_ID: 'acme-42', POSTURE_API_HOST: 'portal.example.com', POSTURE_API_KEY_FILE: '/run/key' } });
    expect(c.portals[0]).toMatchObject({ name: 'acme-42', baseUrl: 'https://acme-42.portal.example.com/public-api/v1', key: { kind: 'file', path: '/run/key' } });
  });

  it('takes a flag over the environment over the config file', () => {
    const env = { ...base, POSTURE_PAGE_SIZE: '200', POSTURE_CONFIG: JSON.stringify({ page_size: 100, interval_seconds: 120 }) };
    expect(loadConfig({ env }).portals[0]!.pageSize).toBe(200);
    expect(loadConfig({ env }).intervalSeconds).toBe(120);
    expect(loadConfig({ env, flags: { page_size: '300' } }).portals[0]!.pageSize).toBe(300);
  });

  it('reads several portals from a YAML file, each with its own budget and tags', () => {
    const yaml = `
interval_seconds: 600
requests_per_minute: 4
portals:
  - portal: eu
    base_url: https://eu.example.com/public-api/v1
    api_key_ssm_parameter: /posture/eu
    vitals_tags: [laptops, servers]
  - portal: us
    cloud_id: us1
    api_host: example.com
    api_key_secret_id: posture/us
    requests_per_minute: 2
`;
    const c = loadConfig({ env: { POSTURE_CONFIG_FILE: '/etc/posture.yaml' }, readFile: () => yaml });
    expect(c.intervalSeconds).toBe(600);
    expect(c.portals.map((p) => [p.name, p.requestsPerMinute, p.vitalsTags, p.key.kind])).toEqual([
      ['eu', 4, ['laptops', 'servers'], 'ssm'],
      ['us', 2, [], 'secret'],
    ]);
  });

  it.each([
    ['a listed portal whose base URL is the bare host', { POSTURE_CONFIG: JSON.stringify({ portals: [{ base_url: base.POSTURE_BASE_URL, api_key: 'k-1234' }, { portal: 'b', base_url: 'https://b.example.com', api_key: 'k-5678' }] }) }, 'POSTURE_CONFIG: portals[1]: base_url="https://b.example.com" does not end in /public-api/v1: give https://<cloud_id>.<host>/public-api/v1 (the portal answers 404 elsewhere).'],
    ['a Cloud ID that is not a DNS label', { POSTURE_CLOUD_ID: 'acme_corp', POSTURE_API_HOST: 'example.com', POSTURE_API_KEY: 'k-1234' }, 'POSTURE_CLOUD_ID="acme_corp" is not a valid DNS label: use letters, digits and inner hyphens, at most 63 characters.'],
    ['a Cloud ID without a host', { POSTURE_CLOUD_ID: 'acme', POSTURE_API_KEY: 'k-1234' }, 'POSTURE_API_HOST is missing: the Cloud ID and the API host go together (or give POSTURE_BASE_URL).'],
    ['both a base URL and a Cloud ID', { ...base, POSTURE_CLOUD_ID: 'acme', POSTURE_API_HOST: 'example.com' }, 'POSTURE_BASE_URL and POSTURE_CLOUD_ID/POSTURE_API_HOST are both set: give either the base URL or the Cloud ID and host.'],
    ['no portal', {}, 'no portal is configured: set POSTURE_BASE_URL, or POSTURE_CLOUD_ID and POSTURE_API_HOST (or run `npm start` for the simulated portal).'],
    ['no API key', { POSTURE_BASE_URL: base.POSTURE_BASE_URL }, 'no API key: set POSTURE_API_KEY, POSTURE_API_KEY_FILE, POSTURE_API_KEY_SSM_PARAMETER or POSTURE_API_KEY_SECRET_ID.'],
    ['remote write without a URL', { ...base, POSTURE_PUSH: 'remote_write' }, "POSTURE_PUSH includes remote_write but POSTURE_REMOTE_WRITE_URL is not set: give the receiver's remote-write URL."],
    ['a pushgateway URL that is not a URL', { ...base, POSTURE_PUSHGATEWAY_URL: 'pgw:9091' }, 'POSTURE_PUSHGATEWAY_URL="pgw:9091" is not an http(s) URL: give the receiver\'s full URL.'],
    ['two remote-write auth methods', { ...base, POSTURE_REMOTE_WRITE_SIGV4_REGION: 'eu-west-1', POSTURE_REMOTE_WRITE_BEARER_TOKEN: 'tok-123456' }, 'remote write has more than one auth method set (sigv4, bearer): keep one of POSTURE_REMOTE_WRITE_SIGV4_REGION, POSTURE_REMOTE_WRITE_BEARER_TOKEN, POSTURE_REMOTE_WRITE_USERNAME+PASSWORD.'],
    ['both inline config and a config file', { ...base, POSTURE_CONFIG: '{}', POSTURE_CONFIG_FILE: '/x.yaml' }, 'POSTURE_CONFIG and POSTURE_CONFIG_FILE (--config) are both set: keep one of them.'],
    ['inline config that is not JSON', { ...base, POSTURE_CONFIG: '{nope' }, expect.stringMatching(/^POSTURE_CONFIG is not valid JSON( at character \d+)?: fix the syntax there\.$/)],
    ['inline JSON whose error would quote a key', { ...base, POSTURE_CONFIG: '{"api_key":sim-secret-abc}' }, expect.stringMatching(/^POSTURE_CONFIG is not valid JSON( at character \d+)?: fix the syntax there\.$/)],
    ['an unknown key in the config file', { POSTURE_CONFIG: JSON.stringify({ ...{ base_url: base.POSTURE_BASE_URL, api_key: 'k-1234' }, intervl_seconds: 5 }) }, 'POSTURE_CONFIG: unknown setting `intervl_seconds`: did you mean `interval_seconds`? Rename it, or remove it.'],
    ['a portal-only key given per portal that is global', { POSTURE_CONFIG: JSON.stringify({ portals: [{ base_url: base.POSTURE_BASE_URL, api_key: 'k-1234', listen: ':1' }] }) }, 'POSTURE_CONFIG: portals[0]: `listen` is top-level only: move it out of `portals`, where it applies to every portal.'],
    ['single-portal variables beside a portals list', { POSTURE_BASE_URL: base.POSTURE_BASE_URL, POSTURE_CONFIG: JSON.stringify({ portals: [{ base_url: base.POSTURE_BASE_URL, api_key: 'k-1234' }] }) }, 'POSTURE_BASE_URL is set but POSTURE_CONFIG lists portals: give each portal\'s base_url inside `portals`, or drop the list.'],
    ['an empty portals list', { POSTURE_CONFIG: JSON.stringify({ portals: [] }) }, expect.stringMatching(/^POSTURE_CONFIG: `portals` must be a non-empty list of mappings\.$/)],
    ['a setting of the wrong shape in the file', { ...base, POSTURE_CONFIG: JSON.stringify({ page_size: { many: true } }) }, 'POSTURE_CONFIG: page_size must be a string, a number or a list.'],
    ...remoteWriteCredentialCases(),
    ['two Pushgateway password sources', { ...base, POSTURE_PUSHGATEWAY_USERNAME: 'pusher', POSTURE_PUSHGATEWAY_PASSWORD: 'pg-secret-1234', POSTURE_PUSHGATEWAY_PASSWORD_SECRET_ID: 'posture/pgw' }, 'more than one Pushgateway password source is set (value, secret): keep exactly one of POSTURE_PUSHGATEWAY_PASSWORD, POSTURE_PUSHGATEWAY_PASSWORD_SSM_PARAMETER, POSTURE_PUSHGATEWAY_PASSWORD_SECRET_ID.'],
    ['two portals with one name', { POSTURE_CONFIG: JSON.stringify({ portals: [{ base_url: base.POSTURE_BASE_URL, api_key: 'k-1234' }, { base_url: base.POSTURE_BASE_URL, api_key: 'k-5678' }] }) }, 'POSTURE_CONFIG: portals[1] repeats the portal name "acme.example.com": give each portal a distinct `portal`.'],
  ])('refuses %s with one line naming the setting and the fix', (_what, env, expected) => {
    expect(problems({ env })).toEqual([expected]);
  });

  /** One variable refused beside a valid portal: what it is, the variable, its value, the line. */
  const ALONE: Array<[string, string, string, string]> = [
    ['a rate above the portal limit', 'POSTURE_REQUESTS_PER_MINUTE', '12', 'POSTURE_REQUESTS_PER_MINUTE (--requests-per-minute)="12" is not valid: set a whole number from 1 to 10 (default 5).'],
    ['a non-numeric page size', 'POSTURE_PAGE_SIZE', 'lots', 'POSTURE_PAGE_SIZE (--page-size)="lots" is not valid: set a whole number from 1 to 100000 (default 500).'],
    ['a zero interval', 'POSTURE_INTERVAL_SECONDS', '0', 'POSTURE_INTERVAL_SECONDS (--interval-seconds)="0" is not valid: set a whole number from 10 to 86400 (default 300).'],
    ['a resolved-alerts interval under 10 s', 'POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS', '5', 'POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS (--resolved-alerts-interval-seconds)="5" is not valid: set a whole number from 10 to 86400 (default 3600).'],
    ['an unknown log level', 'POSTURE_LOG_LEVEL', 'loud', 'POSTURE_LOG_LEVEL (--log-level)="loud" is not valid: use one of debug, info, warn, error.'],
    ['an unknown format', 'POSTURE_FORMAT', 'xml', 'POSTURE_FORMAT (--format)="xml" is not valid: use one of prometheus, openmetrics, json.'],
    ['plain http to a remote host', 'POSTURE_BASE_URL', 'http://acme.example.com/public-api/v1', 'POSTURE_BASE_URL must use https (plain http only for loopback addresses): got http://acme.example.com.'],
    ['a base URL that is not a URL', 'POSTURE_BASE_URL', 'acme', 'POSTURE_BASE_URL="acme" is not a URL: give the full https://<cloud_id>.<host>/public-api/v1.'],
    ['a base URL not ending in the API root', 'POSTURE_BASE_URL', 'https://acme.example.com/api/v1/', 'POSTURE_BASE_URL="https://acme.example.com/api/v1" does not end in /public-api/v1: give https://<cloud_id>.<host>/public-api/v1 (the portal answers 404 elsewhere).'],
    ['two key sources', 'POSTURE_API_KEY_FILE', '/k', 'more than one API key source is set (value, file): keep exactly one of POSTURE_API_KEY, POSTURE_API_KEY_FILE, POSTURE_API_KEY_SSM_PARAMETER, POSTURE_API_KEY_SECRET_ID.'],
    ['a bad header name', 'POSTURE_API_KEY_HEADER', 'X Key', 'POSTURE_API_KEY_HEADER="X Key" is not a valid HTTP header name.'],
    ['a bad listen address', 'POSTURE_LISTEN', 'localhost', 'POSTURE_LISTEN (--listen)="localhost" is not HOST:PORT: give e.g. 0.0.0.0:9877 or 127.0.0.1:9877.'],
    ['an unknown sink', 'POSTURE_PUSH', 'kafka', 'POSTURE_PUSH (--push)="kafka" is not valid: use a comma-separated subset of otlp, remote_write, pushgateway.'],
    ['a basic-auth user without a password', 'POSTURE_REMOTE_WRITE_USERNAME', 'u', 'POSTURE_REMOTE_WRITE_USERNAME and POSTURE_REMOTE_WRITE_PASSWORD go together: set both for basic auth.'],
    ['a remote-write header without a value', 'POSTURE_REMOTE_WRITE_HEADERS', 'X-Scope-OrgID=t1,X-Token', 'POSTURE_REMOTE_WRITE_HEADERS: entry 2 is not Name=value with a valid header name: give e.g. X-Scope-OrgID=tenant-1,Name2=value2.'],
    ['a remote-write header name with a space', 'POSTURE_REMOTE_WRITE_HEADERS', 'X Token=hdr-secret-1234', 'POSTURE_REMOTE_WRITE_HEADERS: entry 1 is not Name=value with a valid header name: give e.g. X-Scope-OrgID=tenant-1,Name2=value2.'],
    ['an Authorization remote-write header', 'POSTURE_REMOTE_WRITE_HEADERS', 'authorization=Bearer hdr-secret-1234', 'POSTURE_REMOTE_WRITE_HEADERS: the authorization header is set by the exporter itself (use the remote-write bearer token, basic-auth or SigV4 settings): remove it.'],
    ['a remote-write header the sink sets', 'POSTURE_REMOTE_WRITE_HEADERS', 'Content-Encoding=gzip', 'POSTURE_REMOTE_WRITE_HEADERS: the Content-Encoding header is set by the exporter itself: remove it.'],
    ['a repeated remote-write header', 'POSTURE_REMOTE_WRITE_HEADERS', 'X-Scope-OrgID=a1,x-scope-orgid=b2', 'POSTURE_REMOTE_WRITE_HEADERS: the x-scope-orgid header is given more than once: keep one.'],
    ['a bad percent-escape in a remote-write header', 'POSTURE_REMOTE_WRITE_HEADERS', 'X-Token=hdr-secret-%zz', 'POSTURE_REMOTE_WRITE_HEADERS: the value of X-Token has an invalid percent-escape: write a literal % as %25.'],
    ['a Pushgateway user without a password', 'POSTURE_PUSHGATEWAY_USERNAME', 'pusher', 'POSTURE_PUSHGATEWAY_USERNAME and POSTURE_PUSHGATEWAY_PASSWORD go together: set both for basic auth.'],
    ['a Pushgateway password from SSM without a user', 'POSTURE_PUSHGATEWAY_PASSWORD_SSM_PARAMETER', '/posture/pgw', 'POSTURE_PUSHGATEWAY_USERNAME and POSTURE_PUSHGATEWAY_PASSWORD_SSM_PARAMETER go together: set both for basic auth.'],
    ['a zero push timeout', 'POSTURE_PUSH_TIMEOUT_SECONDS', '0', 'POSTURE_PUSH_TIMEOUT_SECONDS (--push-timeout-seconds)="0" is not valid: set a whole number from 1 to 300 (default 10; OTLP: OTEL_EXPORTER_OTLP_(METRICS_)TIMEOUT, else 10).'],
    ['too many push retries', 'POSTURE_PUSH_MAX_RETRIES', '11', 'POSTURE_PUSH_MAX_RETRIES (--push-max-retries)="11" is not valid: set a whole number from 0 to 10 (default 3).'],
  ];
  it.each(ALONE)('refuses %s with one line naming the setting and the fix', (_what, name, value, expected) => {
    expect(problems({ env: { ...base, [name]: value } })).toEqual([expected]);
  });

  it('takes a remote-write credential from SSM or Secrets Manager as a source to read later, and a plain one as a secret', () => {
    const fromSsm = loadConfig({ env: { ...base, POSTURE_REMOTE_WRITE_USERNAME: '1234567', POSTURE_REMOTE_WRITE_PASSWORD_SSM_PARAMETER: ' /posture/rw-password ' } });
    expect(fromSsm.push).toMatchObject({ remoteWriteUsername: '1234567', remoteWritePassword: { kind: 'ssm', name: '/posture/rw-password' } });
    expect(fromSsm.push.remoteWriteBearerToken).toBeUndefined();
    expect(fromSsm.secrets).toEqual(['k-secret-value-123']);

    const fromFlag = loadConfig({ env: base, flags: { remote_write_bearer_token_secret_id: 'posture/rw-token' } });
    expect(fromFlag.push.remoteWriteBearerToken).toEqual({ kind: 'secret', id: 'posture/rw-token' });

    const fromFile = loadConfig({ env: { ...base, POSTURE_CONFIG: JSON.stringify({ remote_write_username: 'u', remote_write_password_secret_id: 'posture/rw-password' }) } });
    expect(fromFile.push.remoteWritePassword).toEqual({ kind: 'secret', id: 'posture/rw-password' });

    const plain = loadConfig({ env: { ...base, POSTURE_REMOTE_WRITE_BEARER_TOKEN: 'tok-plain-123456' } });
    expect(plain.push.remoteWriteBearerToken).toEqual({ kind: 'value', value: 'tok-plain-123456' });
    expect(plain.secrets).toEqual(['k-secret-value-123', 'tok-plain-123456']);
  });

  it('refuses a flag that does not exist as a flag (secrets are env-only)', () => {
    expect(problems({ env: base, flags: { api_key: 'x' } as never })).toEqual(['--api-key is not a flag: see `posture-exporter --help` (set POSTURE_API_KEY in the environment instead).']);
  });

  it('lists every problem at once', () => {
    expect(problems({ env: { ...base, POSTURE_PAGE_SIZE: '0', POSTURE_LOG_LEVEL: 'x' } })).toHaveLength(2);
  });

  it('never shows a secret in a message', () => {
    const msgs = problems({ env: { ...base, POSTURE_API_KEY_FILE: '/k', POSTURE_REMOTE_WRITE_BEARER_TOKEN: 'tok-abcdef', POSTURE_REMOTE_WRITE_SIGV4_REGION: 'x' } });
    msgs.push(...problems({ env: { ...base, POSTURE_REMOTE_WRITE_PASSWORD: 'pw-abcdef', POSTURE_REMOTE_WRITE_PASSWORD_SECRET_ID: 'posture/rw' } }));
    msgs.push(...problems({ env: { ...base, POSTURE_REMOTE_WRITE_HEADERS: 'X-Token=hdr-abcdef,X-Token=hdr-abcdef', POSTURE_PUSHGATEWAY_PASSWORD: 'pg-abcdef' } }));
    expect(msgs).toHaveLength(6);
    const all = msgs.join('\n');
    for (const secret of ['k-secret-value-123', 'tok-abcdef', 'pw-abcdef', 'hdr-abcdef', 'pg-abcdef']) expect(all).not.toContain(secret);
  });

  it('takes the Pushgateway basic auth, the remote-write headers and the push limits, with secret values kept for redaction', () => {
    const config = loadConfig({
      env: {
        ...base,
        POSTURE_REMOTE_WRITE_HEADERS: ' X-Scope-OrgID = tenant-1 ,X-Proxy-Token=p%2Cq ,',
        POSTURE_PUSHGATEWAY_USERNAME: 'pusher',
        POSTURE_PUSHGATEWAY_PASSWORD: 'pg-plain-123456',
        POSTURE_PUSH_TIMEOUT_SECONDS: '5',
        POSTURE_PUSH_MAX_RETRIES: '0',
      },
    });
    expect(config.push).toMatchObject({
      remoteWriteHeaders: { 'X-Scope-OrgID': 'tenant-1', 'X-Proxy-Token': 'p,q' },
      pushgatewayUsername: 'pusher',
      pushgatewayPassword: { kind: 'value', value: 'pg-plain-123456' },
      timeoutSeconds: 5,
      maxRetries: 0,
    });
    expect(config.secrets).toEqual(['k-secret-value-123', 'pg-plain-123456', 'tenant-1', 'p,q']);
    const fromFile = loadConfig({ env: { ...base, POSTURE_CONFIG: JSON.stringify({ pushgateway_username: 'u', pushgateway_password_ssm_parameter: '/posture/pgw' }) } });
    expect(fromFile.push.pushgatewayPassword).toEqual({ kind: 'ssm', name: '/posture/pgw' });
    expect(loadConfig({ env: base }).push).toMatchObject({ remoteWriteHeaders: {}, timeoutSeconds: undefined, maxRetries: 3 });
  });

  it('tells the config errors apart by class, with the setting named', () => {
    const err = anyThrown(() => loadConfig({ env: { ...base, POSTURE_MAX_RETRIES: '-1' } }));
    expect(err).toBeInstanceOf(ConfigErrors);
    const all = (err as ConfigErrors).problems;
    expect(all).toHaveLength(1);
    expect(all[0]).toBeInstanceOf(ConfigError);
    expect(all[0]!.setting).toBe('POSTURE_MAX_RETRIES');
  });
});

describe('serve checks', () => {
  it('refuses intervals whose plan does not fit the share, naming the settings and the smallest intervals that fit', () => {
    const c = loadConfig({ env: { ...base, POSTURE_REQUESTS_PER_MINUTE: '2', POSTURE_VITALS_TAGS: 'a,b', POSTURE_INTERVAL_SECONDS: '60', POSTURE_CYCLE_TIMEOUT_SECONDS: '30' } });
    // Per hour: Vitals 3 × 60 + devices 2 × 60 + alerts 1 × 60 = 360 against 2 × 60 = 120: three times too many;
    // 180 s is exactly the share by the hour, which falls behind minute by minute: 190 s. The resolved-alerts pass
    // adds 1 per hour (every 3600 s), the access settings 3 (every 3600 s), the directory 1/24 (every 86400 s), and their
    // first requests make 190 s late minute by minute: 200 s. Or a share of 7 (6 allows 360): 6 requests a minute fit 7 per 61 s.
    expect(planOf(c.portals[0]!).requestsPerHour).toBeCloseTo(360 + 1 + 3 + 1 / 24, 9);
    expect(checkServeConfig(c).map((e) => e.message)).toEqual([
      'the intervals need 365 requests per hour but the share allows 120 (2/min): set POSTURE_INTERVAL_SECONDS=200, or raise POSTURE_REQUESTS_PER_MINUTE to 7.',
    ]);
  });

  it('accepts the defaults', () => {
    expect(checkServeConfig(loadConfig({ env: base }))).toEqual([]);
  });

  it('takes per-source intervals from the environment and per portal from a config file, defaulting to POSTURE_INTERVAL_SECONDS', () => {
    const c = loadConfig({ env: { ...base, POSTURE_INTERVAL_SECONDS: '240', POSTURE_ALERTS_INTERVAL_SECONDS: '60' } });
    expect(c.portals[0]!.intervals).toEqual({ alerts: 60, vitals: 240, devices: 240 });
    expect(stalenessMs(c, c.portals[0]!)).toEqual({ alerts: 120_000, vitals: 480_000, devices: 480_000, resolved: 7_200_000, access: 7_200_000, directory: 172_800_000 });
    const file = JSON.stringify({
      vitals_interval_seconds: 600,
      portals: [
        { portal: 'a', base_url: 'https://a.example.com/public-api/v1', api_key: 'k1', alerts_interval_seconds: 30 },
        { portal: 'b', base_url: 'https://b.example.com/public-api/v1', api_key: 'k2' },
      ],
    });
    const m = loadConfig({ env: { POSTURE_CONFIG: file } });
    expect(m.portals.map((p) => p.intervals)).toEqual([
      { alerts: 30, vitals: 600, devices: 300 },
      { alerts: 300, vitals: 600, devices: 300 },
    ]);
  });

  it('takes the resolved-alerts interval from a flag, the environment or a portal entry, 3600 by default and never from POSTURE_INTERVAL_SECONDS', () => {
    expect(loadConfig({ env: { ...base, POSTURE_INTERVAL_SECONDS: '240' } }).portals[0]!.slowIntervals.resolved).toBe(3600);
    const fromEnv = loadConfig({ env: { ...base, POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS: '7200' } }).portals[0]!;
    expect(fromEnv.slowIntervals.resolved).toBe(7200);
    expect(fromEnv.slowIntervalSettings?.resolved).toEqual({ explicit: true, kind: 'env', name: 'POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS' });
    const fromFlag = loadConfig({ env: { ...base, POSTURE_RESOLVED_ALERTS_INTERVAL_SECONDS: '7200' }, flags: { resolved_alerts_interval_seconds: '900' } }).portals[0]!;
    expect(fromFlag.slowIntervals.resolved).toBe(900);
    expect(fromFlag.slowIntervalSettings?.resolved).toEqual({ explicit: true, kind: 'flag', name: '--resolved-alerts-interval-seconds' });
    const file = JSON.stringify({ portals: [{ portal: 'a', base_url: 'https://a.example.com/public-api/v1', api_key: 'k1', resolved_alerts_interval_seconds: 1800 }, { portal: 'b', base_url: 'https://b.example.com/public-api/v1', api_key: 'k2' }] });
    expect(loadConfig({ env: { POSTURE_CONFIG: file } }).portals.map((p) => p.slowIntervals.resolved)).toEqual([1800, 3600]);
  });
});
